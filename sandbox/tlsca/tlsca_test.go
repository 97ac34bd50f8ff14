package tlsca_test

import (
	"crypto/x509"
	"os"
	"testing"

	"remessa/sandbox/tlsca"
)

func TestTLSCACertificates(t *testing.T) {
	dir := t.TempDir()
	p, cfg, err := tlsca.Ensure(dir)
	if err != nil {
		t.Fatal(err)
	}
	if cfg.ClientAuth.String() != "RequireAndVerifyClientCert" || cfg.MinVersion == 0 || len(cfg.Certificates) != 1 {
		t.Fatalf("server config %+v", cfg)
	}
	leaf, err := x509.ParseCertificate(cfg.Certificates[0].Certificate[0])
	if err != nil {
		t.Fatal(err)
	}
	if err := leaf.VerifyHostname("localhost"); err != nil {
		t.Fatal(err)
	}
	if err := leaf.VerifyHostname("127.0.0.1"); err != nil {
		t.Fatal(err)
	}
	pool := x509.NewCertPool()
	caPEM, _ := os.ReadFile(p.CACert)
	pool.AppendCertsFromPEM(caPEM)
	if _, err := leaf.Verify(x509.VerifyOptions{Roots: pool, DNSName: "localhost"}); err != nil {
		t.Fatalf("server cert not signed by the CA: %v", err)
	}
	if st, err := os.Stat(p.ClientKey); err != nil || st.Mode().Perm() != 0o600 {
		t.Fatalf("client key mode: %v %v", err, st)
	}
	// Ensure again: same files.
	p2, _, err := tlsca.Ensure(dir)
	ca2, _ := os.ReadFile(p2.CACert)
	if err != nil || string(ca2) != string(caPEM) {
		t.Fatalf("second Ensure regenerated: %v", err)
	}
	// A broken file regenerates everything.
	if err := os.WriteFile(p.ServerCert, []byte("lixo"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, _, err := tlsca.Ensure(dir); err != nil {
		t.Fatal(err)
	}
	ca3, _ := os.ReadFile(p.CACert)
	if string(ca3) == string(caPEM) {
		t.Fatal("broken server certificate did not regenerate")
	}
}
