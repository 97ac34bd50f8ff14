// Package api is a typed client of the charge-issuing (/v1) and Pix (/v2)
// service, real or the local sandbox.
//
// The core (this file, auth.go, errors.go, retry.go, log.go) handles
// tokens, retries, errors and logging; the route files (charges*.go,
// carnet*.go, card*.go, pix*.go) are thin typed wrappers over v1 and pix.
//
// Retries: GET, PUT, PATCH and DELETE are retried with exponential backoff
// and full jitter on network errors and 500/502/503/504; any method is
// retried on 429 (not processed) after Retry-After; a 401 drops the cached
// token and retries once. A POST that may have reached the server is never
// re-sent: its error wraps ErrAmbiguous.
package api

import (
	"bytes"
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"net/http/httptrace"
	"os"
	"strings"
	"sync"
	"time"

	"github.com/rs/zerolog"
	"software.sslmate.com/src/go-pkcs12"

	"remessa/internal/metrics"
)

// Config configures a Client.
type Config struct {
	BaseURL    string // charges API, e.g. "https://cobrancas-h.api.efipay.com.br" or the sandbox URL
	PixBaseURL string // Pix API, e.g. "https://pix-h.api.efipay.com.br"; "" = BaseURL

	ClientID, ClientSecret string

	// Client certificate for mTLS (the Pix API requires one): either a
	// PKCS#12 file (P12File, P12Password) or PEM files (CertFile, KeyFile).
	CertFile, KeyFile    string
	P12File, P12Password string
	CAFile               string // extra root CA (PEM), e.g. the sandbox's local CA
	HTTPClient           *http.Client
	Logger               *zerolog.Logger // nil: no logging
	MaxRetries           int             // retries after the first attempt; 0 = DefaultMaxRetries, negative = none
	RetryBase, RetryCap  time.Duration   // backoff; defaults 100 ms and 5 s
	MaxRetryWait         time.Duration   // longest Retry-After honoured (default 30 s); longer returns the 429
	Timeout              time.Duration   // per attempt when HTTPClient is nil (default 60 s)
	UserAgent            string
	Now                  func() time.Time                                 // this machine's clock: token expiry, and ServiceClock's fallback (tests); default time.Now
	Sleep                func(ctx context.Context, d time.Duration) error // waits between attempts (tests); default a timer
}

// Client talks to the service. It is safe for concurrent use.
type Client struct {
	cfg       Config
	hc        *http.Client
	log       zerolog.Logger
	v1Tok     tokenCache
	pixTok    tokenCache
	retries   int
	retryBase time.Duration
	retryCap  time.Duration
	maxWait   time.Duration
	now       func() time.Time
	sleep     func(context.Context, time.Duration) error
	clock     *ServiceClock // the service's time, from the Date of its answers

	rngMu sync.Mutex
	rng   *rand.Rand
}

// New checks cfg and builds a client (loading certificates now, so a bad
// file is reported here).
func New(cfg Config) (*Client, error) {
	cfg.BaseURL = strings.TrimRight(cfg.BaseURL, "/")
	cfg.PixBaseURL = strings.TrimRight(cfg.PixBaseURL, "/")
	if cfg.BaseURL == "" && cfg.PixBaseURL == "" {
		return nil, errors.New("api: BaseURL is empty")
	}
	if cfg.PixBaseURL == "" {
		cfg.PixBaseURL = cfg.BaseURL
	}
	if cfg.ClientID == "" || cfg.ClientSecret == "" {
		return nil, errors.New("api: ClientID and ClientSecret are required")
	}
	c := &Client{cfg: cfg, log: zerolog.Nop(), retries: cfg.MaxRetries, retryBase: cfg.RetryBase,
		retryCap: cfg.RetryCap, maxWait: cfg.MaxRetryWait, now: cfg.Now, sleep: cfg.Sleep, rng: newRNG()}
	if cfg.Logger != nil {
		c.log = *cfg.Logger
	}
	if c.retries == 0 {
		c.retries = DefaultMaxRetries
	} else if c.retries < 0 {
		c.retries = 0
	}
	if c.retryBase <= 0 {
		c.retryBase = DefaultRetryBase
	}
	if c.retryCap <= 0 {
		c.retryCap = DefaultRetryCap
	}
	if c.maxWait <= 0 {
		c.maxWait = DefaultMaxRetryWait
	}
	if c.now == nil {
		c.now = time.Now
	}
	if c.sleep == nil {
		c.sleep = sleepCtx
	}
	c.clock = NewServiceClock(c.now)
	tlsCfg, err := tlsConfig(cfg)
	if err != nil {
		return nil, err
	}
	switch {
	case cfg.HTTPClient != nil && tlsCfg != nil:
		return nil, errors.New("api: give either HTTPClient or certificate files (CertFile, KeyFile, P12File, CAFile), not both")
	case cfg.HTTPClient != nil:
		c.hc = cfg.HTTPClient
	default:
		tr := http.DefaultTransport.(*http.Transport).Clone()
		tr.MaxIdleConnsPerHost = 64
		if tlsCfg != nil {
			tr.TLSClientConfig = tlsCfg
		}
		timeout := cfg.Timeout
		if timeout <= 0 {
			timeout = 60 * time.Second
		}
		c.hc = &http.Client{Transport: tr, Timeout: timeout}
	}
	c.v1Tok.fetch = c.fetchV1Token
	c.pixTok.fetch = c.fetchPixToken
	c.v1Tok.now, c.pixTok.now = c.now, c.now
	return c, nil
}

func tlsConfig(cfg Config) (*tls.Config, error) {
	if cfg.P12File == "" && cfg.CertFile == "" && cfg.KeyFile == "" && cfg.CAFile == "" {
		return nil, nil
	}
	t := &tls.Config{MinVersion: tls.VersionTLS12}
	switch {
	case cfg.P12File != "" && (cfg.CertFile != "" || cfg.KeyFile != ""):
		return nil, errors.New("api: give either P12File or CertFile/KeyFile, not both")
	case cfg.P12File != "":
		data, err := os.ReadFile(cfg.P12File)
		if err != nil {
			return nil, fmt.Errorf("api: read certificate %s: %w", cfg.P12File, err)
		}
		key, cert, chain, err := pkcs12.DecodeChain(data, cfg.P12Password)
		if err != nil {
			return nil, fmt.Errorf("api: decode PKCS#12 %s (wrong password, or a PEM file?): %w", cfg.P12File, err)
		}
		tc := tls.Certificate{Certificate: [][]byte{cert.Raw}, PrivateKey: key, Leaf: cert}
		for _, ca := range chain {
			tc.Certificate = append(tc.Certificate, ca.Raw)
		}
		t.Certificates = []tls.Certificate{tc}
	case cfg.CertFile != "" || cfg.KeyFile != "":
		if cfg.CertFile == "" || cfg.KeyFile == "" {
			return nil, errors.New("api: CertFile and KeyFile go together")
		}
		tc, err := tls.LoadX509KeyPair(cfg.CertFile, cfg.KeyFile)
		if err != nil {
			return nil, fmt.Errorf("api: load certificate %s / key %s: %w", cfg.CertFile, cfg.KeyFile, err)
		}
		t.Certificates = []tls.Certificate{tc}
	}
	if cfg.CAFile != "" {
		pem, err := os.ReadFile(cfg.CAFile)
		if err != nil {
			return nil, fmt.Errorf("api: read CA %s: %w", cfg.CAFile, err)
		}
		pool, err := x509.SystemCertPool()
		if err != nil || pool == nil {
			pool = x509.NewCertPool()
		}
		if !pool.AppendCertsFromPEM(pem) {
			return nil, fmt.Errorf("api: CA %s has no PEM certificate", cfg.CAFile)
		}
		t.RootCAs = pool
	}
	return t, nil
}

// API selects which half of the service a request goes to.
type API int

// The two APIs.
const (
	V1  API = iota // charges API: BaseURL, token from /v1/authorize, {code,data} envelope
	Pix            // Pix API: PixBaseURL, token from /oauth/token, plain JSON
)

func (a API) String() string {
	if a == Pix {
		return "pix"
	}
	return "v1"
}

// Response is a successful raw answer.
type Response struct {
	Status int
	Header http.Header
	Body   []byte
}

// v1 calls the charges API: in (nil for none) is sent as JSON, the
// {"code":200,"data":...} envelope is unwrapped into out (nil to ignore).
// An answer without "data" is decoded whole into out.
func (c *Client) v1(ctx context.Context, method, path string, in, out any) error {
	resp, err := c.Do(ctx, V1, method, path, in)
	if err != nil {
		return err
	}
	if out == nil || len(bytes.TrimSpace(resp.Body)) == 0 {
		return nil
	}
	var env struct {
		Data json.RawMessage `json:"data"`
	}
	if err := json.Unmarshal(resp.Body, &env); err != nil {
		return fmt.Errorf("api: %s %s: decode answer: %w", method, RedactString(path), err)
	}
	data := env.Data
	if data == nil {
		data = resp.Body
	}
	if err := json.Unmarshal(data, out); err != nil {
		return fmt.Errorf("api: %s %s: decode answer: %w", method, RedactString(path), err)
	}
	return nil
}

// pix calls the Pix API: in as JSON, the answer decoded into out (nil to ignore).
func (c *Client) pix(ctx context.Context, method, path string, in, out any) error {
	resp, err := c.Do(ctx, Pix, method, path, in)
	if err != nil {
		return err
	}
	if out == nil || len(bytes.TrimSpace(resp.Body)) == 0 {
		return nil
	}
	if err := json.Unmarshal(resp.Body, out); err != nil {
		return fmt.Errorf("api: %s %s: decode answer: %w", method, RedactString(path), err)
	}
	return nil
}

// Do sends an authenticated request to api and returns the raw successful
// answer (2xx); any other answer is an *Error. in is nil, []byte or
// json.RawMessage (sent as is), or a value sent as JSON. path may carry a
// query string. Retries follow the package rules.
func (c *Client) Do(ctx context.Context, api API, method, path string, in any) (*Response, error) {
	var body []byte
	switch v := in.(type) {
	case nil:
	case []byte:
		body = v
	case json.RawMessage:
		body = v
	default:
		var err error
		if body, err = json.Marshal(in); err != nil {
			return nil, fmt.Errorf("api: %s %s: encode request: %w", method, RedactString(path), err)
		}
	}
	tc := &c.v1Tok
	base := c.cfg.BaseURL
	if api == Pix {
		tc, base = &c.pixTok, c.cfg.PixBaseURL
	}
	return c.call(ctx, callSpec{api: api, method: method, url: base + path, path: path, body: body, hasBody: in != nil, tokens: tc})
}

type callSpec struct {
	api         API
	method, url string
	path        string // for errors and logs
	body        []byte
	hasBody     bool
	tokens      *tokenCache // nil: Basic auth with the client credentials (token routes)
	alwaysRetry bool        // safe to re-send whatever happened (token routes)
	contentType string
}

// call runs the attempt loop.
func (c *Client) call(ctx context.Context, s callSpec) (*Response, error) {
	idem := s.alwaysRetry || idempotent(s.method)
	retried401 := false
	// unknown: an earlier attempt ended without a known outcome (the
	// connection failed after sending, or 500/502/504), so the service may
	// have done what a later refusal says it did not (3500043 "already
	// canceled" after a cancel whose answer was lost). The token routes
	// change nothing: their errors are never marked.
	unknown := false
	route := metrics.RouteOf(s.api.String(), s.method, s.path)
	for attempt := 0; ; attempt++ {
		var tok string
		if s.tokens != nil {
			var err error
			if tok, err = s.tokens.get(ctx); err != nil {
				return nil, err
			}
		}
		start := time.Now()
		resp, sent, err := c.send(ctx, s, tok)
		if err != nil {
			route.Observe(0, time.Since(start))
		} else {
			route.Observe(resp.Status, time.Since(start))
		}
		ev := c.log.Debug()
		if ev.Enabled() { // redaction costs: only when the line is written
			ev = ev.Str("api", s.api.String()).Str("method", s.method).Str("path", RedactString(s.path)).
				Int("attempt", attempt+1).Dur("duration_ms", time.Since(start))
		}
		if err != nil {
			if ev.Enabled() {
				ev.Err(errors.New(RedactString(err.Error()))).Bool("sent", sent).Msg("api request failed")
			}
			if ctx.Err() != nil {
				if sent && !idem {
					return nil, fmt.Errorf("api: %s %s: %w (interrompida depois de enviada): %w", s.method, RedactString(s.path), ErrAmbiguous, ctx.Err())
				}
				return nil, fmt.Errorf("api: %s %s: %w", s.method, RedactString(s.path), ctx.Err())
			}
			if sent && !idem {
				return nil, fmt.Errorf("api: %s %s: %w (a conexão falhou depois do envio; a requisição pode ter sido processada): %s",
					s.method, RedactString(s.path), ErrAmbiguous, RedactString(err.Error()))
			}
			if attempt >= c.retries {
				if (unknown || sent) && !s.alwaysRetry {
					return nil, fmt.Errorf("api: %s %s: %d tentativas: %s (%w)", s.method, RedactString(s.path), attempt+1,
						RedactString(err.Error()), ErrEarlierAttemptUnknown)
				}
				return nil, fmt.Errorf("api: %s %s: %d tentativas: %s", s.method, RedactString(s.path), attempt+1, RedactString(err.Error()))
			}
			unknown = unknown || sent
			route.Retry(metrics.RetryNetwork)
			if err := c.sleep(ctx, c.backoff(attempt)); err != nil {
				return nil, fmt.Errorf("api: %s %s: %w", s.method, RedactString(s.path), err)
			}
			continue
		}
		ev.Int("status", resp.Status).Msg("api request")
		if resp.Status < 300 {
			return resp, nil
		}
		apiErr := parseError(s.method, s.path, resp.Status, resp.Body)
		apiErr.EarlierAttemptUnknown = unknown && !s.alwaysRetry
		if ra, ok := parseRetryAfter(resp.Header.Get("Retry-After"), time.Now()); ok {
			apiErr.RetryAfter = ra
		}
		switch {
		case resp.Status == http.StatusUnauthorized && s.tokens != nil && !retried401:
			// The token expired early or the server forgot it: renew once.
			s.tokens.drop(tok)
			retried401 = true
			route.Retry(metrics.Retry401)
			attempt--
			continue
		case resp.Status == http.StatusTooManyRequests:
			wait := apiErr.RetryAfter
			if wait == 0 {
				wait = c.backoff(attempt)
			}
			if attempt >= c.retries || wait > c.maxWait {
				return nil, apiErr
			}
			route.Retry(metrics.Retry429)
			if err := c.sleep(ctx, wait); err != nil {
				return nil, fmt.Errorf("api: %s %s: %w", s.method, RedactString(s.path), err)
			}
			continue
		case retryableStatus(resp.Status) && idem:
			if attempt >= c.retries {
				return nil, apiErr
			}
			unknown = unknown || ambiguousStatus(resp.Status)
			route.Retry(metrics.Retry5xx)
			wait := c.backoff(attempt)
			if apiErr.RetryAfter > wait && apiErr.RetryAfter <= c.maxWait {
				wait = apiErr.RetryAfter
			}
			if err := c.sleep(ctx, wait); err != nil {
				return nil, fmt.Errorf("api: %s %s: %w", s.method, RedactString(s.path), err)
			}
			continue
		case ambiguousStatus(resp.Status) && !idem:
			apiErr.Ambiguous = true
		}
		return nil, apiErr
	}
}

// send makes one attempt. sent reports whether the whole request was
// written to the connection (so the server may have processed it).
func (c *Client) send(ctx context.Context, s callSpec, tok string) (*Response, bool, error) {
	var sent bool
	var mu sync.Mutex
	trace := &httptrace.ClientTrace{WroteRequest: func(i httptrace.WroteRequestInfo) {
		if i.Err == nil {
			mu.Lock()
			sent = true
			mu.Unlock()
		}
	}}
	wasSent := func() bool { mu.Lock(); defer mu.Unlock(); return sent }
	var rd io.Reader
	if s.hasBody {
		rd = bytes.NewReader(s.body)
	}
	req, err := http.NewRequestWithContext(httptrace.WithClientTrace(ctx, trace), s.method, s.url, rd)
	if err != nil {
		return nil, false, fmt.Errorf("api: %s %s: %w", s.method, RedactString(s.path), err)
	}
	if s.hasBody {
		ct := s.contentType
		if ct == "" {
			ct = "application/json"
		}
		req.Header.Set("Content-Type", ct)
	}
	req.Header.Set("Accept", "application/json")
	if c.cfg.UserAgent != "" {
		req.Header.Set("User-Agent", c.cfg.UserAgent)
	} else {
		req.Header.Set("User-Agent", "remessa-api")
	}
	if s.tokens != nil {
		req.Header.Set("Authorization", "Bearer "+tok)
	} else {
		req.SetBasicAuth(c.cfg.ClientID, c.cfg.ClientSecret)
	}
	resp, err := c.hc.Do(req)
	if err != nil {
		return nil, wasSent(), err
	}
	defer resp.Body.Close()
	c.clock.observe(resp.Header)
	body, err := io.ReadAll(io.LimitReader(resp.Body, 64<<20))
	if err != nil {
		return nil, true, err
	}
	return &Response{Status: resp.StatusCode, Header: resp.Header, Body: body}, true, nil
}
