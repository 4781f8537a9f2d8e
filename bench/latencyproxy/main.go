// Command latencyproxy forwards HTTP requests to one upstream server after
// a fixed delay each, so that a store on 127.0.0.1 answers as one tens of
// milliseconds away does (bench/remote_cache.py puts it in front of
// versitygw). GET /__latencyproxy/count answers the number of requests
// forwarded since the last such call. Not run in CI.
//
//	latencyproxy -listen 127.0.0.1:0 -upstream http://127.0.0.1:7070 -delay 20ms
//
// It prints the address it listens on, then serves until killed.
package main

import (
	"flag"
	"fmt"
	"log"
	"net"
	"net/http"
	"net/http/httputil"
	"net/url"
	"sync/atomic"
	"time"
)

func main() {
	listen := flag.String("listen", "127.0.0.1:0", "the address to listen on (loopback)")
	upstream := flag.String("upstream", "", "the server to forward to, http://host:port")
	delay := flag.Duration("delay", 20*time.Millisecond, "how long each request waits before it is forwarded")
	flag.Parse()
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
	var n atomic.Int64
	mux := http.NewServeMux()
	mux.HandleFunc("/__latencyproxy/count", func(w http.ResponseWriter, _ *http.Request) {
		fmt.Fprintln(w, n.Swap(0))
	})
	mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		n.Add(1)
		time.Sleep(*delay)
		rp.ServeHTTP(w, r)
	})
	log.Fatal(http.Serve(ln, mux))
}
