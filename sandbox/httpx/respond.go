// Package httpx holds the HTTP plumbing shared by the sandbox modules:
// response writers for the two dialects of the service (the charges API's
// {code, error, error_description} body and the Pix API's problem object),
// strict JSON decoding with JSON-pointer errors, panic recovery and the
// dialect-aware "not found".
package httpx

import (
	"encoding/json"
	"net/http"
	"strconv"
	"strings"
)

// ProblemTypePrefix is the prefix of every Pix problem type.
const ProblemTypePrefix = "https://pix.bcb.gov.br/api/v2/error/"

// WriteJSON writes v as JSON with the given status.
func WriteJSON(w http.ResponseWriter, status int, v any) {
	b, err := json.Marshal(v)
	if err != nil {
		// A value the handler built itself cannot be encoded: a bug.
		panic("httpx: encode response: " + err.Error())
	}
	WriteJSONBytes(w, status, b)
}

// WriteJSONBytes writes b, a JSON value, as WriteJSON writes one: its
// headers, b and a newline (appended to b: its capacity may be used).
func WriteJSONBytes(w http.ResponseWriter, status int, b []byte) {
	h := w.Header()
	h["Content-Type"] = []string{"application/json; charset=utf-8"}
	h["Content-Length"] = []string{strconv.Itoa(len(b) + 1)}
	w.WriteHeader(status)
	_, _ = w.Write(append(b, '\n'))
}

// V1Data answers 200 {"code":200,"data":data} (charges API success).
func V1Data(w http.ResponseWriter, data any) {
	WriteJSON(w, http.StatusOK, struct {
		Code int `json:"code"`
		Data any `json:"data"`
	}{http.StatusOK, data})
}

// V1Code answers 200 {"code":200} (charges API success without data).
func V1Code(w http.ResponseWriter) {
	WriteJSON(w, http.StatusOK, struct {
		Code int `json:"code"`
	}{http.StatusOK})
}

// PropertyError is the object form of error_description.
type PropertyError struct {
	Property string `json:"property"`
	Message  string `json:"message"`
}

// V1ErrorBody is the charges API error body.
type V1ErrorBody struct {
	Code             int    `json:"code"`
	Error            string `json:"error"`
	ErrorDescription any    `json:"error_description"` // string or PropertyError
}

// V1Error answers a charges API error: {"code":code,"error":slug,
// "error_description":desc}; desc is a string or a PropertyError.
func V1Error(w http.ResponseWriter, status, code int, slug string, desc any) {
	WriteJSON(w, status, V1ErrorBody{Code: code, Error: slug, ErrorDescription: desc})
}

// V1Validation answers 400 3500034 validation_error with a property pointer.
func V1Validation(w http.ResponseWriter, pointer, message string) {
	V1Error(w, http.StatusBadRequest, 3500034, "validation_error", PropertyError{Property: pointer, Message: message})
}

// Violacao is one violation inside a Pix problem.
type Violacao struct {
	Razao       string `json:"razao"`
	Propriedade string `json:"propriedade"`
	Valor       string `json:"valor,omitempty"`
}

// ProblemBody is the Pix API problem object (RFC 7807 as the BCB API uses it).
type ProblemBody struct {
	Type      string     `json:"type"`
	Title     string     `json:"title"`
	Status    int        `json:"status"`
	Detail    string     `json:"detail,omitempty"`
	Violacoes []Violacao `json:"violacoes,omitempty"`
}

// Problem answers a Pix problem object whose type is ProblemTypePrefix +
// typeName (e.g. "CobVOperacaoInvalida", "NaoEncontrado").
func Problem(w http.ResponseWriter, status int, typeName, title, detail string, violacoes []Violacao) {
	w.Header().Set("Content-Type", "application/problem+json; charset=utf-8")
	b, err := json.Marshal(ProblemBody{Type: ProblemTypePrefix + typeName, Title: title, Status: status, Detail: detail, Violacoes: violacoes})
	if err != nil {
		panic("httpx: encode problem: " + err.Error())
	}
	w.Header().Set("Content-Length", strconv.Itoa(len(b)+1))
	w.WriteHeader(status)
	_, _ = w.Write(append(b, '\n'))
}

// EfiErrorBody is the Efí-specific Pix error dialect {nome, mensagem}.
type EfiErrorBody struct {
	Nome     string `json:"nome"`
	Mensagem string `json:"mensagem"`
}

// EfiError answers {"nome":nome,"mensagem":mensagem}, the dialect some Efí
// Pix routes (send, devolução, webhook) use.
func EfiError(w http.ResponseWriter, status int, nome, mensagem string) {
	WriteJSON(w, status, EfiErrorBody{Nome: nome, Mensagem: mensagem})
}

// Dialect says which error body a path uses.
type Dialect int

// Dialects.
const (
	DialectV1  Dialect = iota // /v1 and everything that is not Pix
	DialectPix                // /v2, /v3, /oauth
)

// DialectOf returns the error dialect of a request path.
func DialectOf(path string) Dialect {
	if strings.HasPrefix(path, "/v2/") || path == "/v2" || strings.HasPrefix(path, "/v3/") || strings.HasPrefix(path, "/oauth/") {
		return DialectPix
	}
	return DialectV1
}

// The wording of an internal error (HTTP 500), the same on every route of
// both dialects; never followed by internals.
const (
	InternalCode        = 3500000                    // charges API code
	InternalSlug        = "internal_server_error"    // charges API error slug
	InternalDescription = "Erro interno do servidor" // error_description / problem detail
	InternalType        = "ErroInterno"              // problem type name
	InternalTitle       = "Erro interno"             // problem title
)

// InternalError answers 500 without internals, in the dialect of the path.
func InternalError(w http.ResponseWriter, r *http.Request) {
	if DialectOf(r.URL.Path) == DialectPix {
		ProblemInternalError(w)
		return
	}
	V1InternalError(w)
}

// V1InternalError answers 500 in the charges API dialect.
func V1InternalError(w http.ResponseWriter) {
	V1Error(w, http.StatusInternalServerError, InternalCode, InternalSlug, InternalDescription)
}

// ProblemInternalError answers 500 as a Pix problem object.
func ProblemInternalError(w http.ResponseWriter) {
	Problem(w, http.StatusInternalServerError, InternalType, InternalTitle, InternalDescription, nil)
}

// NotFound answers 404 for an unknown route in the dialect of the path.
func NotFound(w http.ResponseWriter, r *http.Request) {
	if DialectOf(r.URL.Path) == DialectPix {
		Problem(w, http.StatusNotFound, "NaoEncontrado", "Não Encontrado", "Recurso solicitado não foi encontrado: "+r.Method+" "+r.URL.Path, nil)
		return
	}
	V1Error(w, http.StatusNotFound, 3500404, "route_not_found", "Rota não encontrada: "+r.Method+" "+r.URL.Path)
}

// MethodNotAllowed answers 405 with an Allow header in the dialect of the path.
func MethodNotAllowed(w http.ResponseWriter, r *http.Request, allow []string) {
	w.Header().Set("Allow", strings.Join(allow, ", "))
	if DialectOf(r.URL.Path) == DialectPix {
		Problem(w, http.StatusMethodNotAllowed, "MetodoNaoPermitido", "Método não permitido", "Método "+r.Method+" não permitido em "+r.URL.Path, nil)
		return
	}
	V1Error(w, http.StatusMethodNotAllowed, 3500405, "method_not_allowed", "Método "+r.Method+" não permitido em "+r.URL.Path)
}
