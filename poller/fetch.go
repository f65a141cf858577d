package poller

import "github.com/dynamo-rss/dynamo/fetch"

// Fetching is package fetch's (fetch.Fetcher): the poller decides when to
// fetch, fetch how. These names keep the poller's API.

// Resolver resolves the names the SSRF guard dials (fetch.Resolver).
type Resolver = fetch.Resolver

// ErrForbiddenAddress is wrapped by dial errors for addresses the SSRF
// guard refuses (fetch.ErrForbiddenAddress).
var ErrForbiddenAddress = fetch.ErrForbiddenAddress

// ErrTooLarge is wrapped when a body exceeds poller.max_body: the page is
// refused, never truncated (fetch.ErrTooLarge).
var ErrTooLarge = fetch.ErrTooLarge

// ErrTooManyRedirects is wrapped when a fetch exceeds poller.max_redirects
// (fetch.ErrTooManyRedirects).
var ErrTooManyRedirects = fetch.ErrTooManyRedirects

// ErrRobotsDenied is the cause of a robots-denied outcome (fetch.ErrRobotsDenied).
var ErrRobotsDenied = fetch.ErrRobotsDenied

// ErrTimeout is wrapped when a fetch exceeds a configured timeout
// (fetch.ErrTimeout).
var ErrTimeout = fetch.ErrTimeout

// StatusError is an HTTP answer a poll cannot use (anything but 200 and
// 304); RetryAfter is the server's Retry-After, if any.
type StatusError = fetch.StatusError

// Page is a page fetched once, outside any schedule ([Engine.FetchPage]).
type Page = fetch.Page

// Picture is a page as the browser drew it ([Engine.PicturePage]).
type Picture = fetch.Picture

// validators are the conditional-GET values of a page's last 200, kept in
// its poll state.
type validators = fetch.Validators
