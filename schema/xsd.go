package schema

import _ "embed"

// XSD is the XML Schema of XMLData documents, transcribed from Fiumara, Marchi
// and Provetti (2008) with the paper's "anyUri" corrected to xsd:anyURI. Every
// document the project writes validates against it.
//
//go:embed xmldata.xsd
var XSD []byte
