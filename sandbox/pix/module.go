// Package pix is the sandbox's Pix API (/v2): immediate (cob) and due-date
// (cobv) charges, batches of cobv (lotecobv: a new one processed by its
// PUT, asynchronously with a batch delay, a revision or a PATCH),
// split configurations and their links, received Pix and refunds, sends,
// webhooks and EVP keys, plus the control route that pays a charge.
//
// State lives in the store (sandbox/store), read through bounded caches of
// decoded documents, with index rows for the listings and look-ups
// (state.go); every write and the reads it depends on happen in one store
// transaction before any answer, so an acknowledged write survives kill -9
// and several instances over one PostgreSQL serve one state. A background
// worker finishes batches, refunds and sends; on start (and periodically)
// it resumes whatever is persisted as processing.
package pix

import (
	"context"
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

	// Documents are read from the store through these bounded caches;
	// every decision that leads to a write reads inside its transaction.
	charges *store.Cache[charge]
	lotes   *store.Cache[lote]
	splits  *store.Cache[splitDoc]
	pixs    *store.Cache[received]
	envios  *store.Cache[envio]
	hooks   *store.Cache[webhook]

	locOrderedFrom int64 // first loc id with an ordered location (seqLocOrdered)

	lmu             sync.Mutex
	locNext, locEnd int64 // the block of loc ids reserved for batches, next..end (reserveLocs)

	vmu   sync.Mutex
	views map[*lote][]byte // encoded GET /v2/lotecobv/{id} answers of cached batch values (loteView)

	hmu      sync.Mutex
	handOffs map[[2]string]map[string]decodedItem // requests PUT decoded, per (account, batch), for the worker (handOff)

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

// New opens the module over the store. Its worker starts with Run (the
// sandbox does it after listening) or Start.
func New(d module.Deps) (*Module, error) {
	m := &Module{
		st: d.Store, clk: d.Clock, auth: d.Auth, base: d.BaseURL, log: d.Logger, notify: d.Notify,
		delay: d.BatchDelay, queued: map[task]bool{}, kick: make(chan struct{}, 1),
	}
	if m.clk == nil {
		m.clk = clock.Real{}
	}
	m.idle = sync.NewCond(&m.qmu)
	if m.base == nil {
		m.base = func(r *http.Request) string { return "http://" + r.Host }
	}
	if m.st == nil {
		return nil, fmt.Errorf("pix: Deps.Store is required")
	}
	m.initCaches()
	if err := m.migrate(context.Background()); err != nil {
		return nil, err
	}
	if err := m.initLocOrdered(context.Background()); err != nil {
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
