// Package schema holds XMLData, Dynamo's neutral document: one per retrieved
// version of an annotated page. It provides the XSD the documents follow
// (embedded as [XSD]), the Go types that marshal to exactly that shape and back,
// the informational-content comparison that decides whether a newly retrieved
// page is a new version ([SameContent], [ContentHash]), and the keyword query
// terms shared by storage and the REST layer ([Terms]).
//
// [Marshal] writes the XML directly rather than through encoding/xml's
// reflection; its output is byte for byte what encoding/xml writes (the tests
// keep that encoder as the reference and fuzz the two against each other).
// [Document.Validate] accepts only documents that Marshal and [Unmarshal]
// carry through unchanged (but for the timestamp's zone, always UTC, and
// empty slices, which come back nil).
//
// Every other package shares these types; schema imports none of them.
// Values of these types are plain data: safe for concurrent reads, not for
// concurrent writes.
package schema
