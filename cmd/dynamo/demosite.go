package main

import (
	"fmt"
	"html"
	"math/rand/v2"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"time"

	"golang.org/x/text/encoding"
	"golang.org/x/text/encoding/charmap"
)

// demoSite is a simulated legacy news site for `dynamo demo`: pages
// annotated for dynamo whose articles appear at irregular, bursty times.
//
// Arrivals follow a two-state Markov-modulated Poisson process (bursts of
// news, then calm), accelerated so that something happens every few seconds.
// The process is driven by a seeded generator and evaluated lazily against
// the clock on each request, so the site owns no goroutine and the same seed
// and clock always give the same pages.
type demoSite struct {
	now   func() time.Time
	pages map[string]*demoPage // by URL path
}

// demoPage is one annotated page and its arrival process.
type demoPage struct {
	path, title, description, lang string
	latin1                         bool // served as ISO-8859-1 with Latin-1 bytes
	headlines                      demoWords
	keep                           int // articles listed on the page

	mu       sync.Mutex // guards what follows
	rng      *rand.Rand
	articles []demoArticle // in arrival order
	next     time.Time     // the next arrival, already drawn
	burst    bool          // current state of the process
	stateEnd time.Time     // when the current state ends
}

// demoArticle is one generated article.
type demoArticle struct {
	n       int
	at      time.Time
	title   string
	summary string
}

// demoWords builds headlines for a page's language.
type demoWords struct {
	subjects, verbs, objects, places []string
}

// Mean rates and sojourn times of the arrival process.
const (
	demoBurstGap   = 4 * time.Second  // mean time between articles in a burst
	demoCalmGap    = 35 * time.Second // mean time between articles when calm
	demoBurstLen   = 20 * time.Second // mean length of a burst
	demoCalmLen    = 45 * time.Second // mean length of a calm period
	demoSeedOffset = 7919             // second page's seed, apart from the first
)

// newDemoSite builds the site; start is when its news begins (a few
// articles already exist at start, so the first poll finds a page).
func newDemoSite(seed uint64, start time.Time, now func() time.Time) *demoSite {
	en := demoWords{
		subjects: []string{"Council", "Mayor", "Harbour authority", "Local school", "City library", "Football club", "Transport office", "Museum", "Hospital", "Market traders"},
		verbs:    []string{"approves", "postpones", "announces", "rejects", "celebrates", "reviews", "opens", "funds"},
		objects:  []string{"new budget", "bridge repairs", "summer festival", "bike lanes", "night market", "river clean-up", "tram extension", "reading week"},
		places:   []string{"downtown", "in the old port", "on the north side", "at the town hall", "near the station", "by the river"},
	}
	it := demoWords{ // Italian: accented letters that exist in Latin-1 (è, à, ò, ù, é)
		subjects: []string{"Il Comune", "La Provincia", "Il sindaco", "L'università", "La società dei tram", "Il teatro civico", "La pro loco", "L'ospedale"},
		verbs:    []string{"approva", "rinvia", "annuncia", "inaugura", "finanzia", "però sospende", "rivede", "celebra"},
		objects:  []string{"il bilancio", "la festa di città", "i lavori al ponte", "la nuova piazza", "l'attività estiva", "il caffè letterario", "la qualità dell'aria", "la linea più lunga"},
		places:   []string{"in centro", "al porto", "in periferia", "lungo il fiume", "a Città Alta", "perché è urgente"},
	}
	site := &demoSite{now: now, pages: map[string]*demoPage{}}
	for i, p := range []*demoPage{
		{path: "/news.html", title: "Harbour Town Daily", description: "Local news from Harbour Town, updated whenever something happens", lang: "en", headlines: en, keep: 12},
		{path: "/cronaca.html", title: "Cronaca di Città Vecchia", description: "Notizie locali, città e attualità", lang: "it", latin1: true, headlines: it, keep: 12},
	} {
		p.rng = rand.New(rand.NewPCG(seed+uint64(i)*demoSeedOffset, seed^0x9e3779b97f4a7c15))
		for k := 3; k > 0; k-- { // a short back catalogue, so the first version has items
			p.add(start.Add(-time.Duration(k) * demoBurstGap))
		}
		p.burst = true // start with news, so that a newcomer sees action at once
		p.stateEnd = start.Add(p.exp(demoBurstLen))
		p.next = start.Add(p.exp(demoBurstGap))
		site.pages[p.path] = p
	}
	return site
}

// exp draws an exponential duration with the given mean.
func (p *demoPage) exp(mean time.Duration) time.Duration {
	return time.Duration(p.rng.ExpFloat64() * float64(mean))
}

// add appends an article that appeared at at.
func (p *demoPage) add(at time.Time) {
	w := p.headlines
	pick := func(s []string) string { return s[p.rng.IntN(len(s))] }
	n := len(p.articles) + 1
	title := fmt.Sprintf("%s %s %s %s", pick(w.subjects), pick(w.verbs), pick(w.objects), pick(w.places))
	summary := fmt.Sprintf("%s: %s %s.", title, pick(w.verbs), pick(w.objects))
	if p.lang == "it" {
		summary = fmt.Sprintf("Aggiornamento n. %d: %s. Più dettagli in giornata, perché la città è in attesa.", n, title)
	} else {
		summary = fmt.Sprintf("Update no. %d: %s. More details later today.", n, summary)
	}
	p.articles = append(p.articles, demoArticle{n: n, at: at, title: title, summary: summary})
}

// advance generates the arrivals up to now. The next arrival is drawn ahead
// of time, so the articles depend on the seed alone, never on when the site
// is asked.
func (p *demoPage) advance(now time.Time) {
	for {
		if p.stateEnd.Before(p.next) { // the state changes before the next arrival
			if p.stateEnd.After(now) {
				return
			}
			p.burst = !p.burst
			length := demoCalmLen
			if p.burst {
				length = demoBurstLen
			}
			at := p.stateEnd
			p.stateEnd = at.Add(p.exp(length))
			p.next = at.Add(p.exp(p.gap())) // memoryless: redraw from the switch
			continue
		}
		if p.next.After(now) {
			return
		}
		p.add(p.next)
		p.next = p.next.Add(p.exp(p.gap()))
	}
}

// gap is the mean time between articles in the current state.
func (p *demoPage) gap() time.Duration {
	if p.burst {
		return demoBurstGap
	}
	return demoCalmGap
}

// ServeHTTP serves the pages, an article page per article and robots.txt.
func (s *demoSite) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodGet && r.Method != http.MethodHead {
		w.Header().Set("Allow", "GET, HEAD")
		http.Error(w, "method not allowed", http.StatusMethodNotAllowed)
		return
	}
	now := s.now()
	switch {
	case r.URL.Path == "/robots.txt":
		w.Header().Set("Content-Type", "text/plain; charset=utf-8")
		_, _ = w.Write([]byte("User-agent: *\nAllow: /\n")) // client gone: nothing to do
		return
	case r.URL.Path == "/":
		s.serveIndex(w)
		return
	}
	if p, ok := s.pages[r.URL.Path]; ok {
		p.serve(w, now)
		return
	}
	for _, p := range s.pages {
		if rest, ok := strings.CutPrefix(r.URL.Path, strings.TrimSuffix(p.path, ".html")+"/"); ok {
			n, err := strconv.Atoi(strings.TrimSuffix(rest, ".html"))
			if err == nil {
				p.serveArticle(w, n, now)
				return
			}
		}
	}
	http.NotFound(w, r)
}

func (s *demoSite) serveIndex(w http.ResponseWriter) {
	var b strings.Builder
	b.WriteString("<html><head><title>Legacy sites</title></head><body><ul>\n")
	for _, path := range []string{"/news.html", "/cronaca.html"} {
		fmt.Fprintf(&b, "<li><a href=\"%s\">%s</a></li>\n", path, html.EscapeString(s.pages[path].title))
	}
	b.WriteString("</ul></body></html>\n")
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	_, _ = w.Write([]byte(b.String())) // client gone: nothing to do
}

// serve writes the page the way a 2005 CMS would: tables, no feed, and the
// webmaster's annotations in comments.
func (p *demoPage) serve(w http.ResponseWriter, now time.Time) {
	p.mu.Lock()
	p.advance(now)
	var visible []demoArticle
	for i := len(p.articles) - 1; i >= 0 && len(visible) < p.keep; i-- {
		if !p.articles[i].at.After(now) {
			visible = append(visible, p.articles[i])
		}
	}
	p.mu.Unlock()

	charset := "utf-8"
	if p.latin1 {
		charset = "ISO-8859-1"
	}
	esc := html.EscapeString
	var b strings.Builder
	fmt.Fprintf(&b, "<html>\n<head>\n<meta http-equiv=\"Content-Type\" content=\"text/html; charset=%s\">\n", charset)
	fmt.Fprintf(&b, "<title>%s</title>\n</head>\n<body bgcolor=\"#ffffff\">\n", esc(p.title))
	fmt.Fprintf(&b, "<table width=\"100%%\"><tr><td><font size=\"5\"><b><!-- <channel:title> -->%s<!-- </channel:title> --></b></font></td></tr>\n", esc(p.title))
	fmt.Fprintf(&b, "<tr><td><i><!-- <channel:description> -->%s<!-- </channel:description> --></i></td></tr>\n", esc(p.description))
	fmt.Fprintf(&b, "<!-- <channel:extension uri=\"http://purl.org/dc/elements/1.1/\" prefix=\"dc\" localName=\"language\"> -->%s<!-- </channel:extension> -->\n", p.lang)
	b.WriteString("</table>\n<table width=\"100%\" cellpadding=\"4\">\n")
	for i, a := range visible {
		idx := i + 1
		link := fmt.Sprintf("%s/%d.html", strings.TrimSuffix(p.path, ".html"), a.n)
		// The item id is the page's own article number, so ids do not depend
		// on the site's address (a restarted demo gets another port).
		fmt.Fprintf(&b, "<tr><td><font size=\"4\"><!-- <item:link index=\"%d\" id=\"%s-%d\"> --><a href=\"%s\"><!-- <item:title index=\"%d\"> -->%s<!-- </item:title> --></a><!-- </item:link> --></font><br>\n",
			idx, strings.TrimSuffix(strings.TrimPrefix(p.path, "/"), ".html"), a.n, link, idx, esc(a.title))
		fmt.Fprintf(&b, "<small><!-- <item:extension index=\"%d\" uri=\"http://purl.org/dc/elements/1.1/\" prefix=\"dc\" localName=\"date\"> -->%s<!-- </item:extension> --></small><br>\n",
			idx, a.at.UTC().Format(time.RFC1123))
		more := "Read more"
		if p.lang == "it" {
			more = "Continua"
		}
		// Markup and a relative link inside the description: content:encoded
		// keeps them (made absolute). The "read more" link stays outside the
		// region, so it is not part of the description's text.
		fmt.Fprintf(&b, "<!-- <item:description index=\"%d\"> --><a href=\"%s\"><i>%s</i></a><!-- </item:description> --> <a href=\"%s\"><b>%s</b></a></td></tr>\n",
			idx, strings.TrimPrefix(link, "/"), esc(a.summary), strings.TrimPrefix(link, "/"), more)
	}
	b.WriteString("</table>\n<hr><small>Powered by a CMS from 2005. No RSS here.</small>\n</body>\n</html>\n")
	p.write(w, b.String())
}

func (p *demoPage) serveArticle(w http.ResponseWriter, n int, now time.Time) {
	p.mu.Lock()
	p.advance(now)
	var a demoArticle
	ok := n >= 1 && n <= len(p.articles)
	if ok {
		a = p.articles[n-1]
	}
	p.mu.Unlock()
	if !ok {
		http.Error(w, "no such article", http.StatusNotFound)
		return
	}
	esc := html.EscapeString
	p.write(w, fmt.Sprintf("<html><head><title>%s</title></head><body><h1>%s</h1><p>%s</p><p><a href=\"%s\">%s</a></p></body></html>\n",
		esc(a.title), esc(a.title), esc(a.summary), p.path, esc(p.title)))
}

// write sends an HTML page, encoded to Latin-1 bytes for a Latin-1 page.
func (p *demoPage) write(w http.ResponseWriter, page string) {
	body := []byte(page)
	ct := "text/html; charset=utf-8"
	if p.latin1 {
		enc := encoding.ReplaceUnsupported(charmap.ISO8859_1.NewEncoder())
		s, err := enc.String(page)
		if err != nil { // cannot happen with ReplaceUnsupported; never send mojibake silently
			http.Error(w, "encode page: "+err.Error(), http.StatusInternalServerError)
			return
		}
		body = []byte(s)
		ct = "text/html; charset=ISO-8859-1"
	}
	w.Header().Set("Content-Type", ct)
	w.Header().Set("Content-Length", strconv.Itoa(len(body)))
	_, _ = w.Write(body) // client gone: nothing to do
}
