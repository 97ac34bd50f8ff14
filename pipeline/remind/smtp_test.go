package remind_test

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"errors"
	"io"
	"math/big"
	"mime"
	"net"
	"net/mail"
	"os"
	"path/filepath"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/emersion/go-sasl"
	"github.com/emersion/go-smtp"
)

// mailbox is an SMTP server on loopback run by the test (go-smtp): it
// offers STARTTLS with a certificate of its own CA, refuses AUTH before
// TLS, accepts one user and password, and keeps what it received.
type mailbox struct {
	Port   int
	CAFile string
	mu     sync.Mutex
	got    []received
}

type received struct {
	To, Subject, Body string
}

const smtpUser, smtpPass = "cobranca@escola.example.com", "s3nha-do-smtp-NAO-LOGAR"

func startMailbox(t *testing.T) *mailbox {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tpl := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "127.0.0.1"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(10 * 365 * 24 * time.Hour),
		IPAddresses: []net.IP{net.ParseIP("127.0.0.1")}, IsCA: true, BasicConstraintsValid: true,
		KeyUsage: x509.KeyUsageDigitalSignature | x509.KeyUsageCertSign, ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth}}
	der, err := x509.CreateCertificate(rand.Reader, tpl, tpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	mb := &mailbox{CAFile: filepath.Join(t.TempDir(), "ca.pem")}
	if err := os.WriteFile(mb.CAFile, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), 0o644); err != nil {
		t.Fatal(err)
	}
	s := smtp.NewServer(smtp.BackendFunc(func(c *smtp.Conn) (smtp.Session, error) { return &session{mb: mb}, nil }))
	s.Domain = "127.0.0.1"
	s.TLSConfig = &tls.Config{Certificates: []tls.Certificate{{Certificate: [][]byte{der}, PrivateKey: key}}}
	s.ReadTimeout, s.WriteTimeout = 10*time.Second, 10*time.Second
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	mb.Port = l.Addr().(*net.TCPAddr).Port
	go s.Serve(l)
	t.Cleanup(func() { s.Close() })
	return mb
}

func (mb *mailbox) all() []received {
	mb.mu.Lock()
	defer mb.mu.Unlock()
	return append([]received(nil), mb.got...)
}

func (mb *mailbox) env() map[string]string {
	return map[string]string{"SMTP_PORT": strconv.Itoa(mb.Port), "SMTP_CA": mb.CAFile, "SMTP_USER": smtpUser, "SMTP_PASS": smtpPass}
}

type session struct {
	mb     *mailbox
	authed bool
	to     string
}

func (s *session) AuthMechanisms() []string { return []string{sasl.Plain} }

func (s *session) Auth(mech string) (sasl.Server, error) {
	return sasl.NewPlainServer(func(identity, username, password string) error {
		if username != smtpUser || password != smtpPass {
			return errors.New("invalid credentials")
		}
		s.authed = true
		return nil
	}), nil
}

func (s *session) Mail(from string, _ *smtp.MailOptions) error {
	if !s.authed {
		return smtp.ErrAuthRequired
	}
	return nil
}

func (s *session) Rcpt(to string, _ *smtp.RcptOptions) error { s.to = to; return nil }

func (s *session) Data(r io.Reader) error {
	m, err := mail.ReadMessage(r)
	if err != nil {
		return err
	}
	subj, err := new(mime.WordDecoder).DecodeHeader(m.Header.Get("Subject"))
	if err != nil {
		return err
	}
	body, _ := io.ReadAll(m.Body)
	s.mb.mu.Lock()
	s.mb.got = append(s.mb.got, received{To: s.to, Subject: subj, Body: string(body)})
	s.mb.mu.Unlock()
	return nil
}

func (s *session) Reset()        {}
func (s *session) Logout() error { return nil }
