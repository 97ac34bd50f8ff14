package control_test

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"sync"
	"testing"
	"time"

	"github.com/rs/zerolog"

	"remessa/api"
	"remessa/sandbox/auth"
	"remessa/sandbox/charges"
	"remessa/sandbox/clock"
	"remessa/sandbox/control"
	"remessa/sandbox/documents"
	"remessa/sandbox/httpx"
	"remessa/sandbox/module"
	"remessa/sandbox/outbox"
	"remessa/sandbox/store"
)

var ctx = context.Background()

// t0 is 2026-03-02 10:00 in São Paulo.
var t0 = time.Date(2026, 3, 2, 13, 0, 0, 0, time.UTC)

const (
	clientID = "Client_Id_control_test"
	secret   = "Client_Secret_control_test"
)

// env is a sandbox assembled by hand from the core's store and auth, the
// charges module, the outbox, the document routes and the control routes,
// on loopback, with a fake clock (the core has no module lookup yet, see
// docs/sandbox-controls.md).
type env struct {
	t     *testing.T
	path  string
	clk   *clock.Fake
	st    *store.Store
	auth  *auth.Service
	creds auth.Credentials
	ob    *outbox.Outbox
	ch    *charges.Module
	srv   *httptest.Server
	c     *api.Client
}

func newEnv(t *testing.T, path string) *env {
	e := &env{t: t, path: path, clk: clock.NewFake(t0)}
	e.open()
	t.Cleanup(e.close)
	return e
}

func (e *env) open() {
	t := e.t
	path := e.path
	if path == "" {
		path = store.Memory
	}
	var err error
	if e.st, err = store.Open(path); err != nil {
		t.Fatal(err)
	}
	if e.auth, err = auth.New(ctx, e.st, auth.Options{Clock: e.clk}); err != nil {
		t.Fatal(err)
	}
	if e.creds, err = e.auth.Bootstrap(ctx, clientID, secret); err != nil {
		t.Fatal(err)
	}
	e.ob = outbox.New(e.st, e.clk, outbox.Options{})
	mux := http.NewServeMux()
	var base string
	deps := module.Deps{Store: e.st, Clock: e.clk, Auth: e.auth, Notify: e.ob, Logger: zerolog.Nop(),
		BaseURL: func(r *http.Request) string { return "http://" + r.Host }, URL: func() string { return base }}
	if e.ch, err = charges.New(deps); err != nil {
		t.Fatal(err)
	}
	e.auth.Register(mux)
	e.ch.Register(mux)
	e.ob.Register(mux)
	control.New(deps, control.StaticCharges(e.ch)).Register(mux)
	documents.New(documents.StaticSource(e.ch), zerolog.Nop()).Register(mux)
	e.srv = httptest.NewServer(httpx.Recover(zerolog.Nop(), mux))
	base = e.srv.URL
	if e.c, err = api.New(api.Config{BaseURL: e.srv.URL, ClientID: clientID, ClientSecret: secret, MaxRetries: -1,
		Now: e.clk.Now}); err != nil {
		t.Fatal(err)
	}
}

func (e *env) close() {
	if e.srv != nil {
		e.srv.Close()
		e.st.Close()
		e.srv = nil
	}
}

// restart closes the server and the store and opens them again on the
// same file, as after kill -9 and a new start.
func (e *env) restart() {
	e.close()
	e.open()
}

// control posts body to a control route and decodes the answer into out.
func (e *env) control(method, path string, body any, out any) int {
	e.t.Helper()
	var rd io.Reader
	if body != nil {
		b, _ := json.Marshal(body)
		rd = bytes.NewReader(b)
	}
	req, _ := http.NewRequest(method, e.srv.URL+path, rd)
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		e.t.Fatal(err)
	}
	defer resp.Body.Close()
	raw, _ := io.ReadAll(resp.Body)
	if out != nil {
		if err := json.Unmarshal(raw, out); err != nil {
			e.t.Fatalf("%s %s: %d %s: %v", method, path, resp.StatusCode, raw, err)
		}
	}
	return resp.StatusCode
}

func (e *env) runDue() int {
	e.t.Helper()
	n, err := e.ob.RunDue(ctx)
	if err != nil {
		e.t.Fatal(err)
	}
	return n
}

// receiver is a notification endpoint on loopback that answers the
// scripted statuses (then 200) and records the form field notification.
type receiver struct {
	*httptest.Server
	mu     sync.Mutex
	script []int
	tokens []string
	ctypes []string
}

func newReceiver(t *testing.T, script ...int) *receiver {
	rc := &receiver{script: script}
	rc.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		raw, _ := io.ReadAll(r.Body)
		form, _ := url.ParseQuery(string(raw))
		rc.mu.Lock()
		defer rc.mu.Unlock()
		rc.tokens = append(rc.tokens, form.Get("notification"))
		rc.ctypes = append(rc.ctypes, r.Header.Get("Content-Type"))
		status := 200
		if len(rc.script) > 0 {
			status, rc.script = rc.script[0], rc.script[1:]
		}
		w.WriteHeader(status)
	}))
	t.Cleanup(rc.Close)
	return rc
}

func (rc *receiver) got() []string {
	rc.mu.Lock()
	defer rc.mu.Unlock()
	return append([]string(nil), rc.tokens...)
}

func customer() api.Customer {
	return api.Customer{Name: "Maria das Graças Souza", CPF: "52998224725", Email: "maria@example.com", PhoneNumber: "41999998888",
		Address: &api.Address{Street: "Rua XV de Novembro", Number: "100", Neighborhood: "Centro", Zipcode: "80020310", City: "Curitiba", State: "PR"}}
}

func (e *env) slip(notify string, expire string, cents int64) *api.PaymentResult {
	e.t.Helper()
	req := api.OneStepRequest{Items: []api.Item{{Name: "Mensalidade", Value: cents, Amount: 1}},
		Payment: api.Payment{BankingBillet: &api.BankingBillet{Customer: customer(), ExpireAt: expire}}}
	if notify != "" {
		req.Metadata = &api.Metadata{NotificationURL: notify, CustomID: "slip-1"}
	}
	res, err := e.c.CreateOneStepCharge(ctx, req)
	if err != nil {
		e.t.Fatal(err)
	}
	return res
}
