package poller

import "github.com/dynamo-rss/dynamo/fetch"

// The SSRF guard is fetch's (fetch/guard.go): every outgoing request of
// the service dials through it. These names keep the poller's API.
type Resolver = fetch.Resolver

// ErrForbiddenAddress is wrapped by dial errors for addresses the SSRF
// guard refuses (fetch.ErrForbiddenAddress).
var ErrForbiddenAddress = fetch.ErrForbiddenAddress
