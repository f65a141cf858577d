// Package poller is Dynamo's Engine, Poller and Retriever.
package poller
