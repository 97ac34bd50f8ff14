package api

import (
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"
)

// ErrAmbiguous is wrapped by errors of non-idempotent requests (POST) that
// may have been processed by the service: the connection failed after the
// request was written, the attempt timed out, or the answer was a gateway
// or internal error (500, 502, 504). Such a request is never re-sent; the
// caller must find out (e.g. list charges by custom_id) before retrying.
var ErrAmbiguous = errors.New("api: outcome unknown")

// IsAmbiguous reports whether err means "the request may or may not have
// been processed".
func IsAmbiguous(err error) bool { return errors.Is(err, ErrAmbiguous) }

// ErrEarlierAttemptUnknown is wrapped by the final error of an idempotent
// request (GET, PUT, PATCH, DELETE) that the client retried after an
// attempt without a known outcome (the connection failed after the request
// was written, or the answer was 500, 502 or 504), and by the transport
// error of such a request whose retries ran out after a write. That
// attempt may have been processed: a PUT cancel whose answer was lost and
// whose retry is refused with 3500043 (already canceled) did cancel.
// Unlike ErrAmbiguous, a final answer is a real answer of the service about
// the current state, so IsAmbiguous stays false. Token routes never wrap it.
var ErrEarlierAttemptUnknown = errors.New("api: an earlier attempt may have been processed")

// MaybeProcessed reports whether the operation may have happened although
// err is an error: an ambiguous request (IsAmbiguous), or a retried
// idempotent request refused after an attempt whose outcome was unknown
// (ErrEarlierAttemptUnknown).
func MaybeProcessed(err error) bool {
	return IsAmbiguous(err) || errors.Is(err, ErrEarlierAttemptUnknown)
}

// Error is an answer of the service with a status of 400 or more. It
// carries whichever dialect the service used: the charges API's
// {code, error, error_description}, the Pix API's problem object, or Efí's
// {nome, mensagem}. Its message never contains tokens or secrets.
type Error struct {
	Status      int    // HTTP status
	Code        int    // charges API code, e.g. 3500034 (0 when absent)
	Err         string // charges API "error" slug, e.g. "validation_error"
	Description string // error_description (string form, or the message of the object form)
	Property    string // error_description.property (JSON pointer), when the object form was used
	Problem     *Problem
	Nome        string // Efí Pix dialect
	Mensagem    string

	Method     string        // request method
	Path       string        // request path (redacted)
	RetryAfter time.Duration // from a Retry-After header (429, 503)
	Ambiguous  bool          // a POST answered 500/502/504: it may have been processed
	// EarlierAttemptUnknown: this is the answer to a retry, and an earlier
	// attempt ended without a known outcome, so it may have been processed
	// (see ErrEarlierAttemptUnknown); Ambiguous stays false.
	EarlierAttemptUnknown bool
}

// Problem is the Pix API problem object (RFC 7807 as the BCB API uses it).
type Problem struct {
	Type      string     `json:"type"`
	Title     string     `json:"title"`
	Status    int        `json:"status"`
	Detail    string     `json:"detail,omitempty"`
	Violacoes []Violacao `json:"violacoes,omitempty"`
}

// TypeName returns the last segment of the problem type
// ("https://pix.bcb.gov.br/api/v2/error/CobVOperacaoInvalida" -> "CobVOperacaoInvalida").
func (p *Problem) TypeName() string {
	if p == nil {
		return ""
	}
	return p.Type[strings.LastIndexByte(p.Type, '/')+1:]
}

// Violacao is one violation inside a Problem.
type Violacao struct {
	Razao       string `json:"razao"`
	Propriedade string `json:"propriedade"`
	Valor       string `json:"valor,omitempty"`
}

func (e *Error) Error() string {
	var b strings.Builder
	fmt.Fprintf(&b, "api: %s %s: %d", e.Method, e.Path, e.Status)
	switch {
	case e.Code != 0 || e.Err != "":
		if e.Code != 0 {
			fmt.Fprintf(&b, " %d", e.Code)
		}
		if e.Err != "" {
			b.WriteString(" " + e.Err)
		}
		if e.Property != "" {
			b.WriteString(": " + e.Property)
		}
		if e.Description != "" {
			b.WriteString(": " + e.Description)
		}
	case e.Problem != nil:
		b.WriteString(" " + e.Problem.TypeName())
		if e.Problem.Title != "" {
			b.WriteString(": " + e.Problem.Title)
		}
		if e.Problem.Detail != "" {
			b.WriteString(": " + e.Problem.Detail)
		}
		for _, v := range e.Problem.Violacoes {
			b.WriteString("; " + v.Propriedade + ": " + v.Razao)
		}
	case e.Nome != "":
		b.WriteString(" " + e.Nome)
		if e.Mensagem != "" {
			b.WriteString(": " + e.Mensagem)
		}
	}
	if e.Ambiguous {
		b.WriteString(" (resultado incerto: a requisição pode ter sido processada)")
	} else if e.EarlierAttemptUnknown {
		b.WriteString(" (resposta a uma nova tentativa: uma tentativa anterior ficou sem resposta e pode ter sido processada)")
	}
	return RedactString(b.String())
}

// Unwrap makes errors.Is(err, ErrAmbiguous) true for ambiguous answers and
// errors.Is(err, ErrEarlierAttemptUnknown) true for refusals of a retry
// after an attempt without a known outcome.
func (e *Error) Unwrap() error {
	switch {
	case e.Ambiguous:
		return ErrAmbiguous
	case e.EarlierAttemptUnknown:
		return ErrEarlierAttemptUnknown
	}
	return nil
}

// MaybeProcessed reports whether the operation may have happened although
// the service answered e: e.Ambiguous or e.EarlierAttemptUnknown.
func (e *Error) MaybeProcessed() bool { return e.Ambiguous || e.EarlierAttemptUnknown }

// errorBody has every field of the three error dialects.
type errorBody struct {
	Code             json.RawMessage `json:"code"`
	Error            string          `json:"error"`
	ErrorDescription json.RawMessage `json:"error_description"`
	Type             string          `json:"type"`
	Title            string          `json:"title"`
	Status           int             `json:"status"`
	Detail           string          `json:"detail"`
	Violacoes        []Violacao      `json:"violacoes"`
	Nome             string          `json:"nome"`
	Mensagem         string          `json:"mensagem"`
}

// parseError builds an *Error from a failed answer's status and body.
func parseError(method, path string, status int, body []byte) *Error {
	e := &Error{Status: status, Method: method, Path: RedactString(path)}
	var b errorBody
	if err := json.Unmarshal(body, &b); err != nil {
		text := strings.TrimSpace(string(body))
		if len(text) > 200 {
			text = text[:200]
		}
		e.Description = strings.ToValidUTF8(text, "?")
		return e
	}
	if len(b.Code) > 0 {
		var n json.Number
		if json.Unmarshal(b.Code, &n) == nil {
			if v, err := strconv.Atoi(n.String()); err == nil {
				e.Code = v
			}
		} else {
			var s string
			if json.Unmarshal(b.Code, &s) == nil {
				e.Code, _ = strconv.Atoi(s)
			}
		}
	}
	e.Err = b.Error
	if len(b.ErrorDescription) > 0 {
		var s string
		if json.Unmarshal(b.ErrorDescription, &s) == nil {
			e.Description = s
		} else {
			var pm struct {
				Property string `json:"property"`
				Message  string `json:"message"`
			}
			if json.Unmarshal(b.ErrorDescription, &pm) == nil {
				e.Property, e.Description = pm.Property, pm.Message
			}
		}
	}
	if b.Type != "" || b.Title != "" {
		e.Problem = &Problem{Type: b.Type, Title: b.Title, Status: b.Status, Detail: b.Detail, Violacoes: b.Violacoes}
	}
	e.Nome, e.Mensagem = b.Nome, b.Mensagem
	return e
}
