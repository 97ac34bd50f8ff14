// Package listen receives what the service says of a run's charges after
// the run, instead of asking it: the charges API's notifications (a POST
// with the form field notification=<token>; the client then reads the
// changes with GET /v1/notification/:token, real-service.md §1.2) and the
// Pix webhooks (POST <url>/pix with {"pix":[...]}). Each delivery is kept
// in a durable inbox (listen.db in the runs folder, synchronous FULL)
// before it is answered 200; a worker then applies the inbox to the
// ledgers (situacao.db) of the runs the charges belong to, found through
// an index of every run folder under the runs folder. An item that cannot
// be applied yet (service unreachable) stays in the inbox and is retried;
// an item of no known run is kept as an orphan ("órfão") and reported.
package listen

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"time"

	"remessa/api"
	"remessa/pipeline/results"
	"remessa/pipeline/run"
	"remessa/pipeline/status"
)

// Options tune a listener.
type Options struct {
	// RunsDir is the folder whose run folders (*/results.json) the
	// listener follows; listen.db is kept there.
	RunsDir string
	// Run is how each run's service is reached to read a notification
	// token, as `remessa status` takes it: BaseURL/PixBaseURL (a `remessa
	// sandbox` serving the runs' data), Embedded (a running embedded
	// sandbox), Getenv and Timeout.
	Run run.Options
	Now func() time.Time
	// RetryMin and RetryMax bound the wait before an item that failed is
	// tried again (doubling from RetryMin; defaults 1 s and 5 min).
	RetryMin, RetryMax time.Duration
	// Logf, when set, receives one line per applied, orphaned, refused or
	// failed item.
	Logf func(format string, args ...any)
	// Scopes, when set, divides the runs folder among scopes (the desk's
	// service accounts): an item received in a scope (Receive) is read
	// only from that scope's service and applied only to that scope's
	// runs, and a token that service does not know, or a Pix it does not
	// confirm, is refused. Without it (`remessa listen`) every run is in
	// the scope "" and is reached with Run.
	Scopes Scopes
	// MaxBody is the largest delivery read, in bytes (default 4 MiB).
	MaxBody int64
}

// Scopes places the run folders of a runs folder in scopes and reaches
// each scope's service (Options.Scopes).
type Scopes interface {
	// ScopeOf returns the scope of the run folder name; "" for a folder of
	// no scope, which no scoped item changes.
	ScopeOf(ctx context.Context, name string) (string, error)
	// Connect opens the service of the scope of the run folder name. The
	// listener keeps one connection per scope and closes it on Close.
	Connect(ctx context.Context, name string) (*run.Service, error)
}

func (o *Options) now() time.Time {
	if o.Now != nil {
		return o.Now()
	}
	return time.Now()
}

// Listener is an open inbox with its index of runs. Its Handler receives
// deliveries; Work (or Drain) applies them. Both may run at once, and a
// Handler may serve without any worker (a later Listener on the same
// folder applies what was received).
type Listener struct {
	dir  string
	opts Options
	db   *sql.DB

	scanMu sync.Mutex
	kick   chan struct{}

	// group commit (Receive): deliveries arriving while a commit is under
	// way go together into the next one
	commits   chan commitReq
	stop      chan struct{}
	committed chan struct{} // closed when the committer has stopped

	mu       sync.Mutex
	services map[string]*run.Service // by service key
	metas    map[string]run.Meta     // by run folder name
	scopes   map[string]string       // by run folder name (Options.Scopes)
	ledgers  map[string]*runLedger   // by run folder name
	workMu   sync.Mutex              // one Drain at a time
}

// runLedger is an open ledger of a run with the values of its charges.
type runLedger struct {
	l      *status.Ledger
	values map[string]int64 // ledger key -> value asked
}

// Open opens (creating) listen.db in opts.RunsDir and indexes the runs
// found there.
func Open(ctx context.Context, opts Options) (*Listener, error) {
	if opts.RunsDir == "" {
		return nil, &run.UsageError{Msg: "listen: falta a pasta das execuções (--runs-dir)"}
	}
	fi, err := os.Stat(opts.RunsDir)
	if err != nil || !fi.IsDir() {
		return nil, &run.UsageError{Msg: fmt.Sprintf("listen: %s não é uma pasta", opts.RunsDir), Err: err}
	}
	if opts.RetryMin <= 0 {
		opts.RetryMin = time.Second
	}
	if opts.RetryMax <= 0 {
		opts.RetryMax = 5 * time.Minute
	}
	if opts.MaxBody <= 0 {
		opts.MaxBody = maxBody
	}
	db, err := openDB(opts.RunsDir)
	if err != nil {
		return nil, err
	}
	l := &Listener{dir: opts.RunsDir, opts: opts, db: db, kick: make(chan struct{}, 1),
		commits: make(chan commitReq), stop: make(chan struct{}), committed: make(chan struct{}),
		services: map[string]*run.Service{}, metas: map[string]run.Meta{}, scopes: map[string]string{}, ledgers: map[string]*runLedger{}}
	// a run that appeared while no listener ran: its orphans are tried again
	if _, err := l.Rescan(ctx); err != nil {
		db.Close()
		return nil, err
	}
	go l.committer()
	return l, nil
}

// Close closes the ledgers, the services the listener connected to and
// listen.db. The caller stops its Handler and Work first (a delivery
// still arriving is answered 503).
func (l *Listener) Close() error {
	select {
	case <-l.stop:
	default:
		close(l.stop)
	}
	<-l.committed
	l.workMu.Lock()
	defer l.workMu.Unlock()
	l.mu.Lock()
	defer l.mu.Unlock()
	for _, s := range l.services {
		s.Close()
	}
	for _, rl := range l.ledgers {
		rl.l.Close()
	}
	l.services, l.ledgers = map[string]*run.Service{}, map[string]*runLedger{}
	return l.db.Close()
}

// Stats counts the inbox.
func (l *Listener) Stats(ctx context.Context) (Stats, error) { return stats(ctx, l.db) }

// Items lists the inbox's items in a state (all when "").
func (l *Listener) Items(ctx context.Context, state string) ([]Item, error) {
	return items(ctx, l.db, state)
}

// Orphans lists the items of no known run.
func (l *Listener) Orphans(ctx context.Context) ([]Item, error) { return items(ctx, l.db, StateOrphan) }

func (l *Listener) logf(format string, args ...any) {
	if l.opts.Logf != nil {
		l.opts.Logf(format, args...)
	}
}

// forget drops what is cached of a run whose results changed.
func (l *Listener) forget(name string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	delete(l.metas, name)
	delete(l.scopes, name)
	if rl := l.ledgers[name]; rl != nil {
		rl.l.Close()
		delete(l.ledgers, name)
	}
}

// meta returns the run's journal identity (cached).
func (l *Listener) meta(ctx context.Context, name string) (run.Meta, error) {
	l.mu.Lock()
	m, ok := l.metas[name]
	l.mu.Unlock()
	if ok {
		return m, nil
	}
	m, err := run.ReadMeta(ctx, filepath.Join(l.dir, name))
	if err != nil {
		return m, err
	}
	l.mu.Lock()
	l.metas[name] = m
	l.mu.Unlock()
	return m, nil
}

// serviceKey names the service (and account) a run reaches, so runs on
// the same one share a connection: every embedded run of a runs folder
// shares its sandbox.
func (l *Listener) serviceKey(m run.Meta) string {
	o := l.opts.Run
	switch {
	case o.BaseURL != "":
		return strings.Join([]string{"url", o.BaseURL, o.PixBaseURL, m.Service, m.Account}, "|")
	case m.Service == "embedded" || m.Service == "":
		if o.Embedded != nil {
			return "embedded|shared"
		}
		return "embedded|" + m.SandboxDir
	}
	return strings.Join([]string{m.Service, m.BaseURL, m.PixBaseURL, m.Account, m.JobFile}, "|")
}

// scopeOf returns the scope of a run folder: "" without Options.Scopes
// (cached).
func (l *Listener) scopeOf(ctx context.Context, name string) (string, error) {
	if l.opts.Scopes == nil {
		return "", nil
	}
	l.mu.Lock()
	sc, ok := l.scopes[name]
	l.mu.Unlock()
	if ok {
		return sc, nil
	}
	sc, err := l.opts.Scopes.ScopeOf(ctx, name)
	if err != nil {
		return "", err
	}
	if sc != "" { // a folder of no scope yet may become one
		l.mu.Lock()
		l.scopes[name] = sc
		l.mu.Unlock()
	}
	return sc, nil
}

// keyOf is the service key of a run folder: its scope's with
// Options.Scopes, else its meta's (serviceKey).
func (l *Listener) keyOf(ctx context.Context, name string) (string, error) {
	if l.opts.Scopes != nil {
		sc, err := l.scopeOf(ctx, name)
		return "escopo|" + sc, err
	}
	m, err := l.meta(ctx, name)
	if err != nil {
		return "", err
	}
	return l.serviceKey(m), nil
}

// ForgetScope closes the connection kept to scope's service (its
// account's address or credentials changed): the next item of the scope
// connects again.
func (l *Listener) ForgetScope(scope string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	key := "escopo|" + scope
	if s := l.services[key]; s != nil {
		s.Close()
		delete(l.services, key)
	}
}

// service returns the connection to the run's service (cached by
// service key).
func (l *Listener) service(ctx context.Context, name string) (*run.Service, string, error) {
	key, err := l.keyOf(ctx, name)
	if err != nil {
		return nil, "", err
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	if s := l.services[key]; s != nil {
		return s, key, nil
	}
	var s *run.Service
	if l.opts.Scopes != nil {
		s, err = l.opts.Scopes.Connect(ctx, name)
	} else {
		s, _, err = run.Connect(ctx, filepath.Join(l.dir, name), l.opts.Run)
	}
	if err != nil {
		return nil, key, err
	}
	l.services[key] = s
	return s, key, nil
}

// connected returns the open connection to the run's service, nil when
// none is open (it does not connect).
func (l *Listener) connected(ctx context.Context, name string) *run.Service {
	key, err := l.keyOf(ctx, name)
	if err != nil {
		return nil
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.services[key]
}

// seenAt is the service's time now for the run name, when a change of
// its charges is recorded: the clock of its connection once an answer
// carried a Date, else the service's time its ledger's last sync kept
// (moved by the time elapsed here since), else this machine's.
func (l *Listener) seenAt(ctx context.Context, name string, rl *runLedger) time.Time {
	local := l.opts.now()
	if s := l.connected(ctx, name); s != nil && s.Client.Clock().Reading().Known {
		return s.Client.Clock().Now()
	}
	if c, ok := rl.l.LastClock(ctx); ok && c.Source == status.ClockService {
		return c.Now(local)
	}
	return local
}

// ClockNotes asks each open service its time (a token call when no
// answer told it yet) and returns, by service key, the warning of a
// service whose clock differs from this machine's by more than a minute
// or that gave no Date (status.ClockNote, in opts.Run.Lang).
func (l *Listener) ClockNotes(ctx context.Context) map[string]string {
	l.mu.Lock()
	svcs := make(map[string]*run.Service, len(l.services))
	for k, s := range l.services {
		svcs[k] = s
	}
	l.mu.Unlock()
	out := map[string]string{}
	for k, s := range svcs {
		if _, err := s.Client.ServiceNow(ctx, api.V1); err != nil {
			if _, err := s.Client.ServiceNow(ctx, api.Pix); err != nil {
				continue // unreachable: said by Connect
			}
		}
		if note := status.ClockNote(s.Client.Clock().Reading(), l.opts.Run.Lang); note != "" {
			out[k] = note
		}
	}
	return out
}

// Connect opens the services of every run in the index now (the embedded
// sandbox of an embedded runs folder starts, and its outbox delivers what
// it kept) and returns them by service key with the base URL each
// answers on.
func (l *Listener) Connect(ctx context.Context) (map[string]string, error) {
	names, err := l.runNames(ctx)
	if err != nil {
		return nil, err
	}
	out := map[string]string{}
	var errs []error
	for _, n := range names {
		s, key, err := l.service(ctx, n)
		if err != nil {
			errs = append(errs, fmt.Errorf("%s: %w", n, err))
			continue
		}
		out[key] = s.BaseURL
	}
	return out, errors.Join(errs...)
}

// ledger returns the run's ledger, seeded from its results (cached).
func (l *Listener) ledger(ctx context.Context, name string) (*runLedger, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if rl := l.ledgers[name]; rl != nil {
		return rl, nil
	}
	dir := filepath.Join(l.dir, name)
	res, err := results.Load(filepath.Join(dir, "results.json"))
	if err != nil {
		return nil, err
	}
	led, err := status.OpenLedger(dir)
	if err != nil {
		return nil, err
	}
	if _, err := led.Seed(ctx, res, l.opts.now()); err != nil {
		led.Close()
		return nil, err
	}
	cs, err := led.Charges(ctx)
	if err != nil {
		led.Close()
		return nil, err
	}
	rl := &runLedger{l: led, values: make(map[string]int64, len(cs))}
	for _, c := range cs {
		rl.values[c.Key] = c.ValueCents
	}
	l.ledgers[name] = rl
	return rl, nil
}

// candidates lists the runs of scope whose services may know a token:
// the run the delivery's path names first (…/notificacao/<run>), then one
// run per other service.
func (l *Listener) candidates(ctx context.Context, path, scope string) ([]string, error) {
	names, err := l.runNames(ctx)
	if err != nil {
		return nil, err
	}
	sort.Sort(sort.Reverse(sort.StringSlice(names))) // newest first
	var out []string
	seen := map[string]bool{}
	hint := filepath.Base(strings.TrimRight(path, "/"))
	for _, pass := range []bool{true, false} {
		for _, n := range names {
			if pass != (n == hint) {
				continue
			}
			if sc, err := l.scopeOf(ctx, n); err != nil || sc != scope {
				continue
			}
			k, err := l.keyOf(ctx, n)
			if err != nil {
				continue
			}
			if seen[k] {
				continue
			}
			seen[k] = true
			out = append(out, n)
		}
	}
	return out, nil
}
