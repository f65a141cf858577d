// Package api is Dynamo's Transformer and REST service level.
package api
