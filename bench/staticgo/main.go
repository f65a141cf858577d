// Command staticgo serves one file's bytes from memory with bare net/http:
// bench/serve.sh's measure of what Go's HTTP server alone costs on this
// machine, between nginx and dynamo.
package main

import (
	"flag"
	"fmt"
	"net/http"
	"os"
	"time"
)

func main() {
	listen := flag.String("listen", "127.0.0.1:18183", "listen address")
	file := flag.String("file", "", "file to serve at every path")
	contentType := flag.String("content-type", "application/rss+xml; charset=utf-8", "Content-Type of the answers")
	flag.Parse()
	body, err := os.ReadFile(*file)
	if err != nil {
		fmt.Fprintf(os.Stderr, "staticgo: %v\n", err)
		os.Exit(1)
	}
	srv := &http.Server{
		Addr:              *listen,
		ReadHeaderTimeout: 5 * time.Second,
		Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", *contentType)
			_, _ = w.Write(body) // client gone: nothing to do
		}),
	}
	if err := srv.ListenAndServe(); err != nil {
		fmt.Fprintf(os.Stderr, "staticgo: %v\n", err)
		os.Exit(1)
	}
}
