// Package tlsca makes the certificates of the sandbox's mutual-TLS mode:
// a local certificate authority, a server certificate for localhost and
// 127.0.0.1 (and ::1), and a client certificate as PEM and as PKCS#12
// (.p12, empty password, like the certificates Efí issues). They are
// created once in a directory and reused on every later start.
package tlsca

import (
	"crypto"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"errors"
	"fmt"
	"math/big"
	"net"
	"os"
	"path/filepath"
	"time"

	"software.sslmate.com/src/go-pkcs12"
)

// Paths are the files Ensure keeps in its directory.
type Paths struct {
	Dir        string
	CACert     string // ca.crt: trust this to reach the sandbox over TLS
	CAKey      string // ca.key
	ServerCert string // server.crt (localhost, 127.0.0.1, ::1)
	ServerKey  string // server.key
	ClientCert string // client.crt (PEM)
	ClientKey  string // client.key (PEM)
	ClientP12  string // client.p12 (PKCS#12, password P12Password)
}

// P12Password is the password of client.p12 (empty, as Efí's).
const P12Password = ""

// Validity of the certificates made by Ensure.
const validity = 10 * 365 * 24 * time.Hour

// PathsIn returns the file names Ensure uses under dir/tls.
func PathsIn(dataDir string) Paths {
	d := filepath.Join(dataDir, "tls")
	return Paths{
		Dir: d, CACert: filepath.Join(d, "ca.crt"), CAKey: filepath.Join(d, "ca.key"),
		ServerCert: filepath.Join(d, "server.crt"), ServerKey: filepath.Join(d, "server.key"),
		ClientCert: filepath.Join(d, "client.crt"), ClientKey: filepath.Join(d, "client.key"),
		ClientP12: filepath.Join(d, "client.p12"),
	}
}

// MemoryDir is the data directory used for the certificates of a sandbox
// without one (an in-memory store): a fixed folder under the temporary
// directory, so every such sandbox on the machine shares one CA.
func MemoryDir() string { return filepath.Join(os.TempDir(), "remessa-sandbox") }

// Ensure creates the certificates under dataDir/tls unless they all exist
// and load, and returns their paths and the server's TLS configuration:
// TLS 1.2 or later, the server certificate, and a required client
// certificate signed by the local CA.
func Ensure(dataDir string) (Paths, *tls.Config, error) {
	p := PathsIn(dataDir)
	cfg, err := p.serverConfig()
	if err == nil {
		return p, cfg, nil
	}
	if err := p.generate(); err != nil {
		return p, nil, err
	}
	cfg, err = p.serverConfig()
	if err != nil {
		return p, nil, fmt.Errorf("tlsca: load the certificates just created in %s: %w", p.Dir, err)
	}
	return p, cfg, nil
}

// serverConfig loads the files; any missing or broken file is an error.
func (p Paths) serverConfig() (*tls.Config, error) {
	for _, f := range []string{p.CACert, p.CAKey, p.ClientCert, p.ClientKey, p.ClientP12} {
		if _, err := os.Stat(f); err != nil {
			return nil, err
		}
	}
	srv, err := tls.LoadX509KeyPair(p.ServerCert, p.ServerKey)
	if err != nil {
		return nil, err
	}
	if leaf, err := x509.ParseCertificate(srv.Certificate[0]); err != nil || time.Now().After(leaf.NotAfter) {
		return nil, errors.New("tlsca: server certificate expired or unreadable")
	}
	caPEM, err := os.ReadFile(p.CACert)
	if err != nil {
		return nil, err
	}
	pool := x509.NewCertPool()
	if !pool.AppendCertsFromPEM(caPEM) {
		return nil, fmt.Errorf("tlsca: %s has no certificate", p.CACert)
	}
	return &tls.Config{
		MinVersion:   tls.VersionTLS12,
		Certificates: []tls.Certificate{srv},
		ClientCAs:    pool,
		ClientAuth:   tls.RequireAndVerifyClientCert,
	}, nil
}

func newKey() (*ecdsa.PrivateKey, error) { return ecdsa.GenerateKey(elliptic.P256(), rand.Reader) }

func serial() (*big.Int, error) {
	return rand.Int(rand.Reader, new(big.Int).Lsh(big.NewInt(1), 120))
}

// generate writes a new CA, server and client certificate. Files are
// written to a fresh folder that then replaces p.Dir, so a reader never
// sees a mix of two generations.
func (p Paths) generate() error {
	now := time.Now().Add(-time.Hour)
	caKey, err := newKey()
	if err != nil {
		return fmt.Errorf("tlsca: generate CA key: %w", err)
	}
	sn, err := serial()
	if err != nil {
		return err
	}
	caTmpl := &x509.Certificate{
		SerialNumber: sn, Subject: pkix.Name{CommonName: "remessa sandbox local CA", Organization: []string{"remessa"}},
		NotBefore: now, NotAfter: now.Add(validity), IsCA: true, BasicConstraintsValid: true, MaxPathLenZero: true,
		KeyUsage: x509.KeyUsageCertSign | x509.KeyUsageCRLSign,
	}
	caDER, err := x509.CreateCertificate(rand.Reader, caTmpl, caTmpl, caKey.Public(), caKey)
	if err != nil {
		return fmt.Errorf("tlsca: create CA: %w", err)
	}
	ca, _ := x509.ParseCertificate(caDER)

	issue := func(cn string, usage x509.ExtKeyUsage, dns []string, ips []net.IP) (*ecdsa.PrivateKey, []byte, error) {
		k, err := newKey()
		if err != nil {
			return nil, nil, err
		}
		sn, err := serial()
		if err != nil {
			return nil, nil, err
		}
		t := &x509.Certificate{
			SerialNumber: sn, Subject: pkix.Name{CommonName: cn, Organization: []string{"remessa"}},
			NotBefore: now, NotAfter: now.Add(validity), KeyUsage: x509.KeyUsageDigitalSignature,
			ExtKeyUsage: []x509.ExtKeyUsage{usage}, DNSNames: dns, IPAddresses: ips,
		}
		der, err := x509.CreateCertificate(rand.Reader, t, ca, k.Public(), caKey)
		return k, der, err
	}
	srvKey, srvDER, err := issue("localhost", x509.ExtKeyUsageServerAuth, []string{"localhost"}, []net.IP{net.IPv4(127, 0, 0, 1), net.IPv6loopback})
	if err != nil {
		return fmt.Errorf("tlsca: create server certificate: %w", err)
	}
	cliKey, cliDER, err := issue("remessa-sandbox-client", x509.ExtKeyUsageClientAuth, nil, nil)
	if err != nil {
		return fmt.Errorf("tlsca: create client certificate: %w", err)
	}
	cli, _ := x509.ParseCertificate(cliDER)
	p12, err := pkcs12.Modern2023.Encode(cliKey, cli, []*x509.Certificate{ca}, P12Password)
	if err != nil {
		return fmt.Errorf("tlsca: encode client.p12: %w", err)
	}

	parent := filepath.Dir(p.Dir)
	if err := os.MkdirAll(parent, 0o755); err != nil {
		return fmt.Errorf("tlsca: create %s: %w", parent, err)
	}
	tmp, err := os.MkdirTemp(parent, ".tls-*")
	if err != nil {
		return fmt.Errorf("tlsca: create temporary folder in %s: %w", parent, err)
	}
	defer os.RemoveAll(tmp)
	q := PathsIn(parent)
	q.Dir = tmp
	rel := func(f string) string { return filepath.Join(tmp, filepath.Base(f)) }
	files := []struct {
		name string
		data []byte
		mode os.FileMode
	}{
		{rel(q.CACert), pemBlock("CERTIFICATE", caDER), 0o644},
		{rel(q.CAKey), keyPEM(caKey), 0o600},
		{rel(q.ServerCert), append(pemBlock("CERTIFICATE", srvDER), pemBlock("CERTIFICATE", caDER)...), 0o644},
		{rel(q.ServerKey), keyPEM(srvKey), 0o600},
		{rel(q.ClientCert), pemBlock("CERTIFICATE", cliDER), 0o644},
		{rel(q.ClientKey), keyPEM(cliKey), 0o600},
		{rel(q.ClientP12), p12, 0o600},
	}
	for _, f := range files {
		if f.data == nil {
			return fmt.Errorf("tlsca: encode %s", filepath.Base(f.name))
		}
		if err := os.WriteFile(f.name, f.data, f.mode); err != nil {
			return fmt.Errorf("tlsca: write %s: %w", f.name, err)
		}
	}
	// Replace the old folder (if any) with the new one.
	old := p.Dir + ".old"
	_ = os.RemoveAll(old)
	if _, err := os.Stat(p.Dir); err == nil {
		if err := os.Rename(p.Dir, old); err != nil {
			return fmt.Errorf("tlsca: move %s aside: %w", p.Dir, err)
		}
	}
	if err := os.Rename(tmp, p.Dir); err != nil {
		// Another process may have created it meanwhile; use theirs if it loads.
		if _, lerr := p.serverConfig(); lerr == nil {
			return nil
		}
		return fmt.Errorf("tlsca: install %s: %w", p.Dir, err)
	}
	_ = os.RemoveAll(old)
	return nil
}

func pemBlock(typ string, der []byte) []byte {
	return pem.EncodeToMemory(&pem.Block{Type: typ, Bytes: der})
}

func keyPEM(k crypto.Signer) []byte {
	der, err := x509.MarshalPKCS8PrivateKey(k)
	if err != nil {
		return nil
	}
	return pemBlock("PRIVATE KEY", der)
}
