package web

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"math/big"
	"net"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"
)

// TestLoginRateLimited: after five wrong passwords in a row the sign-in
// answers 429 even with the right one, and the limit is per user too
// (a second address cannot go on guessing the same user's password).
func TestLoginRateLimited(t *testing.T) {
	t.Parallel()
	srv := startServer(t)
	c := newClient(t, srv)
	try := func(pw string) *response {
		r := c.get("/entrar")
		m := helperCSRFField.FindStringSubmatch(r.Body)
		if m == nil {
			t.Fatal("no sign-in token")
		}
		return c.send(http.MethodPost, "/entrar", "application/x-www-form-urlencoded",
			strings.NewReader(url.Values{"usuario": {"admin"}, "senha": {pw}, "csrf": {m[1]}}.Encode()))
	}
	for i := 0; i < 5; i++ {
		if r := try("errada-" + string(rune('a'+i))); r.Status != http.StatusUnauthorized {
			t.Fatalf("attempt %d: %d", i+1, r.Status)
		}
	}
	r := try(testAdminPassword)
	if r.Status != http.StatusTooManyRequests || !strings.Contains(r.Body, "Muitas tentativas") {
		t.Fatalf("sixth attempt: %d, want 429 with the message", r.Status)
	}
	if c.signedIn() {
		t.Fatal("the right password got through the limit")
	}
	// the per-user limiter alone refuses, whatever the address
	srv.limiter.mu.Lock()
	for k := range srv.limiter.m {
		if strings.HasPrefix(k, "ip:") {
			delete(srv.limiter.m, k)
		}
	}
	srv.limiter.mu.Unlock()
	if r := try(testAdminPassword); r.Status != http.StatusTooManyRequests {
		t.Fatalf("same user from a fresh address: %d, want 429", r.Status)
	}
}

// TestIdleSessionEnds: a session unused for longer than IdleTimeout is
// over; one used within it goes on.
func TestIdleSessionEnds(t *testing.T) {
	t.Parallel()
	var mu sync.Mutex
	now := time.Now()
	clock := func() time.Time { mu.Lock(); defer mu.Unlock(); return now }
	advance := func(d time.Duration) { mu.Lock(); now = now.Add(d); mu.Unlock() }
	srv, err := New(context.Background(), Config{Addr: "127.0.0.1:0", DataDir: t.TempDir(), AdminPassword: testAdminPassword,
		IdleTimeout: 10 * time.Minute, Now: clock})
	if err != nil {
		t.Fatal(err)
	}
	srv.Start()
	defer srv.Close()
	c := login(t, srv, "admin", testAdminPassword)
	advance(8 * time.Minute)
	if !c.signedIn() {
		t.Fatal("session ended after 8 of 10 idle minutes")
	}
	advance(8 * time.Minute) // 8 minutes after the last request
	if !c.signedIn() {
		t.Fatal("a used session should count its idle time from the last request")
	}
	advance(11 * time.Minute)
	if c.signedIn() {
		t.Fatal("session still open after 11 idle minutes")
	}
	var n int
	srv.db.QueryRow(`SELECT count(*) FROM sessions`).Scan(&n)
	if n != 0 {
		t.Fatalf("%d sessions stored after the idle one ended", n)
	}
}

// TestTLSSecureCookie: served over TLS, the session cookie is Secure too.
func TestTLSSecureCookie(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	certFile, keyFile := selfSigned(t, dir)
	srv, err := New(context.Background(), Config{Addr: "127.0.0.1:0", DataDir: t.TempDir(), AdminPassword: testAdminPassword,
		TLSCert: certFile, TLSKey: keyFile})
	if err != nil {
		t.Fatal(err)
	}
	if err := srv.Start(); err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	if !strings.HasPrefix(srv.URL, "https://") {
		t.Fatalf("URL %s", srv.URL)
	}
	c := newClient(t, srv)
	c.http.Transport = &http.Transport{TLSClientConfig: &tls.Config{InsecureSkipVerify: true}}
	c.http.CheckRedirect = func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }
	r := c.get("/entrar")
	m := helperCSRFField.FindStringSubmatch(r.Body)
	if m == nil {
		t.Fatal("no sign-in form over TLS")
	}
	r = c.send(http.MethodPost, "/entrar", "application/x-www-form-urlencoded",
		strings.NewReader(url.Values{"usuario": {"admin"}, "senha": {testAdminPassword}, "csrf": {m[1]}}.Encode()))
	found := false
	for _, sc := range r.Header.Values("Set-Cookie") {
		if strings.HasPrefix(sc, sessionCookie+"=") {
			found = true
			for _, attr := range []string{"Secure", "HttpOnly", "SameSite=Strict"} {
				if !strings.Contains(sc, attr) {
					t.Errorf("session cookie over TLS lacks %s: %s", attr, sc)
				}
			}
		}
	}
	if !found {
		t.Fatalf("no session cookie set: %d %v", r.Status, r.Header.Values("Set-Cookie"))
	}
}

func selfSigned(t *testing.T, dir string) (string, string) {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tpl := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "127.0.0.1"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour), IPAddresses: []net.IP{net.ParseIP("127.0.0.1")}}
	der, err := x509.CreateCertificate(rand.Reader, tpl, tpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	kb, _ := x509.MarshalECPrivateKey(key)
	cf, kf := filepath.Join(dir, "c.pem"), filepath.Join(dir, "k.pem")
	os.WriteFile(cf, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), 0o600)
	os.WriteFile(kf, pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: kb}), 0o600)
	return cf, kf
}
