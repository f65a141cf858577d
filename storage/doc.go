// Package storage is Dynamo's DataManager: versioned XMLData on Badger.
package storage
