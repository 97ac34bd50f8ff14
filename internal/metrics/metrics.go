// Package metrics holds remessa's Prometheus metrics, one registry for the
// process, and the handler that serves it on /metrics.
//
// Every metric of remessa is defined here, with a small API for the code
// that moves it (metrics.ReminderSent, metrics.SignInFailed, an APIRoute's
// Observe…), so names, help texts and labels are in one place. No label
// carries a CPF, a name, an id, a URL with ids or a secret: the labels are
// closed sets (a route's pattern, an HTTP status, a state, a channel) and
// the functions that take a label value from a caller refuse one that is
// not of its set (it becomes "outro").
package metrics

import (
	"net/http"
	"strconv"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"
)

// Registry is the process's registry: remessa's metrics, the Go runtime's
// and the process's (CPU, memory, open files).
var Registry = prometheus.NewRegistry()

// Handler serves Registry in Prometheus' text format (GET /metrics).
func Handler() http.Handler {
	return promhttp.HandlerFor(Registry, promhttp.HandlerOpts{Registry: Registry})
}

// Register adds a collector to Registry (a process's own gauges read at
// scrape time: runs by state, River's queue). It reports false when c's
// metrics are registered already (by c or another collector of the same
// metrics: the first one stays).
func Register(c prometheus.Collector) bool {
	return Registry.Register(c) == nil
}

func init() {
	Registry.MustRegister(collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}),
		apiCalls, apiDuration, apiRetries, apiThrottled,
		rowsTotal, runsTotal,
		notificationsReceived, notificationsApplied, notificationsRefused,
		remindersSent, signInFailures, signIns, httpRequests)
}

var (
	apiCalls = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "remessa_api_calls_total",
		Help: "Calls to the service by API (v1, pix), route pattern and HTTP status (\"erro\": no answer); each attempt counts.",
	}, []string{"api", "route", "status"})
	apiDuration = prometheus.NewHistogramVec(prometheus.HistogramOpts{
		Name:    "remessa_api_call_duration_seconds",
		Help:    "Time of one attempt of a call to the service, by API and route pattern.",
		Buckets: []float64{.002, .005, .01, .025, .05, .1, .25, .5, 1, 2.5, 5, 10, 30},
	}, []string{"api", "route"})
	apiRetries = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "remessa_api_retries_total",
		Help: "Attempts sent again by the client, by API, route pattern and reason (429, 5xx, rede, 401).",
	}, []string{"api", "route", "reason"})
	apiThrottled = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "remessa_api_throttled_total",
		Help: "Answers 429 (too many requests) from the service, by API and route pattern.",
	}, []string{"api", "route"})

	rowsTotal = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "remessa_rows_total",
		Help: "Rows of runs that reached a final state in this process, by kind (carnets, cobv, boletos) and state (issued, denied, refused).",
	}, []string{"kind", "state"})
	runsTotal = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "remessa_runs_finished_total",
		Help: "Runs this process finished, by outcome (complete, incomplete, failed).",
	}, []string{"outcome"})

	notificationsReceived = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "remessa_notifications_received_total",
		Help: "Notifications kept in the listener's inbox, by source (charges, pix).",
	}, []string{"source"})
	notificationsApplied = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "remessa_notifications_applied_total",
		Help: "Notifications the listener applied to the runs' ledgers, by source and outcome (applied, unknown: no run of ours, refused: the service denies it, failed).",
	}, []string{"source", "outcome"})
	notificationsRefused = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "remessa_notifications_refused_total",
		Help: "Deliveries the desk's notification endpoints refused before keeping them, by reason (unknown_address, rate, too_large, bad_request, unavailable).",
	}, []string{"reason"})

	remindersSent = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "remessa_reminders_sent_total",
		Help: "Payment reminders of the régua de cobrança, by channel (service: the service's own e-mail; smtp: remessa's own; outro) and outcome (sent; failed: refused for good; uncertain: the answer was lost).",
	}, []string{"channel", "outcome"})

	signIns = prometheus.NewCounter(prometheus.CounterOpts{
		Name: "remessa_web_sign_ins_total",
		Help: "Successful sign-ins to the desk.",
	})
	signInFailures = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "remessa_web_sign_in_failures_total",
		Help: "Refused sign-ins to the desk, by reason (password: wrong user or password, throttled, token: a stale form).",
	}, []string{"reason"})
	httpRequests = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "remessa_http_requests_total",
		Help: "Requests served by a remessa server (web, listen, sandbox, worker), by server and status class (2xx, 3xx, 4xx, 5xx).",
	}, []string{"server", "class"})
)

// RowsFinished counts n rows of a run of kind that reached state.
func RowsFinished(kind, state string, n int) {
	if n <= 0 {
		return
	}
	rowsTotal.WithLabelValues(oneOf(kind, "carnets", "cobv", "boletos"), oneOf(state, "issued", "denied", "refused")).Add(float64(n))
}

// RunFinished counts a run this process finished: complete (every row
// final), incomplete (stopped or left rows to resume) or failed (an error
// ended it).
func RunFinished(outcome string) {
	runsTotal.WithLabelValues(oneOf(outcome, "complete", "incomplete", "failed")).Inc()
}

// NotificationReceived counts a notification the listener kept; source is
// "charges" or "pix".
func NotificationReceived(source string) {
	notificationsReceived.WithLabelValues(oneOf(source, "charges", "pix")).Inc()
}

// NotificationApplied counts a notification the listener worked: outcome
// "applied", "unknown" (no run of ours), "refused" (the service denies
// it) or "failed".
func NotificationApplied(source, outcome string) {
	notificationsApplied.WithLabelValues(oneOf(source, "charges", "pix"), oneOf(outcome, "applied", "unknown", "refused", "failed")).Inc()
}

// NotificationRefused counts a delivery the desk's endpoints refused
// before keeping it: reason "unknown_address" (no account has the path's
// token), "rate", "too_large", "bad_request" or "unavailable".
func NotificationRefused(reason string) {
	notificationsRefused.WithLabelValues(oneOf(reason, "unknown_address", "rate", "too_large", "bad_request", "unavailable")).Inc()
}

// ReminderSent counts one payment reminder the régua tried: channel is
// the régua's channel name, "service" (the service's resend) or "smtp"
// (remessa's own e-mail), anything else counting as "outro"; outcome
// "sent", "failed" (refused for good) or "uncertain" (the answer was
// lost). pipeline/remind calls it once per message that went out or may
// have, for both faces (`remessa remind` and the desk).
func ReminderSent(channel, outcome string) {
	remindersSent.WithLabelValues(oneOf(channel, "service", "smtp"), oneOf(outcome, "sent", "failed", "uncertain")).Inc()
}

// SignIn counts a successful sign-in to the desk.
func SignIn() { signIns.Inc() }

// SignInFailed counts a refused sign-in: reason "password", "throttled" or
// "token".
func SignInFailed(reason string) {
	signInFailures.WithLabelValues(oneOf(reason, "password", "throttled", "token")).Inc()
}

// Server counts the answers of one server by status class, with its
// children resolved once.
type Server struct{ classes [6]prometheus.Counter }

// NewServer is the request counter of server ("web", "listen", "sandbox",
// "worker").
func NewServer(server string) *Server {
	s := &Server{}
	for i := range s.classes {
		s.classes[i] = httpRequests.WithLabelValues(oneOf(server, "web", "listen", "sandbox", "worker"), strconv.Itoa(i)+"xx")
	}
	return s
}

// Answered counts an answer with status.
func (s *Server) Answered(status int) {
	if c := status / 100; c >= 1 && c <= 5 {
		s.classes[c].Inc()
	}
}

// Middleware counts every answer of next by status class.
func (s *Server) Middleware(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		sw := &statusWriter{ResponseWriter: w, status: http.StatusOK}
		next.ServeHTTP(sw, r)
		s.Answered(sw.status)
	})
}

type statusWriter struct {
	http.ResponseWriter
	status int
	wrote  bool
}

func (w *statusWriter) WriteHeader(code int) {
	if !w.wrote {
		w.status, w.wrote = code, true
	}
	w.ResponseWriter.WriteHeader(code)
}

func (w *statusWriter) Write(b []byte) (int, error) {
	w.wrote = true
	return w.ResponseWriter.Write(b)
}

// Flush lets a server-sent events handler flush through the counter.
func (w *statusWriter) Flush() {
	if f, ok := w.ResponseWriter.(http.Flusher); ok {
		f.Flush()
	}
}

// Unwrap gives http.ResponseController the writer underneath.
func (w *statusWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }

// oneOf is v when it is one of set, else "outro": a label value never comes
// from data.
func oneOf(v string, set ...string) string {
	for _, s := range set {
		if v == s {
			return v
		}
	}
	return "outro"
}
