// Package fetch is how dynamo reaches the network: the SSRF guard every
// outgoing request dials through ([Dialer], [NewGuardedClient]: polls,
// renders and every request a rendered page makes, articles, WebSub
// callbacks), the browser renderer of `fetch: browser` and the article
// extractor of `content: full`. The renderer and the articles take the
// poller's guarded *http.Client; the poller decides when to fetch, this
// package how. (The plain retriever, robots.txt cache and per-host
// politeness gate still live in package poller, to move here next.)
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
// is the caller's, through the guarded client.
package fetch
