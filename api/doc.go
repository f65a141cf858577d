// Package api is Dynamo's Transformer and REST service level.
//
// # Feeds
//
// Everything under /resources is a feed rendered on the fly from stored
// XMLData versions (never stored as RSS): /resources lists the resources,
// /resources/{rssId} its versions newest first, ?index=n one version, ?max=n
// items aggregated over the history (newest first by first seen). Keyword
// terms (title, link, description or desc, each preceded by an optional
// op=and|or) are read from the raw query string in order and combine strictly
// left to right; xpath=EXPR keeps the items for which an XPath 1.0 expression
// over the XMLData <item> is true, bounded in time and in items evaluated.
// Filters apply to whichever items the request selects: resources, versions,
// one version's items or the items over history. Unknown parameters are ignored.
//
// Each handler parses the query, negotiates the format (type=, else Accept,
// else RSS 2.0) and reads the resource's catalog entry, and only then
// decides: the strong ETag is a hash of everything the rendering depends on
// (resource, latest version seq, version count, normalized query, format,
// base URL, poll interval hint), so If-None-Match and If-Modified-Since are
// answered 304 without reading history or rendering (an If-Modified-Since
// later than the server's clock is ignored: no Last-Modified was ever sent
// from the future). Otherwise the feed is
// built once into a neutral model and rendered by one file per format
// (render_rss1.go, render_rss2.go, render_atom.go, render_json.go; RSS 2.0,
// Atom and JSON Feed through gorilla/feeds, RSS 1.0 as RDF/XML with
// encoding/xml). Extensions of the channel and of items are written as
// foreign elements in RSS 1.0, RSS 2.0 and Atom, but those in the Atom, RDF
// or RSS 1.0 namespace (readers take them for the feed's own markup: a
// page's atom:id would become the item's id) and those whose namespace is
// not a URI; the channel's dc:language, when a BCP 47 tag, is also Atom's
// xml:lang and JSON Feed's language. A channel without a description is
// described by its title in RSS 1.0 and 2.0, which require one.
// Rendered bytes are kept in a render cache bounded by
// Options.CacheBytes (LRU by bytes) under the same key as the ETag, so a new
// version makes old entries unreachable rather than stale; concurrent misses
// of one key render once. Cache-Control max-age never outlives the next
// scheduled poll of the resource (of any resource for /resources).
//
// Errors become application/problem+json (RFC 9457) in one place, errors.go:
// handlers return a *Problem (or a storage error) and [Server] maps it; a 5xx
// is logged with its cause, which the client never sees.
//
// # Machines here, people in package ui
//
// The api answers machines: feeds, the admin JSON API, WebSub, POST
// /preview, OPML, metrics and health. The pages people use (GET /,
// /view/{rssId}, the GET /preview form, /login and /logout, /new,
// /register, the charts and a feed's page in a browser) are package ui's.
// The api declares what it needs of them, [Pages] (pages.go), and mounts
// an implementation given in Options.Pages: New calls its Routes with the
// function that registers the api's own routes, so each page runs behind
// the one middleware chain below, and the api's error handler answers the
// errors its handlers return (a *[Problem], or any error). The dependency
// goes one way: ui imports api (its exported types, link helpers and
// self-registration, [Server.SelfRegister]); api never imports ui. The
// services both call (store, poller, registry, page fetcher) are declared
// in internal/service and named here (store.go: api.Store,
// api.ResourceStatus, …). Without Pages the api serves machines only: a
// browser asking for a feed gets the feed, POST /preview answers JSON.
//
// POST /preview runs the extractor on a submitted page (raw body with its
// charset in Content-Type and ?url=, or the form fields page and url); it
// never fetches anything. Browsers get the page of the preview
// (Pages.PreviewPage, [PreviewPage]); other clients JSON
// {"document", "diagnostics", "error"}; a page that is not annotated is a 422
// whose problem+json carries the same members; a body over
// Options.MaxPreviewBytes is a 413. A JSON body or a select block (form
// field, query parameter, JSON member) nested deeper than
// config.MaxDepth, with aliases expanding it past four times its size, or
// with a selector over 4,096 bytes is a 400 naming the field (detail and
// parameter), found before any parser reads it (config.CheckNesting).
//
// WebSub (websub.go): with Options.HubURL set, every feed response (200 and
// 304) carries Link <hub>; rel="hub" and Link <self>; rel="self" (the feed's
// canonical URL, type= included), RSS 2.0 and Atom documents an atom:link
// rel="hub" beside rel="self", JSON Feed "hubs". POST /websub hands the form
// to the Hub ([Server.SetHub]; none: 404): 202 when accepted, 400 for an
// invalid request or a topic that is not a feed here, 415 for a body that is
// not a form, 503 when the hub's queue is full, 429 with Retry-After past
// 60 requests at once, then one a second, from one client address (each
// one makes the hub send a GET to a callback), or when the hub refuses a
// request because its callback host has had its share of verifications
// (websub.LimitError). The Server is the hub's
// websub.Topics: it renders a topic by an in-process GET, so a delivery is
// byte for byte what a reader fetching the topic gets, and it tells the
// hub which topics are of a deleted resource (the store's tombstone), whose
// subscriptions the hub then denies.
//
// A feed URL without type= whose Accept rates text/html strictly above every
// feed media type, application/xml and text/xml (what browsers send) gets the
// feed as a page (feedpage.go) when Pages are mounted: the api decides,
// builds the page's data ([FeedPage]) from the same feed model, so exactly
// the reader's items, with subscribe links and <link rel="alternate"> per
// format and a link to the view, has Pages.FeedPage render it, and keeps the
// bytes in the render cache, with its own weak ETag (the page shows times relative to now, so
// its bytes change while the feed does not), gzip when accepted, and Vary:
// Accept. A tie goes to the feed, so
// Miniflux (text/html listed at q=1 beside the feed types), feedparser,
// SimplePie/FreshRSS, gofeed (no Accept) and newsboat (*/*) get the feed
// as before. GET /resources.opml is OPML 2.0 (text/x-opml): one
// outline type="rss" per resource, configured or stored, with the absolute
// URL of its items feed in xmlUrl and its channel's link (from the latest
// version; else the page's URL) in htmlUrl.
//
// Subscribe links — the buttons on /, /view and feeds' pages, <link
// rel="alternate">, OPML; built here for both packages ([Server.FeedLinks],
// [Server.HistoryLinks], [Server.FeedHref], links.go) — point at what a reader wants, the items feed
// /resources/{rssId}?max=N (N = Options.SubscribeMax, feeds.subscribe_max,
// default 50); the versions feed is offered beside them as the history of
// changes. The versions feed's entries say what each version changed
// (feeds_history.go): a title naming the change ("2 new: Budget approved;
// Tram line 4 · 1 removed"), content listing the items with links, from
// the same diff /view shows (internal/versiondiff), for the newest 50 versions.
// /resources' items link to /view/{rssId}, their id the resource's feed.
// GET /favicon.ico serves an embedded icon, cacheable.
//
// Credentials in a resource's URL (https://user:pass@host/) are used to
// fetch it and shown nowhere (internal/redact): pages, feeds (the channel's and
// items' links, which the page's URL resolved, ids, descriptions), OPML,
// the admin JSON (as header values are) and the api's logs (its slog
// handler hides them in every string and error) show ***@host.
// Self-registration refuses such URLs and reports a page it could not
// fetch with one message whatever the cause, which it logs: a visitor
// cannot tell refused from timed out from a forbidden address.
//
// Every answer carries X-Content-Type-Options: nosniff, X-Frame-Options:
// DENY and, unless it is one of our pages, a Content-Security-Policy that
// sandboxes it and lets nothing load or run ("default-src 'none';
// frame-ancestors 'none'; sandbox"): a browser that renders an XML feed as
// an XML document would otherwise run the XHTML or SVG <script> elements a
// page's extensions put in it, on this origin. Every HTML page carries its
// own Content-Security-Policy (no script at all, inline styles only, images
// from anywhere for the items of a feed page, forms to this origin, no
// framing) and Referrer-Policy; the pages load nothing from elsewhere (no
// font, script or stylesheet) and work with JavaScript off. Admin answers
// are Cache-Control: no-store.
//
// # Adding a feed in the browser
//
// The forms that add feeds (/login, /new, /register) and the admin's
// browser session are ui's. What they register goes through the api's
// paths: /new through [RegisterDefinition], the path of PUT
// /admin/resources, and /register through [Server.SelfRegister], the path
// of POST /resources. The session opens /new and nothing else: the admin
// JSON routes keep wanting the bearer token, so a cookie a browser sends
// by itself never reaches them. [TokenMatches] is the one comparison of a
// presented token with the admin token, for the bearer header and the
// login form.
//
// GET /healthz answers while the process serves; GET /readyz asks
// Options.Ready (store reachable, poller running); GET /metrics serves
// Options.Gatherer. The admin routes answer 404, as if absent, unless a
// token is set (Options.AdminToken; [Server.SetAdminToken] rotates it on a
// configuration reload, as ui's SetAdminToken does the sessions' key); the bearer token is compared in constant time (both sides hashed, then
// subtle.ConstantTimeCompare), and a missing or wrong one is a 401 with
// WWW-Authenticate. POST /admin/reload calls Options.Reload (a refused
// configuration is a 422 naming the field; the old one stays in force).
//
// Every request goes through one middleware chain, outermost first: access
// log (slog, request ctx, constant message) and HTTP metrics by route
// pattern (never the raw path) on Options.Registerer; recover; gzip when
// accepted (not for HEAD; 304s carry no body); a request body limit; and a
// context deadline of Options.RequestTimeout (as echo's ContextTimeout, its
// timer armed only when something waits; never middleware.Timeout, which
// races). The chain is applied to each route once, when it is registered,
// not per request as echo's e.Use does. [Server.Serve] runs an http.Server with
// every timeout set and, when its ctx ends, stops accepting and lets
// in-flight requests finish within Options.ShutdownTimeout.
package api
