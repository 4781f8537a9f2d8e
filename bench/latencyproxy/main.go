// Command latencyproxy forwards HTTP requests to one upstream server after
// a fixed delay each, so that a store on 127.0.0.1 answers as one tens of
// milliseconds away does (bench/remote_cache.py puts it in front of
// versitygw). The first request a client sends on a new connection waits
// -connect-delay more: what opening a connection to a store that far away
// costs (a TCP handshake and a TLS one, two round trips), which a client
// that keeps its connections pays once. GET /__latencyproxy/count answers
// the number of requests forwarded since the last such call, and GET
// /__latencyproxy/conns the number of connections that carried one. With
// -log FILE it appends a line per request to FILE: when it arrived and when
// its answer ended (Unix microseconds), its method and its path. Not run
// in CI.
//
//	latencyproxy -listen 127.0.0.1:0 -upstream http://127.0.0.1:7070 -delay 20ms -connect-delay 40ms
//
// It prints the address it listens on, then serves until killed.
package main

import (
	"context"
	"flag"
	"fmt"
	"log"
	"net"
	"net/http"
	"net/http/httputil"
	"net/url"
	"os"
	"sync"
	"sync/atomic"
	"time"
)

// connKey is the context key of a connection's flag: set once it carried
// a forwarded request.
type connKey struct{}

func main() {
	listen := flag.String("listen", "127.0.0.1:0", "the address to listen on (loopback)")
	upstream := flag.String("upstream", "", "the server to forward to, http://host:port")
	delay := flag.Duration("delay", 20*time.Millisecond, "how long each request waits before it is forwarded")
	connectDelay := flag.Duration("connect-delay", 0, "how much longer the first request on a connection waits")
	logPath := flag.String("log", "", "append a line per request to this file: start and end (Unix µs), method, path")
	flag.Parse()
	var logMu sync.Mutex
	var logFile *os.File
	if *logPath != "" {
		f, err := os.OpenFile(*logPath, os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o644)
		if err != nil {
			log.Fatal(err)
		}
		logFile = f
	}
	u, err := url.Parse(*upstream)
	if err != nil || u.Host == "" {
		log.Fatalf("latencyproxy: -upstream %q: want http://host:port", *upstream)
	}
	ln, err := net.Listen("tcp", *listen)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(ln.Addr())
	rp := httputil.NewSingleHostReverseProxy(u)
	var n, conns atomic.Int64
	mux := http.NewServeMux()
	mux.HandleFunc("/__latencyproxy/count", func(w http.ResponseWriter, _ *http.Request) {
		fmt.Fprintln(w, n.Swap(0))
	})
	mux.HandleFunc("/__latencyproxy/conns", func(w http.ResponseWriter, _ *http.Request) {
		fmt.Fprintln(w, conns.Swap(0))
	})
	mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		n.Add(1)
		start := time.Now()
		d := *delay
		if used := r.Context().Value(connKey{}).(*atomic.Bool); !used.Swap(true) {
			conns.Add(1)
			d += *connectDelay
		}
		time.Sleep(d)
		rp.ServeHTTP(w, r)
		if logFile != nil {
			logMu.Lock()
			fmt.Fprintf(logFile, "%d %d %s %s\n", start.UnixMicro(), time.Now().UnixMicro(), r.Method, r.URL.Path)
			logMu.Unlock()
		}
	})
	srv := &http.Server{
		Handler: mux,
		ConnContext: func(ctx context.Context, _ net.Conn) context.Context {
			return context.WithValue(ctx, connKey{}, new(atomic.Bool))
		},
	}
	log.Fatal(srv.Serve(ln))
}
