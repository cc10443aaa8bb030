package main

import (
	"fmt"
	"net"
	"os"
	"sync/atomic"
	"net/http"
)

type atomicHandler = atomic.Pointer[http.Handler]

// printReady tells the user exactly what to export for the official SDKs.
func printReady(cfg *serveConfig, addr, key string, generated bool) {
	host, port, _ := net.SplitHostPort(addr)
	if ip := net.ParseIP(host); ip != nil && ip.IsUnspecified() {
		host = "127.0.0.1"
	}
	url := "http://" + net.JoinHostPort(host, port)
	w := os.Stdout
	fmt.Fprintf(w, "\nwarren is ready on %s (runtime %s)\n\n", url, cfg.Runtime)
	if generated {
		fmt.Fprintln(w, "A new admin API key was generated; it is shown only now:")
	} else {
		fmt.Fprintln(w, "Using the admin API key from WARREN_API_KEY.")
	}
	fmt.Fprintf(w, "\n  export E2B_API_KEY=%s\n", key)
	fmt.Fprintf(w, "  export E2B_API_URL=%s\n", url)
	fmt.Fprintf(w, "  export E2B_SANDBOX_URL=%s\n", url)
	fmt.Fprintf(w, "  export E2B_DOMAIN=%s\n\n", cfg.Domain)
}
