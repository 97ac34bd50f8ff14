package sandbox

import (
	"context"
	"net/http"

	"remessa/internal/health"
	"remessa/internal/metrics"
)

// withOps serves GET /healthz, GET /readyz (the store answers) and GET
// /metrics ahead of next, outside the faults, the clock and the access log
// (docs/operations.md).
func (s *Server) withOps(next http.Handler) http.Handler {
	ops := http.NewServeMux()
	health.Mount(ops, s.log, health.Check{Name: "banco", Fail: "o banco do sandbox não responde", Run: func(ctx context.Context) error {
		var v struct{}
		_, err := s.st.Get(ctx, "health", "", "ping", &v)
		return err
	}})
	ops.Handle("GET /metrics", metrics.Handler())
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/healthz", "/readyz", "/metrics":
			ops.ServeHTTP(w, r)
			return
		}
		next.ServeHTTP(w, r)
	})
}
