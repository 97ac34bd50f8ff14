// Package pix is the sandbox's Pix API (/v2): immediate (cob) and due-date
// (cobv) charges, batches of cobv (lotecobv) processed asynchronously,
// split configurations and their links, received Pix and refunds, sends,
// webhooks and EVP keys, plus the control route that pays a charge.
//
// State lives in memory per account, loaded from the store at start and
// written through (store.Tx) before any answer, so an acknowledged write
// survives kill -9. A background worker finishes batches, refunds and
// sends; on start it resumes whatever was persisted as processing.
package pix

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/rs/zerolog"

	"remessa/sandbox/auth"
	"remessa/sandbox/clock"
	"remessa/sandbox/module"
	"remessa/sandbox/store"
)

// Notifier queues an HTTP delivery (a webhook) in the same transaction as
// the state change that causes it.
type Notifier = module.Notifier

func init() {
	module.Register("pix", func(d module.Deps) (module.Module, error) { return New(d) })
}

// Module is the Pix API. Create it with New, mount it with Register, start
// its worker with Start and stop it with Close.
type Module struct {
	st     *store.Store
	clk    clock.Clock
	auth   *auth.Service
	base   func(r *http.Request) string
	log    zerolog.Logger
	notify Notifier
	delay  time.Duration

	mu    sync.RWMutex
	accts map[string]*acct

	qmu     sync.Mutex
	queue   []task
	queued  map[task]bool
	busy    int
	kick    chan struct{}
	idle    *sync.Cond
	stop    context.CancelFunc
	done    chan struct{}
	started bool
}

// acct is the in-memory state of one account.
type acct struct {
	charges map[string]*charge   // txid -> cob/cobv that exist
	byLoc   map[string]string    // location -> txid
	lotes   map[string]*lote     // batch id -> batch
	claims  map[string]string    // txid -> batch id that last took it
	splits  map[string]*splitDoc // split config id -> revisions
	pix     map[string]*received // endToEndId -> received Pix
	envios  map[string]*envio    // idEnvio -> sent Pix
	byE2E   map[string]string    // endToEndId of a send -> idEnvio
	hooks   map[string]*webhook  // chave -> webhook
}

func newAcct() *acct {
	return &acct{
		charges: map[string]*charge{}, byLoc: map[string]string{}, lotes: map[string]*lote{},
		claims: map[string]string{}, splits: map[string]*splitDoc{}, pix: map[string]*received{},
		envios: map[string]*envio{}, byE2E: map[string]string{}, hooks: map[string]*webhook{},
	}
}

// New loads the module's documents from the store. Its worker starts with
// Run (the sandbox does it after listening) or Start.
func New(d module.Deps) (*Module, error) {
	m := &Module{
		st: d.Store, clk: d.Clock, auth: d.Auth, base: d.BaseURL, log: d.Logger, notify: d.Notify,
		delay: d.BatchDelay, accts: map[string]*acct{}, queued: map[task]bool{}, kick: make(chan struct{}, 1),
	}
	if m.clk == nil {
		m.clk = clock.Real{}
	}
	m.idle = sync.NewCond(&m.qmu)
	if m.base == nil {
		m.base = func(r *http.Request) string { return "http://" + r.Host }
	}
	if err := m.load(context.Background()); err != nil {
		return nil, err
	}
	return m, nil
}

// Run starts the worker and stops it when ctx ends (module.Runner).
func (m *Module) Run(ctx context.Context) {
	m.Start()
	<-ctx.Done()
	_ = m.Close()
}

// a returns the state of account id, creating it (caller holds m.mu).
func (m *Module) a(id string) *acct {
	x, ok := m.accts[id]
	if !ok {
		x = newAcct()
		m.accts[id] = x
	}
	return x
}

// peek returns the state of account id or nil (caller holds m.mu.RLock).
func (m *Module) peek(id string) *acct { return m.accts[id] }

func (m *Module) load(ctx context.Context) error {
	type loader struct {
		kind string
		fn   func(a *acct, id string, raw []byte) error
	}
	loaders := []loader{
		{storeCharge, func(a *acct, id string, raw []byte) error {
			var c charge
			if err := json.Unmarshal(raw, &c); err != nil {
				return err
			}
			a.charges[id] = &c
			if c.Body.Location != "" {
				a.byLoc[c.Body.Location] = id
			}
			return nil
		}},
		{storeLote, func(a *acct, id string, raw []byte) error {
			var l lote
			if err := json.Unmarshal(raw, &l); err != nil {
				return err
			}
			a.lotes[id] = &l
			return nil
		}},
		{storeSplit, func(a *acct, id string, raw []byte) error {
			var s splitDoc
			if err := json.Unmarshal(raw, &s); err != nil {
				return err
			}
			a.splits[id] = &s
			return nil
		}},
		{storePix, func(a *acct, id string, raw []byte) error {
			var p received
			if err := json.Unmarshal(raw, &p); err != nil {
				return err
			}
			a.pix[id] = &p
			return nil
		}},
		{storeEnvio, func(a *acct, id string, raw []byte) error {
			var e envio
			if err := json.Unmarshal(raw, &e); err != nil {
				return err
			}
			a.envios[id] = &e
			a.byE2E[e.E2E] = id
			return nil
		}},
		{storeHook, func(a *acct, id string, raw []byte) error {
			var h webhook
			if err := json.Unmarshal(raw, &h); err != nil {
				return err
			}
			a.hooks[id] = &h
			return nil
		}},
	}
	for _, l := range loaders {
		err := m.st.Each(ctx, l.kind, func(account, id string, raw []byte) error {
			if err := l.fn(m.a(account), id, raw); err != nil {
				return fmt.Errorf("pix: load %s/%s/%s: %w", l.kind, account, id, err)
			}
			return nil
		})
		if err != nil {
			return err
		}
	}
	// Batch claims: the latest batch (by creation) that holds each txid.
	for _, a := range m.accts {
		for _, l := range sortedLotes(a) {
			for _, it := range l.Items {
				a.claims[it.Txid] = l.ID
			}
		}
	}
	return nil
}

// accountInfo is what the module needs about the account that owns data.
type accountInfo struct {
	ID, Name, CNPJ, Conta string
	Keys                  []string
}

func (m *Module) account(id string) (accountInfo, bool) {
	if m.auth == nil {
		return accountInfo{}, false
	}
	a, ok := m.auth.Account(id)
	if !ok {
		return accountInfo{}, false
	}
	return accountInfo{ID: a.ID, Name: a.Name, CNPJ: a.CNPJ, Conta: a.Conta, Keys: a.Keys}, true
}

// ownsKey tells whether key (normalised) is one of the account's keys.
func (ai accountInfo) ownsKey(key string) bool {
	nk := auth.NormalizeKey(key)
	for _, k := range ai.Keys {
		if auth.NormalizeKey(k) == nk {
			return true
		}
	}
	return false
}

// hostOf strips the scheme of a base URL ("http://127.0.0.1:8080" ->
// "127.0.0.1:8080").
func hostOf(base string) string {
	if i := strings.Index(base, "://"); i >= 0 {
		base = base[i+3:]
	}
	return strings.TrimRight(base, "/")
}
