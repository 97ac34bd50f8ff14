package api_test

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"io"
	"log"
	"math/big"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"testing"
	"time"

	"software.sslmate.com/src/go-pkcs12"

	"remessa/api"
)

type testPKI struct {
	caPEM                  []byte
	caCert                 *x509.Certificate
	caKey                  *ecdsa.PrivateKey
	serverCert, clientCert tls.Certificate
	clientKey              *ecdsa.PrivateKey
}

func issue(t *testing.T, p *testPKI, tmpl *x509.Certificate) (tls.Certificate, *ecdsa.PrivateKey) {
	key, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	der, err := x509.CreateCertificate(rand.Reader, tmpl, p.caCert, &key.PublicKey, p.caKey)
	if err != nil {
		t.Fatal(err)
	}
	leaf, _ := x509.ParseCertificate(der)
	return tls.Certificate{Certificate: [][]byte{der}, PrivateKey: key, Leaf: leaf}, key
}

func newPKI(t *testing.T) *testPKI {
	p := &testPKI{}
	p.caKey, _ = ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	ca := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "test CA"}, NotBefore: time.Now().Add(-time.Hour),
		NotAfter: time.Now().Add(time.Hour), IsCA: true, BasicConstraintsValid: true, KeyUsage: x509.KeyUsageCertSign}
	der, err := x509.CreateCertificate(rand.Reader, ca, ca, &p.caKey.PublicKey, p.caKey)
	if err != nil {
		t.Fatal(err)
	}
	p.caCert, _ = x509.ParseCertificate(der)
	p.caPEM = pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der})
	p.serverCert, _ = issue(t, p, &x509.Certificate{SerialNumber: big.NewInt(2), Subject: pkix.Name{CommonName: "127.0.0.1"},
		IPAddresses: []net.IP{net.ParseIP("127.0.0.1")}, NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour),
		ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth}, KeyUsage: x509.KeyUsageDigitalSignature})
	p.clientCert, p.clientKey = issue(t, p, &x509.Certificate{SerialNumber: big.NewInt(3), Subject: pkix.Name{CommonName: "client"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour),
		ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth}, KeyUsage: x509.KeyUsageDigitalSignature})
	return p
}

// TestMutualTLS: the client presents a PEM pair or a PKCS#12 file and
// trusts CAFile; without a certificate the handshake fails.
func TestMutualTLS(t *testing.T) {
	p := newPKI(t)
	pool := x509.NewCertPool()
	pool.AddCert(p.caCert)
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if len(r.TLS.PeerCertificates) == 0 {
			http.Error(w, "no client cert", http.StatusForbidden)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		if r.URL.Path == "/oauth/token" {
			w.Write([]byte(`{"access_token":"t","token_type":"Bearer","expires_in":3600,"scope":"cob.read"}`))
			return
		}
		w.Write([]byte(`{"cn":"` + r.TLS.PeerCertificates[0].Subject.CommonName + `"}`))
	}))
	srv.TLS = &tls.Config{Certificates: []tls.Certificate{p.serverCert}, ClientAuth: tls.RequireAndVerifyClientCert, ClientCAs: pool}
	srv.Config.ErrorLog = log.New(io.Discard, "", 0) // the refused handshake is expected
	srv.StartTLS()
	defer srv.Close()

	dir := t.TempDir()
	write := func(name string, data []byte) string {
		path := filepath.Join(dir, name)
		if err := os.WriteFile(path, data, 0o600); err != nil {
			t.Fatal(err)
		}
		return path
	}
	caFile := write("ca.pem", p.caPEM)
	certFile := write("client.pem", pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: p.clientCert.Certificate[0]}))
	keyDER, _ := x509.MarshalECPrivateKey(p.clientKey)
	keyFile := write("client.key", pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: keyDER}))
	p12, err := pkcs12.Modern.Encode(p.clientKey, p.clientCert.Leaf, nil, "senha")
	if err != nil {
		t.Fatal(err)
	}
	p12File := write("client.p12", p12)

	for name, cfg := range map[string]api.Config{
		"pem": {CertFile: certFile, KeyFile: keyFile, CAFile: caFile},
		"p12": {P12File: p12File, P12Password: "senha", CAFile: caFile},
	} {
		cfg.BaseURL, cfg.ClientID, cfg.ClientSecret, cfg.MaxRetries = srv.URL, "id", "secret", -1
		c, err := api.New(cfg)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		resp, err := c.Do(context.Background(), api.Pix, "GET", "/v2/x", nil)
		if err != nil || string(resp.Body) != `{"cn":"client"}` {
			t.Fatalf("%s: %v %v", name, resp, err)
		}
	}
	if _, err := api.New(api.Config{BaseURL: srv.URL, ClientID: "id", ClientSecret: "s", P12File: p12File, P12Password: "errada"}); err == nil {
		t.Fatal("wrong PKCS#12 password accepted")
	}
	c, _ := api.New(api.Config{BaseURL: srv.URL, ClientID: "id", ClientSecret: "s", CAFile: caFile, MaxRetries: -1})
	if _, err := c.Do(context.Background(), api.Pix, "GET", "/v2/x", nil); err == nil {
		t.Fatal("request without a client certificate succeeded")
	}
}
