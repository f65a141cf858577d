// Package extractor is Dynamo's Wrapper: it turns an annotated legacy HTML page
// into an XMLData document (see ANNOTATIONS.md) plus diagnostics.
package extractor
