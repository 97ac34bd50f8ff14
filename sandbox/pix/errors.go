package pix

import (
	"encoding/json"
	"net/http"

	"remessa/sandbox/httpx"
)

// ProblemBase is the prefix of every problem type.
const ProblemBase = "https://pix.bcb.gov.br/api/v2/error/"

// Problem is the RFC 7807 problem object of the Pix API. A denied batch
// item carries one as "problema". Nome and Mensagem repeat the Efí
// dialect on the few problems that also have an Efí name (409 duplicates),
// so a client of either dialect understands them.
type Problem struct {
	Type      string     `json:"type"`
	Title     string     `json:"title"`
	Status    int        `json:"status"`
	Detail    string     `json:"detail,omitempty"`
	Violacoes []Violacao `json:"violacoes,omitempty"`
	Nome      string     `json:"nome,omitempty"`
	Mensagem  string     `json:"mensagem,omitempty"`
}

// apiError is an answer that is not a success: either a problem or an Efí
// {nome, mensagem} error (efi true).
type apiError struct {
	efi      bool
	status   int
	nome     string
	mensagem string
	p        Problem
	internal error // a store failure inside Module.write (rolls back, answers 500)
}

func (e *apiError) Error() string {
	if e.efi {
		return e.nome + ": " + e.mensagem
	}
	return e.p.Title + ": " + e.p.Detail
}

// problem builds a problem answer; typ is the last segment of the type.
func problem(status int, typ, title, detail string, vs []Violacao) *apiError {
	return &apiError{status: status, p: Problem{Type: ProblemBase + typ, Title: title, Status: status, Detail: detail, Violacoes: vs}}
}

// efiErr builds an Efí-dialect answer.
func efiErr(status int, nome, mensagem string) *apiError {
	return &apiError{efi: true, status: status, nome: nome, mensagem: mensagem}
}

// Problem types answered by this module (suffixes of ProblemBase).
const (
	tCobVInvalida   = "CobVOperacaoInvalida"
	tCobInvalida    = "CobOperacaoInvalida"
	tLoteInvalido   = "LoteCobVOperacaoInvalida"
	tNaoEncontrado  = "NaoEncontrado"
	tAcessoNegado   = "AcessoNegado"
	tRequisicao     = "RequisicaoInvalida"
	tDevInvalida    = "PixDevolucaoInvalida"
	tWebhook        = "WebhookOperacaoInvalida"
	tSplitConfig    = "SplitConfigOperacaoInvalida"
	tSplitOp        = "SplitOperacaoInvalida"
	tSplitConfigNE  = "SplitConfigNaoEncontrado"
	tCobSplitNE     = "CobrancaSplitNaoEncontrada"
	tPixEnviadoNE   = "PixEnviadoNaoEncontrado"
	titleCobV       = "Cobrança inválida."
	titleNotFound   = "Não Encontrado"
	titleLote       = "Lote de cobranças inválido."
	titleRequisicao = "Requisição inválida."
)

func notFound(what string) *apiError {
	return problem(http.StatusNotFound, tNaoEncontrado, titleNotFound, what, nil)
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	if writeAppended(w, status, v) {
		return // the hand-written encoding (cobjson.go)
	}
	b, err := json.Marshal(v)
	if err != nil {
		httpx.ProblemInternalError(w)
		return
	}
	writeRaw(w, status, b)
}

// writeRaw writes b, JSON already encoded (as writeJSON would).
func writeRaw(w http.ResponseWriter, status int, b []byte) {
	w.Header().Set("Content-Type", "application/json; charset=utf-8")
	w.WriteHeader(status)
	_, _ = w.Write(b)
}

func writeErr(w http.ResponseWriter, e *apiError) {
	if e.efi {
		writeJSON(w, e.status, map[string]string{"nome": e.nome, "mensagem": httpx.Clip(e.mensagem, maxEchoText)})
		return
	}
	w.Header().Set("Content-Type", "application/problem+json; charset=utf-8")
	b, _ := json.Marshal(clipProblem(e.p))
	w.WriteHeader(e.status)
	_, _ = w.Write(b)
}

// Error answers repeat the client's text (ids, property names, values):
// at most this much of it, so a 50 KB txid is not sent back whole.
const (
	maxEchoValue = 80  // violacoes[].valor
	maxEchoText  = 300 // detail, propriedade, mensagem
)

// clipProblem cuts the client's text inside p to the echo limits.
func clipProblem(p Problem) Problem {
	p.Detail = httpx.Clip(p.Detail, maxEchoText)
	if len(p.Violacoes) > 0 {
		vs := make([]Violacao, len(p.Violacoes))
		for i, v := range p.Violacoes {
			v.Propriedade = httpx.Clip(v.Propriedade, maxEchoText)
			v.Valor = httpx.Clip(v.Valor, maxEchoValue)
			vs[i] = v
		}
		p.Violacoes = vs
	}
	return p
}

// internal answers a store failure without internals.
func internal(err error) *apiError {
	return problem(http.StatusInternalServerError, httpx.InternalType, httpx.InternalTitle, httpx.InternalDescription, nil)
}

// asEfi converts violations to the Efí dialect used by the cob routes: the
// first violation becomes the message, naming the property.
func asEfi(vs []Violacao) *apiError {
	v := vs[0]
	nome := "valor_invalido"
	switch {
	case v.Propriedade == "chave":
		nome = "chave_invalida"
	case v.Razao == "propriedade desconhecida" || v.Propriedade == "":
		nome = "json_invalido"
	}
	msg := "Campo " + v.Propriedade + ": " + v.Razao
	if v.Propriedade == "" {
		msg = v.Razao
	}
	if v.Valor != "" {
		msg += " (valor " + quote(v.Valor) + ")"
	}
	return efiErr(http.StatusBadRequest, nome, msg)
}

func quote(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}
