// Package faults injects failures into the sandbox's API routes so clients
// can be tested against them: added latency, a share of 500, 503 and 429
// answers (with Retry-After), connections dropped after the request was
// processed (the ambiguous case), and a daily quota per route and
// application like the real service's 15,000 requests a day.
//
// Every setting applies to all routes ("all") and can be overridden per
// route pattern ("POST /v1/carnet", "GET /v1/charge/:id" or
// "GET /v1/charge/{id}"). The configuration is set by flags at start and
// read or replaced at run time with GET/PUT /sandbox/faults.
package faults

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"math/rand/v2"
	"net/http"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"remessa/sandbox/clock"
	"remessa/sandbox/httpx"
	"remessa/sandbox/store"
)

// Duration is a time.Duration written in JSON as a Go duration string ("50ms").
type Duration time.Duration

// MarshalJSON writes "50ms".
func (d Duration) MarshalJSON() ([]byte, error) { return json.Marshal(time.Duration(d).String()) }

// UnmarshalJSON reads "50ms" or a number of milliseconds.
func (d *Duration) UnmarshalJSON(b []byte) error {
	var s string
	if err := json.Unmarshal(b, &s); err == nil {
		v, err := time.ParseDuration(s)
		if err != nil {
			return fmt.Errorf("duração inválida %q (exemplos: 50ms, 1s)", s)
		}
		*d = Duration(v)
		return nil
	}
	var ms float64
	if err := json.Unmarshal(b, &ms); err != nil {
		return errors.New(`duração deve ser uma string como "50ms" ou um número de milissegundos`)
	}
	*d = Duration(ms * float64(time.Millisecond))
	return nil
}

// Rule is the full set of faults for a route.
type Rule struct {
	Latency    Duration `json:"latency,omitempty"`     // added before the handler
	Jitter     Duration `json:"jitter,omitempty"`      // plus a uniform random 0..Jitter
	P500       float64  `json:"error_500,omitempty"`   // share of requests answered 500 (not processed)
	P503       float64  `json:"error_503,omitempty"`   // share answered 503 (not processed)
	P429       float64  `json:"error_429,omitempty"`   // share answered 429 (not processed)
	RetryAfter int      `json:"retry_after,omitempty"` // seconds in Retry-After of random 429s (default 1)
	Drop       float64  `json:"drop,omitempty"`        // share processed, then the connection is closed without an answer
	Quota      int      `json:"quota,omitempty"`       // requests per day per route and application (0 = no quota)
}

// Override changes some fields of the "all" rule for one route; nil
// fields keep the value of "all".
type Override struct {
	Latency    *Duration `json:"latency,omitempty"`
	Jitter     *Duration `json:"jitter,omitempty"`
	P500       *float64  `json:"error_500,omitempty"`
	P503       *float64  `json:"error_503,omitempty"`
	P429       *float64  `json:"error_429,omitempty"`
	RetryAfter *int      `json:"retry_after,omitempty"`
	Drop       *float64  `json:"drop,omitempty"`
	Quota      *int      `json:"quota,omitempty"`
}

// Config is the fault configuration.
type Config struct {
	Seed   int64               `json:"seed,omitempty"` // RNG seed; 0 = random
	All    Rule                `json:"all"`
	Routes map[string]Override `json:"routes,omitempty"` // by route pattern, e.g. "POST /v1/carnet"
}

// Off reports whether the configuration injects nothing.
func (c Config) Off() bool {
	if c.All != (Rule{}) {
		return false
	}
	for _, o := range c.Routes {
		if o != (Override{}) {
			return false
		}
	}
	return true
}

func (r Rule) apply(o Override) Rule {
	if o.Latency != nil {
		r.Latency = *o.Latency
	}
	if o.Jitter != nil {
		r.Jitter = *o.Jitter
	}
	if o.P500 != nil {
		r.P500 = *o.P500
	}
	if o.P503 != nil {
		r.P503 = *o.P503
	}
	if o.P429 != nil {
		r.P429 = *o.P429
	}
	if o.RetryAfter != nil {
		r.RetryAfter = *o.RetryAfter
	}
	if o.Drop != nil {
		r.Drop = *o.Drop
	}
	if o.Quota != nil {
		r.Quota = *o.Quota
	}
	return r
}

func (r Rule) validate(where string) error {
	for _, p := range []struct {
		name string
		v    float64
	}{{"error_500", r.P500}, {"error_503", r.P503}, {"error_429", r.P429}, {"drop", r.Drop}} {
		if p.v < 0 || p.v > 1 || p.v != p.v {
			return fmt.Errorf("faults: %s: %s = %v: deve estar entre 0 e 1", where, p.name, p.v)
		}
	}
	if r.P500+r.P503+r.P429 > 1+1e-9 {
		return fmt.Errorf("faults: %s: error_500 + error_503 + error_429 = %v: a soma deve ser no máximo 1", where, r.P500+r.P503+r.P429)
	}
	if r.Latency < 0 || r.Jitter < 0 || r.Latency > Duration(time.Minute) || r.Jitter > Duration(time.Minute) {
		return fmt.Errorf("faults: %s: latency e jitter devem estar entre 0 e 1m", where)
	}
	if r.RetryAfter < 0 || r.RetryAfter > 86400 {
		return fmt.Errorf("faults: %s: retry_after = %d: deve estar entre 0 e 86400 segundos", where, r.RetryAfter)
	}
	if r.Quota < 0 {
		return fmt.Errorf("faults: %s: quota = %d: não pode ser negativa", where, r.Quota)
	}
	return nil
}

// Validate checks shares (0..1, and 500+503+429 at most 1), durations and
// route patterns.
func (c Config) Validate() error {
	if err := c.All.validate("all"); err != nil {
		return err
	}
	for pat, o := range c.Routes {
		if _, err := NormalizeRoute(pat); err != nil {
			return err
		}
		if err := c.All.apply(o).validate(pat); err != nil {
			return err
		}
	}
	return nil
}

// NormalizeRoute turns "post /v1/charge/:id/pay" or "POST /v1/charge/{id}/pay"
// into "POST /v1/charge/*/pay", the form routes are compared in.
func NormalizeRoute(pattern string) (string, error) {
	method, path, ok := strings.Cut(strings.TrimSpace(pattern), " ")
	path = strings.TrimSpace(path)
	if !ok || method == "" || !strings.HasPrefix(path, "/") {
		return "", fmt.Errorf("faults: rota %q: use \"MÉTODO /caminho\", por exemplo \"POST /v1/carnet\"", pattern)
	}
	segs := strings.Split(path, "/")
	for i, s := range segs {
		if strings.HasPrefix(s, ":") || strings.HasPrefix(s, "{") && strings.HasSuffix(s, "}") {
			segs[i] = "*"
		}
	}
	return strings.ToUpper(method) + " " + strings.Join(segs, "/"), nil
}

// Injector applies a Config. It is safe for concurrent use.
type Injector struct {
	clk clock.Clock
	off atomic.Bool // nothing configured: skip all work

	norm sync.Map // route pattern -> normalised form

	mu     sync.Mutex
	cfg    Config
	routes map[string]Rule // normalised pattern -> effective rule
	rng    *rand.Rand
	day    string
	counts map[quotaKey]int
	st     *store.Store // quota counters persisted here (nil: memory only)
	log    func(error)  // store failures (counting goes on in memory)
}

type quotaKey struct{ route, app string }

// New returns an injector for cfg (validated); clk decides the quota day.
func New(cfg Config, clk clock.Clock) (*Injector, error) {
	if clk == nil {
		clk = clock.Real{}
	}
	inj := &Injector{clk: clk, counts: map[quotaKey]int{}}
	if err := inj.SetConfig(cfg); err != nil {
		return nil, err
	}
	return inj, nil
}

// Config returns the current configuration.
func (inj *Injector) Config() Config {
	inj.mu.Lock()
	defer inj.mu.Unlock()
	c := inj.cfg
	c.Routes = make(map[string]Override, len(inj.cfg.Routes))
	for k, v := range inj.cfg.Routes {
		c.Routes[k] = v
	}
	return c
}

// SetConfig validates and installs cfg, reseeding the RNG. Quota counters
// are kept.
func (inj *Injector) SetConfig(cfg Config) error {
	if err := cfg.Validate(); err != nil {
		return err
	}
	routes := make(map[string]Rule, len(cfg.Routes))
	for pat, o := range cfg.Routes {
		n, _ := NormalizeRoute(pat)
		routes[n] = cfg.All.apply(o)
	}
	seed := uint64(cfg.Seed)
	if cfg.Seed == 0 {
		seed = rand.Uint64()
	}
	inj.mu.Lock()
	inj.off.Store(cfg.Off())
	inj.cfg = cfg
	inj.routes = routes
	inj.rng = rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15))
	inj.mu.Unlock()
	return nil
}

// KindQuota is the store kind of the persisted quota counters: account =
// the São Paulo day ("2026-11-22"), id = route pattern + "\x00" + app id,
// document {"count": n}.
const KindQuota = "faults.quota"

type quotaDoc struct {
	Count int `json:"count"`
}

func quotaID(k quotaKey) string { return k.route + "\x00" + k.app }

// SetStore makes the quota counters durable in st, like the real
// service's: today's counts are loaded now, every counted request is
// written through before it is answered, and a restart on the same data
// continues the day's count instead of handing out a fresh quota. Counts
// of other days are deleted. onErr (may be nil) hears store failures; the
// count then goes on in memory.
func (inj *Injector) SetStore(ctx context.Context, st *store.Store, onErr func(error)) error {
	day := inj.clk.Now().In(saoPaulo).Format("2006-01-02")
	counts := map[quotaKey]int{}
	var stale [][2]string
	err := st.Each(ctx, KindQuota, func(account, id string, raw []byte) error {
		if account != day {
			stale = append(stale, [2]string{account, id})
			return nil
		}
		route, app, ok := strings.Cut(id, "\x00")
		var d quotaDoc
		if !ok || json.Unmarshal(raw, &d) != nil {
			stale = append(stale, [2]string{account, id})
			return nil
		}
		counts[quotaKey{route, app}] = d.Count
		return nil
	})
	if err != nil {
		return fmt.Errorf("faults: load quota counters: %w", err)
	}
	if len(stale) > 0 {
		if err := st.Tx(ctx, func(tx *store.Tx) error {
			for _, s := range stale {
				if err := tx.Delete(KindQuota, s[0], s[1]); err != nil {
					return err
				}
			}
			return nil
		}); err != nil {
			return fmt.Errorf("faults: drop old quota counters: %w", err)
		}
	}
	if onErr == nil {
		onErr = func(error) {}
	}
	inj.mu.Lock()
	inj.st, inj.log, inj.day, inj.counts = st, onErr, day, counts
	inj.mu.Unlock()
	return nil
}

// ResetQuota forgets every quota counter (also the persisted ones).
func (inj *Injector) ResetQuota() {
	inj.mu.Lock()
	defer inj.mu.Unlock()
	inj.counts = map[quotaKey]int{}
	if inj.st == nil {
		return
	}
	var ids [][2]string
	err := inj.st.Each(context.Background(), KindQuota, func(account, id string, _ []byte) error {
		ids = append(ids, [2]string{account, id})
		return nil
	})
	if err == nil {
		err = inj.st.Tx(context.Background(), func(tx *store.Tx) error {
			for _, s := range ids {
				if err := tx.Delete(KindQuota, s[0], s[1]); err != nil {
					return err
				}
			}
			return nil
		})
	}
	if err != nil {
		inj.log(fmt.Errorf("faults: reset quota counters: %w", err))
	}
}

// saveCount writes one counter through (caller holds mu; lock order mu →
// store, as the store asks).
func (inj *Injector) saveCount(k quotaKey, n int) {
	if inj.st == nil {
		return
	}
	day := inj.day
	err := inj.st.Tx(context.Background(), func(tx *store.Tx) error {
		return tx.Put(KindQuota, day, quotaID(k), quotaDoc{Count: n})
	})
	if err != nil {
		inj.log(fmt.Errorf("faults: save quota counter: %w", err))
	}
}

// QuotaUsed returns how many requests app made today on route (a pattern
// in any accepted form).
func (inj *Injector) QuotaUsed(route, app string) int {
	n, err := NormalizeRoute(route)
	if err != nil {
		return 0
	}
	inj.mu.Lock()
	defer inj.mu.Unlock()
	inj.rollDay()
	return inj.counts[quotaKey{n, app}]
}

func (inj *Injector) rollDay() {
	day := inj.clk.Now().In(saoPaulo).Format("2006-01-02")
	if day != inj.day {
		inj.day = day
		inj.counts = map[quotaKey]int{}
	}
}

var saoPaulo = time.FixedZone("America/Sao_Paulo", -3*3600)

// secondsToMidnight returns the seconds from now to the next midnight in
// São Paulo (at least 1).
func secondsToMidnight(now time.Time) int {
	sp := now.In(saoPaulo)
	next := time.Date(sp.Year(), sp.Month(), sp.Day()+1, 0, 0, 0, 0, saoPaulo)
	s := int((next.Sub(sp) + time.Second - 1) / time.Second)
	return max(s, 1)
}

type decision struct {
	delay      time.Duration
	status     int // 0, 429, 500, 503
	quota      bool
	retryAfter int
	drop       bool
}

func (inj *Injector) decide(route, app string) decision {
	inj.mu.Lock()
	defer inj.mu.Unlock()
	rule, ok := inj.routes[route]
	if !ok {
		rule = inj.cfg.All
	}
	if rule == (Rule{}) {
		return decision{}
	}
	var d decision
	d.delay = time.Duration(rule.Latency)
	if rule.Jitter > 0 {
		d.delay += time.Duration(inj.rng.Int64N(int64(rule.Jitter) + 1))
	}
	if rule.Quota > 0 && app != "" {
		inj.rollDay()
		k := quotaKey{route, app}
		inj.counts[k]++
		inj.saveCount(k, inj.counts[k])
		if inj.counts[k] > rule.Quota {
			d.status, d.quota, d.retryAfter = http.StatusTooManyRequests, true, secondsToMidnight(inj.clk.Now())
			return d
		}
	}
	if rule.P429+rule.P503+rule.P500 > 0 {
		u := inj.rng.Float64()
		switch {
		case u < rule.P429:
			d.status, d.retryAfter = http.StatusTooManyRequests, rule.RetryAfter
			if d.retryAfter == 0 {
				d.retryAfter = 1
			}
		case u < rule.P429+rule.P503:
			d.status = http.StatusServiceUnavailable
		case u < rule.P429+rule.P503+rule.P500:
			d.status = http.StatusInternalServerError
		}
	}
	if d.status == 0 && rule.Drop > 0 && inj.rng.Float64() < rule.Drop {
		d.drop = true
	}
	return d
}

// IsAPIPath reports whether faults apply to path: the real API's routes
// (/v1, /v2, /v3, /oauth), never the /sandbox control routes nor the
// documents under /v1/documents/ (payer-facing pages opened in a browser,
// not API calls an integrator makes; the real service serves them from
// another host, outside the API's quota).
func IsAPIPath(path string) bool {
	if strings.HasPrefix(path, "/v1/documents/") {
		return false
	}
	return strings.HasPrefix(path, "/v1/") || strings.HasPrefix(path, "/v2/") ||
		strings.HasPrefix(path, "/v3/") || strings.HasPrefix(path, "/oauth/")
}

// Wrap returns next with the faults applied. route returns the matched
// route pattern of a request ("" when none), app the application it acts
// for (for the quota; false when unknown, then no quota applies).
func (inj *Injector) Wrap(next http.Handler, route func(*http.Request) string, app func(*http.Request) (string, bool)) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		pat := ""
		if IsAPIPath(r.URL.Path) {
			pat = route(r)
		}
		inj.Serve(w, r, pat, app, next)
	})
}

// Serve applies the faults for route pattern pat ("" = none apply) to one
// request, calling next unless a fault answers instead.
func (inj *Injector) Serve(w http.ResponseWriter, r *http.Request, pat string, app func(*http.Request) (string, bool), next http.Handler) {
	// A CORS preflight (OPTIONS) is the browser asking, not an API call:
	// no fault, no quota.
	if pat == "" || r.Method == http.MethodOptions || inj.off.Load() || !IsAPIPath(r.URL.Path) {
		next.ServeHTTP(w, r)
		return
	}
	var norm string
	if v, ok := inj.norm.Load(pat); ok {
		norm = v.(string)
	} else {
		var err error
		if norm, err = NormalizeRoute(pat); err != nil {
			next.ServeHTTP(w, r)
			return
		}
		inj.norm.Store(pat, norm)
	}
	{
		appID := ""
		if app != nil && inj.needsApp(norm) {
			appID, _ = app(r)
		}
		d := inj.decide(norm, appID)
		if d.delay > 0 {
			if err := sleep(r.Context(), d.delay); err != nil {
				return
			}
		}
		switch d.status {
		case http.StatusTooManyRequests:
			w.Header().Set("Retry-After", strconv.Itoa(d.retryAfter))
			if d.quota {
				tooMany(w, r, 3500049, "daily_limit_exceeded",
					fmt.Sprintf("Limite diário de requisições desta rota para a aplicação foi atingido; tente após a meia-noite (em %d s)", d.retryAfter))
			} else {
				tooMany(w, r, 3500055, "too_many_requests",
					fmt.Sprintf("Muitas requisições; tente novamente em %d s", d.retryAfter))
			}
			return
		case http.StatusServiceUnavailable:
			if httpx.DialectOf(r.URL.Path) == httpx.DialectPix {
				httpx.Problem(w, http.StatusServiceUnavailable, "ServicoIndisponivel", "Serviço Indisponível", "Serviço temporariamente indisponível (falha injetada)", nil)
			} else {
				httpx.V1Error(w, http.StatusServiceUnavailable, 3500503, "service_unavailable", "Serviço temporariamente indisponível")
			}
			return
		case http.StatusInternalServerError:
			httpx.InternalError(w, r)
			return
		}
		if d.drop {
			dw := &discard{h: http.Header{}}
			next.ServeHTTP(dw, r)
			conn, _, err := http.NewResponseController(w).Hijack()
			if err == nil {
				_ = conn.Close()
				return
			}
			panic(http.ErrAbortHandler) // not hijackable (HTTP/2): abort the stream
		}
		next.ServeHTTP(w, r)
	}
}

// needsApp reports whether route has a quota (so the application must be
// identified).
func (inj *Injector) needsApp(route string) bool {
	inj.mu.Lock()
	defer inj.mu.Unlock()
	rule, ok := inj.routes[route]
	if !ok {
		rule = inj.cfg.All
	}
	return rule.Quota > 0
}

func tooMany(w http.ResponseWriter, r *http.Request, code int, slug, desc string) {
	if httpx.DialectOf(r.URL.Path) == httpx.DialectPix {
		httpx.Problem(w, http.StatusTooManyRequests, "BaldeFichasVazio", "Limite de requisições atingido", desc, nil)
		return
	}
	httpx.V1Error(w, http.StatusTooManyRequests, code, slug, desc)
}

// timerSleep waits d on a Go timer or until ctx is done.
func timerSleep(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// discard is the ResponseWriter of a request whose answer will be dropped.
type discard struct{ h http.Header }

func (d *discard) Header() http.Header         { return d.h }
func (d *discard) Write(b []byte) (int, error) { return len(b), nil }
func (d *discard) WriteHeader(int)             {}

// Register serves the control routes GET and PUT /sandbox/faults (the
// whole Config as JSON) and DELETE /sandbox/faults/quota (reset counters).
func (inj *Injector) Register(mux httpx.Mux) {
	mux.HandleFunc("GET /sandbox/faults", func(w http.ResponseWriter, r *http.Request) {
		httpx.WriteJSON(w, http.StatusOK, inj.Config())
	})
	mux.HandleFunc("PUT /sandbox/faults", func(w http.ResponseWriter, r *http.Request) {
		var cfg Config
		if de := httpx.DecodeStrict(r, &cfg); de != nil {
			httpx.WriteJSON(w, de.Status(), map[string]string{"error": "invalid_faults", "property": de.Pointer, "message": de.Message})
			return
		}
		if err := inj.SetConfig(cfg); err != nil {
			httpx.WriteJSON(w, http.StatusBadRequest, map[string]string{"error": "invalid_faults", "message": err.Error()})
			return
		}
		httpx.WriteJSON(w, http.StatusOK, inj.Config())
	})
	mux.HandleFunc("DELETE /sandbox/faults/quota", func(w http.ResponseWriter, r *http.Request) {
		inj.ResetQuota()
		w.WriteHeader(http.StatusNoContent)
	})
}

// BindFlags defines the fault flags on fs, filling c:
//
//	--fault-latency 50ms | "POST /v1/carnet=50ms"
//	--fault-jitter 20ms
//	--fault-500 0.1, --fault-503 0.1, --fault-429 0.1, --fault-drop 0.05
//	--fault-retry-after 2
//	--quota 15000
//	--fault-seed 42
//
// A value "ROUTE=VALUE" sets the route's override; a bare value sets "all".
// Each flag may be repeated.
func (c *Config) BindFlags(fs *flag.FlagSet) {
	dur := func(all *Duration, ov func(*Override) **Duration) func(string) error {
		return func(v string) error {
			route, val := splitRoute(v)
			d, err := time.ParseDuration(val)
			if err != nil || d < 0 {
				return fmt.Errorf("duração inválida %q (exemplos: 50ms, 1s)", val)
			}
			dd := Duration(d)
			return c.set(route, func() { *all = dd }, func(o *Override) { *ov(o) = &dd })
		}
	}
	share := func(all *float64, ov func(*Override) **float64) func(string) error {
		return func(v string) error {
			route, val := splitRoute(v)
			f, err := strconv.ParseFloat(val, 64)
			if err != nil || f < 0 || f > 1 {
				return fmt.Errorf("fração inválida %q: use um número entre 0 e 1 (0.1 = 10%%)", val)
			}
			return c.set(route, func() { *all = f }, func(o *Override) { *ov(o) = &f })
		}
	}
	integer := func(all *int, ov func(*Override) **int) func(string) error {
		return func(v string) error {
			route, val := splitRoute(v)
			n, err := strconv.Atoi(val)
			if err != nil || n < 0 {
				return fmt.Errorf("número inválido %q", val)
			}
			return c.set(route, func() { *all = n }, func(o *Override) { *ov(o) = &n })
		}
	}
	fs.Func("fault-latency", "latência adicionada a cada requisição da API (ex.: 50ms; \"POST /v1/carnet=200ms\" só nessa rota)",
		dur(&c.All.Latency, func(o *Override) **Duration { return &o.Latency }))
	fs.Func("fault-jitter", "variação aleatória extra de latência, de 0 até o valor (ex.: 20ms)",
		dur(&c.All.Jitter, func(o *Override) **Duration { return &o.Jitter }))
	fs.Func("fault-500", "fração de requisições respondidas com 500 sem processar (0..1; aceita \"ROTA=0.1\")",
		share(&c.All.P500, func(o *Override) **float64 { return &o.P500 }))
	fs.Func("fault-503", "fração de requisições respondidas com 503 sem processar (0..1)",
		share(&c.All.P503, func(o *Override) **float64 { return &o.P503 }))
	fs.Func("fault-429", "fração de requisições respondidas com 429 e Retry-After sem processar (0..1)",
		share(&c.All.P429, func(o *Override) **float64 { return &o.P429 }))
	fs.Func("fault-drop", "fração de requisições processadas cuja conexão é fechada sem resposta (0..1)",
		share(&c.All.Drop, func(o *Override) **float64 { return &o.Drop }))
	fs.Func("fault-retry-after", "segundos no Retry-After dos 429 aleatórios (padrão 1)",
		integer(&c.All.RetryAfter, func(o *Override) **int { return &o.RetryAfter }))
	fs.Func("quota", "limite diário de requisições por rota e aplicação (o serviço real usa 15000; 0 = sem limite)",
		integer(&c.All.Quota, func(o *Override) **int { return &o.Quota }))
	fs.Func("fault-seed", "semente do gerador aleatório das falhas (reprodutível; 0 = aleatória)", func(v string) error {
		n, err := strconv.ParseInt(v, 10, 64)
		if err != nil {
			return fmt.Errorf("semente inválida %q", v)
		}
		c.Seed = n
		return nil
	})
}

func splitRoute(v string) (route, val string) {
	if i := strings.LastIndex(v, "="); i >= 0 {
		return strings.TrimSpace(v[:i]), strings.TrimSpace(v[i+1:])
	}
	return "", strings.TrimSpace(v)
}

func (c *Config) set(route string, all func(), ov func(*Override)) error {
	if route == "" {
		all()
		return nil
	}
	if _, err := NormalizeRoute(route); err != nil {
		return err
	}
	if c.Routes == nil {
		c.Routes = map[string]Override{}
	}
	o := c.Routes[route]
	ov(&o)
	c.Routes[route] = o
	return nil
}

// Summary describes the active faults in one line (for the start banner).
func (c Config) Summary() string {
	if c.Off() {
		return "nenhuma"
	}
	var parts []string
	add := func(name string, r Rule) {
		var f []string
		if r.Latency > 0 || r.Jitter > 0 {
			l := "latência " + time.Duration(r.Latency).String()
			if r.Jitter > 0 {
				l += " + até " + time.Duration(r.Jitter).String()
			}
			f = append(f, l)
		}
		for _, p := range []struct {
			n string
			v float64
		}{{"500", r.P500}, {"503", r.P503}, {"429", r.P429}, {"queda", r.Drop}} {
			if p.v > 0 {
				f = append(f, fmt.Sprintf("%s %g%%", p.n, p.v*100))
			}
		}
		if r.Quota > 0 {
			f = append(f, fmt.Sprintf("cota %d/dia", r.Quota))
		}
		if len(f) > 0 {
			parts = append(parts, name+": "+strings.Join(f, ", "))
		}
	}
	add("todas as rotas", c.All)
	keys := make([]string, 0, len(c.Routes))
	for k := range c.Routes {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		add(k, c.All.apply(c.Routes[k]))
	}
	return strings.Join(parts, "; ")
}
