package remind

import (
	"bytes"
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"image/png"
	"os"
	"strings"
	"time"

	"github.com/boombuler/barcode"
	"github.com/boombuler/barcode/qr"
	mail "github.com/wneessen/go-mail"

	"remessa/pipeline"
)

// Message is one e-mail of the smtp channel.
type Message struct {
	To, Subject, Body string
	// QR is the Pix copy-and-paste code, sent as an inline QR code image
	// ("" = none).
	QR string
}

// Mailer sends the smtp channel's messages. Send's error tells whether
// the message may have been delivered: ErrNotSent wrapped means it
// certainly was not (the pass tries it again later), anything else that
// the outcome is unknown (reported uncertain, never sent again), unless
// it wraps ErrRefused (the server refused it for good).
type Mailer interface {
	Send(ctx context.Context, m Message) error
}

// Errors a Mailer wraps.
var (
	ErrNotSent = errors.New("não enviado")
	ErrRefused = errors.New("recusado pelo servidor de e-mail")
)

// SMTPMailer sends through an SMTP server with go-mail: STARTTLS (or
// implicit TLS) and authentication. The credentials are never logged and
// never part of an error.
type SMTPMailer struct {
	S       pipeline.SMTPSettings
	Timeout time.Duration
}

func (m *SMTPMailer) client() (*mail.Client, error) {
	opts := []mail.Option{mail.WithPort(m.S.Port), mail.WithTimeout(firstDur(m.Timeout, 30*time.Second))}
	tc := &tls.Config{ServerName: m.S.Host, MinVersion: tls.VersionTLS12}
	switch {
	case m.S.CAPEM != "":
		pool := x509.NewCertPool()
		if !pool.AppendCertsFromPEM([]byte(m.S.CAPEM)) {
			return nil, fmt.Errorf("certificado da autoridade do servidor SMTP: nenhum certificado PEM")
		}
		tc.RootCAs = pool
	case m.S.CAFile != "":
		pem, err := os.ReadFile(m.S.CAFile)
		if err != nil {
			return nil, fmt.Errorf("smtp.ca_file: %w", err)
		}
		pool := x509.NewCertPool()
		if !pool.AppendCertsFromPEM(pem) {
			return nil, fmt.Errorf("smtp.ca_file %s: nenhum certificado PEM", m.S.CAFile)
		}
		tc.RootCAs = pool
	}
	opts = append(opts, mail.WithTLSConfig(tc))
	switch m.S.TLS {
	case "tls":
		opts = append(opts, mail.WithSSL())
	case "none":
		opts = append(opts, mail.WithTLSPolicy(mail.NoTLS))
	default:
		opts = append(opts, mail.WithTLSPolicy(mail.TLSMandatory))
	}
	if m.S.Username != "" {
		opts = append(opts, mail.WithSMTPAuth(mail.SMTPAuthAutoDiscover), mail.WithUsername(m.S.Username), mail.WithPassword(m.S.Password))
	}
	return mail.NewClient(m.S.Host, opts...)
}

// Send sends one message (one connection per message: a pass sends few,
// and each outcome stays its own).
func (m *SMTPMailer) Send(ctx context.Context, msg Message) error {
	cl, err := m.client()
	if err != nil {
		return fmt.Errorf("%w: %v", ErrNotSent, err)
	}
	em := mail.NewMsg()
	if err := em.From(m.S.From); err != nil {
		return fmt.Errorf("%w: remetente %q: %v", ErrRefused, m.S.From, err)
	}
	if err := em.To(msg.To); err != nil {
		return fmt.Errorf("%w: destinatário %s: %v", ErrRefused, maskEmail(msg.To), err)
	}
	em.Subject(msg.Subject)
	em.SetDate()
	em.SetMessageID()
	em.SetBodyString(mail.TypeTextPlain, msg.Body)
	if msg.QR != "" {
		if img, err := qrPNG(msg.QR); err == nil {
			if err := em.EmbedReader("pix-qrcode.png", bytes.NewReader(img), mail.WithFileContentType(mail.ContentType("image/png"))); err != nil {
				return fmt.Errorf("%w: QR code: %v", ErrNotSent, err)
			}
		}
	}
	err = cl.DialAndSendWithContext(ctx, em)
	if err == nil {
		return nil
	}
	return classifySMTP(err, m.S)
}

// classifySMTP tells a message certainly not sent (nothing reached the
// server's DATA) from one whose outcome is unknown (the connection failed
// while or after the message was handed over).
func classifySMTP(err error, s pipeline.SMTPSettings) error {
	text := redact(err.Error(), s)
	var se *mail.SendError
	if errors.As(err, &se) {
		switch se.Reason {
		case mail.ErrSMTPDataClose:
			// the whole message reached the server; its answer did not
			return fmt.Errorf("resposta perdida depois da mensagem: %s", text)
		case mail.ErrSMTPRcptTo:
			if !se.IsTemp() {
				return fmt.Errorf("%w: %s", ErrRefused, text)
			}
		}
	}
	return fmt.Errorf("%w: %s", ErrNotSent, text)
}

// redact keeps the credentials out of an error's text.
func redact(text string, s pipeline.SMTPSettings) string {
	for _, v := range []string{s.Password, s.Username} {
		if len(v) >= 3 {
			text = strings.ReplaceAll(text, v, "***")
		}
	}
	return text
}

func firstDur(a, b time.Duration) time.Duration {
	if a > 0 {
		return a
	}
	return b
}

// qrPNG draws a Pix copy-and-paste code as a QR code image.
func qrPNG(code string) ([]byte, error) {
	q, err := qr.Encode(code, qr.M, qr.Auto)
	if err != nil {
		return nil, err
	}
	q, err = barcode.Scale(q, 256, 256)
	if err != nil {
		return nil, err
	}
	var b bytes.Buffer
	if err := png.Encode(&b, q); err != nil {
		return nil, err
	}
	return b.Bytes(), nil
}
