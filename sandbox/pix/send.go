package pix

import (
	"context"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"time"

	"remessa/rules"
	"remessa/sandbox/store"
	"remessa/wire"
)

// The answers of the send routes are the contract's shared wire types (see
// model.go).
type (
	ContaBanco    = wire.PixContaBanco
	Identificacao = wire.PixIdentificacao
	Favorecido    = wire.PixFavorecido
	Enviado       = wire.PixEnviado
	EnvioCriado   = wire.PixSendResult
)

// SandboxTestKey is the only key a send by key may go to in the sandbox.
const SandboxTestKey = "efipay@sejaefi.com.br"

// Sandbox thresholds of the send simulation (cents).
const (
	sendConfirmMax = 1000 // 0.01..10.00 confirmed by webhook
	sendRejectMax  = 2000 // 10.01..20.00 rejected by webhook; above: rejected on the request
)

// envio is the stored form of a send.
type envio struct {
	IDEnvio string    `json:"idEnvio"`
	E2E     string    `json:"e2e"`
	Cents   int64     `json:"cents"`
	Time    time.Time `json:"time"`
	Status  string    `json:"status"`
	Refunds bool      `json:"refundsDone,omitempty"` // the 4.00/5.00 received refunds were generated
	Body    Enviado   `json:"body"`
}

// pendingRefunds tells whether a confirmed 4.00 or 5.00 send still has to
// generate its received refunds.
func (e *envio) pendingRefunds() bool {
	return e.Status == SendRealizado && !e.Refunds && (e.Cents == 400 || e.Cents == 500)
}

var sendS = obj(
	req("valor", valorS()),
	req("pagador", obj(req("chave", str(1, rules.MaxPixKey)), opt("infoPagador", str(0, 140)))),
	req("favorecido", obj(
		opt("chave", str(1, rules.MaxPixKey)),
		opt("cpf", pat(`^\d{11}$`, "11 dígitos")),
		opt("cnpj", pat(`^[0-9A-Z]{12}\d{2}$`, "14 caracteres")),
		opt("contaBanco", obj(
			req("nome", str(1, 200)),
			opt("cpf", pat(`^\d{11}$`, "11 dígitos")),
			opt("cnpj", pat(`^[0-9A-Z]{12}\d{2}$`, "14 caracteres")),
			req("codigoBanco", pat(`^[0-9]{8}$`, "ISPB de 8 dígitos")),
			req("agencia", pat(`^[0-9]{1,4}$`, "1 a 4 dígitos, sem dígito verificador")),
			req("conta", pat(`^[0-9]+$`, "dígitos, com o dígito verificador, sem traço")),
			req("tipoConta", enumStr("cacc", "svgs")),
		)),
	)),
)

// putSend handles PUT /v2/gn/pix/{idEnvio} and /v3/gn/pix/{idEnvio}
// (Efí dialect errors, as the real send).
func (m *Module) putSend(ctx context.Context, ai accountInfo, idEnvio string, body []byte) (*EnvioCriado, *apiError) {
	if !rules.ValidIdEnvio(idEnvio) {
		return nil, efiErr(http.StatusBadRequest, "valor_invalido", "Campo idEnvio deve ter de 1 a 35 caracteres alfanuméricos (valor "+quote(idEnvio)+")")
	}
	v, err := decodeAny(body)
	if err != nil {
		return nil, efiErr(http.StatusBadRequest, "json_invalido", "JSON inválido: "+err.Error())
	}
	var vs []Violacao
	sendS.check("", v, &vs)
	if len(vs) > 0 {
		return nil, asEfi(vs)
	}
	var in struct {
		Valor      string
		Pagador    struct{ Chave, InfoPagador string }
		Favorecido Favorecido
	}
	_ = remarshal(v, &in)
	cents, _ := rules.ParsePixAmount(in.Valor)
	f := in.Favorecido
	switch {
	case cents <= 0:
		return nil, efiErr(http.StatusBadRequest, "valor_invalido", "Campo valor deve ser maior que zero")
	case (f.Chave == "") == (f.ContaBanco == nil):
		return nil, efiErr(http.StatusBadRequest, "valor_invalido", "Campo favorecido: informe chave ou contaBanco")
	case f.ContaBanco != nil && (f.ContaBanco.CPF == "") == (f.ContaBanco.CNPJ == ""):
		return nil, efiErr(http.StatusBadRequest, "valor_invalido", "Campo favorecido.contaBanco: informe cpf ou cnpj")
	case !ai.ownsKey(in.Pagador.Chave):
		return nil, efiErr(http.StatusBadRequest, "chave_invalida", "Campo pagador.chave: a chave "+quote(in.Pagador.Chave)+" não pertence à conta")
	case f.Chave != "" && normKey(f.Chave) != SandboxTestKey:
		return nil, efiErr(http.StatusBadRequest, "chave_invalida", "Campo favorecido.chave: no sandbox só a chave de teste "+SandboxTestKey+" recebe envios")
	case cents > sendRejectMax:
		return nil, efiErr(http.StatusUnprocessableEntity, "pagamento_negado", "Pagamento negado pelo sandbox: envios acima de 20.00 são recusados na requisição")
	}
	now := m.clk.Now()
	var e *envio
	ae := m.write(ctx, func(tx *store.Tx, r reader) *apiError {
		h, err := r.hookFor(ai.ID, in.Pagador.Chave)
		if err != nil {
			return storeErr(err)
		}
		if h == nil {
			return efiErr(http.StatusBadRequest, "webhook_nao_cadastrado", "A chave do pagador "+quote(in.Pagador.Chave)+" não tem webhook cadastrado; cadastre com PUT /v2/webhook/{chave}")
		}
		old, err := r.envio(ai.ID, idEnvio)
		if err != nil {
			return storeErr(err)
		}
		if old != nil {
			return efiErr(http.StatusConflict, "id_envio_duplicado", "Já existe um envio com o idEnvio "+quote(idEnvio))
		}
		e2e, err := e2eID(tx, 'E', now)
		if err != nil {
			return storeErr(err)
		}
		if f.Chave != "" {
			f.Identificacao = &Identificacao{Nome: "Efi S.A. (chave de teste do sandbox)", CNPJ: "09089356000118"}
		}
		e = &envio{IDEnvio: idEnvio, E2E: e2e, Cents: cents, Time: now, Status: SendProcessando, Body: Enviado{
			EndToEndID: e2e, IDEnvio: idEnvio, Valor: rules.FormatPixAmount(cents), Chave: in.Pagador.Chave,
			Status: SendProcessando, InfoPagador: in.Pagador.InfoPagador, Horario: HorarioDev{Solicitacao: ts(now)}, Favorecido: f,
		}}
		if err := m.saveEnvio(tx, ai.ID, e); err != nil {
			return storeErr(err)
		}
		return nil
	})
	if ae != nil {
		return nil, ae
	}
	m.enqueue(task{kind: taskSend, account: ai.ID, id: idEnvio})
	return &EnvioCriado{IDEnvio: idEnvio, E2EID: e.E2E, Valor: e.Body.Valor, Horario: HorarioDev{Solicitacao: e.Body.Horario.Solicitacao}, Status: SendProcessando}, nil
}

func normKey(k string) string { return strings.ToLower(strings.TrimSpace(k)) }

// sendNote is the webhook item of a send result.
type sendNote struct {
	EndToEndID string      `json:"endToEndId"`
	Valor      string      `json:"valor"`
	Chave      string      `json:"chave"`
	Horario    string      `json:"horario"`
	Status     string      `json:"status"`
	Tipo       string      `json:"tipo"`
	GnExtras   gnExtras    `json:"gnExtras"`
	Devolucoes []Devolucao `json:"devolucoes,omitempty"`
}

type gnExtras struct {
	IDEnvio string   `json:"idEnvio"`
	Erro    *envErro `json:"erro,omitempty"`
}

type envErro struct {
	Codigo string `json:"codigo"`
	Origem string `json:"origem"`
	Motivo string `json:"motivo"`
}

// processSend settles a send by the simulation table and, for 4.00 and
// 5.00, generates the received refunds; each step notifies the payer
// key's webhook.
func (m *Module) processSend(ctx context.Context, accountID, idEnvio string) error {
	return m.st.Tx(ctx, func(tx *store.Tx) error {
		e, err := m.rdTx(tx).envio(accountID, idEnvio)
		if err != nil || e == nil {
			return err
		}
		ne := *e
		now := m.clk.Now()
		var notes []any
		if ne.Status == SendProcessando {
			note := sendNote{EndToEndID: ne.E2E, Valor: ne.Body.Valor, Chave: ne.Body.Chave, Horario: ts(now), Tipo: "SOLICITACAO", GnExtras: gnExtras{IDEnvio: idEnvio}}
			if ne.Cents <= sendConfirmMax {
				ne.Status = SendRealizado
				ne.Body.Horario.Liquidacao = ts(now)
			} else {
				ne.Status = SendNaoRealizado
				ne.Body.Motivo = "Envio rejeitado pelo sandbox (valores de 10.01 a 20.00)"
				note.GnExtras.Erro = &envErro{Codigo: "AM02", Origem: "SANDBOX", Motivo: ne.Body.Motivo}
			}
			ne.Body.Status = ne.Status
			note.Status = ne.Status
			notes = append(notes, note)
		}
		if ne.pendingRefunds() {
			parts := []int64{500}
			if ne.Cents == 400 {
				parts = []int64{200, 200}
			}
			var devs []Devolucao
			for i, c := range parts {
				rtr, err := e2eID(tx, 'D', now)
				if err != nil {
					return err
				}
				did := fmt.Sprintf("D%d%s", i+1, idEnvio)
				if len(did) > 35 {
					did = did[:35]
				}
				devs = append(devs, Devolucao{ID: did, RtrID: rtr, Valor: rules.FormatPixAmount(c), Natureza: "ORIGINAL",
					Horario: HorarioDev{Solicitacao: ts(now), Liquidacao: ts(now)}, Status: RefundDevolvido})
			}
			ne.Body.Devolucoes = append(append([]Devolucao(nil), ne.Body.Devolucoes...), devs...)
			ne.Refunds = true
			notes = append(notes, sendNote{EndToEndID: ne.E2E, Valor: ne.Body.Valor, Chave: ne.Body.Chave, Horario: ts(now), Status: ne.Status,
				Tipo: "DEVOLUCAO", GnExtras: gnExtras{IDEnvio: idEnvio}, Devolucoes: devs})
		}
		if len(notes) == 0 {
			return nil // settled meanwhile
		}
		if err := m.saveEnvio(tx, accountID, &ne); err != nil {
			return err
		}
		for _, n := range notes {
			if err := m.notifyKey(ctx, tx, accountID, ne.Body.Chave, []any{n}); err != nil {
				return err
			}
		}
		return nil
	})
}

func (m *Module) getSendByE2E(ctx context.Context, accountID, e2e string) (*Enviado, *apiError) {
	r := m.rd(ctx)
	id, err := r.envioByE2E(accountID, e2e)
	if err != nil {
		return nil, internal(err)
	}
	if id != "" {
		return m.getSendByID(ctx, accountID, id)
	}
	return nil, problem(http.StatusNotFound, tPixEnviadoNE, "Pix enviado não encontrado.", "Nenhum Pix enviado com o endToEndId "+e2e+".", nil)
}

func (m *Module) getSendByID(ctx context.Context, accountID, id string) (*Enviado, *apiError) {
	e, err := m.rd(ctx).envio(accountID, id)
	if err != nil {
		return nil, internal(err)
	}
	if e != nil {
		b := e.Body
		return &b, nil
	}
	return nil, problem(http.StatusNotFound, tPixEnviadoNE, "Pix enviado não encontrado.", "Nenhum Pix enviado com o idEnvio "+id+".", nil)
}

// EnviadoList is the answer of GET /v2/gn/pix/enviados.
type EnviadoList struct {
	Parametros Parametros `json:"parametros"`
	Pix        []Enviado  `json:"pix"`
}

func (m *Module) listSends(ctx context.Context, accountID string, q url.Values) (*EnviadoList, *apiError) {
	lq, e := parseList(q, false)
	if e != nil {
		return nil, e
	}
	status := q.Get("status")
	lq.params.Status = status
	out := &EnviadoList{Pix: []Enviado{}}
	q2 := store.Query{Kind: storeEnvio, Account: accountID, Where: []store.Cond{
		store.Between(store.ColN, lq.inicio.UnixNano(), lq.fim.UnixNano())}}
	if status != "" {
		q2.Where = append(q2.Where, store.Eq(store.ColS1, status))
	}
	n, err := m.st.Count(ctx, q2)
	if err != nil {
		return nil, internal(err)
	}
	lo, hi := lq.window(n)
	if hi > lo {
		q2.Offset, q2.Limit = lo, hi-lo
		r := m.rd(ctx)
		ids, err := r.ids(q2)
		if err != nil {
			return nil, internal(err)
		}
		for _, id := range ids {
			e, err := r.envio(accountID, id)
			if err != nil {
				return nil, internal(err)
			}
			if e != nil {
				out.Pix = append(out.Pix, e.Body)
			}
		}
	}
	out.Parametros = lq.params
	return out, nil
}
