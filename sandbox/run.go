package sandbox

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	stdlog "log"
	"net"
	"net/http"
	"os"
	"sync"
	"time"

	"remessa/sandbox/auth"
	"remessa/sandbox/clock"
	"remessa/sandbox/faults"
	"remessa/sandbox/httpx"
	"remessa/sandbox/module"
	"remessa/sandbox/store"
)

// Handler returns the whole sandbox as one handler (every route, control
// routes included), for in-process use with httptest.
func (s *Server) Handler() http.Handler { return s.handler }

// Auth returns the accounts and applications service.
func (s *Server) Auth() *auth.Service { return s.auth }

// Store returns the store.
func (s *Server) Store() *store.Store { return s.st }

// Clock returns the sandbox clock.
func (s *Server) Clock() clock.Clock { return s.clk }

// Faults returns the fault injector (its config can be changed at run time).
func (s *Server) Faults() *faults.Injector { return s.faults }

// Credentials returns the first application's credentials; ClientSecret is
// set only when the application was created now or given in Config.
func (s *Server) Credentials() auth.Credentials { return s.creds }

// DataDir returns the data directory ("" for an in-memory sandbox).
func (s *Server) DataDir() string { return s.dataDir }

// Modules returns the names of the modules built, in registration order.
func (s *Server) Modules() []string { return append([]string(nil), s.names...) }

// Running is a listening sandbox.
type Running struct {
	URL          string // charges API base, e.g. "http://127.0.0.1:8080"
	PixURL       string // Pix API base (same as URL unless PixAddr or TLS)
	ClientID     string
	ClientSecret string // only when created at this start or given in Config
	PayeeCode    string
	PixKey       string
	DataDir      string
	CAFile       string // with TLS: the CA clients must trust
	// With TLS, a client certificate issued for the first application (if
	// the TLS provider made one), for api.Config.CertFile/KeyFile.
	ClientCertFile, ClientKeyFile string
	// ClientP12File is that certificate and key as .p12 (empty password),
	// for api.Config.P12File.
	ClientP12File string
	Server        *Server

	servers     []*http.Server
	cancel      context.CancelFunc
	wg          sync.WaitGroup
	once        sync.Once
	stopProfile func() // ends the CPU profile of CPUProfileEnv
	err         error
	done        chan struct{}
}

// Start listens on loopback (Addr, default 127.0.0.1:0; and PixAddr or a
// second port with TLS), serves, and starts the modules' Run loops.
func (s *Server) Start() (*Running, error) {
	addr := s.cfg.Addr
	if addr == "" {
		addr = "127.0.0.1:0"
	}
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, fmt.Errorf("sandbox: listen on %s: %w", addr, err)
	}
	rn := &Running{Server: s, DataDir: s.dataDir, ClientID: s.creds.ClientID, ClientSecret: s.creds.ClientSecret,
		PayeeCode: s.creds.PayeeCode, PixKey: s.creds.PixKey, done: make(chan struct{}), stopProfile: startCPUProfile()}
	rn.URL = "http://" + ln.Addr().String()
	rn.PixURL = rn.URL
	var pixLn net.Listener
	var tlsCfg *tls.Config
	if s.cfg.TLS {
		prov := module.TLS()
		if prov == nil {
			ln.Close()
			return nil, errors.New("sandbox: TLS pedido mas nenhum módulo fornece TLS (o módulo pix não está incluído?)")
		}
		setup, err := prov(module.Deps{Store: s.st, Clock: s.clk, Auth: s.auth, BaseURL: BaseURL, Logger: s.log, DataDir: s.dataDir, TLS: true})
		if err != nil {
			ln.Close()
			return nil, fmt.Errorf("sandbox: TLS: %w", err)
		}
		tlsCfg, rn.CAFile = setup.Config, setup.CAFile
		rn.ClientCertFile, rn.ClientKeyFile = setup.ClientCertFile, setup.ClientKeyFile
		rn.ClientP12File = setup.ClientP12File
	}
	if s.cfg.PixAddr != "" || tlsCfg != nil {
		pa := s.cfg.PixAddr
		if pa == "" {
			pa = "127.0.0.1:0"
		}
		if pixLn, err = net.Listen("tcp", pa); err != nil {
			ln.Close()
			return nil, fmt.Errorf("sandbox: listen on %s (Pix): %w", pa, err)
		}
		scheme := "http"
		if tlsCfg != nil {
			scheme = "https"
			pixLn = tls.NewListener(pixLn, tlsCfg)
		}
		rn.PixURL = scheme + "://" + pixLn.Addr().String()
	}
	s.url.Store(&rn.URL)
	s.pixURL.Store(&rn.PixURL)

	errLog := stdlog.New(s.log, "", 0)
	for _, l := range []net.Listener{ln, pixLn} {
		if l == nil {
			continue
		}
		h := s.handler
		if tlsCfg != nil && l == ln {
			h = httpx.Date(s.clk.Now, refusePix(h, rn.PixURL)) // the refusal dated too
		}
		srv := &http.Server{Handler: h, ReadHeaderTimeout: 10 * time.Second, IdleTimeout: 120 * time.Second, ErrorLog: errLog}
		rn.servers = append(rn.servers, srv)
		rn.wg.Add(1)
		go func(l net.Listener) {
			defer rn.wg.Done()
			if err := srv.Serve(l); err != nil && !errors.Is(err, http.ErrServerClosed) {
				s.log.Error().Err(err).Msg("sandbox: serve")
			}
		}(l)
	}
	ctx, cancel := context.WithCancel(context.Background())
	rn.cancel = cancel
	for i, p := range s.parts {
		if r, ok := p.(module.Runner); ok {
			rn.wg.Add(1)
			go func(name string) {
				defer rn.wg.Done()
				defer func() {
					if v := recover(); v != nil {
						s.log.Error().Interface("panic", v).Str("module", name).Msg("sandbox: module Run panicked")
					}
				}()
				r.Run(ctx)
			}(s.names[i])
		}
	}
	return rn, nil
}

// refusePix serves h on the plain listener of a sandbox with TLS except
// the Pix API (/v2, /v3, /oauth): like the real one, Pix is only served
// with a client certificate, here at pixURL.
func refusePix(h http.Handler, pixURL string) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if httpx.DialectOf(r.URL.Path) == httpx.DialectPix {
			httpx.Problem(w, http.StatusForbidden, "AcessoNegado", "Acesso Negado",
				"Com --tls a API Pix só atende em "+pixURL+" com o certificado de cliente da CA do sandbox.", nil)
			return
		}
		h.ServeHTTP(w, r)
	})
}

// Done is closed when Close finished.
func (rn *Running) Done() <-chan struct{} { return rn.done }

// Close stops accepting requests, waits up to 10 s for requests in flight,
// stops the modules and closes the store. It is idempotent.
func (rn *Running) Close() error {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	return rn.Shutdown(ctx)
}

// Shutdown is Close with a deadline for requests in flight.
func (rn *Running) Shutdown(ctx context.Context) error {
	rn.once.Do(func() {
		var errs []error
		for _, srv := range rn.servers {
			if err := srv.Shutdown(ctx); err != nil {
				errs = append(errs, err)
				srv.Close()
			}
		}
		rn.cancel()
		rn.wg.Wait()
		errs = append(errs, rn.Server.Close())
		rn.stopProfile()
		rn.err = errors.Join(errs...)
		close(rn.done)
	})
	return rn.err
}

// Close releases a server that was not started (or is called by
// Running.Close): it closes the modules, the store and the data dir lock.
func (s *Server) Close() error {
	s.closeMu.Lock()
	defer s.closeMu.Unlock()
	if s.closed {
		return nil
	}
	s.closed = true
	var errs []error
	for i := len(s.parts) - 1; i >= 0; i-- {
		if c, ok := s.parts[i].(module.Closer); ok {
			if err := c.Close(); err != nil {
				errs = append(errs, fmt.Errorf("sandbox: close module %s: %w", s.names[i], err))
			}
		}
	}
	errs = append(errs, s.closeStore())
	return errors.Join(errs...)
}

func (s *Server) closeStore() error {
	var err error
	if s.st != nil {
		err = s.st.Close()
		s.st = nil
	}
	if s.lock != nil {
		s.lock.unlock()
		s.lock = nil
	}
	if s.tmpDir != "" {
		_ = os.RemoveAll(s.tmpDir)
		s.tmpDir = ""
	}
	return err
}

// registerControl serves the core's control routes (loopback only, no token):
//
//	GET  /sandbox/status  URLs, data dir, modules, clock
//	GET  /sandbox/apps    accounts and applications (no secrets)
//	POST /sandbox/apps    {"account": "new"|payee_code, "client_id"?, "client_secret"?, "scopes"?}
//	                      creates an application (and an account) and returns its credentials once
func (s *Server) registerControl() {
	s.mux.HandleFunc("GET /sandbox/status", func(w http.ResponseWriter, r *http.Request) {
		httpx.WriteJSON(w, http.StatusOK, map[string]any{
			"url": *s.url.Load(), "pix_url": *s.pixURL.Load(), "data_dir": s.dataDir,
			"store": s.st.Backend(), "db": s.st.Path(),
			"modules": s.names, "now": s.clk.Now().UTC().Format(time.RFC3339Nano),
			"token_ttl_seconds": int64(s.auth.TokenTTL() / time.Second),
		})
	})
	s.mux.HandleFunc("GET /sandbox/apps", func(w http.ResponseWriter, r *http.Request) {
		httpx.WriteJSON(w, http.StatusOK, ListApps(s.auth))
	})
	s.mux.HandleFunc("POST /sandbox/apps", func(w http.ResponseWriter, r *http.Request) {
		var req AddAppRequest // an empty body asks for a new account with one application
		if r.ContentLength != 0 {
			if de := httpx.DecodeStrict(r, &req); de != nil {
				httpx.WriteJSON(w, de.Status(), map[string]string{"error": "invalid_request", "property": de.Pointer, "message": de.Message})
				return
			}
		}
		creds, err := AddApp(r.Context(), s.auth, req)
		if err != nil {
			httpx.WriteJSON(w, http.StatusBadRequest, map[string]string{"error": "invalid_request", "message": err.Error()})
			return
		}
		httpx.WriteJSON(w, http.StatusCreated, creds)
	})
}
