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
// # People, operators and the HTTP server
//
// GET / is a server-rendered page (html/template, embedded under templates/,
// no JavaScript): every configured resource (Options.Poller) merged with
// every stored one (Options.Store), with subscribe links in each format and
// <link rel="alternate"> for each, last and next poll, policy, interval,
// estimate τ, α, versions and the last error. It is built for phones first
// (viewport meta, a single column of cards). GET /preview is a form and POST
// /preview runs the extractor on a submitted page (raw body with its charset
// in Content-Type and ?url=, or the form fields page and url); it never
// fetches anything. Browsers get HTML; other clients JSON
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
// GET / filters (?q=: every word must occur in the id, title, page URL or
// description, case-insensitively) and pages (?page=, 50 resources a page,
// ids in order): only the page shown is formatted, so a server with 10,000
// resources answers / in tens of milliseconds. Each card links to the
// resource's view and shows a sparkline of its last 48 polls, drawn with
// gonum/plot and cached until the resource polls again.
//
// GET /view/{rssId} is one resource for people: subscribe links, its state
// as on /, a chart drawn on the server as inline SVG with gonum/plot (vgsvg,
// fonts not embedded: the browser's own sans-serif) of the poller's history
// ([PollHistory], optional on the Poller: the last 200 polls or four weeks)
// — each poll a mark at the wait chosen after it on a log scale of
// durations (green filled circle: changed; grey ring: unchanged or 304; red
// cross: any failure: error, not-annotated, robots-denied, disk_full), τ as a
// step line, the versions stored below — and its versions newest first, 10 a
// page (?page=), each linked to its permalink and compared with the version
// before it (50 changes shown; ?v=SEQ shows one version with all its
// changes, 200 a page, ?items=N): items added, removed and changed matched by item id, changed
// fields (title, link, description, image, each extension by prefix:name)
// shown as <del>old</del> <ins>new</ins>, long values cut at 400 characters.
// Without a poll history (a poller that keeps none), the chart shows when the
// stored versions appeared. An unknown id is a 404 problem; a resource the
// poller knows but has not stored gets the page with an empty chart.
//
// A feed URL without type= whose Accept rates text/html strictly above every
// feed media type, application/xml and text/xml (what browsers send) gets the
// feed as a page (feedpage.go): the same feed model, so exactly the reader's
// items, with subscribe links and <link rel="alternate"> per format, a link
// to the view, its own weak ETag (the page shows times relative to now, so
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
// rel="alternate">, OPML — point at what a reader wants, the items feed
// /resources/{rssId}?max=N (N = Options.SubscribeMax, feeds.subscribe_max,
// default 50); the versions feed is offered beside them as the history of
// changes. The versions feed's entries say what each version changed
// (feeds_history.go): a title naming the change ("2 new: Budget approved;
// Tram line 4 · 1 removed"), content listing the items with links, from
// the same diff /view shows (diffVersions), for the newest 50 versions.
// /resources' items link to /view/{rssId}, their id the resource's feed.
// GET /favicon.ico serves an embedded icon, cacheable.
//
// Credentials in a resource's URL (https://user:pass@host/) are used to
// fetch it and shown nowhere (redact.go): pages, feeds (the channel's and
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
// With admin on, GET /login takes the admin token in a form (compared as
// the bearer token is, [TokenMatches]) and sets a session cookie signed by
// internal/session with a key derived from the token (HttpOnly,
// SameSite=Strict, Secure when the request came over TLS or, through one of
// Options.TrustedProxies, with X-Forwarded-Proto: https; 12 h, checked
// against Options.Now at every request). A login goes back to ?next= only
// when it is a path of this site (safeNext: one "/" followed by neither "/"
// nor "\", no control character or white space, raw or percent-encoded at
// any depth), else to /. Login attempts are limited per client address
// with internal/ratelimit, wrong ones only. Logout revokes the session in
// Options.Sessions (the store, shared by every node; nil: this process's
// memory) until its cookie would have expired, and every request checks
// its session there once; when the store cannot say, the session opens
// nothing (a page or form that needs it, and a logout, answer 503). The
// session opens /new and nothing else: the admin JSON routes keep wanting the
// bearer token, so a cookie a browser sends by itself never reaches them.
// Every form route that changes something runs checkCSRF first: a browser's
// cross-origin request (net/http.CrossOriginProtection) or a token that is
// not the HMAC of this browser's seed cookie and session id is a 403, and
// the handler never runs. Pages: login.go, session.go, newfeed.go,
// register.go, forms.go (parsing and field errors), one template each.
//
// POST /new fetches a page once through Options.Fetch (the poller's
// guarded fetcher) and keeps the bytes, for the session that fetched
// them, in a cache bounded in count, bytes and time (fetched.go), under a
// random id that the forms carry; it redirects to GET /new?fetch=id, which
// shows the page's own feeds, its annotations as the feed they make and
// suggest's proposals (suggest_adapter.go, the one reader of extractor's
// suggest API), each extracted from the kept bytes. POST /new/preview
// extracts them again with an edited block; POST /new/add registers
// through RegisterDefinition, the path of PUT /admin/resources, waits for
// its first poll (FirstPoll when the poller has it, which does not poll a
// resource its registration had polled already, else PollNow; at most
// firstPollWait) and redirects to /view/{id}. GET
// and POST /register are the webmasters' form for POST /resources
// (SelfRegister is the path of both).
//
// GET /healthz answers while the process serves; GET /readyz asks
// Options.Ready (store reachable, poller running); GET /metrics serves
// Options.Gatherer. The admin routes answer 404, as if absent, unless a
// token is set (Options.AdminToken; [Server.SetAdminToken] rotates it on a
// configuration reload); the bearer token is compared in constant time (both sides hashed, then
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
