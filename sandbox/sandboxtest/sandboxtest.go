// Package sandboxtest helps tests run a sandbox on loopback. An
// api.Client for it comes from remessa/internal/sandboxclient: this package is part
// of the service's tree, which must not import the client. Importing it
// also registers a tiny "probe" module with routes under /v1/sandboxtest
// and /v2/sandboxtest that the core's own tests and benchmarks use (a
// trivial authenticated GET, a persisted counter, a panic, a strict
// decoder).
package sandboxtest

import (
	"net/http"
	"testing"

	"remessa/sandbox"
	"remessa/sandbox/auth"
	"remessa/sandbox/httpx"
	"remessa/sandbox/module"
	"remessa/sandbox/store"
)

// Start builds and starts a sandbox with cfg (DataDir defaults to
// ":memory:") and closes it when the test ends.
func Start(tb testing.TB, cfg sandbox.Config) *sandbox.Running {
	tb.Helper()
	if cfg.DataDir == "" {
		cfg.DataDir = sandbox.Memory
	}
	srv, err := sandbox.New(cfg)
	if err != nil {
		tb.Fatalf("sandbox.New: %v", err)
	}
	rn, err := srv.Start()
	if err != nil {
		srv.Close()
		tb.Fatalf("sandbox Start: %v", err)
	}
	tb.Cleanup(func() {
		if err := rn.Close(); err != nil {
			tb.Errorf("sandbox Close: %v", err)
		}
	})
	return rn
}

// Probe routes.
const (
	PingV1     = "/v1/sandboxtest/ping"    // GET, token: {"code":200,"data":Whoami}
	PingPix    = "/v2/sandboxtest/ping"    // GET, Pix token with scope pix.read: Whoami
	CounterV1  = "/v1/sandboxtest/counter" // POST {"by":n}: adds n (default 1), {"value":v}; GET: current value
	PanicV1    = "/v1/sandboxtest/panic"   // GET: panics
	PanicPix   = "/v2/sandboxtest/panic"   // GET: panics
	DecodeV1   = "/v1/sandboxtest/decode"  // POST a Sample: echoes it, or 3500034 with the pointer
	DecodePix  = "/v2/sandboxtest/decode"  // POST a Sample: echoes it, or a CobVOperacaoInvalida problem
	PanicAlarm = "segredo-interno-do-panic"
)

// Whoami is what the ping routes answer.
type Whoami struct {
	AccountID string `json:"account_id"`
	AppID     string `json:"app_id"`
	PayeeCode string `json:"payee_code"`
}

// Sample is the body of the decode routes.
type Sample struct {
	Name  string            `json:"name"`
	Value int               `json:"value"`
	Ratio float64           `json:"ratio,omitempty"`
	OK    *bool             `json:"ok,omitempty"`
	Items []SampleItem      `json:"items,omitempty"`
	Tags  map[string]string `json:"tags,omitempty"`
}

// SampleItem is one item of a Sample.
type SampleItem struct {
	Name   string `json:"name"`
	Amount int32  `json:"amount"`
}

// CounterValue is the answer of the counter routes.
type CounterValue struct {
	Value int64 `json:"value"`
}

type probe struct{ d module.Deps }

func init() {
	module.Register("sandboxtest", func(d module.Deps) (module.Module, error) { return &probe{d: d}, nil })
}

func (p *probe) Register(mux httpx.Mux) {
	a := p.d.Auth
	mux.Handle("GET "+PingV1, a.V1(http.HandlerFunc(whoami(true))))
	mux.Handle("GET "+PingPix, a.Pix([]string{"pix.read"}, http.HandlerFunc(whoami(false))))
	mux.Handle("POST "+CounterV1, a.V1(http.HandlerFunc(p.add)))
	mux.Handle("GET "+CounterV1, a.V1(http.HandlerFunc(p.get)))
	mux.Handle("GET "+PanicV1, a.V1(http.HandlerFunc(func(http.ResponseWriter, *http.Request) { panic(PanicAlarm) })))
	mux.Handle("GET "+PanicPix, a.Pix(nil, http.HandlerFunc(func(http.ResponseWriter, *http.Request) { panic(PanicAlarm) })))
	mux.Handle("POST "+DecodeV1, a.V1(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var s Sample
		if de := httpx.DecodeStrict(r, &s); de != nil {
			httpx.V1DecodeError(w, de)
			return
		}
		httpx.V1Data(w, s)
	})))
	mux.Handle("POST "+DecodePix, a.Pix(nil, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var s Sample
		if de := httpx.DecodeStrict(r, &s); de != nil {
			httpx.ProblemDecodeError(w, de, "CobVOperacaoInvalida")
			return
		}
		httpx.WriteJSON(w, http.StatusOK, s)
	})))
}

func whoami(v1 bool) func(w http.ResponseWriter, r *http.Request) {
	return func(w http.ResponseWriter, r *http.Request) {
		p, _ := auth.FromContext(r.Context())
		out := Whoami{AccountID: p.AccountID, AppID: p.AppID, PayeeCode: p.PayeeCode}
		if v1 {
			httpx.V1Data(w, out)
		} else {
			httpx.WriteJSON(w, http.StatusOK, out)
		}
	}
}

func counterName(account string) string { return "sandboxtest.counter." + account }

func (p *probe) add(w http.ResponseWriter, r *http.Request) {
	pr, _ := auth.FromContext(r.Context())
	var in struct {
		By int64 `json:"by"`
	}
	if r.ContentLength != 0 {
		if de := httpx.DecodeStrict(r, &in); de != nil {
			httpx.V1DecodeError(w, de)
			return
		}
	}
	if in.By <= 0 {
		in.By = 1
	}
	var v int64
	err := p.d.Store.Tx(r.Context(), func(tx *store.Tx) error {
		for i := int64(0); i < in.By; i++ {
			var err error
			if v, err = tx.NextSeq(counterName(pr.AccountID)); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		httpx.InternalError(w, r)
		return
	}
	httpx.V1Data(w, CounterValue{v})
}

func (p *probe) get(w http.ResponseWriter, r *http.Request) {
	pr, _ := auth.FromContext(r.Context())
	v, err := p.d.Store.Seq(r.Context(), counterName(pr.AccountID))
	if err != nil {
		httpx.InternalError(w, r)
		return
	}
	httpx.V1Data(w, CounterValue{v})
}
