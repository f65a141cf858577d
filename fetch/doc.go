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
// its page's host only: a redirect to another host does not carry them.
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
// than hold a worker; [Fetcher.WaitSlot] waits for it.
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
// # Guard
//
// Unless allow_private is set, a [Dialer] refuses loopback, private,
// link-local, CGNAT, unspecified, multicast and 0/8 addresses (IPv4-mapped
// IPv6 judged as IPv4) in its Control function, which runs on the very
// address being connected after DNS resolution: DNS rebinding cannot get
// past it. Guarded clients use no proxy, which would dial for them.
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
//     page's process (site isolation off) so that their requests are the
//     page's, and sends WebRTC over the proxy only.
//   - Each render runs in a fresh incognito browser context, disposed
//     after it: no cookies, storage or cache survive a render. Cookies are
//     neither forwarded nor kept; the request's Headers are added to the
//     requests to the page's own host (same scheme) only.
//   - Downloads are denied (Browser.setDownloadBehavior deny).
//   - The DOM is limited like a body: larger fails with [ErrTooLarge],
//     never truncated.
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
