package api_test

import (
	"context"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/rs/zerolog"

	"remessa/api"
	"remessa/internal/sandboxclient"
	"remessa/sandbox"
	"remessa/sandbox/clock"
	"remessa/sandbox/faults"
	"remessa/sandbox/sandboxtest"
)

// t0 is 2026-01-10 20:00 in São Paulo (23:00 UTC): 4 hours to midnight.
var t0 = time.Date(2026, 1, 10, 23, 0, 0, 0, time.UTC)

func ping(t *testing.T, c *api.Client) (sandboxtest.Whoami, error) {
	t.Helper()
	var w sandboxtest.Whoami
	resp, err := c.Do(context.Background(), api.V1, "GET", sandboxtest.PingV1, nil)
	if err != nil {
		return w, err
	}
	if !strings.Contains(string(resp.Body), `"code":200`) {
		t.Fatalf("ping body %s", resp.Body)
	}
	return w, nil
}

func asAPIError(t *testing.T, err error) *api.Error {
	t.Helper()
	var e *api.Error
	if !errors.As(err, &e) {
		t.Fatalf("error %v (%T) is not *api.Error", err, err)
	}
	return e
}

func TestAuthorizeAnswersTheSpecTokenObject(t *testing.T) {
	clk := clock.NewFake(t0)
	rn := sandboxtest.Start(t, sandbox.Config{Clock: clk})
	c := sandboxclient.Client(t, rn, nil)
	tok, err := c.Authorize(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if tok.ExpiresIn != 600 || tok.TokenType != "Bearer" || tok.AccessToken == "" || tok.RefreshToken == "" {
		t.Fatalf("token %+v", tok)
	}
	// expire_at is epoch milliseconds of now+600 s, as a string.
	if want := strconv.FormatInt(t0.Add(600*time.Second).UnixMilli(), 10); tok.ExpireAt != want {
		t.Fatalf("expire_at %q, want %q", tok.ExpireAt, want)
	}
	if tok.AccessToken == tok.RefreshToken {
		t.Fatal("refresh token equals access token")
	}
}

func TestAuthorizeRefusals(t *testing.T) {
	rn := sandboxtest.Start(t, sandbox.Config{})
	for _, tc := range []struct {
		name, id, secret string
	}{
		{"wrong secret", rn.ClientID, rn.ClientSecret + "x"},
		{"unknown id", "Client_Id_" + strings.Repeat("0", 40), rn.ClientSecret},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c, err := api.New(api.Config{BaseURL: rn.URL, ClientID: tc.id, ClientSecret: tc.secret})
			if err != nil {
				t.Fatal(err)
			}
			_, err = c.Authorize(context.Background())
			e := asAPIError(t, err)
			if e.Status != 401 || e.Code != 401 || e.Err != "invalid_client" {
				t.Fatalf("got %+v", e)
			}
			if strings.Contains(err.Error(), tc.secret) {
				t.Fatalf("error message leaks the secret: %v", err)
			}
			// A route call fails with the same error and never reaches the route.
			_, err = ping(t, c)
			if e := asAPIError(t, err); e.Status != 401 {
				t.Fatalf("ping with bad credentials: %v", err)
			}
		})
	}
	post := func(body, ctype string, basic bool) (int, string) {
		req, _ := http.NewRequest("POST", rn.URL+"/v1/authorize", strings.NewReader(body))
		req.Header.Set("Content-Type", ctype)
		if basic {
			req.SetBasicAuth(rn.ClientID, rn.ClientSecret)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(b)
	}
	for _, tc := range []struct {
		name, body, ctype string
		basic             bool
		status            int
		contains          string
	}{
		{"wrong grant", `{"grant_type":"password"}`, "application/json", true, 400, `"error":"unsupported_grant_type"`},
		{"no grant", `{}`, "application/json", true, 400, `"error":"unsupported_grant_type"`},
		{"grant not a string", `{"grant_type":1}`, "application/json", true, 400, `"error":"invalid_request"`},
		{"bad json", `{"grant_type":`, "application/json", true, 400, `"error":"invalid_request"`},
		{"empty body", ``, "application/json", true, 400, `"error":"invalid_request"`},
		{"no basic", `{"grant_type":"client_credentials"}`, "application/json", false, 401, `"error":"invalid_client"`},
		{"form body ok", `grant_type=client_credentials`, "application/x-www-form-urlencoded", true, 200, `"token_type":"Bearer"`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			st, body := post(tc.body, tc.ctype, tc.basic)
			if st != tc.status || !strings.Contains(body, tc.contains) {
				t.Fatalf("status %d body %s; want %d with %s", st, body, tc.status, tc.contains)
			}
			if st >= 400 && !strings.Contains(body, `"code":`+strconv.Itoa(tc.status)) {
				t.Fatalf("error body without code %d: %s", tc.status, body)
			}
		})
	}
}

func TestRefreshTokenGrant(t *testing.T) {
	clk := clock.NewFake(t0)
	rn := sandboxtest.Start(t, sandbox.Config{Clock: clk})
	c := sandboxclient.Client(t, rn, nil)
	tok, err := c.Authorize(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	clk.Advance(700 * time.Second) // access expired, refresh (1200 s) still valid
	body := `{"grant_type":"refresh_token","refresh_token":"` + tok.RefreshToken + `"}`
	req, _ := http.NewRequest("POST", rn.URL+"/v1/authorize", strings.NewReader(body))
	req.SetBasicAuth(rn.ClientID, rn.ClientSecret)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != 200 {
		t.Fatalf("refresh grant: %d", resp.StatusCode)
	}
	clk.Advance(600 * time.Second) // refresh expired too
	req, _ = http.NewRequest("POST", rn.URL+"/v1/authorize", strings.NewReader(body))
	req.SetBasicAuth(rn.ClientID, rn.ClientSecret)
	resp, err = http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 400 || !strings.Contains(string(b), "invalid_grant") {
		t.Fatalf("expired refresh token: %d %s", resp.StatusCode, b)
	}
}

func rawGet(t *testing.T, url, token string) (int, string) {
	t.Helper()
	req, _ := http.NewRequest("GET", url, nil)
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

func TestExpiredTokenIsRefusedAndTheClientRenewsOnce(t *testing.T) {
	clk := clock.NewFake(t0)
	rn := sandboxtest.Start(t, sandbox.Config{Clock: clk, TokenTTL: 120 * time.Second})
	c := sandboxclient.Client(t, rn, nil) // the client's own clock is the real one: it believes its token is fresh
	tok, err := c.Authorize(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if tok.ExpiresIn != 120 {
		t.Fatalf("expires_in %d with TokenTTL 120s", tok.ExpiresIn)
	}
	if st, body := rawGet(t, rn.URL+sandboxtest.PingV1, tok.AccessToken); st != 200 {
		t.Fatalf("fresh token: %d %s", st, body)
	}
	clk.Advance(119 * time.Second)
	if st, _ := rawGet(t, rn.URL+sandboxtest.PingV1, tok.AccessToken); st != 200 {
		t.Fatalf("token refused 1 s before expiry: %d", st)
	}
	clk.Advance(time.Second)
	st, body := rawGet(t, rn.URL+sandboxtest.PingV1, tok.AccessToken)
	if st != 401 || !strings.Contains(body, `"code":401`) || !strings.Contains(body, `"error":"unauthorized"`) || !strings.Contains(body, "expirado") {
		t.Fatalf("expired token: %d %s", st, body)
	}
	st, body = rawGet(t, rn.URL+sandboxtest.PingV1, "")
	if st != 401 || !strings.Contains(body, "ausente") {
		t.Fatalf("missing token: %d %s", st, body)
	}
	st, body = rawGet(t, rn.URL+sandboxtest.PingV1, tok.AccessToken[:len(tok.AccessToken)-2]+"AA")
	if st != 401 || !strings.Contains(body, "inválido") {
		t.Fatalf("tampered token: %d %s", st, body)
	}

	// The client: first call gets a token; after the server clock passes
	// the expiry the next call gets a 401, renews once and succeeds.
	if _, err := ping(t, c); err != nil {
		t.Fatal(err)
	}
	clk.Advance(121 * time.Second)
	if _, err := ping(t, c); err != nil {
		t.Fatalf("after expiry: %v", err)
	}
	if n := c.Renewals(api.V1); n != 2 {
		t.Fatalf("renewals %d, want 2", n)
	}
}

func TestClientRenewsBeforeExpiry(t *testing.T) {
	clk := clock.NewFake(t0)
	rn := sandboxtest.Start(t, sandbox.Config{Clock: clk})
	c := sandboxclient.Client(t, rn, func(cfg *api.Config) { cfg.Now = clk.Now })
	if _, err := ping(t, c); err != nil {
		t.Fatal(err)
	}
	clk.Advance(569 * time.Second) // 31 s left: still used
	if _, err := ping(t, c); err != nil {
		t.Fatal(err)
	}
	if n := c.Renewals(api.V1); n != 1 {
		t.Fatalf("renewals %d at 31 s before expiry, want 1", n)
	}
	clk.Advance(2 * time.Second) // 29 s left: renewed before use
	if _, err := ping(t, c); err != nil {
		t.Fatal(err)
	}
	if n := c.Renewals(api.V1); n != 2 {
		t.Fatalf("renewals %d at 29 s before expiry, want 2", n)
	}
}

func TestPixTokenScopesAndDialect(t *testing.T) {
	rn := sandboxtest.Start(t, sandbox.Config{})
	c := sandboxclient.Client(t, rn, nil)
	tok, err := c.PixAuthorize(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if tok.ExpiresIn != 3600 || tok.TokenType != "Bearer" {
		t.Fatalf("pix token %+v", tok)
	}
	scopes := strings.Fields(tok.Scope)
	for _, want := range []string{"cob.write", "cob.read", "cobv.write", "lotecobv.write", "lotecobv.read", "pix.read", "pix.write", "pix.send", "gn.pix.send.read", "gn.split.write", "gn.split.read", "webhook.write", "gn.pix.evp.write", "gn.balance.read"} {
		found := false
		for _, s := range scopes {
			found = found || s == want
		}
		if !found {
			t.Errorf("scope %s missing from %q", want, tok.Scope)
		}
	}
	if _, err := c.Do(context.Background(), api.Pix, "GET", sandboxtest.PingPix, nil); err != nil {
		t.Fatal(err)
	}
	// A charges token is not a Pix token, and vice versa.
	v1, err := c.Authorize(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	st, body := rawGet(t, rn.URL+sandboxtest.PingPix, v1.AccessToken)
	if st != 401 || !strings.Contains(body, "https://pix.bcb.gov.br/api/v2/error/NaoAutorizado") || !strings.Contains(body, `"status":401`) {
		t.Fatalf("v1 token on /v2: %d %s", st, body)
	}
	if st, _ := rawGet(t, rn.URL+sandboxtest.PingV1, tok.AccessToken); st != 401 {
		t.Fatalf("pix token on /v1: %d", st)
	}

	// An application without pix.read gets 403 AcessoNegado.
	creds, err := sandbox.AddApp(context.Background(), rn.Server.Auth(), sandbox.AddAppRequest{Account: rn.PayeeCode, Scopes: []string{"cob.read"}})
	if err != nil {
		t.Fatal(err)
	}
	limited, _ := api.New(api.Config{BaseURL: rn.URL, ClientID: creds.ClientID, ClientSecret: creds.ClientSecret})
	ltok, err := limited.PixAuthorize(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if ltok.Scope != "cob.read" {
		t.Fatalf("limited scope %q", ltok.Scope)
	}
	_, err = limited.Do(context.Background(), api.Pix, "GET", sandboxtest.PingPix, nil)
	e := asAPIError(t, err)
	if e.Status != 403 || e.Problem == nil || e.Problem.TypeName() != "AcessoNegado" || e.Problem.Status != 403 {
		t.Fatalf("missing scope: %+v", e)
	}
}

func TestPixTokenTTLFollowsShorterFlag(t *testing.T) {
	rn := sandboxtest.Start(t, sandbox.Config{TokenTTL: 90 * time.Second})
	c := sandboxclient.Client(t, rn, nil)
	tok, err := c.PixAuthorize(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if tok.ExpiresIn != 90 {
		t.Fatalf("pix expires_in %d with TokenTTL 90s", tok.ExpiresIn)
	}
}

// countingServer serves the sandbox handler through httptest, counting
// requests per "METHOD path".
type countingServer struct {
	*httptest.Server
	mu sync.Mutex
	n  map[string]int
}

func newCounting(t *testing.T, srv *sandbox.Server) *countingServer {
	cs := &countingServer{n: map[string]int{}}
	h := srv.Handler()
	cs.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		cs.mu.Lock()
		cs.n[r.Method+" "+r.URL.Path]++
		cs.mu.Unlock()
		h.ServeHTTP(w, r)
	}))
	t.Cleanup(cs.Close)
	return cs
}

func (cs *countingServer) count(k string) int {
	cs.mu.Lock()
	defer cs.mu.Unlock()
	return cs.n[k]
}

func newServer(t *testing.T, cfg sandbox.Config) *sandbox.Server {
	t.Helper()
	if cfg.DataDir == "" {
		cfg.DataDir = sandbox.Memory
	}
	srv, err := sandbox.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { srv.Close() })
	return srv
}

func TestTokenRenewalIsSingleFlight(t *testing.T) {
	srv := newServer(t, sandbox.Config{})
	cs := newCounting(t, srv)
	creds := srv.Credentials()
	c, err := api.New(api.Config{BaseURL: cs.URL, ClientID: creds.ClientID, ClientSecret: creds.ClientSecret})
	if err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	var failed atomic.Int32
	start := make(chan struct{})
	for range 50 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			<-start
			if _, err := c.Do(context.Background(), api.V1, "GET", sandboxtest.PingV1, nil); err != nil {
				failed.Add(1)
				t.Error(err)
			}
		}()
	}
	close(start)
	wg.Wait()
	if failed.Load() > 0 {
		t.Fatalf("%d calls failed", failed.Load())
	}
	if n := cs.count("POST /v1/authorize"); n != 1 {
		t.Fatalf("%d POST /v1/authorize for 50 concurrent calls, want 1", n)
	}
	if n := cs.count("GET " + sandboxtest.PingV1); n != 50 {
		t.Fatalf("%d pings, want 50", n)
	}
}

func TestAccountsAreIsolated(t *testing.T) {
	rn := sandboxtest.Start(t, sandbox.Config{})
	other, err := sandbox.AddApp(context.Background(), rn.Server.Auth(), sandbox.AddAppRequest{Account: "new"})
	if err != nil {
		t.Fatal(err)
	}
	c1 := sandboxclient.Client(t, rn, nil)
	c2, _ := api.New(api.Config{BaseURL: rn.URL, ClientID: other.ClientID, ClientSecret: other.ClientSecret})
	add := func(c *api.Client, by int) int64 {
		var v sandboxtest.CounterValue
		resp, err := c.Do(context.Background(), api.V1, "POST", sandboxtest.CounterV1, map[string]int{"by": by})
		if err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(string(resp.Body), `"data":{"value":`) {
			t.Fatalf("counter body %s", resp.Body)
		}
		v.Value, _ = strconv.ParseInt(strings.Trim(strings.SplitN(string(resp.Body), `"value":`, 2)[1], "}\n"), 10, 64)
		return v.Value
	}
	if v := add(c1, 5); v != 5 {
		t.Fatalf("account 1 counter %d", v)
	}
	if v := add(c2, 1); v != 1 {
		t.Fatalf("account 2 counter %d: sees account 1's data", v)
	}
	if other.PayeeCode == rn.PayeeCode || other.AccountID == "" {
		t.Fatalf("new account %+v", other)
	}
}

func TestRestartKeepsAppsCredentialsAndTokens(t *testing.T) {
	dir := t.TempDir()
	clk := clock.NewFake(t0)
	srv1, err := sandbox.New(sandbox.Config{DataDir: dir, Clock: clk})
	if err != nil {
		t.Fatal(err)
	}
	first := srv1.Credentials()
	if !first.Created || first.ClientSecret == "" || !strings.HasPrefix(first.ClientID, "Client_Id_") || len(first.ClientID) != len("Client_Id_")+40 ||
		!strings.HasPrefix(first.ClientSecret, "Client_Secret_") || len(first.ClientSecret) != len("Client_Secret_")+40 || len(first.PayeeCode) != 32 {
		t.Fatalf("first start credentials %+v", first)
	}
	// A second sandbox on the same dir is refused while the first runs.
	if _, err := sandbox.New(sandbox.Config{DataDir: dir}); !errors.Is(err, sandbox.ErrBusy) {
		t.Fatalf("second sandbox on a busy dir: %v", err)
	}
	rn1, err := srv1.Start()
	if err != nil {
		t.Fatal(err)
	}
	c1 := sandboxclient.Client(t, rn1, nil)
	tok, err := c1.Authorize(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c1.Do(context.Background(), api.V1, "POST", sandboxtest.CounterV1, map[string]int{"by": 3}); err != nil {
		t.Fatal(err)
	}
	if err := rn1.Close(); err != nil {
		t.Fatal(err)
	}

	srv2, err := sandbox.New(sandbox.Config{DataDir: dir, Clock: clk})
	if err != nil {
		t.Fatal(err)
	}
	again := srv2.Credentials()
	if again.Created || again.ClientSecret != "" || again.ClientID != first.ClientID || again.PayeeCode != first.PayeeCode || again.PixKey != first.PixKey {
		t.Fatalf("restart credentials %+v, first %+v", again, first)
	}
	rn2, err := srv2.Start()
	if err != nil {
		t.Fatal(err)
	}
	defer rn2.Close()
	// The token issued before the restart is still valid (signed with the persisted key).
	if st, body := rawGet(t, rn2.URL+sandboxtest.CounterV1, tok.AccessToken); st != 200 || !strings.Contains(body, `"value":3`) {
		t.Fatalf("old token / counter after restart: %d %s", st, body)
	}
	// The old secret still works.
	c2, _ := api.New(api.Config{BaseURL: rn2.URL, ClientID: first.ClientID, ClientSecret: first.ClientSecret})
	if _, err := c2.Authorize(context.Background()); err != nil {
		t.Fatalf("old secret after restart: %v", err)
	}
	if n := len(srv2.Auth().Apps()); n != 1 {
		t.Fatalf("%d apps after restart", n)
	}
}

func TestFixedCredentialsAreIdempotent(t *testing.T) {
	dir := t.TempDir()
	cfg := sandbox.Config{DataDir: dir, ClientID: "Client_Id_fixo", ClientSecret: "Client_Secret_fixo"}
	for i := range 3 {
		srv, err := sandbox.New(cfg)
		if err != nil {
			t.Fatal(err)
		}
		cr := srv.Credentials()
		if cr.ClientID != cfg.ClientID || cr.ClientSecret != cfg.ClientSecret || cr.Created != (i == 0) {
			t.Fatalf("start %d: %+v", i, cr)
		}
		if n := len(srv.Auth().Apps()); n != 1 {
			t.Fatalf("start %d: %d apps", i, n)
		}
		rn, err := srv.Start()
		if err != nil {
			t.Fatal(err)
		}
		if _, err := sandboxclient.Client(t, rn, nil).Authorize(context.Background()); err != nil {
			t.Fatalf("start %d: %v", i, err)
		}
		rn.Close()
	}
	// A new secret for the same id replaces the old one.
	cfg.ClientSecret = "Client_Secret_novo"
	srv, err := sandbox.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	rn, _ := srv.Start()
	defer rn.Close()
	old, _ := api.New(api.Config{BaseURL: rn.URL, ClientID: cfg.ClientID, ClientSecret: "Client_Secret_fixo"})
	if _, err := old.Authorize(context.Background()); err == nil {
		t.Fatal("the replaced secret still works")
	}
	if _, err := sandboxclient.Client(t, rn, nil).Authorize(context.Background()); err != nil {
		t.Fatal(err)
	}
}

func setFaults(t *testing.T, srv *sandbox.Server, cfg faults.Config) {
	t.Helper()
	if err := srv.Faults().SetConfig(cfg); err != nil {
		t.Fatal(err)
	}
}

func f64(v float64) *float64 { return &v }
func intp(v int) *int        { return &v }

func TestGetIsRetriedThrough503And500(t *testing.T) {
	srv := newServer(t, sandbox.Config{})
	cs := newCounting(t, srv)
	creds := srv.Credentials()
	var sleeps atomic.Int32
	c, _ := api.New(api.Config{BaseURL: cs.URL, ClientID: creds.ClientID, ClientSecret: creds.ClientSecret, MaxRetries: 20,
		Sleep: func(ctx context.Context, d time.Duration) error {
			if d < 0 || d > api.DefaultRetryCap {
				t.Errorf("backoff %v outside [0, cap]", d)
			}
			sleeps.Add(1)
			return nil
		}})
	setFaults(t, srv, faults.Config{Seed: 7, Routes: map[string]faults.Override{
		"GET " + sandboxtest.PingV1: {P503: f64(0.4), P500: f64(0.2)},
	}})
	for range 30 {
		if _, err := ping(t, c); err != nil {
			t.Fatal(err)
		}
	}
	hits := cs.count("GET " + sandboxtest.PingV1)
	if hits <= 30 || int(sleeps.Load()) != hits-30 {
		t.Fatalf("%d hits, %d sleeps for 30 successful GETs with 60%% failures", hits, sleeps.Load())
	}
	// With retries exhausted the last error is returned, typed.
	setFaults(t, srv, faults.Config{Routes: map[string]faults.Override{"GET " + sandboxtest.PingV1: {P503: f64(1)}}})
	c0, _ := api.New(api.Config{BaseURL: cs.URL, ClientID: creds.ClientID, ClientSecret: creds.ClientSecret, MaxRetries: 2,
		Sleep: func(ctx context.Context, d time.Duration) error { return nil }})
	before := cs.count("GET " + sandboxtest.PingV1)
	_, err := ping(t, c0)
	e := asAPIError(t, err)
	if e.Status != 503 || e.Code != 3500503 || api.IsAmbiguous(err) {
		t.Fatalf("503 error %+v", e)
	}
	if n := cs.count("GET "+sandboxtest.PingV1) - before; n != 3 {
		t.Fatalf("%d attempts with MaxRetries 2, want 3", n)
	}
}

func counter(t *testing.T, c *api.Client) int64 {
	t.Helper()
	resp, err := c.Do(context.Background(), api.V1, "GET", sandboxtest.CounterV1, nil)
	if err != nil {
		t.Fatal(err)
	}
	s := string(resp.Body)
	i := strings.Index(s, `"value":`)
	v, err := strconv.ParseInt(strings.TrimRight(s[i+8:], "}\n"), 10, 64)
	if err != nil {
		t.Fatalf("counter body %s", s)
	}
	return v
}

func TestPostThroughDropIsAmbiguousAndNotResent(t *testing.T) {
	srv := newServer(t, sandbox.Config{})
	cs := newCounting(t, srv)
	creds := srv.Credentials()
	c, _ := api.New(api.Config{BaseURL: cs.URL, ClientID: creds.ClientID, ClientSecret: creds.ClientSecret, MaxRetries: 5,
		Sleep: func(ctx context.Context, d time.Duration) error { return nil }})
	setFaults(t, srv, faults.Config{Routes: map[string]faults.Override{"POST " + sandboxtest.CounterV1: {Drop: f64(1)}}})
	_, err := c.Do(context.Background(), api.V1, "POST", sandboxtest.CounterV1, nil)
	if !api.IsAmbiguous(err) {
		t.Fatalf("dropped POST: %v, want ErrAmbiguous", err)
	}
	if n := cs.count("POST " + sandboxtest.CounterV1); n != 1 {
		t.Fatalf("POST sent %d times", n)
	}
	setFaults(t, srv, faults.Config{})
	if v := counter(t, c); v != 1 {
		t.Fatalf("counter %d after one dropped POST: the server must have processed it exactly once", v)
	}
	// A dropped GET is retried and succeeds.
	setFaults(t, srv, faults.Config{Seed: 3, Routes: map[string]faults.Override{"GET " + sandboxtest.CounterV1: {Drop: f64(0.5)}}})
	for range 10 {
		if v := counter(t, c); v != 1 {
			t.Fatalf("counter %d", v)
		}
	}
	if n := cs.count("GET " + sandboxtest.CounterV1); n <= 11 {
		t.Fatalf("%d GETs: the drops were not retried?", n)
	}
}

func TestPost500IsAmbiguousAndNotResent(t *testing.T) {
	srv := newServer(t, sandbox.Config{})
	cs := newCounting(t, srv)
	creds := srv.Credentials()
	c, _ := api.New(api.Config{BaseURL: cs.URL, ClientID: creds.ClientID, ClientSecret: creds.ClientSecret,
		Sleep: func(ctx context.Context, d time.Duration) error { return nil }})
	for _, tc := range []struct {
		fault     faults.Override
		status    int
		ambiguous bool
	}{
		{faults.Override{P500: f64(1)}, 500, true},
		{faults.Override{P503: f64(1)}, 503, false},
	} {
		setFaults(t, srv, faults.Config{Routes: map[string]faults.Override{"POST " + sandboxtest.CounterV1: tc.fault}})
		before := cs.count("POST " + sandboxtest.CounterV1)
		_, err := c.Do(context.Background(), api.V1, "POST", sandboxtest.CounterV1, nil)
		e := asAPIError(t, err)
		if e.Status != tc.status || api.IsAmbiguous(err) != tc.ambiguous || e.Ambiguous != tc.ambiguous {
			t.Fatalf("POST answered %d: %+v ambiguous=%v", tc.status, e, api.IsAmbiguous(err))
		}
		if n := cs.count("POST "+sandboxtest.CounterV1) - before; n != 1 {
			t.Fatalf("POST answered %d was sent %d times", tc.status, n)
		}
	}
	setFaults(t, srv, faults.Config{})
	if v := counter(t, c); v != 0 {
		t.Fatalf("counter %d: a faulted request was processed", v)
	}
}

func Test429HonoursRetryAfterForAnyMethod(t *testing.T) {
	srv := newServer(t, sandbox.Config{})
	cs := newCounting(t, srv)
	creds := srv.Credentials()
	var waits []time.Duration
	c, _ := api.New(api.Config{BaseURL: cs.URL, ClientID: creds.ClientID, ClientSecret: creds.ClientSecret,
		Sleep: func(ctx context.Context, d time.Duration) error {
			waits = append(waits, d)
			setFaults(t, srv, faults.Config{}) // the limit is over after the wait
			return nil
		}})
	if _, err := ping(t, c); err != nil { // token first, so faults only hit the route
		t.Fatal(err)
	}
	setFaults(t, srv, faults.Config{Routes: map[string]faults.Override{"POST " + sandboxtest.CounterV1: {P429: f64(1), RetryAfter: intp(7)}}})
	if _, err := c.Do(context.Background(), api.V1, "POST", sandboxtest.CounterV1, nil); err != nil {
		t.Fatal(err)
	}
	if len(waits) != 1 || waits[0] != 7*time.Second {
		t.Fatalf("waits %v, want [7s] from Retry-After", waits)
	}
	if n := cs.count("POST " + sandboxtest.CounterV1); n != 2 {
		t.Fatalf("POST sent %d times, want 2 (429 means not processed)", n)
	}
	if v := counter(t, c); v != 1 {
		t.Fatalf("counter %d, want 1", v)
	}
	// Pix dialect of the random 429.
	setFaults(t, srv, faults.Config{Routes: map[string]faults.Override{"GET " + sandboxtest.PingPix: {P429: f64(1)}}})
	c1, _ := api.New(api.Config{BaseURL: cs.URL, ClientID: creds.ClientID, ClientSecret: creds.ClientSecret, MaxRetries: -1})
	_, err := c1.Do(context.Background(), api.Pix, "GET", sandboxtest.PingPix, nil)
	e := asAPIError(t, err)
	if e.Status != 429 || e.Problem == nil || e.Problem.TypeName() != "BaldeFichasVazio" || e.RetryAfter != time.Second {
		t.Fatalf("pix 429 %+v", e)
	}
}

func TestDailyQuota(t *testing.T) {
	clk := clock.NewFake(t0)
	rn := sandboxtest.Start(t, sandbox.Config{Clock: clk, Faults: faults.Config{Routes: map[string]faults.Override{
		"GET " + sandboxtest.PingV1: {Quota: intp(3)},
	}}})
	c := sandboxclient.Client(t, rn, func(cfg *api.Config) {
		cfg.Sleep = func(context.Context, time.Duration) error { t.Error("the client waited for a quota reset"); return nil }
	})
	for i := range 3 {
		if _, err := ping(t, c); err != nil {
			t.Fatalf("request %d within quota: %v", i+1, err)
		}
	}
	_, err := ping(t, c)
	e := asAPIError(t, err)
	// 20:00 in São Paulo: 4 h to midnight.
	if e.Status != 429 || e.Code != 3500049 || e.RetryAfter != 4*time.Hour {
		t.Fatalf("over quota: %+v", e)
	}
	// Another application has its own quota; another route is not limited.
	other, _ := sandbox.AddApp(context.Background(), rn.Server.Auth(), sandbox.AddAppRequest{Account: rn.PayeeCode})
	c2, _ := api.New(api.Config{BaseURL: rn.URL, ClientID: other.ClientID, ClientSecret: other.ClientSecret})
	if _, err := ping(t, c2); err != nil {
		t.Fatalf("other app: %v", err)
	}
	if _, err := c.Do(context.Background(), api.V1, "GET", sandboxtest.CounterV1, nil); err != nil {
		t.Fatalf("other route: %v", err)
	}
	clk.Advance(4 * time.Hour) // midnight in São Paulo
	if _, err := ping(t, c); err != nil {
		t.Fatalf("after midnight: %v", err)
	}
}

func TestLatencyIsAdded(t *testing.T) {
	rn := sandboxtest.Start(t, sandbox.Config{Faults: faults.Config{All: faults.Rule{Latency: faults.Duration(40 * time.Millisecond)}}})
	c := sandboxclient.Client(t, rn, nil)
	if _, err := ping(t, c); err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	if _, err := ping(t, c); err != nil {
		t.Fatal(err)
	}
	if d := time.Since(start); d < 40*time.Millisecond {
		t.Fatalf("request took %v with 40ms latency", d)
	}
	// Control routes are never slowed down or faulted.
	start = time.Now()
	if st, _ := rawGet(t, rn.URL+"/sandbox/faults", ""); st != 200 {
		t.Fatal(st)
	}
	if d := time.Since(start); d >= 40*time.Millisecond {
		t.Fatalf("control route took %v", d)
	}
}

func TestPanicAnswers500WithoutInternals(t *testing.T) {
	rn := sandboxtest.Start(t, sandbox.Config{})
	c := sandboxclient.Client(t, rn, func(cfg *api.Config) { cfg.MaxRetries = -1 })
	v1, _ := c.Authorize(context.Background())
	st, body := rawGet(t, rn.URL+sandboxtest.PanicV1, v1.AccessToken)
	want := `{"code":3500000,"error":"internal_server_error","error_description":"Erro interno do servidor"}` + "\n"
	if st != 500 || body != want {
		t.Fatalf("panic on /v1: %d %q", st, body)
	}
	px, _ := c.PixAuthorize(context.Background())
	st, body = rawGet(t, rn.URL+sandboxtest.PanicPix, px.AccessToken)
	if st != 500 || !strings.Contains(body, "/ErroInterno") || strings.Contains(body, sandboxtest.PanicAlarm) || strings.Contains(body, "goroutine") {
		t.Fatalf("panic on /v2: %d %s", st, body)
	}
	// The server keeps serving.
	if _, err := ping(t, c); err != nil {
		t.Fatal(err)
	}
}

func TestUnknownRoutesAnswerInTheirDialect(t *testing.T) {
	rn := sandboxtest.Start(t, sandbox.Config{})
	for _, tc := range []struct {
		method, path string
		status       int
		contains     []string
	}{
		{"GET", "/v1/nada", 404, []string{`"code":3500404`, `"error":"route_not_found"`}},
		{"GET", "/v2/nada", 404, []string{`"type":"https://pix.bcb.gov.br/api/v2/error/NaoEncontrado"`, `"status":404`}},
		{"GET", "/oauth/nada", 404, []string{"NaoEncontrado"}},
		{"DELETE", sandboxtest.PingV1, 405, []string{`"code":3500405`}},
		{"DELETE", sandboxtest.PingPix, 405, []string{"MetodoNaoPermitido"}},
		{"GET", "/v1/authorize", 405, []string{`"code":3500405`}},
		{"GET", "/", 404, []string{`"code":3500404`}},
	} {
		req, _ := http.NewRequest(tc.method, rn.URL+tc.path, nil)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != tc.status {
			t.Errorf("%s %s: %d %s", tc.method, tc.path, resp.StatusCode, b)
		}
		for _, s := range tc.contains {
			if !strings.Contains(string(b), s) {
				t.Errorf("%s %s: body %s lacks %s", tc.method, tc.path, b, s)
			}
		}
		if tc.status == 405 && resp.Header.Get("Allow") == "" {
			t.Errorf("%s %s: 405 without Allow", tc.method, tc.path)
		}
	}
}

func TestStrictDecodingThroughBothDialects(t *testing.T) {
	rn := sandboxtest.Start(t, sandbox.Config{})
	c := sandboxclient.Client(t, rn, func(cfg *api.Config) { cfg.MaxRetries = -1 })
	_, err := c.Do(context.Background(), api.V1, "POST", sandboxtest.DecodeV1, []byte(`{"name":"a","value":1,"items":[{"name":"x","nome":"y"}]}`))
	e := asAPIError(t, err)
	if e.Status != 400 || e.Code != 3500034 || e.Err != "validation_error" || e.Property != "/items/0/nome" {
		t.Fatalf("unknown property: %+v", e)
	}
	_, err = c.Do(context.Background(), api.Pix, "POST", sandboxtest.DecodePix, []byte(`{"name":"a","value":"1"}`))
	e = asAPIError(t, err)
	if e.Status != 400 || e.Problem == nil || e.Problem.TypeName() != "CobVOperacaoInvalida" || len(e.Problem.Violacoes) != 1 ||
		e.Problem.Violacoes[0].Propriedade != "value" || !strings.Contains(e.Problem.Violacoes[0].Razao, "integer") {
		t.Fatalf("wrong type on /v2: %+v %+v", e, e.Problem)
	}
	big := []byte(`{"name":"` + strings.Repeat("a", 1<<20) + `"}`)
	_, err = c.Do(context.Background(), api.V1, "POST", sandboxtest.DecodeV1, big)
	if e := asAPIError(t, err); e.Status != 413 || e.Code != 3500034 {
		t.Fatalf("oversize body: %+v", e)
	}
}

func TestControlRoutes(t *testing.T) {
	rn := sandboxtest.Start(t, sandbox.Config{})
	put := func(body string) (int, string) {
		req, _ := http.NewRequest("PUT", rn.URL+"/sandbox/faults", strings.NewReader(body))
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(b)
	}
	if st, body := put(`{"all":{"latency":"5ms","error_503":0.5},"routes":{"POST /v1/carnet":{"quota":10}}}`); st != 200 ||
		!strings.Contains(body, `"latency":"5ms"`) || !strings.Contains(body, `"POST /v1/carnet":{"quota":10}`) {
		t.Fatalf("PUT faults: %d %s", st, body)
	}
	if got := rn.Server.Faults().Config(); got.All.P503 != 0.5 || *got.Routes["POST /v1/carnet"].Quota != 10 {
		t.Fatalf("config after PUT %+v", got)
	}
	for _, bad := range []string{`{"all":{"error_500":1.5}}`, `{"all":{"error_500":0.6,"error_503":0.6}}`, `{"alll":{}}`, `{"routes":{"carnet":{}}}`, `{"all":{"latency":"soon"}}`} {
		if st, body := put(bad); st != 400 {
			t.Errorf("PUT %s: %d %s", bad, st, body)
		}
	}
	// From a non-loopback address the control routes refuse.
	req := httptest.NewRequest("GET", "/sandbox/faults", nil)
	req.RemoteAddr = "192.0.2.7:4444"
	w := httptest.NewRecorder()
	rn.Server.Handler().ServeHTTP(w, req)
	if w.Code != 403 {
		t.Fatalf("non-loopback control call: %d", w.Code)
	}
	// POST /sandbox/apps creates an account and shows the secret once.
	resp, err := http.Post(rn.URL+"/sandbox/apps", "application/json", strings.NewReader(`{"account":"new","scopes":["cob.read"]}`))
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 201 || !strings.Contains(string(b), `"client_secret":"Client_Secret_`) {
		t.Fatalf("POST /sandbox/apps: %d %s", resp.StatusCode, b)
	}
	st, body := rawGet(t, rn.URL+"/sandbox/apps", "")
	if st != 200 || strings.Count(body, `"payee_code"`) != 2 || strings.Contains(body, "Client_Secret_") || strings.Contains(body, "secret") {
		t.Fatalf("GET /sandbox/apps: %d %s", st, body)
	}
}

func TestDebugLogHasNoSecrets(t *testing.T) {
	var buf strings.Builder
	var mu sync.Mutex
	w := writerFunc(func(p []byte) (int, error) { mu.Lock(); defer mu.Unlock(); return buf.Write(p) })
	log := zerolog.New(w).Level(zerolog.DebugLevel)
	rn := sandboxtest.Start(t, sandbox.Config{Logger: log})
	c := sandboxclient.Client(t, rn, func(cfg *api.Config) { cfg.Logger = &log })
	tok, err := c.Authorize(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.Do(context.Background(), api.V1, "POST", sandboxtest.DecodeV1, []byte(`{"name":"4111111111111111","value":1}`)); err != nil {
		t.Fatal(err)
	}
	mu.Lock()
	out := buf.String()
	mu.Unlock()
	for _, want := range []string{`"attempt":1`, `"duration_ms":`, `"path":"/v1/sandboxtest/decode"`, `"status":200`, `"method":"POST"`} {
		if !strings.Contains(out, want) {
			t.Errorf("log lacks %s:\n%s", want, out)
		}
	}
	for _, leak := range []string{rn.ClientSecret, tok.AccessToken[:40], "4111111111111111", "Authorization", "Bearer"} {
		if strings.Contains(out, leak) {
			t.Fatalf("log contains %q:\n%s", leak, out)
		}
	}
}

type writerFunc func(p []byte) (int, error)

func (f writerFunc) Write(p []byte) (int, error) { return f(p) }
