// Package web is `remessa web`: the billing desk in a browser. It serves
// server-rendered pages (html/template, our own CSS and a few small
// scripts, all embedded) over the same engine as the CLI: pipeline for
// loading, validating and planning, pipeline/run for running (as River jobs
// in the app's SQLite database), reports for the reports. It never
// implements a step of its own that the CLI has.
package web

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"runtime/debug"
	"sync"
	"sync/atomic"
	"time"

	"github.com/riverqueue/river"
	"github.com/rs/zerolog"

	"remessa/internal/metrics"

	"remessa/pipeline/listen"
	"remessa/pipeline/run"
	"remessa/sandbox"
)

// Config is how `remessa web` starts.
type Config struct {
	Addr          string        // listen address; default 127.0.0.1:8070
	DataDir       string        // everything the app keeps; default <user data dir>/remessa/web
	AdminPassword string        // first administrator's password; "" = random, printed once
	IdleTimeout   time.Duration // sessions end after this long without a request; default 30 min
	MaxUpload     int64         // largest upload in bytes; default 50 MB
	TLSCert       string        // serve HTTPS with this certificate and key
	TLSKey        string
	Key           []byte    // credentials encryption key (32 bytes); default REMESSA_WEB_KEY or <data>/chave
	Log           io.Writer // server log; nil = none
	Now           func() time.Time
	// Workers is how many runs go at once (default 2).
	Workers int
	// DB, a postgres:// URL, makes every new run a cluster run
	// (cluster.go): its units are River jobs in that database, worked by
	// this server (Units at once; negative: none) and by any `remessa
	// worker`, each unit leased for UnitTimeout (default 2 min).
	DB          string
	Units       int
	UnitTimeout time.Duration
	// SyncEvery is how often the desk syncs the runs that still have open
	// charges and runs their régua (follow.go); default DefaultSyncEvery,
	// negative: never.
	SyncEvery time.Duration
	// PublicURL is where the service reaches this desk (scheme and host,
	// e.g. https://cobranca.example.com): the notification and Pix webhook
	// addresses of the accounts other than the embedded one are on it
	// (inbox.go). "" = not known: their pages show the address to
	// register by hand, on the address the page was asked on.
	PublicURL string
	// NotifyRate is how many deliveries a second each account's
	// notification endpoints take (default DefaultNotifyRate).
	NotifyRate float64
}

// DefaultAddr is where `remessa web` listens by default.
const DefaultAddr = "127.0.0.1:8070"

// DefaultDataDir is <user data dir>/remessa/web.
func DefaultDataDir() string {
	base := os.Getenv("XDG_DATA_HOME")
	if base == "" {
		if home, err := os.UserHomeDir(); err == nil {
			base = filepath.Join(home, ".local", "share")
		} else {
			base = os.TempDir()
		}
	}
	return filepath.Join(base, "remessa", "web")
}

// Server is a running web app.
type Server struct {
	cfg     Config
	db      *sql.DB
	rdb     *sql.DB
	river   *river.Client[*sql.Tx]
	key     []byte
	log     zerolog.Logger
	limiter loginLimiter
	pages   *pages
	mux     *http.ServeMux
	hub     *hub
	lock    *os.File
	served  *metrics.Server // answers by status class

	embedMu sync.Mutex
	embed   *sandbox.Running
	// cancels holds the cancel function of each run this server is
	// working, so "Cancelar" stops it at once (River's own cancel reaches
	// the worker too, on its next poll).
	cancels sync.Map // run id -> context.CancelFunc
	// boot names this start of the server in its follow jobs (follow.go):
	// one a dead process left running is not this start's
	boot int64

	// with Config.DB: the cluster's database and this server's unit worker
	cw       *run.ClusterWatch
	unitStop context.CancelFunc
	unitDone chan struct{}

	// the notification endpoints (inbox.go)
	inbox       *listen.Listener
	tokens      tokenCache
	notify      *notifyLimits
	inboxKicked atomic.Bool
	self        atomic.Pointer[string]

	httpSrv  *http.Server
	listener net.Listener
	// AdminCreated and AdminPassword are set when this start created the
	// first administrator (the password is shown once, then only its hash
	// is kept).
	AdminCreated  bool
	AdminPassword string
	URL           string
}

func (s *Server) now() time.Time {
	if s.cfg.Now != nil {
		return s.cfg.Now()
	}
	return time.Now()
}

// Paths under the data folder.
func (s *Server) draftsDir() string { return filepath.Join(s.cfg.DataDir, "remessas") }
func (s *Server) runsDir() string   { return filepath.Join(s.cfg.DataDir, "execucoes") }
func (s *Server) sandboxDir() string {
	return filepath.Join(s.cfg.DataDir, "execucoes", ".sandbox")
}

// New opens (or creates) the app's data folder and database and prepares
// the server; Start listens.
func New(ctx context.Context, cfg Config) (*Server, error) {
	if cfg.Addr == "" {
		cfg.Addr = DefaultAddr
	}
	if cfg.DataDir == "" {
		cfg.DataDir = DefaultDataDir()
	}
	if cfg.IdleTimeout <= 0 {
		cfg.IdleTimeout = 30 * time.Minute
	}
	if cfg.MaxUpload <= 0 {
		cfg.MaxUpload = 50 << 20
	}
	if cfg.Workers <= 0 {
		cfg.Workers = 2
	}
	if cfg.Units == 0 {
		cfg.Units = 2
	}
	if cfg.SyncEvery == 0 {
		cfg.SyncEvery = DefaultSyncEvery
	}
	if cfg.NotifyRate <= 0 {
		cfg.NotifyRate = DefaultNotifyRate
	}
	if cfg.PublicURL != "" {
		u, key := checkServiceURL(cfg.PublicURL, "")
		if key != "" {
			return nil, fmt.Errorf("--public-url %q: use um endereço http:// ou https:// completo, sem caminho de consulta", cfg.PublicURL)
		}
		cfg.PublicURL = u
	}
	if (cfg.TLSCert == "") != (cfg.TLSKey == "") {
		return nil, errors.New("--tls-cert e --tls-key vão juntos")
	}
	abs, err := filepath.Abs(cfg.DataDir)
	if err != nil {
		return nil, err
	}
	cfg.DataDir = abs
	s := &Server{cfg: cfg, log: zerolog.Nop(), served: metrics.NewServer("web")}
	if cfg.Log != nil {
		s.log = zerolog.New(cfg.Log).With().Timestamp().Logger()
	}
	for _, d := range []string{cfg.DataDir, s.draftsDir(), s.runsDir()} {
		if err := os.MkdirAll(d, 0o700); err != nil {
			return nil, fmt.Errorf("pasta de dados: %w", err)
		}
	}
	if s.lock, err = lockDir(cfg.DataDir); err != nil {
		return nil, err
	}
	ok := false
	defer func() {
		if !ok {
			s.Close()
		}
	}()
	if s.key, err = loadKey(cfg.DataDir, cfg.Key); err != nil {
		return nil, err
	}
	if s.db, s.rdb, err = openDB(ctx, cfg.DataDir); err != nil {
		return nil, err
	}
	// with --db: the cluster's database first (a wrong address is said
	// at once) and this server's unit worker
	if err := s.startCluster(ctx); err != nil {
		return nil, err
	}
	if s.AdminCreated, s.AdminPassword, err = s.ensureAdmin(ctx, cfg.AdminPassword); err != nil {
		return nil, fmt.Errorf("criar o administrador: %w", err)
	}
	if err := s.ensureEmbeddedAccount(ctx); err != nil {
		return nil, err
	}
	if s.pages, err = loadPages(); err != nil {
		return nil, err
	}
	s.hub = newHub()
	// the embedded sandbox serves every run on the embedded account and
	// the documents their results link to: it starts with the server
	if _, err := s.embedded(); err != nil {
		return nil, fmt.Errorf("serviço embutido: %w", err)
	}
	if err := s.openInbox(ctx); err != nil {
		return nil, err
	}
	if err := s.startQueue(ctx); err != nil {
		return nil, err
	}
	s.routes()
	ok = true
	return s, nil
}

// Handler is the app's HTTP handler (for tests and embedding).
func (s *Server) Handler() http.Handler { return s.requestID(s.served.Middleware(s.middleware(s.mux))) }

// Start listens on the configured address and serves in the background.
func (s *Server) Start() error {
	ln, err := net.Listen("tcp", s.cfg.Addr)
	if err != nil {
		return fmt.Errorf("escutar em %s: %w", s.cfg.Addr, err)
	}
	s.listener = ln
	scheme := "http"
	if s.cfg.TLSCert != "" {
		scheme = "https"
	}
	s.URL = scheme + "://" + ln.Addr().String()
	s.setSelfURL(ln, scheme)
	s.httpSrv = &http.Server{Handler: s.Handler(), ReadHeaderTimeout: 10 * time.Second, IdleTimeout: 2 * time.Minute,
		ErrorLog: nil}
	go func() {
		var err error
		if s.cfg.TLSCert != "" {
			err = s.httpSrv.ServeTLS(ln, s.cfg.TLSCert, s.cfg.TLSKey)
		} else {
			err = s.httpSrv.Serve(ln)
		}
		if err != nil && !errors.Is(err, http.ErrServerClosed) {
			s.log.Error().Err(err).Msg("servidor")
		}
	}()
	return nil
}

// Close stops the server: new requests are refused, running runs stop
// after their in-flight calls (they resume on the next start), and the
// databases are closed.
func (s *Server) Close() error {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if s.hub != nil {
		s.hub.close()
	}
	if s.httpSrv != nil {
		s.httpSrv.Shutdown(ctx)
	}
	if s.river != nil {
		// runs stop after their in-flight calls; River hands them back on the next start
		s.river.StopAndCancel(ctx)
	}
	s.stopCluster()
	if s.inbox != nil {
		s.inbox.Close()
	}

	s.embedMu.Lock()
	if s.embed != nil {
		s.embed.Close()
		s.embed = nil
	}
	s.embedMu.Unlock()
	if s.rdb != nil {
		s.rdb.Close()
	}
	if s.db != nil {
		s.db.Close()
	}
	if s.lock != nil {
		s.lock.Close()
	}
	return nil
}

// middleware wraps every request: a panic becomes a plain error page
// (logged with its stack, never shown), security headers are set, and a
// ?lang= choice is remembered in a cookie.
func (s *Server) middleware(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		defer func() {
			if v := recover(); v != nil {
				if v == http.ErrAbortHandler {
					panic(v)
				}
				logOf(r.Context(), s.log).Error().Str("path", redactPath(r.URL.Path)).Interface("panic", v).Bytes("stack", debug.Stack()).Msg("falha interna")
				s.fail(w, r, http.StatusInternalServerError, msgInternal)
			}
		}()
		h := w.Header()
		h.Set("X-Content-Type-Options", "nosniff")
		h.Set("Referrer-Policy", "same-origin")
		h.Set("X-Frame-Options", "SAMEORIGIN")
		h.Set("Content-Security-Policy", "default-src 'self'; img-src 'self' data:; style-src 'self' 'unsafe-inline'; script-src 'self'; frame-ancestors 'self'; form-action 'self'; base-uri 'none'")
		if l := r.URL.Query().Get("lang"); l == "pt" || l == "en" {
			http.SetCookie(w, &http.Cookie{Name: langCookie, Value: l, Path: "/", MaxAge: 365 * 86400, SameSite: http.SameSiteLaxMode, HttpOnly: true})
		}
		r.Body = http.MaxBytesReader(w, r.Body, s.cfg.MaxUpload+1<<20)
		next.ServeHTTP(w, r)
	})
}

// msgInternal is what a user sees of an unexpected failure.
const msgInternal = "Algo deu errado do nosso lado. Nada foi perdido; tente de novo. Se continuar, avise o administrador."

// guard serves h to a signed-in user whose role allows need. A request
// that changes anything (any method but GET and HEAD) must carry the
// session's CSRF token. Without a session a page redirects to the sign-in
// page and anything else answers 401.
func (s *Server) guard(need Role, h func(http.ResponseWriter, *http.Request, *session)) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		ss, err := s.sessionFrom(r)
		if err != nil {
			s.fail(w, r, http.StatusInternalServerError, msgInternal)
			return
		}
		lang := langOf(r)
		if ss == nil {
			if r.Method == http.MethodGet && r.Header.Get("Accept") != "text/event-stream" {
				http.Redirect(w, r, "/entrar?volta="+urlQueryEscape(r.URL.RequestURI()), http.StatusSeeOther)
				return
			}
			s.fail(w, r, http.StatusUnauthorized, tr(lang, "err.signin"))
			return
		}
		if r.Method != http.MethodGet && r.Method != http.MethodHead {
			if !checkCSRF(r, ss) {
				s.fail(w, r, http.StatusForbidden, tr(lang, "err.csrf"))
				return
			}
		}
		if !ss.User.Role.Allows(need) {
			s.fail(w, r, http.StatusForbidden, tr(lang, "err.role"))
			return
		}
		h(w, r, ss)
	}
}

// DataDir is the folder the server keeps everything in.
func (s *Server) DataDir() string { return s.cfg.DataDir }
