package charges

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/rs/zerolog"

	"remessa/api"
	"remessa/internal/pgtest"
	"remessa/sandbox/auth"
	"remessa/sandbox/clock"
	"remessa/sandbox/httpx"
	"remessa/sandbox/module"
	"remessa/sandbox/store"
)

// t0 is the test clock's start: 2026-03-10 12:00 in São Paulo.
var t0 = time.Date(2026, 3, 10, 15, 0, 0, 0, time.UTC)

type delivery struct {
	url, body, contentType string
}

// fakeNotifier records what the module queues.
type fakeNotifier struct {
	mu  sync.Mutex
	got []delivery
}

func (f *fakeNotifier) Enqueue(ctx context.Context, tx *store.Tx, url string, body []byte, ct string) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.got = append(f.got, delivery{url, string(body), ct})
	return nil
}

func (f *fakeNotifier) all() []delivery {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]delivery(nil), f.got...)
}

// env is a sandbox made of the core's auth and store plus this module,
// served on loopback by httptest.
type env struct {
	t     testing.TB
	st    *store.Store
	clk   *clock.Fake
	auth  *auth.Service
	mod   *Module
	srv   *httptest.Server
	url   string
	note  *fakeNotifier
	creds auth.Credentials
	c     *api.Client // first account
	c2    *api.Client // a second account
	acc2  auth.Account
}

const (
	testClientID = "Client_Id_charges_test"
	testSecret   = "Client_Secret_charges_test"
)

func TestMain(m *testing.M) { pgtest.Main(m) }

func newEnv(t testing.TB, path string) *env {
	t.Helper()
	if path == "" {
		path = store.Memory
		if os.Getenv("REMESSA_SANDBOX_TEST_PG") != "" {
			// The module's suite over PostgreSQL:
			// REMESSA_SANDBOX_TEST_PG=1 go test ./sandbox/charges/
			path = pgtest.DSN(t)
		}
	}
	st, err := store.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	e := &env{t: t, st: st, clk: clock.NewFake(t0), note: &fakeNotifier{}}
	ctx := context.Background()
	e.auth, err = auth.New(ctx, st, auth.Options{Clock: e.clk, TokenTTL: 600 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	if e.creds, err = e.auth.Bootstrap(ctx, testClientID, testSecret); err != nil {
		t.Fatal(err)
	}
	e.mod, err = New(module.Deps{Store: st, Clock: e.clk, Auth: e.auth, Notify: e.note, Logger: zerolog.Nop()})
	if err != nil {
		t.Fatal(err)
	}
	mux := http.NewServeMux()
	e.auth.Register(mux)
	e.mod.Register(mux)
	e.srv = httptest.NewServer(httpx.Recover(zerolog.Nop(), mux))
	e.c = e.client(testClientID, testSecret)
	// A second account for the foreign-id tests (same one after a restart).
	accs := e.auth.Accounts()
	if len(accs) < 2 {
		if e.acc2, err = e.auth.CreateAccount(ctx, "Outra Conta LTDA"); err != nil {
			t.Fatal(err)
		}
		if _, _, err = e.auth.CreateApp(ctx, e.acc2.ID, "Client_Id_other", "Client_Secret_other", nil); err != nil {
			t.Fatal(err)
		}
	} else {
		e.acc2 = accs[1]
	}
	e.c2 = e.client("Client_Id_other", "Client_Secret_other")
	t.Cleanup(e.close)
	return e
}

func (e *env) client(id, secret string) *api.Client {
	c, err := api.New(api.Config{BaseURL: e.srv.URL, ClientID: id, ClientSecret: secret, MaxRetries: -1})
	if err != nil {
		e.t.Fatal(err)
	}
	return c
}

// srvURL is the server's address, also after close.
func (e *env) srvURL() string { return e.url }

func (e *env) close() {
	if e.srv != nil {
		e.url = e.srv.URL
		e.srv.Close()
		e.srv = nil
		e.st.Close()
	}
}

// apiErr asserts err is an *api.Error with status and code (and, when
// prop is not empty, that property).
func apiErr(t testing.TB, err error, status, code int, prop string) *api.Error {
	t.Helper()
	var ae *api.Error
	if !errors.As(err, &ae) {
		t.Fatalf("want api error %d/%d, got %v", status, code, err)
	}
	if ae.Status != status || ae.Code != code {
		t.Fatalf("want %d/%d, got %d/%d: %s", status, code, ae.Status, ae.Code, ae.Error())
	}
	if prop != "" && ae.Property != prop {
		t.Fatalf("want property %q, got %q (%s)", prop, ae.Property, ae.Description)
	}
	return ae
}

var ctx = context.Background()

func customer() api.Customer {
	return api.Customer{Name: "Gorbadoc Oldbuck", CPF: "52998224725", Email: "gorbadoc@example.com",
		PhoneNumber: "5144916523", Birth: "1977-01-15"}
}

func address() api.Address {
	return api.Address{Street: "Avenida Juscelino Kubitschek", Number: "909", Neighborhood: "Bauxita",
		Zipcode: "35400000", City: "Ouro Preto", State: "MG"}
}

func items(values ...int64) []api.Item {
	var out []api.Item
	for i, v := range values {
		out = append(out, api.Item{Name: "Item " + strings.Repeat("x", i+1), Value: v, Amount: 1})
	}
	return out
}

func billet(expire string) *api.BankingBillet {
	return &api.BankingBillet{Customer: customer(), ExpireAt: expire}
}
