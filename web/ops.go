package web

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"net/http"
	"sync/atomic"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/rs/zerolog"

	"remessa/internal/health"
	"remessa/internal/metrics"
)

// mountOps registers what operators use, outside the session: GET
// /healthz, GET /readyz (web.db, River, the services of the accounts) and
// GET /metrics (docs/operations.md).
func (s *Server) mountOps(m *http.ServeMux) {
	theDesk.s.Store(s)
	metrics.Register(&theDesk)
	health.Mount(m, s.log,
		health.Check{Name: "banco", Fail: "o banco de dados da mesa (web.db) não responde", Run: func(ctx context.Context) error {
			return s.db.PingContext(ctx)
		}},
		health.Check{Name: "fila", Fail: "a fila de execuções (River) não está trabalhando", Run: s.riverReady},
		health.Check{Name: "servico", Fail: "o serviço de cobranças de uma conta não responde", Run: s.servicesReady},
	)
	m.Handle("GET /metrics", metrics.Handler())
}

// riverReady: the queue's client has started and its tables answer.
func (s *Server) riverReady(ctx context.Context) error {
	if s.river == nil {
		return errNotStarted
	}
	var n int
	return s.rdb.QueryRowContext(ctx, `SELECT count(*) FROM river_job WHERE state = 'running'`).Scan(&n)
}

// servicesReady: every service an account calls answers HTTP (the
// embedded sandbox, once started, too).
func (s *Server) servicesReady(ctx context.Context) error {
	rows, err := s.db.QueryContext(ctx, `SELECT DISTINCT base_url FROM accounts WHERE service != 'embedded' AND base_url != '' LIMIT 8`)
	if err != nil {
		return err
	}
	var urls []string
	for rows.Next() {
		var u string
		if rows.Scan(&u) == nil {
			urls = append(urls, u)
		}
	}
	rows.Close()
	s.embedMu.Lock()
	if s.embed != nil {
		urls = append(urls, s.embed.URL)
	}
	s.embedMu.Unlock()
	hc := &http.Client{Timeout: health.Timeout}
	for _, u := range urls {
		if err := health.Reachable(hc, u)(ctx); err != nil {
			return err
		}
	}
	return nil
}

type opsError string

func (e opsError) Error() string { return string(e) }

const errNotStarted = opsError("not started")

// deskCollector reads the desk's gauges from web.db at scrape time: runs
// by status, active sessions, River's jobs by state.
// One process serves one desk; the collector reads the latest started.
type deskCollector struct{ s atomic.Pointer[Server] }

var theDesk deskCollector

var (
	descRuns     = prometheus.NewDesc("remessa_web_runs", "The desk's runs by status (queued, running, stopped, done, problems, failed, cancelled).", []string{"status"}, nil)
	descSessions = prometheus.NewDesc("remessa_web_sessions", "Sessions used within the idle timeout.", nil, nil)
	descJobs     = prometheus.NewDesc("remessa_river_jobs", "River's jobs by queue and state (available and scheduled: the queue's depth; retryable and discarded: failures).", []string{"queue", "state"}, nil)
)

func (c *deskCollector) Describe(ch chan<- *prometheus.Desc) {
	ch <- descRuns
	ch <- descSessions
	ch <- descJobs
}

func (c *deskCollector) Collect(ch chan<- prometheus.Metric) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	s := c.s.Load()
	if s == nil {
		return
	}
	counts := map[string]float64{}
	for _, st := range []string{"queued", "running", "stopped", "done", "problems", "failed", "cancelled"} {
		counts[st] = 0
	}
	if rows, err := s.db.QueryContext(ctx, `SELECT status, count(*) FROM runs GROUP BY status`); err == nil {
		for rows.Next() {
			var st string
			var n float64
			if rows.Scan(&st, &n) == nil {
				if _, known := counts[st]; known {
					counts[st] = n
				}
			}
		}
		rows.Close()
	}
	for st, n := range counts {
		ch <- prometheus.MustNewConstMetric(descRuns, prometheus.GaugeValue, n, st)
	}
	var sessions float64
	since := s.now().Add(-s.cfg.IdleTimeout).Unix()
	if s.db.QueryRowContext(ctx, `SELECT count(*) FROM sessions WHERE seen_at >= ?`, since).Scan(&sessions) == nil {
		ch <- prometheus.MustNewConstMetric(descSessions, prometheus.GaugeValue, sessions)
	}
	if s.rdb != nil {
		jobs := map[string]float64{}
		for _, st := range []string{"available", "scheduled", "running", "retryable", "discarded"} {
			jobs[st] = 0
		}
		if rows, err := s.rdb.QueryContext(ctx, `SELECT state, count(*) FROM river_job WHERE queue = ? GROUP BY state`, runQueue); err == nil {
			for rows.Next() {
				var st string
				var n float64
				if rows.Scan(&st, &n) == nil {
					if _, known := jobs[st]; known {
						jobs[st] = n
					}
				}
			}
			rows.Close()
		}
		for st, n := range jobs {
			ch <- prometheus.MustNewConstMetric(descJobs, prometheus.GaugeValue, n, runQueue, st)
		}
	}
}

type requestIDKey struct{}

// requestID gives each request an id: the X-Request-Id it came with when
// it is short and plain (a proxy's), else a new one; the answer carries it
// in X-Request-Id, the context in requestIDOf and in a logger (logOf) whose
// lines name it, and a run the request starts keeps it in its job's
// arguments (RunArgs.RequestID).
func (s *Server) requestID(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		id := r.Header.Get("X-Request-Id")
		if !plainID(id) {
			var b [8]byte
			rand.Read(b[:])
			id = hex.EncodeToString(b[:])
		}
		w.Header().Set("X-Request-Id", id)
		l := s.log.With().Str("request_id", id).Logger()
		ctx := context.WithValue(l.WithContext(r.Context()), requestIDKey{}, id)
		next.ServeHTTP(w, r.WithContext(ctx))
	})
}

// plainID reports whether id can be taken from a request: 1 to 64 letters,
// digits, "-" and "_".
func plainID(id string) bool {
	if len(id) == 0 || len(id) > 64 {
		return false
	}
	for i := 0; i < len(id); i++ {
		c := id[i]
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '-' || c == '_') {
			return false
		}
	}
	return true
}

// requestIDOf is the id of the request ctx belongs to ("" outside one).
func requestIDOf(ctx context.Context) string {
	id, _ := ctx.Value(requestIDKey{}).(string)
	return id
}

// logOf is the request's logger (naming its id), or def outside a request.
func logOf(ctx context.Context, def zerolog.Logger) *zerolog.Logger {
	if l := zerolog.Ctx(ctx); l != nil && l.GetLevel() != zerolog.Disabled {
		return l
	}
	return &def
}
