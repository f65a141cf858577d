// Package ui is the pages people use: GET / and /view/{rssId} with their
// charts, the /preview form, a feed's page in a browser, and the forms
// that add feeds (/login and /logout with the admin's browser session and
// the CSRF check, /new, /register), all server-rendered with html/template
// (embedded under templates/), without JavaScript.
//
// # Mounted by the api
//
// Package api answers machines (feeds, admin JSON, WebSub, POST /preview,
// OPML, metrics, health) and declares what it needs of the pages,
// api.Pages; [Server] implements it. cmd/dynamo builds a Server with
// [New] and hands it to the api in api.Options.Pages, and api.New calls
// [Server.Routes] with its own route registration, so every page runs
// behind the api's one middleware chain (security headers, access log and
// HTTP metrics, recover, gzip, body limit, deadline) and its errors are
// answered by the api's error handler as problems. The dependency goes one
// way: ui imports api, for the services' types (api.Store, api.Poller,
// api.Registry, api.PageFetcher, declared in internal/service), the links
// to feeds (api.Server.FeedLinks, HistoryLinks, FeedHref, ItemsPath,
// api.ViewHref), times as people read them (humantime.Time), the diff of two
// versions (versiondiff.DiffVersions, which the versions feed tells too),
// self-registration (api.Server.SelfRegister) and the problems; api never
// imports ui. The api decides when a browser gets a feed as a page, builds
// its data (api.FeedPage) and caches it; [Server.FeedPage] renders it,
// sanitizing each item's HTML once more (bluemonday, then balanced as a
// fragment). POST /preview is the api's too; [Server.PreviewPage] renders
// its answer for a browser.
//
// The admin token is given twice, to the api (its bearer token) and here
// (the login form and the sessions' signing key); a configuration reload
// rotates both (api.Server.SetAdminToken, [Server.SetAdminToken]).
//
// # The pages
//
// GET / is a server-rendered page (html/template, embedded under templates/,
// no JavaScript): every configured resource (Options.Poller) merged with
// every stored one (Options.Store), with subscribe links in each format and
// <link rel="alternate"> for each and its state in plain words (howOften:
// "every 15 minutes", "automatically, as often as the page changes", "from
// the shared daily budget" rather than the policies' names; the last and next
// check, what the last one found, versions and problems counted with
// plural), and the last error. It is built for phones first (viewport meta, a
// single column of cards; descriptions clamped to a few lines).
//
// GET / filters (?q=: every word must occur in the id, title, page URL or
// description, case-insensitively) and pages (?page=, 50 resources a page,
// ids in order): only the page shown is formatted, so a server with 10,000
// resources answers / in tens of milliseconds. Each card links to the
// resource's view and shows a sparkline of its last 48 polls, drawn with
// gonum/plot and cached until the resource polls again.
//
// GET /view/{rssId} is one resource for people: one subscribe URL in a
// readonly url field (the items feed in RSS 2.0, absolute) with the other
// formats beside it, its state as on /, the estimate τ and α under a
// details disclosure, a chart drawn on the server as inline SVG with gonum/plot (vgsvg,
// fonts not embedded: the browser's own sans-serif; scaled to the width by
// its viewBox) of the poller's history
// (api.PollHistory, optional on the Poller: the last 200 polls or four weeks)
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
// Every page carries api.PageSecurityPolicy (no script at all, inline
// styles only, images from anywhere for the items of a feed page, forms to
// this origin, no framing) and Referrer-Policy: no-referrer; the pages
// load nothing from elsewhere and work with JavaScript off.
//
// # Adding a feed in the browser
//
// With admin on, GET /login takes the admin token in a form (compared as
// the bearer token is, api.TokenMatches) and sets a session cookie signed by
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
// suggest API), each extracted from the kept bytes. With a browser
// (Options.Browser, and Options.Fetch an api.PageRenderer), the URL form
// has "Render with JavaScript" and a wait-for selector: the page is then
// rendered (api.PageRenderer.RenderPage, the engine's fetcher, the same
// guard) and Add registers fetch: browser and wait_for (render.go); a page
// fetched with a GET that looks built by a script (scriptBuilt: little
// text, an empty root element, a <noscript> asking for JavaScript, many
// scripts and no list) says so and offers to render it, or, without a
// browser, how to configure one. When the page's host asked to be left
// alone a while (its politeness slot, api.PageWaiter), POST /new answers
// at once with a page that waits and refreshes itself (wait.go,
// /new/wait/{token}, bound to the session) while the fetch runs in the
// background, owned by the Server (Close cancels and waits for it; three
// at once per session). POST /new/preview extracts them again with an
// edited block, a filter (include/exclude, one entry a line, applied
// with extractor/filter: the items taken out shown struck through) and
// the resource's time zone and date layout (each item's date read as
// lint --dates says it); POST /new/add refuses a block that yields no
// item and an id in use (never renamed), registers through
// api.RegisterDefinition, the path of PUT /admin/resources, and waits for
// its first poll (FirstPoll when the poller has it, which does not poll a
// resource its registration had polled already, else PollNow): past 2 s,
// a page that waits for it (wait.go) leads to /view/{id}. GET
// and POST /register are the webmasters' form for POST /resources
// (api.Server.SelfRegister is the path of both).
//
// # Point at the list
//
// point.go: with a browser that draws pages (Options.Fetch an
// api.PagePicturer), POST /new's one visit is a picture: the page's bytes
// (the document as sent, or the DOM once rendered), a screenshot and the
// box of every element, kept with the bytes (fetched.go, the screenshot
// counted in the cache's bytes) and served to the session at
// /new/picture/{fetch}. The offer shows it in an inline SVG: each
// proposal's items outlined in its colour and numbered, and an <a> region
// over every element that could start an item (suggest.Starts), the
// smallest on top. Each region is a GET link: ?like=N (suggest.Like: the
// list of the items like element N, shown as the candidate "Items like
// this", outlined with ✓); on any part of an item of that list
// (suggest.ItemParts: a heading's run and a second row included),
// ?block=B&pick=N, which offers "not this one" (suggest.Exclude) and
// "this is the title / the date / the link" (suggest.Field), each a link
// with &do= that redirects to the block rewritten. Elements are numbered as suggest
// numbers them; suggest.Marks pairs them with the marked DOM the browser
// drew. Without a browser the offer shows suggest.Outline instead (under
// the picture too, in a <details>): landmarks and headings, the lists
// under each with their counts and first items, each with "items like
// this". Nothing is fetched again until "Another page".
package ui
