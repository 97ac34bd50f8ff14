// Package smtptest is an SMTP server on loopback for the tests of the
// régua's own e-mail (github.com/emersion/go-smtp): it offers STARTTLS
// with a certificate of its own CA, refuses AUTH before TLS and a message
// before AUTH, accepts one user and password, and keeps what it received.
// pipeline/remind's and web's tests count the e-mails with it.
package smtptest

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
	"sort"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/emersion/go-sasl"
	"github.com/emersion/go-smtp"
)

// The one user and password the server accepts.
const (
	User     = "usuario-smtp@escola.example.com"
	Password = "s3nha-do-smtp-NAO-LOGAR"
)

// Server is a running test SMTP server.
type Server struct {
	Port   int
	CAFile string // the server's CA certificate (PEM), for ca_file
	CAPEM  string // the same, as text

	mu  sync.Mutex
	got []Message
}

// Message is one e-mail the server received: the envelope's recipient,
// the decoded subject and the raw body (a MIME message's parts as sent).
type Message struct {
	To, Subject, Body string
}

// Start starts a server on a free loopback port; it stops when the test
// ends.
func Start(t testing.TB) *Server {
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
	pemText := pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der})
	mb := &Server{CAFile: filepath.Join(t.TempDir(), "ca.pem"), CAPEM: string(pemText)}
	if err := os.WriteFile(mb.CAFile, pemText, 0o644); err != nil {
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

// All is every message received so far, in the order received.
func (mb *Server) All() []Message {
	mb.mu.Lock()
	defer mb.mu.Unlock()
	return append([]Message(nil), mb.got...)
}

// List is every message as "recipient subject" lines (the recipient
// without angle brackets), sorted: for comparing with a test's own list.
func (mb *Server) List() []string {
	var out []string
	for _, m := range mb.All() {
		out = append(out, strings.Trim(m.To, "<>")+" "+m.Subject)
	}
	sort.Strings(out)
	return out
}

// Env is the server's address and credentials as the variables a job
// file's reminders.smtp may name: SMTP_PORT, SMTP_CA, SMTP_USER, SMTP_PASS.
func (mb *Server) Env() map[string]string {
	return map[string]string{"SMTP_PORT": strconv.Itoa(mb.Port), "SMTP_CA": mb.CAFile, "SMTP_USER": User, "SMTP_PASS": Password}
}

type session struct {
	mb     *Server
	authed bool
	to     string
}

func (s *session) AuthMechanisms() []string { return []string{sasl.Plain} }

func (s *session) Auth(mech string) (sasl.Server, error) {
	return sasl.NewPlainServer(func(identity, username, password string) error {
		if username != User || password != Password {
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
	s.mb.got = append(s.mb.got, Message{To: s.to, Subject: subj, Body: string(body)})
	s.mb.mu.Unlock()
	return nil
}

func (s *session) Reset()        {}
func (s *session) Logout() error { return nil }
