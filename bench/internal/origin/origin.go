// Package origin is the loopback legacy site the benchmark programs under
// bench/ poll: annotated pages /p/{i} whose bytes stay the same from one
// request to the next (no validators), so a second poll finds nothing new,
// with a count of the requests.
package origin

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"slices"
	"strconv"
	"sync"
	"sync/atomic"
	"time"
)

// Origin serves annotated pages /p/{i}: the same bytes for a page every
// time (no validators), so a second poll finds nothing new.
type Origin struct {
	srv  *http.Server
	base string
	Hits atomic.Int64 // requests served

	mu  sync.Mutex
	log []Request
}

func Start() (*Origin, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	o := &Origin{base: "http://" + ln.Addr().String()}
	mux := http.NewServeMux()
	mux.HandleFunc("GET /p/{i}", func(w http.ResponseWriter, r *http.Request) {
		o.Hits.Add(1)
		i := r.PathValue("i")
		if n, err := strconv.Atoi(i); err == nil {
			o.mu.Lock()
			o.log = append(o.log, Request{At: time.Now(), Page: n, Agent: r.UserAgent()})
			o.mu.Unlock()
		}
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		fmt.Fprintf(w, page, i, i, i, i, i, i, i, i)
	})
	o.srv = &http.Server{Handler: mux, ReadHeaderTimeout: 5 * time.Second}
	go func() { _ = o.srv.Serve(ln) }()
	return o, nil
}

func (o *Origin) Reset() {
	o.Hits.Store(0)
	o.mu.Lock()
	o.log = nil
	o.mu.Unlock()
}

// Request is one request the origin served.
type Request struct {
	At    time.Time
	Page  int
	Agent string // the poller's User-Agent
}

// Requests returns the requests served since the last Reset, in order.
func (o *Origin) Requests() []Request {
	o.mu.Lock()
	defer o.mu.Unlock()
	return slices.Clone(o.log)
}

// HostURL is the origin's base URL for page i: one loopback host for all
// (the configuration turns per-host politeness off).
func (o *Origin) HostURL(int) string { return o.base }

func (o *Origin) Close() { _ = o.srv.Shutdown(context.Background()) }

// page is a small annotated legacy page with three items.
const page = `<html><head><title>Page %s</title></head><body>
<!-- <channel:title> -->Page %s news<!-- </channel:title> -->
<table>
<tr><td><!-- <item:title index="1"> -->First story of page %s<!-- </item:title> --></td>
<td><!-- <item:description index="1"> -->The council met on Tuesday to discuss the harbour budget and the new school.<!-- </item:description> --></td>
<td><!-- <item:link index="1"> --><a href="/s/%s/1">more</a><!-- </item:link> --></td></tr>
<tr><td><!-- <item:title index="2"> -->Second story of page %s<!-- </item:title> --></td>
<td><!-- <item:description index="2"> -->Roadworks on the main street will last until the end of the month.<!-- </item:description> --></td>
<td><!-- <item:link index="2"> --><a href="/s/%s/2">more</a><!-- </item:link> --></td></tr>
<tr><td><!-- <item:title index="3"> -->Third story of page %s<!-- </item:title> --></td>
<td><!-- <item:description index="3"> -->The library opens on Sundays from next week.<!-- </item:description> --></td>
<td><!-- <item:link index="3"> --><a href="/s/%s/3">more</a><!-- </item:link> --></td></tr>
</table></body></html>`
