package pix_test

import (
	"errors"
	"os"
	"strings"
	"testing"

	"remessa/api"
	"remessa/sandbox"
	"remessa/sandbox/tlsca"
)

// TestTLS: with TLS the Pix listener refuses a client without the
// certificate and serves one with it (as .p12 or as PEM).
func TestTLS(t *testing.T) {
	dir := t.TempDir()
	e := startTLS(t, dir)
	if !strings.HasPrefix(e.PixURL, "https://127.0.0.1:") || e.CAFile == "" {
		t.Fatalf("PixURL %q CAFile %q", e.PixURL, e.CAFile)
	}
	p := tlsca.PathsIn(dir)
	if e.CAFile != p.CACert {
		t.Fatalf("CAFile %q, want %q", e.CAFile, p.CACert)
	}
	if e.ClientP12File != p.ClientP12 || e.ClientCertFile != p.ClientCert || e.ClientKeyFile != p.ClientKey {
		t.Fatalf("client files p12 %q cert %q key %q, want %q %q %q", e.ClientP12File, e.ClientCertFile, e.ClientKeyFile, p.ClientP12, p.ClientCert, p.ClientKey)
	}
	cfgs := map[string]func(*api.Config){
		// The .p12 the sandbox announces (Running.ClientP12File) is usable as is.
		"p12": func(c *api.Config) { c.P12File, c.P12Password, c.CAFile = e.ClientP12File, tlsca.P12Password, p.CACert },
		"pem": func(c *api.Config) { c.CertFile, c.KeyFile, c.CAFile = p.ClientCert, p.ClientKey, p.CACert },
	}
	for name, edit := range cfgs {
		c := client(t, e, e.ClientID, e.ClientSecret, edit)
		if _, err := c.PutCob(ctx, txid("tls"+name, 1), api.CobRequest{Valor: api.PixValor{Original: "1.00"}, Chave: e.PixKey}); err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if _, err := c.ListCob(ctx, api.ListCobParams{ListParams: window()}); err != nil {
			t.Fatalf("%s list: %v", name, err)
		}
	}
	// Without a client certificate: the handshake is refused (no HTTP answer).
	noCert := client(t, e, e.ClientID, e.ClientSecret, func(c *api.Config) { c.CAFile = p.CACert })
	_, err := noCert.GetCob(ctx, txid("tlsp12", 1))
	var ae *api.Error
	if err == nil || errors.As(err, &ae) {
		t.Fatalf("without certificate: %v", err)
	}
	// The plain listener (charges API) does not serve Pix around the mTLS.
	plain := client(t, e, e.ClientID, e.ClientSecret, func(c *api.Config) { c.PixBaseURL = e.URL })
	_, err = plain.GetCob(ctx, txid("tlsp12", 1))
	if ae := asAPI(t, err); ae.Status != 403 || ae.Problem == nil || ae.Problem.TypeName() != "AcessoNegado" || !strings.Contains(ae.Problem.Detail, e.PixURL) {
		t.Fatalf("Pix on the plain listener: %v", err)
	}
	if _, err := plain.Authorize(ctx); err != nil {
		t.Fatalf("charges API on the plain listener: %v", err)
	}
	// A certificate from another CA is refused too.
	otherDir := t.TempDir()
	op, _, err := tlsca.Ensure(otherDir)
	if err != nil {
		t.Fatal(err)
	}
	foreign := client(t, e, e.ClientID, e.ClientSecret, func(c *api.Config) { c.P12File, c.CAFile = op.ClientP12, p.CACert })
	if _, err := foreign.GetCob(ctx, txid("tlsp12", 1)); err == nil || errors.As(err, &ae) {
		t.Fatalf("foreign certificate: %v", err)
	}
	// The certificates are made once: a restart keeps them.
	ca1, _ := os.ReadFile(p.CACert)
	if err := e.Close(); err != nil {
		t.Fatal(err)
	}
	e2 := startTLS(t, dir)
	ca2, _ := os.ReadFile(p.CACert)
	if string(ca1) != string(ca2) {
		t.Fatal("CA changed on restart")
	}
	c := client(t, e2, e.ClientID, e.ClientSecret, cfgs["p12"])
	if _, err := c.GetCob(ctx, txid("tlsp12", 1)); err != nil {
		t.Fatalf("after restart: %v", err)
	}
}

func startTLS(t *testing.T, dir string) *sandbox.Running {
	t.Helper()
	srv, err := sandbox.New(sandbox.Config{DataDir: dir, TLS: true, ClientID: "Client_Id_tls", ClientSecret: "Client_Secret_tls"})
	if err != nil {
		t.Fatal(err)
	}
	rn, err := srv.Start()
	if err != nil {
		srv.Close()
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = rn.Close() })
	return rn
}
