// Package fetch is how dynamo reaches the network: the SSRF guard every
// outgoing request dials through ([Dialer], [NewGuardedClient]: polls,
// renders and every request a rendered page makes, articles, WebSub
// callbacks), and the [Fetcher] the poller fetches with: one guarded
// client, one robots.txt cache and one per-host politeness gate shared by
// its three users, the plain GET, the browser renderer of `fetch: browser`
// and the article fetcher of `content: full`. The poller decides when to
// fetch, this package how.
//
// # Fetcher
//
// A [Fetcher] is built from the poller settings ([New]) and follows their
// reloads ([Fetcher.Configure]): its one http.Client is built again only
// when the timeouts, max_body, max_redirects, user agent or allow_private
// change, while the robots.txt cache and the host gate are kept. The
// client has connect, header and total timeouts (a timeout wraps
// [ErrTimeout]), follows at most max_redirects redirects
// ([ErrTooManyRedirects]), negotiates gzip and decodes it in the
// transport, and bounds bodies by max_body through http.MaxBytesReader:
// larger fails with [ErrTooLarge], never truncated. [Fetcher.Get] is one
// GET, conditional on the [Validators] of the page's last 200 (a 304 is
// [Result].NotModified), or one render. A resource's own headers go to
// its page's origin only (see Security model).
// Answers other than 200 and 304 are a [StatusError] with the server's
// Retry-After; Cache-Control max-age is Result.MaxAge (both capped at
// [MaxHint]). Bodies are read into pooled buffers, given back by
// [Fetcher.Release].
//
// robots.txt (github.com/temoto/robotstxt) is cached per host for an hour
// ([Fetcher.Robots], [Fetcher.FetchRobots]); per RFC 9309 a 4xx answer
// allows everything and a 5xx one nothing, and a network error is not
// cached. Its Crawl-delay raises the host's interval. Politeness: no two
// requests to one host (robots.txt included) closer than
// per_host_interval (or the Crawl-delay), across every user of the
// fetcher. [Fetcher.Reserve] takes a host's slot or says how long until
// it, without waiting, so that the poller can requeue a resource rather
// than hold a worker; [Fetcher.WaitSlot] waits for it. A render is one
// visit of its page's host, its requests to that host included: the host's
// next slot counts from the render's end. Its requests to other hosts take
// no slot; they are bounded by the render's six at a time and its timeout.
//
// [Fetcher.Article] fetches an article politely (robots.txt, the host's
// slot, the GET) and extracts it; [Fetcher.Once] fetches a page once, as
// a poll would, for the api's /new page (with the engine's fetcher) and
// [Once] with a fetcher of its own for the command line (`dynamo extract
// https://…`). Time (slots, Retry-After dates, the cache's hour) is read
// from the [Clock] given, the poller's, so that tests drive both with one
// fake clock. Metrics, on the Registerer given:
// dynamo_poller_fetch_bytes_total and dynamo_poller_article_seconds
// (named when they were the poller's), and the renderer's below.
//
// # Security model
//
// The guard. Unless allow_private is set, a [Dialer] refuses, in its
// Control function, which runs on the very address being connected after
// DNS resolution and before any packet is sent (DNS rebinding cannot get
// past it, and a refusal tells nothing of whether a port is open: it
// wraps [ErrForbiddenAddress]):
//
//   - every address that is not globally reachable in the IANA IPv4 and
//     IPv6 special-purpose address registries, plus multicast and the
//     reserved blocks: the table refusedPrefixes in guard.go, each line
//     naming its registry entry. 192.0.0.0/24 and 2001::/23 are refused
//     whole, their few globally reachable entries (PCP and TURN anycast,
//     AMT, AS112, ORCHIDv2) being relays, DNS sinks or identifiers that
//     serve no page; Teredo (2001::/32) is refused whatever IPv4 it
//     embeds. IPv6 outside 2000::/3 is refused. The IPv4-mapped, NAT64
//     (64:ff9b::/96) and 6to4 (2002::/16) forms of an IPv4 address are
//     judged as that address; an address with a zone is refused;
//   - every address of this host's own interfaces (a server's public
//     address reaches its own admin port), read with net.InterfaceAddrs
//     and read again when older than 30 s on the fetcher's [Clock], so
//     that a new interface is covered ([Options].HostAddrs replaces the
//     source). When they cannot be read at all, everything is refused.
//
// A host that a URL parser reads as an IPv4 address (2130706433,
// 0177.0.0.1, 0x7f.1, 127.1) is that address, never a name sent to a
// resolver. Guarded clients use no proxy, which would dial for them.
// Every client of the package dials so: the [Fetcher]'s one client (pages,
// robots.txt, articles, a render's requests) and [NewGuardedClient]'s
// (WebSub callbacks).
//
// The origin rule. A resource's headers (Authorization, cookies, API
// keys) go only to its page's origin: the same scheme, host (any case)
// and port, a missing port being the scheme's default. Never after a
// redirect to another origin, so never over http after https, and not
// even back at the page's origin once a redirect left it. One function
// (sameOrigin) decides for the page GET (every hop of its redirects),
// articles (fetched by the same GET) and a render's requests (each hop of
// a redirect the browser follows is paused apart and names the one
// before it, so a chain that left the origin is remembered).
//
// Credentials in a URL (https://user:pass@host/) never appear in an
// error or a log line of this package: URLs are shown through
// config.RedactURL, as ***@host.
//
// # Renderer
//
// [Renderer] renders a page in headless Chromium through the DevTools
// protocol (github.com/chromedp/chromedp): a local binary started on the
// first render ([FindBrowser]: poller.browser.exec, else chromium or
// chrome on PATH) or a running browser at poller.browser.url. A browser
// that died is started again at the next render. At most MaxTabs renders
// run at once; each is bounded by Timeout (the browser's start apart)
// and ends with the DOM, document.documentElement.outerHTML, read once
// wait_for matches, or else once the page has loaded and its network has
// been quiet for a moment.
//
// [Renderer.Picture] draws a page in the same kind of tab, under the same
// rules, for /new's "point at the list": a viewport 1280 wide, the page's
// scripts disabled before it loads or run as a render runs them, then
// one evaluation, in an isolated world of dynamo's own, that marks every
// element with data-dynamo-box="i" and reads its box and the marked DOM,
// and a JPEG screenshot of the page from its top (at most 12000 pixels
// tall, 8 MiB). A document that is not HTML is given as received, undrawn.
//
// Security model. The browser never reaches the network itself:
//
//   - Every request a page makes (document, scripts, XHR and fetch,
//     frames, images, each hop of a redirect) is paused by the DevTools
//     Fetch domain (Fetch.enable, pattern *) and made by the guarded
//     client instead: http and https only (anything else is refused with
//     Fetch.failRequest), the SSRF guard at dial time after DNS (no DNS
//     rebinding window: the browser resolves nothing), no proxy, timeouts,
//     every body bounded by MaxBytes. Redirects are handed back to the
//     browser, so every hop is paused and guarded again. A refused
//     sub-request fails only itself; the page's own document refused, or
//     answered with an HTTP error, fails the render.
//   - As a second wall, every browser context is given a proxy that
//     refuses (127.0.0.1:1, loopback not bypassed), so a request that ever
//     escaped interception (a service worker's, say) fails instead of
//     reaching the network; a started Chromium keeps frames in their
//     page's process (site isolation off, sandboxed frames included) so
//     that their requests are the page's. A WebSocket meets that proxy and
//     never connects; an EventSource is an HTTP request, paused and made
//     by the guarded client like any other.
//   - Nothing but HTTP: WebRTC (whose ICE sends UDP: STUN, TURN, mDNS)
//     and WebTransport are removed, down to their every interface object,
//     by an init script (Page.addScriptToEvaluateOnNewDocument) that runs
//     before the page's own scripts in every document of the tab: fresh
//     about:blank and srcdoc frames and nested frames included (a popup
//     without a user's gesture is blocked by the browser).
//     Frames in processes of their own (a remote browser isolates
//     cross-site frames) are auto-attached paused
//     (Target.setAutoAttach, waitForDebuggerOnStart) and given the same
//     script before they run. A started Chromium also limits WebRTC to
//     the proxy (force-webrtc-ip-handling-policy=disable_non_proxied_udp)
//     and turns QUIC off. A browser at poller.browser.url is started by
//     its operator, with [RemoteBrowserFlags]: without them, a sandboxed
//     srcdoc frame gets a process of its own that starts running before
//     it can be attached, and could use WebRTC.
//   - Each render runs in a fresh incognito browser context, disposed
//     after it: no cookies, storage or cache survive a render. Cookies are
//     neither forwarded nor kept; the request's Headers are added to the
//     requests to the page's own origin only (the origin rule above).
//   - Downloads are denied (Browser.setDownloadBehavior deny).
//   - The DOM is limited like a body: larger fails with [ErrTooLarge],
//     never truncated.
//
// A picture counts as a render in the metrics.
//
// Metrics, on the Registerer given: dynamo_fetch_renders_total{outcome},
// dynamo_fetch_render_seconds and dynamo_fetch_browser_restarts_total.
//
// # Articles
//
// [ExtractArticle] finds an article page's main text with readability
// (codeberg.org/readeck/go-readability) and sanitizes it as every
// description is ([extractor.SanitizeHTML]). It is pure: fetching the page
// is the caller's: [Fetcher.Article].
package fetch
