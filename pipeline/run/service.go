package run

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/rs/zerolog"
	"golang.org/x/time/rate"

	"remessa/api"
	"remessa/pipeline"
	"remessa/sandbox"
	_ "remessa/sandbox/all"     // every route module
	_ "remessa/sandbox/charges" // the routes a run needs, even before sandbox/all lists them
	_ "remessa/sandbox/pix"
)

// EmbeddedAddr is where the embedded sandbox listens when the port is free
// (the default address of `remessa sandbox`).
const EmbeddedAddr = "127.0.0.1:8080"

// Real service base URLs (real-service.md, top).
const (
	HomologBaseURL    = "https://cobrancas-h.api.efipay.com.br"
	HomologPixBaseURL = "https://pix-h.api.efipay.com.br"
	ProdBaseURL       = "https://cobrancas.api.efipay.com.br"
	ProdPixBaseURL    = "https://pix.api.efipay.com.br"
)

// Embedded sandbox credentials: fixed so every run (and `remessa sandbox
// --data DIR` afterwards) finds the same application. They only open a
// local sandbox on loopback; they are not secrets.
const (
	EmbeddedClientID     = "Client_Id_remessa_embutido"
	EmbeddedClientSecret = "Client_Secret_remessa_embutido"
)

// Service is where a run sends its calls.
type Service struct {
	Kind       string // embedded, sandbox, production
	BaseURL    string
	PixBaseURL string
	SandboxDir string // embedded: the sandbox data folder
	PayeeCode  string // embedded: the issuing account
	Client     *api.Client
	limiter    *limiters
	running    *sandbox.Running
	transport  *http.Transport
}

// Close stops the embedded sandbox this service started, if any (not a
// shared one given in Options.Embedded).
func (s *Service) Close() error {
	if s.transport != nil {
		// idle (or dialed, never used) connections would hold up a
		// sandbox's graceful shutdown
		s.transport.CloseIdleConnections()
	}
	if s.running != nil {
		return s.running.Close()
	}
	return nil
}

// serviceConfig is what connect needs.
type serviceConfig struct {
	Kind                   string
	BaseURL, PixBaseURL    string
	ClientID, ClientSecret string
	P12File, P12Password   string
	SandboxDir             string
	PixKeys                []string         // embedded: keys the job receives on, registered on the account
	SplitContas            []string         // embedded: Pix accounts the job's split pays, created when missing
	Embedded               *sandbox.Running // embedded: a shared sandbox already running (not closed)
	Rates                  map[string]int
	Log                    zerolog.Logger
	Timeout                time.Duration
}

func connect(ctx context.Context, c serviceConfig) (*Service, error) {
	s := &Service{Kind: c.Kind, limiter: newLimiters(c.Rates)}
	cfg := api.Config{ClientID: c.ClientID, ClientSecret: c.ClientSecret, P12File: c.P12File, P12Password: c.P12Password,
		Timeout: c.Timeout, UserAgent: "remessa"}
	switch c.Kind {
	case "embedded", "":
		s.Kind = "embedded"
		var rn *sandbox.Running
		if c.Embedded != nil {
			// shared: the caller started it and closes it
			rn, s.SandboxDir = c.Embedded, c.SandboxDir
			if rn.DataDir != "" {
				s.SandboxDir = rn.DataDir
			}
			payee, err := prepareEmbedded(ctx, rn, c.PixKeys, c.SplitContas, true)
			if err != nil {
				return nil, err
			}
			s.PayeeCode = payee
		} else {
			// The default address of `remessa sandbox` first, so the links in
			// the results work again when `remessa sandbox --data <folder>`
			// serves the same data; any free port when it is taken.
			var err error
			if rn, err = startEmbedded(c.SandboxDir, EmbeddedAddr, "127.0.0.1:0"); err != nil {
				return nil, err
			}
			s.running, s.SandboxDir, s.PayeeCode = rn, c.SandboxDir, rn.PayeeCode
			if _, err := prepareEmbedded(ctx, rn, c.PixKeys, c.SplitContas, false); err != nil {
				rn.Close()
				return nil, err
			}
		}
		cfg.BaseURL, cfg.PixBaseURL = rn.URL, rn.PixURL
		cfg.ClientID, cfg.ClientSecret, cfg.P12File = EmbeddedClientID, EmbeddedClientSecret, ""
	default:
		cfg.BaseURL, cfg.PixBaseURL = c.BaseURL, c.PixBaseURL
		if cfg.BaseURL == "" {
			cfg.BaseURL = HomologBaseURL
			if c.Kind == "production" {
				cfg.BaseURL = ProdBaseURL
			}
		}
		if cfg.PixBaseURL == "" {
			if c.BaseURL != "" {
				cfg.PixBaseURL = c.BaseURL // a sandbox serves both on one address
			} else {
				cfg.PixBaseURL = HomologPixBaseURL
				if c.Kind == "production" {
					cfg.PixBaseURL = ProdPixBaseURL
				}
			}
		}
		if cfg.ClientID == "" || cfg.ClientSecret == "" {
			return nil, fmt.Errorf("serviço %s: faltam as credenciais (REMESSA_CLIENT_ID e REMESSA_CLIENT_SECRET, ou endpoint.client_id/client_secret com ${VAR} no job)", pipeline.ServiceName(c.Kind, "pt"))
		}
	}
	s.BaseURL, s.PixBaseURL = cfg.BaseURL, cfg.PixBaseURL
	tr := http.DefaultTransport.(*http.Transport).Clone()
	tr.MaxIdleConnsPerHost = 64
	s.transport = tr
	cfg.HTTPClient = &http.Client{Transport: &observer{next: tr, lim: s.limiter}, Timeout: timeoutOr(c.Timeout)}
	cl, err := api.New(cfg)
	if err != nil {
		s.Close()
		return nil, fmt.Errorf("cliente da API: %w", err)
	}
	s.Client = cl
	return s, nil
}

// StartEmbedded starts the embedded sandbox with its data in dir
// (sandbox.Memory: in memory), listening on 127.0.0.1 on any free port,
// with the fixed application EmbeddedClientID/EmbeddedClientSecret, for
// Options.Embedded. The caller closes it (after the runs using it
// returned). The folder can be used by one process at a time.
func StartEmbedded(dir string) (*sandbox.Running, error) {
	return startEmbedded(dir, "127.0.0.1:0")
}

// startEmbedded starts the embedded sandbox on dir at the first of addrs
// it can listen on.
func startEmbedded(dir string, addrs ...string) (*sandbox.Running, error) {
	if dir != sandbox.Memory {
		if err := os.MkdirAll(dir, 0o700); err != nil {
			return nil, fmt.Errorf("sandbox embutido: %w", err)
		}
	}
	for i, addr := range addrs {
		srv, err := sandbox.New(sandbox.Config{Addr: addr, DataDir: dir,
			ClientID: EmbeddedClientID, ClientSecret: EmbeddedClientSecret, Logger: zerolog.Nop()})
		if err != nil {
			if errors.Is(err, sandbox.ErrBusy) || strings.Contains(err.Error(), "in use") {
				return nil, fmt.Errorf("a pasta do sandbox embutido %s está em uso por um \"remessa sandbox\" em execução; pare-o ou rode com --base-url apontando para ele: %w", dir, err)
			}
			return nil, fmt.Errorf("sandbox embutido (%s): %w", dir, err)
		}
		rn, err := srv.Start()
		if err == nil {
			return rn, nil
		}
		srv.Close()
		if i == len(addrs)-1 {
			return nil, fmt.Errorf("sandbox embutido: %w", err)
		}
	}
	return nil, errors.New("sandbox embutido: nenhum endereço")
}

// embeddedMu makes the registrations of runs sharing one sandbox happen
// one at a time (two jobs may add the same Pix key).
var embeddedMu sync.Mutex

// prepareEmbedded registers a job's Pix keys on the embedded application's
// account and creates the accounts its split pays, on the embedded sandbox
// rn; it returns the account's payee code. shared: rn was started by the
// caller, whose embedded application is made sure of first.
func prepareEmbedded(ctx context.Context, rn *sandbox.Running, pixKeys, splitContas []string, shared bool) (string, error) {
	embeddedMu.Lock()
	defer embeddedMu.Unlock()
	srv := rn.Server
	payee := rn.PayeeCode
	if shared {
		creds, err := srv.Auth().Bootstrap(ctx, EmbeddedClientID, EmbeddedClientSecret)
		if err != nil {
			return "", fmt.Errorf("sandbox embutido: aplicação %s: %w", EmbeddedClientID, err)
		}
		payee = creds.PayeeCode
	}
	acc, ok := srv.Auth().AccountByPayeeCode(payee)
	if !ok {
		return payee, nil
	}
	for _, k := range pixKeys {
		if k == "" || hasKey(acc.Keys, k) {
			continue
		}
		if err := srv.Auth().AddKey(ctx, acc.ID, k); err != nil {
			return "", fmt.Errorf("sandbox embutido: cadastrar a chave Pix do job: %w", err)
		}
	}
	// the local sandbox stands for the real service, where the
	// split's receiving accounts exist
	for _, conta := range splitContas {
		if conta == "" || conta == acc.Conta {
			continue
		}
		if _, err := srv.Auth().EnsureAccount(ctx, "Favorecido do split (conta "+conta+")", conta); err != nil {
			return "", fmt.Errorf("sandbox embutido: criar a conta %s do split do job: %w", conta, err)
		}
	}
	return payee, nil
}

func timeoutOr(d time.Duration) time.Duration {
	if d <= 0 {
		return 60 * time.Second
	}
	return d
}

func hasKey(keys []string, k string) bool {
	for _, x := range keys {
		if strings.EqualFold(x, k) {
			return true
		}
	}
	return false
}

// routeOf names the route of a request path the way jobs name them
// ("POST /v1/carnet", "PUT /v2/lotecobv/:id").
func routeOf(method, path string) string {
	if i := strings.IndexByte(path, '?'); i >= 0 {
		path = path[:i]
	}
	parts := strings.Split(strings.Trim(path, "/"), "/")
	for i, p := range parts {
		if p == "" {
			continue
		}
		if isVar(p) && i > 0 {
			switch parts[i-1] {
			case "vinculo":
				parts[i] = ":splitConfigId"
			case "cobv", "cob":
				parts[i] = ":txid"
			default:
				parts[i] = ":id"
			}
		}
	}
	return method + " /" + strings.Join(parts, "/")
}

func isVar(p string) bool {
	switch p {
	case "v1", "v2", "v3", "gn", "split", "config", "cobv", "cob", "vinculo", "lotecobv", "carnet", "charge", "charges", "one-step", "oauth", "token", "authorize":
		return false
	}
	for _, c := range p {
		if c >= '0' && c <= '9' {
			return true
		}
	}
	return len(p) >= 20
}

// limiters is a rate limiter per route that slows down on 429 (halving the
// rate it observed) and speeds up again slowly while answers are good.
type limiters struct {
	mu     sync.Mutex
	rates  map[string]int
	byName map[string]*adaptive
}

type adaptive struct {
	mu      sync.Mutex
	lim     *rate.Limiter
	max     rate.Limit // configured ceiling (Inf = none)
	window  []time.Time
	last429 time.Time
	slowed  int
	peak    rate.Limit
}

func newLimiters(rates map[string]int) *limiters {
	return &limiters{rates: rates, byName: map[string]*adaptive{}}
}

func (l *limiters) get(route string) *adaptive {
	l.mu.Lock()
	defer l.mu.Unlock()
	a := l.byName[route]
	if a == nil {
		ceil := rate.Inf
		if n, ok := l.rates[route]; ok && n > 0 {
			ceil = rate.Limit(n)
		} else if n, ok := l.rates["default"]; ok && n > 0 {
			ceil = rate.Limit(n)
		}
		burst := 1
		if ceil != rate.Inf {
			burst = max(1, int(ceil))
		}
		a = &adaptive{lim: rate.NewLimiter(ceil, burst), max: ceil}
		l.byName[route] = a
	}
	return a
}

// Wait blocks until route may send.
func (l *limiters) Wait(ctx context.Context, route string) error {
	a := l.get(route)
	if err := a.lim.Wait(ctx); err != nil {
		return err
	}
	a.mu.Lock()
	now := time.Now()
	a.window = append(a.window, now)
	cut := 0
	for cut < len(a.window) && now.Sub(a.window[cut]) > time.Second {
		cut++
	}
	a.window = a.window[cut:]
	// additive recovery: a quarter more for every quiet 2 s after a slowdown
	if a.slowed > 0 && now.Sub(a.last429) > 2*time.Second {
		n := a.lim.Limit() * 1.25
		if a.max != rate.Inf && n >= a.max || a.max == rate.Inf && n > 4*a.peak {
			n = a.max
			a.slowed = 0
		}
		a.lim.SetLimit(n)
		a.lim.SetBurst(max(1, int(min(n, 64))))
		a.last429 = now
	}
	a.mu.Unlock()
	return nil
}

// Slow lowers route's rate after a 429: to three quarters of what it was
// sending (at most once every 2 s, never below 2 requests per second).
func (l *limiters) Slow(route string) {
	a := l.get(route)
	a.mu.Lock()
	defer a.mu.Unlock()
	now := time.Now()
	if a.slowed > 0 && now.Sub(a.last429) < 2*time.Second {
		return
	}
	cur := rate.Limit(len(a.window))
	if a.lim.Limit() != rate.Inf && a.lim.Limit() < cur {
		cur = a.lim.Limit()
	}
	if cur > a.peak {
		a.peak = cur
	}
	n := cur * 3 / 4
	if n < 2 {
		n = 2
	}
	a.lim.SetLimit(n)
	a.lim.SetBurst(max(1, int(min(n, 64))))
	a.last429, a.slowed = now, a.slowed+1
}

// Limit returns route's current rate (requests per second; +Inf = none).
func (l *limiters) Limit(route string) float64 { return float64(l.get(route).lim.Limit()) }

// observer tells the limiters about 429 answers (the api client retries
// them itself, after Retry-After).
type observer struct {
	next http.RoundTripper
	lim  *limiters
}

func (o *observer) RoundTrip(r *http.Request) (*http.Response, error) {
	resp, err := o.next.RoundTrip(r)
	if err == nil && resp.StatusCode == http.StatusTooManyRequests {
		o.lim.Slow(routeOf(r.Method, r.URL.Path))
	}
	return resp, err
}

// sandboxDirFor is the default embedded sandbox folder for a runs folder.
func sandboxDirFor(runsDir string) string { return filepath.Join(runsDir, ".sandbox") }
