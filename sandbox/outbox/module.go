package outbox

import (
	"net/http"
	"strconv"
	"time"

	"remessa/sandbox/httpx"
	"remessa/sandbox/module"
)

func init() {
	module.RegisterNotifier("outbox", func(d module.Deps) (module.Notifier, error) {
		return New(d.Store, d.Clock, Options{Logger: d.Logger, Speedup: d.NotifySpeedup}), nil
	})
}

// DeliveryView is a delivery as the control routes show it (the body as
// text: it is a form or a JSON document).
type DeliveryView struct {
	ID          int64      `json:"id"`
	URL         string     `json:"url"`
	ContentType string     `json:"content_type"`
	Body        string     `json:"body"`
	State       string     `json:"state"`
	CreatedAt   time.Time  `json:"created_at"`
	Attempts    int        `json:"attempts"`
	NextAt      *time.Time `json:"next_at,omitempty"`
	LastAt      *time.Time `json:"last_attempt_at,omitempty"`
	LastStatus  int        `json:"last_status,omitempty"`
	LastError   string     `json:"last_error,omitempty"`
	DoneAt      *time.Time `json:"done_at,omitempty"`
}

// Listing is the answer of GET /sandbox/outbox.
type Listing struct {
	Pending []DeliveryView `json:"pending,omitempty"`
	Done    []DeliveryView `json:"done,omitempty"`
	Now     time.Time      `json:"now"`
}

func view(d Delivery) DeliveryView {
	v := DeliveryView{ID: d.ID, URL: d.URL, ContentType: d.ContentType, Body: string(d.Body), State: d.State,
		CreatedAt: d.CreatedAt, Attempts: d.Attempts, LastAt: d.LastAt, LastStatus: d.LastStatus,
		LastError: d.LastError, DoneAt: d.DoneAt}
	if d.State == StatePending {
		next := d.NextAt
		v.NextAt = &next
	}
	return v
}

// Register serves the outbox's control routes (loopback only, no token):
//
//	GET  /sandbox/outbox?state=pending|done&limit=N   deliveries, newest last
//	POST /sandbox/outbox/run                           deliver what is due now
func (o *Outbox) Register(mux httpx.Mux) {
	mux.HandleFunc("GET /sandbox/outbox", o.handleList)
	mux.HandleFunc("POST /sandbox/outbox/run", o.handleRun)
}

func (o *Outbox) handleList(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	state := q.Get("state")
	if state != "" && state != "pending" && state != "done" {
		httpx.WriteJSON(w, http.StatusBadRequest, map[string]string{"error": "invalid_request",
			"message": "state " + strconv.Quote(state) + ": use pending ou done"})
		return
	}
	limit := 100
	if s := q.Get("limit"); s != "" {
		n, err := strconv.Atoi(s)
		if err != nil || n < 1 || n > 10000 {
			httpx.WriteJSON(w, http.StatusBadRequest, map[string]string{"error": "invalid_request",
				"message": "limit " + strconv.Quote(s) + ": use um inteiro de 1 a 10000"})
			return
		}
		limit = n
	}
	var out Listing
	for _, k := range []struct{ name, kind string }{{"pending", KindPending}, {"done", KindDone}} {
		if state != "" && state != k.name {
			continue
		}
		ds, err := o.list(r.Context(), k.kind)
		if err != nil {
			o.opt.Logger.Error().Err(err).Msg("outbox: list")
			httpx.InternalError(w, r)
			return
		}
		if len(ds) > limit {
			ds = ds[len(ds)-limit:]
		}
		vs := make([]DeliveryView, 0, len(ds))
		for _, d := range ds {
			vs = append(vs, view(d))
		}
		if k.name == "pending" {
			out.Pending = vs
		} else {
			out.Done = vs
		}
	}
	out.Now = o.clk.Now().UTC()
	httpx.WriteJSON(w, http.StatusOK, out)
}

func (o *Outbox) handleRun(w http.ResponseWriter, r *http.Request) {
	n, err := o.RunDue(r.Context())
	if err != nil {
		o.opt.Logger.Error().Err(err).Msg("outbox: run")
		httpx.InternalError(w, r)
		return
	}
	httpx.WriteJSON(w, http.StatusOK, map[string]int{"delivered": n})
}
