// Package sandbox assembles the local stand-in of the charge-issuing (/v1)
// and Pix (/v2) service: the store, the clock, authentication, fault
// injection and the route modules registered through remessa/sandbox/module.
//
// Import remessa/sandbox/all to get every module; New builds the server
// with whatever modules are registered.
package sandbox

import (
	"context"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/rs/zerolog"

	"remessa/sandbox/auth"
	"remessa/sandbox/clock"
	"remessa/sandbox/faults"
	"remessa/sandbox/httpx"
	"remessa/sandbox/module"
	"remessa/sandbox/store"
)

// Deps, Module and Notifier are the module seam (see package module).
type (
	Deps     = module.Deps
	Module   = module.Module
	Notifier = module.Notifier
)

// DBFile is the database file name inside the data dir.
const DBFile = "sandbox.db"

// Memory as DataDir keeps everything in memory (tests).
const Memory = store.Memory

// Config configures a sandbox server. The zero value is usable except for
// DataDir, whose empty value means DefaultDataDir().
type Config struct {
	Addr    string // charges API (and everything else) listen address; default "127.0.0.1:0"
	PixAddr string // separate Pix listener; "" = Pix served on Addr (unless TLS)
	DataDir string // ":memory:" for tests; "" = DefaultDataDir()

	// DB, when set, is the database instead of DataDir's sandbox.db: a
	// postgres:// URL runs the sandbox over PostgreSQL, which any number
	// of instances may share (they serve one state; docs/sandbox-core.md).
	// DataDir then holds only this instance's files (TLS material) and,
	// when empty, is a temporary directory removed by Close.
	DB string

	// ClientID and ClientSecret fix the first application's credentials.
	ClientID, ClientSecret string

	TokenTTL   time.Duration // charges token lifetime (default 600 s); caps the Pix token's 3600 s
	Clock      clock.Clock   // default clock.NewAdjustable(0)
	Faults     faults.Config
	Logger     zerolog.Logger // zero value: logs nothing
	BatchDelay time.Duration  // lotecobv processing delay, passed to modules
	TLS        bool           // Pix listener with mTLS (needs a TLS provider module)
	Sync       store.Sync     // SQLite synchronous: NORMAL (default) or FULL

	// NotifySpeedup divides the outbox's retry waits (60 turns minutes
	// into seconds) so testers see retries without waiting hours; 0 or 1
	// = the real schedule.
	NotifySpeedup int
	// Notify, when set, replaces the registered notifier (the outbox) as
	// Deps.Notify: a test records deliveries without registering a second
	// notifier, which would panic in a binary that also links the outbox.
	Notify Notifier
}

// DefaultDataDir returns os.UserCacheDir()/remessa/sandbox.
func DefaultDataDir() (string, error) {
	dir, err := os.UserCacheDir()
	if err != nil {
		return "", fmt.Errorf("sandbox: no user cache directory (%w); use --data DIR", err)
	}
	return filepath.Join(dir, "remessa", "sandbox"), nil
}

// Server is a built sandbox, not yet listening.
type Server struct {
	cfg     Config
	dataDir string
	tmpDir  string // DataDir made for a DB-backed instance; removed by Close
	lock    *dirLock
	st      *store.Store
	clk     clock.Clock
	auth    *auth.Service
	faults  *faults.Injector
	mux     *http.ServeMux
	routes  *router // registers on mux, remembering each pattern
	handler http.Handler
	creds   auth.Credentials
	log     zerolog.Logger

	parts   []any // modules and notifier, for Runner/Closer
	names   []string
	url     atomic.Pointer[string]
	pixURL  atomic.Pointer[string]
	closeMu sync.Mutex
	closed  bool
}

// New opens the store, bootstraps the first account and application, and
// builds every registered module.
func New(cfg Config) (_ *Server, err error) {
	s := &Server{cfg: cfg, log: cfg.Logger, mux: http.NewServeMux()}
	s.routes = &router{mux: s.mux}
	defer func() {
		if err != nil {
			s.closeStore()
		}
	}()
	s.clk = cfg.Clock
	if s.clk == nil {
		s.clk = clock.NewAdjustable(0)
	}
	dbPath := store.Memory
	if cfg.DB != "" && cfg.DataDir == "" {
		// This instance's own files go to a directory of its own: the
		// state is the database's.
		if s.tmpDir, err = os.MkdirTemp("", "remessa-sandbox-"); err != nil {
			return nil, fmt.Errorf("sandbox: temporary data dir: %w", err)
		}
		cfg.DataDir = s.tmpDir
	}
	if cfg.DataDir != store.Memory {
		s.dataDir = cfg.DataDir
		if s.dataDir == "" {
			if s.dataDir, err = DefaultDataDir(); err != nil {
				return nil, err
			}
		}
		if err := os.MkdirAll(s.dataDir, 0o700); err != nil {
			return nil, fmt.Errorf("sandbox: create data dir %s: %w", s.dataDir, err)
		}
		if s.lock, err = lockDir(s.dataDir); err != nil {
			return nil, err
		}
		dbPath = filepath.Join(s.dataDir, DBFile)
	}
	if cfg.DB != "" {
		dbPath = cfg.DB
	}
	if s.st, err = store.OpenWith(dbPath, store.Options{Sync: cfg.Sync}); err != nil {
		return nil, err
	}
	ctx := context.Background()
	// One instance at a time looks for the first account and makes it: of
	// instances started together on an empty PostgreSQL database, the
	// first makes it and the others find it.
	if err = s.st.Exclusive(ctx, func() error {
		var err error
		if s.auth, err = auth.New(ctx, s.st, auth.Options{Clock: s.clk, TokenTTL: cfg.TokenTTL, Logger: s.log}); err != nil {
			return err
		}
		s.creds, err = s.auth.Bootstrap(ctx, cfg.ClientID, cfg.ClientSecret)
		return err
	}); err != nil {
		return nil, err
	}
	if s.faults, err = faults.New(cfg.Faults, s.clk); err != nil {
		return nil, err
	}
	if err = s.faults.SetStore(ctx, s.st, func(err error) { s.log.Error().Err(err).Msg("faults") }); err != nil {
		return nil, err
	}
	empty := ""
	s.url.Store(&empty)
	s.pixURL.Store(&empty)

	deps := module.Deps{
		Store: s.st, Clock: s.clk, Auth: s.auth, BaseURL: BaseURL,
		URL: func() string { return *s.url.Load() }, PixURL: func() string { return *s.pixURL.Load() },
		Logger: s.log, DataDir: s.dataDir, BatchDelay: cfg.BatchDelay, TLS: cfg.TLS,
		NotifySpeedup: cfg.NotifySpeedup,
	}
	deps.Lookup = s.lookup
	s.auth.Register(s.routes)
	s.faults.Register(s.routes)
	s.registerControl()
	if cfg.Notify != nil {
		deps.Notify = cfg.Notify
	} else if name, ctor := module.NotifierCtor(); ctor != nil {
		n, err := ctor(deps)
		if err != nil {
			return nil, fmt.Errorf("sandbox: build notifier %s: %w", name, err)
		}
		deps.Notify = n
		if m, ok := n.(module.Module); ok {
			if err := s.register(name, m); err != nil {
				return nil, err
			}
		} else {
			s.parts, s.names = append(s.parts, n), append(s.names, name)
		}
	}
	for _, e := range module.Modules() {
		m, err := e.New(deps)
		if err != nil {
			return nil, fmt.Errorf("sandbox: build module %s: %w", e.Name, err)
		}
		if err := s.register(e.Name, m); err != nil {
			return nil, err
		}
	}
	// every answer is dated by the sandbox's clock, not the host's
	s.handler = s.withOps(httpx.Date(s.clk.Now, httpx.AccessLog(s.log, httpx.Recover(s.log, http.HandlerFunc(s.serve)))))
	return s, nil
}

func (s *Server) register(name string, m module.Module) (err error) {
	defer func() {
		if v := recover(); v != nil {
			err = fmt.Errorf("sandbox: module %s: %v", name, v) // e.g. a route registered twice
		}
	}()
	m.Register(s.routes)
	s.parts, s.names = append(s.parts, m), append(s.names, name)
	return nil
}

// router is the Mux every part registers on: the ServeMux, plus the list
// of patterns it was given (Server.Routes).
type router struct {
	mux      *http.ServeMux
	patterns []string
}

func (rt *router) Handle(pattern string, h http.Handler) {
	rt.mux.Handle(pattern, h) // panics on a conflict, before the pattern is listed
	rt.patterns = append(rt.patterns, pattern)
}

func (rt *router) HandleFunc(pattern string, h func(http.ResponseWriter, *http.Request)) {
	rt.Handle(pattern, http.HandlerFunc(h))
}

// Routes returns every pattern registered on the server ("PUT
// /v2/cobv/{txid}", "POST /oauth/token", control routes included), sorted.
// Tests walk it so that a route added later is covered without being
// listed again.
func (s *Server) Routes() []string {
	out := append([]string(nil), s.routes.patterns...)
	sort.Strings(out)
	return out
}

// lookup finds a built module by name; s.parts and s.names only change
// inside New, before any request.
func (s *Server) lookup(name string) (module.Module, bool) {
	for i, n := range s.names {
		if n == name {
			m, ok := s.parts[i].(module.Module)
			return m, ok
		}
	}
	return nil, false
}

// BaseURL returns scheme://host of a request as the client reached it.
func BaseURL(r *http.Request) string {
	scheme := "http"
	if r.TLS != nil {
		scheme = "https"
	}
	return scheme + "://" + r.Host
}

var probeMethods = []string{http.MethodGet, http.MethodPost, http.MethodPut, http.MethodPatch, http.MethodDelete}

// serve routes a request: one trailing slash ignored, control routes only
// from loopback, unknown routes in the path's dialect, faults on API
// routes.
func (s *Server) serve(w http.ResponseWriter, r *http.Request) {
	// Every route answers with or without one trailing slash, as the real
	// service does ("GET /v2/cobv/" of the official Node SDK), without a
	// redirect: clients do not follow one on PUT or POST. No pattern ends
	// in a slash, so the path without it is the route's own.
	r = httpx.TrimTrailingSlash(r)
	if (strings.HasPrefix(r.URL.Path, "/sandbox/") || r.URL.Path == "/sandbox") && !httpx.IsLoopback(r) {
		httpx.WriteJSON(w, http.StatusForbidden, map[string]string{"error": "forbidden",
			"message": "as rotas /sandbox/ só respondem a clientes no loopback"})
		return
	}
	_, pattern := s.mux.Handler(r)
	if pattern == "" {
		var allow []string
		for _, m := range probeMethods {
			if m == r.Method {
				continue
			}
			r2 := r.Clone(r.Context())
			r2.Method = m
			if _, p := s.mux.Handler(r2); p != "" {
				allow = append(allow, m)
			}
		}
		if len(allow) > 0 {
			httpx.MethodNotAllowed(w, r, allow)
		} else {
			httpx.NotFound(w, r)
		}
		return
	}
	s.faults.Serve(w, r, pattern, s.auth.AppOf, s.mux)
}
