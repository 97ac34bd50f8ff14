package run

import (
	"context"
	"net"
	"net/http"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/rs/zerolog"

	"remessa/internal/health"
	"remessa/internal/metrics"
	"remessa/pipeline/cluster"
)

// serveWorkerOps serves a worker's GET /healthz, GET /readyz (PostgreSQL
// answers, River's tables answer, the service of --base-url answers when
// one is given) and GET /metrics (with River's jobs by queue and state) on
// addr until ctx ends, and returns the address it listens on.
func serveWorkerOps(ctx context.Context, addr string, db *cluster.DB, o WorkerOptions) (string, error) {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return "", err
	}
	metrics.Register(&riverCollector{db: db})
	checks := []health.Check{
		{Name: "banco", Fail: "o banco PostgreSQL não responde", Run: db.Pool.Ping},
		{Name: "fila", Fail: "a fila de unidades (River) não responde", Run: func(ctx context.Context) error {
			var n int
			return db.Pool.QueryRow(ctx, `SELECT count(*) FROM river_job WHERE state = 'running'`).Scan(&n)
		}},
	}
	if o.Options.BaseURL != "" {
		checks = append(checks, health.Check{Name: "servico", Fail: "o serviço de cobranças não responde",
			Run: health.Reachable(&http.Client{Timeout: health.Timeout}, o.Options.BaseURL)})
	}
	mux := http.NewServeMux()
	health.Mount(mux, zerolog.Nop(), checks...)
	mux.Handle("GET /metrics", metrics.Handler())
	srv := &http.Server{Handler: metrics.NewServer("worker").Middleware(mux), ReadHeaderTimeout: 10 * time.Second}
	go srv.Serve(ln) // ends with ErrServerClosed when ctx ends
	go func() {
		<-ctx.Done()
		sctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		srv.Shutdown(sctx)
	}()
	return ln.Addr().String(), nil
}

// riverCollector reads River's jobs by queue and state from PostgreSQL at
// scrape time: available and scheduled are the queue's depth, retryable
// and discarded its failures.
type riverCollector struct{ db *cluster.DB }

var descRiverJobs = prometheus.NewDesc("remessa_river_jobs", "River's jobs by queue and state (available and scheduled: the queue's depth; retryable and discarded: failures).", []string{"queue", "state"}, nil)

func (c *riverCollector) Describe(ch chan<- *prometheus.Desc) { ch <- descRiverJobs }

func (c *riverCollector) Collect(ch chan<- prometheus.Metric) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	rows, err := c.db.Pool.Query(ctx, `SELECT queue, state::text, count(*) FROM river_job WHERE state IN ('available', 'scheduled', 'running', 'retryable', 'discarded') GROUP BY queue, state`)
	if err != nil {
		return
	}
	defer rows.Close()
	for rows.Next() {
		var q, st string
		var n int64
		if rows.Scan(&q, &st, &n) == nil {
			ch <- prometheus.MustNewConstMetric(descRiverJobs, prometheus.GaugeValue, float64(n), q, st)
		}
	}
}
