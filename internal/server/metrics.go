package server

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"time"

	"github.com/warren-sandbox/warren/internal/log"
)

// serveMetrics serves h (the Prometheus registry) on addr without a key,
// for a scraper on a private address (--metrics-listen); "" serves
// nothing. It fails at once when addr cannot be bound; bound is the
// address it listens on, and stop closes it.
func serveMetrics(ctx context.Context, addr string, h http.Handler) (bound string, stop func(), err error) {
	if addr == "" {
		return "", func() {}, nil
	}
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return "", nil, fmt.Errorf("--metrics-listen: %w", err)
	}
	mux := http.NewServeMux()
	mux.Handle("GET /metrics", h)
	srv := &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second, IdleTimeout: time.Minute}
	go func() {
		if err := srv.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
			log.G(ctx).Error("serving --metrics-listen", "err", err)
		}
	}()
	log.G(ctx).Info("serving metrics without a key", "addr", ln.Addr().String())
	return ln.Addr().String(), func() { _ = srv.Close() }, nil
}
