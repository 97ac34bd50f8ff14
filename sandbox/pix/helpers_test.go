package pix_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"sync"
	"testing"
	"time"

	"github.com/rs/zerolog"

	"remessa/api"
	"remessa/internal/pgtest"
	"remessa/sandbox"
	_ "remessa/sandbox/pix"
	"remessa/sandbox/store"
)

// delivery is a webhook the module queued.
type delivery struct {
	URL  string
	Body []byte
}

// recorder is the test notifier: it records what the module queues.
type recorder struct {
	mu   sync.Mutex
	list []delivery
}

func (r *recorder) Enqueue(ctx context.Context, tx *store.Tx, url string, body []byte, contentType string) error {
	if contentType != "application/json" {
		return fmt.Errorf("content type %q", contentType)
	}
	r.mu.Lock()
	r.list = append(r.list, delivery{url, append([]byte(nil), body...)})
	r.mu.Unlock()
	return nil
}

func (r *recorder) take() []delivery {
	r.mu.Lock()
	defer r.mu.Unlock()
	out := r.list
	r.list = nil
	return out
}

var rec = &recorder{}

// env is a running sandbox with a client of its first application.
type env struct {
	rn  *sandbox.Running
	c   *api.Client
	key string // the account's EVP key
}

func start(tb testing.TB, cfg sandbox.Config) *env {
	tb.Helper()
	if cfg.DataDir == "" {
		cfg.DataDir = sandbox.Memory
		if os.Getenv("REMESSA_SANDBOX_TEST_PG") != "" {
			// The module's whole suite over PostgreSQL:
			// REMESSA_SANDBOX_TEST_PG=1 go test ./sandbox/pix/
			cfg.DataDir, cfg.DB = "", pgtest.DSN(tb)
		}
	}
	cfg.Logger = zerolog.Nop()
	if cfg.Notify == nil {
		// Deliveries are recorded through the config, not by registering a
		// notifier: a test binary that also links the outbox (e.g. through
		// remessa/sandbox/all) would panic on a second registration.
		cfg.Notify = rec
	}
	srv, err := sandbox.New(cfg)
	if err != nil {
		tb.Fatalf("sandbox.New: %v", err)
	}
	rn, err := srv.Start()
	if err != nil {
		srv.Close()
		tb.Fatalf("Start: %v", err)
	}
	tb.Cleanup(func() { _ = rn.Close() })
	return &env{rn: rn, c: client(tb, rn, rn.ClientID, rn.ClientSecret, nil), key: rn.PixKey}
}

func client(tb testing.TB, rn *sandbox.Running, id, secret string, edit func(*api.Config)) *api.Client {
	tb.Helper()
	cfg := api.Config{BaseURL: rn.URL, PixBaseURL: rn.PixURL, ClientID: id, ClientSecret: secret, MaxRetries: -1}
	if edit != nil {
		edit(&cfg)
	}
	c, err := api.New(cfg)
	if err != nil {
		tb.Fatalf("api.New: %v", err)
	}
	return c
}

// appWith creates an application with scopes in the first account (or a
// new account when newAccount) and returns its client.
func (e *env) appWith(tb testing.TB, newAccount bool, scopes ...string) (*api.Client, string) {
	tb.Helper()
	a := e.rn.Server.Auth()
	acc := a.Accounts()[0]
	if newAccount {
		var err error
		if acc, err = a.CreateAccount(context.Background(), ""); err != nil {
			tb.Fatal(err)
		}
	}
	if scopes == nil {
		scopes = []string{}
	}
	id, secret, err := a.CreateApp(context.Background(), acc.ID, "", "", scopes)
	if err != nil {
		tb.Fatal(err)
	}
	return client(tb, e.rn, id, secret, nil), acc.Keys[0]
}

var ctx = context.Background()

func asAPI(tb testing.TB, err error) *api.Error {
	tb.Helper()
	var e *api.Error
	if !errors.As(err, &e) {
		tb.Fatalf("want *api.Error, got %v", err)
	}
	return e
}

// wantProblem checks an RFC 7807 answer: status, type and (when prop is
// not empty) a violation on prop.
func wantProblem(tb testing.TB, err error, status int, typ, prop string) *api.Error {
	tb.Helper()
	e := asAPI(tb, err)
	if e.Status != status || e.Problem == nil || e.Problem.TypeName() != typ {
		tb.Fatalf("want %d %s, got %d problem=%+v nome=%q", status, typ, e.Status, e.Problem, e.Nome)
	}
	if e.Problem.Type != "https://pix.bcb.gov.br/api/v2/error/"+typ || e.Problem.Status != status {
		tb.Fatalf("problem type/status: %+v", e.Problem)
	}
	if prop != "" {
		for _, v := range e.Problem.Violacoes {
			if v.Propriedade == prop {
				return e
			}
		}
		tb.Fatalf("no violation on %q: %+v", prop, e.Problem.Violacoes)
	}
	return e
}

// wantEfi checks an Efí {nome, mensagem} answer.
func wantEfi(tb testing.TB, err error, status int, nome string) *api.Error {
	tb.Helper()
	e := asAPI(tb, err)
	if e.Status != status || e.Nome != nome || e.Mensagem == "" {
		tb.Fatalf("want %d %s, got %d nome=%q mensagem=%q problem=%+v", status, nome, e.Status, e.Nome, e.Mensagem, e.Problem)
	}
	return e
}

func intp(n int) *int { return &n }

// window is a list window around now.
func window() api.ListParams {
	now := time.Now()
	return api.ListParams{Inicio: now.Add(-time.Hour), Fim: now.Add(time.Hour)}
}

func txid(prefix string, n int) string {
	return prefix + fmt.Sprintf("%0*d", 30-len(prefix), n)
}

func cobvReq(key, cpf, valor string) api.CobVRequest {
	return api.CobVRequest{
		Calendario: api.PixCalendario{DataDeVencimento: "2030-12-31", ValidadeAposVencimento: intp(30)},
		Devedor:    api.PixPessoa{CPF: cpf, Nome: "Fulano de Tal"},
		Valor:      api.PixValor{Original: valor},
		Chave:      key,
	}
}

// waitLote polls the batch until no item is EM_PROCESSAMENTO.
func waitLote(tb testing.TB, c *api.Client, id string) *api.LoteCobV {
	tb.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for {
		l, err := c.GetLoteCobV(ctx, id)
		if err != nil {
			tb.Fatalf("GetLoteCobV: %v", err)
		}
		if l.Done() {
			return l
		}
		if time.Now().After(deadline) {
			tb.Fatalf("batch %s still processing", id)
		}
		time.Sleep(time.Millisecond) // poll interval, not a fixed wait
	}
}

func decodePix(tb testing.TB, body []byte) []map[string]any {
	tb.Helper()
	var v struct {
		Pix []map[string]any `json:"pix"`
	}
	if err := json.Unmarshal(body, &v); err != nil {
		tb.Fatalf("webhook body %s: %v", body, err)
	}
	return v.Pix
}
