package pix

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"remessa/rules"
	"remessa/sandbox/store"
)

// seqID formats a durable counter as the 11 alphanumerics that end an
// endToEndId or rtrId.
func seqID(tag string, n int64) string {
	s := strings.ToUpper(strconv.FormatInt(n, 36))
	if len(s) > 8 {
		s = s[len(s)-8:]
	}
	return tag + strings.Repeat("0", 8-len(s)) + s
}

// e2eID returns a new endToEndId ('E') or rtrId ('D') with Efí's ISPB.
func e2eID(tx *store.Tx, prefix byte, now time.Time) (string, error) {
	n, err := tx.NextSeq("pix.e2e")
	if err != nil {
		return "", err
	}
	return rules.NewEndToEndID(prefix, rules.EfiISPB, now, seqID("SBX", n)), nil
}

// webhookTarget is where deliveries for a webhook go: webhookUrl + "/pix"
// unless the URL carries the ignorar query parameter.
func webhookTarget(u string) string {
	pu, err := url.Parse(u)
	if err == nil && pu.Query().Has("ignorar") {
		return u
	}
	if err == nil {
		pu.Path = strings.TrimRight(pu.Path, "/") + "/pix"
		return pu.String()
	}
	return strings.TrimRight(u, "/") + "/pix"
}

// notifyKey queues {"pix":[items]} to the webhook of chave, if any, inside
// tx.
func (m *Module) notifyKey(ctx context.Context, tx *store.Tx, account, chave string, items []any) error {
	if m.notify == nil {
		return nil
	}
	h, err := m.rdTx(tx).hookFor(account, chave)
	if err != nil || h == nil {
		return err
	}
	body, err := json.Marshal(map[string]any{"pix": items})
	if err != nil {
		return err
	}
	return m.notify.Enqueue(ctx, tx, webhookTarget(h.URL), body, "application/json")
}

// Errors of Pay.
var (
	ErrChargeNotFound = errors.New("pix: cobrança não encontrada")
	ErrNotPayable     = errors.New("pix: cobrança não pode ser paga")
)

// PayResult is the answer of POST /sandbox/pix/pay: Valor is what came
// in (the received Pix), Devido what the payer owed today (valor final:
// Original − Abatimento − Desconto + Multa + Juros, rules.CobvAmountDue;
// equal to Valor when no valor was given), DiasAtraso the days juros
// counted.
type PayResult struct {
	EndToEndID string `json:"endToEndId"`
	Txid       string `json:"txid"`
	Valor      string `json:"valor"`
	Horario    string `json:"horario"`
	Devido     string `json:"devido,omitempty"`
	Original   string `json:"original,omitempty"`
	Abatimento string `json:"abatimento,omitempty"`
	Desconto   string `json:"desconto,omitempty"`
	Multa      string `json:"multa,omitempty"`
	Juros      string `json:"juros,omitempty"`
	DiasAtraso int    `json:"diasAtraso,omitempty"`
}

// Pay simulates the payment of a cob or cobv of account, found by txid or
// by its BR Code (pixCopiaECola): it creates the received Pix, sets the
// charge CONCLUIDA and queues the webhook of the charge's key. cents 0
// pays the amount due: valor.original for a cob; for a cobv,
// rules.CobvAmountDue (abatimento, desconto, multa and juros) on the
// sandbox clock's São Paulo date (see owed). A cobv past due +
// validadeAposVencimento is refused whatever the value. It returns the
// new endToEndId. account "" searches
// every account (the txid must then be unambiguous).
func (m *Module) Pay(ctx context.Context, account, txidOrBRCode string, cents int64) (string, error) {
	r, err := m.pay(ctx, account, txidOrBRCode, cents)
	if err != nil {
		return "", err
	}
	return r.EndToEndID, nil
}

func (m *Module) pay(ctx context.Context, account, ref string, cents int64) (*PayResult, error) {
	ref = strings.TrimSpace(ref)
	if cents < 0 {
		return nil, fmt.Errorf("%w: valor negativo", ErrNotPayable)
	}
	byLoc := ""
	if strings.HasPrefix(ref, "000201") {
		bc, err := rules.ParseBRCode(ref)
		if err != nil {
			return nil, fmt.Errorf("%w: BR Code inválido: %v", ErrChargeNotFound, err)
		}
		if !bc.Dynamic || bc.URL == "" {
			return nil, fmt.Errorf("%w: o BR Code não é de uma cobrança (sem URL de payload)", ErrChargeNotFound)
		}
		byLoc = bc.URL
	}
	var accID string
	var rec *received
	var due rules.CobvCharge
	var c *charge
	err := m.st.Tx(ctx, func(tx *store.Tx) error {
		r := m.rdTx(tx)
		if byLoc != "" {
			acc, txid, err := r.chargeByLoc(byLoc)
			if err != nil {
				return err
			}
			if txid != "" && (account == "" || acc == account) {
				if c, err = r.charge(acc, txid); err != nil {
					return err
				}
				accID = acc
			}
		} else {
			ids := []string{account}
			if account == "" {
				ids = m.accountIDs()
			}
			for _, id := range ids {
				x, err := r.charge(id, ref)
				if err != nil {
					return err
				}
				if x != nil {
					if c != nil {
						return fmt.Errorf("%w: txid %s existe em mais de uma conta; informe a conta", ErrChargeNotFound, short(ref))
					}
					c, accID = x, id
				}
			}
		}
		if c == nil {
			return fmt.Errorf("%w: %q", ErrChargeNotFound, short(ref))
		}
		if c.Body.Status != StatusAtiva {
			return fmt.Errorf("%w: cobrança %s com status %s", ErrNotPayable, c.Body.Txid, c.Body.Status)
		}
		now := m.clk.Now()
		switch c.Kind {
		case kindCob:
			exp := defaultExpiracao
			if c.Body.Calendario.Expiracao != nil {
				exp = *c.Body.Calendario.Expiracao
			}
			if now.After(c.Created.Add(time.Duration(exp) * time.Second)) {
				return fmt.Errorf("%w: cobrança %s expirada", ErrNotPayable, c.Body.Txid)
			}
		}
		// What the payer owes today (a cobv: rules.CobvAmountDue); a cobv past
		// its validity is refused whatever the value.
		var err error
		if due, err = owed(c, rules.Today(now)); err != nil {
			return err
		}
		if cents == 0 {
			if cents = due.Final; cents <= 0 {
				return fmt.Errorf("%w: cobrança %s: nada a pagar hoje (valor final %s)", ErrNotPayable, c.Body.Txid, rules.FormatPixAmount(due.Final))
			}
		}
		e2e, err := e2eID(tx, 'E', now)
		if err != nil {
			return err
		}
		rec = &received{Cents: cents, Time: now, Kind: c.Kind, Body: Recebido{
			EndToEndID: e2e, Txid: c.Body.Txid, Valor: rules.FormatPixAmount(cents), Chave: c.Body.Chave,
			Horario: ts(now), InfoPagador: "Pagamento simulado no sandbox",
		}}
		nc := *c
		nc.Body.Status = StatusConcluida
		nc.Paid = append(append([]string(nil), c.Paid...), e2e)
		if err := m.savePix(tx, accID, rec); err != nil {
			return err
		}
		if err := m.saveCharge(tx, accID, &nc); err != nil {
			return err
		}
		return m.notifyKey(ctx, tx, accID, c.Body.Chave, []any{rec.Body})
	})
	if err != nil {
		return nil, err
	}
	res := &PayResult{EndToEndID: rec.Body.EndToEndID, Txid: c.Body.Txid, Valor: rec.Body.Valor, Horario: rec.Body.Horario,
		Devido: rules.FormatPixAmount(due.Final), Original: rules.FormatPixAmount(due.Original), DiasAtraso: due.DaysLate}
	for _, p := range []struct {
		dst   *string
		cents int64
	}{{&res.Abatimento, due.Abatimento}, {&res.Desconto, due.Desconto}, {&res.Multa, due.Multa}, {&res.Juros, due.Juros}} {
		if p.cents > 0 {
			*p.dst = rules.FormatPixAmount(p.cents)
		}
	}
	return res, nil
}

// getPix handles GET /v2/pix/{e2eId}.
func (m *Module) getPix(ctx context.Context, accountID, e2e string) (*Recebido, *apiError) {
	p, err := m.rd(ctx).pix(accountID, e2e)
	if err != nil {
		return nil, internal(err)
	}
	if p == nil {
		return nil, notFound("Pix " + e2e + " não encontrado.")
	}
	b := p.Body
	return &b, nil
}

// PixList is the answer of GET /v2/pix.
type PixList struct {
	Parametros Parametros `json:"parametros"`
	Pix        []Recebido `json:"pix"`
}

// listPix handles GET /v2/pix (inicio, fim; filters txid, txIdPresente,
// devolucaoPresente, cpf/cnpj of the charge's devedor).
func (m *Module) listPix(ctx context.Context, accountID string, q url.Values) (*PixList, *apiError) {
	lq, e := parseList(q, false)
	if e != nil {
		return nil, e
	}
	txid := q.Get("txid")
	var txPres, devPres *bool
	for _, f := range []struct {
		name string
		dst  **bool
	}{{"txIdPresente", &txPres}, {"devolucaoPresente", &devPres}} {
		if s := q.Get(f.name); s != "" {
			b, err := strconv.ParseBool(s)
			if err != nil {
				return nil, problem(http.StatusBadRequest, tRequisicao, titleRequisicao, "Parâmetro "+f.name+" inválido.", []Violacao{{Razao: "use true ou false", Propriedade: f.name, Valor: s}})
			}
			*f.dst = &b
		}
	}
	cpf, cnpj := q.Get("cpf"), q.Get("cnpj")
	lq.params.Txid, lq.params.CPF, lq.params.CNPJ = txid, cpf, cnpj
	out := &PixList{Pix: []Recebido{}}
	q2 := store.Query{Kind: storePix, Account: accountID, Where: []store.Cond{
		store.Between(store.ColN, lq.inicio.UnixNano(), lq.fim.UnixNano())}}
	if txid != "" {
		q2.Where = append(q2.Where, store.Eq(store.ColS1, txid))
	}
	if devPres != nil {
		q2.Where = append(q2.Where, store.Eq(store.ColI1, map[bool]int64{false: 0, true: 1}[*devPres]))
	}
	r := m.rd(ctx)
	var ids []string
	err := r.find(q2, func(id string, ix store.Index) error {
		if txPres != nil && (ix.S1 != "") != *txPres {
			return nil
		}
		ids = append(ids, id)
		return nil
	})
	if err != nil {
		return nil, internal(err)
	}
	var sel []*received
	for _, id := range ids {
		p, err := r.pix(accountID, id)
		if err != nil {
			return nil, internal(err)
		}
		if p == nil {
			continue
		}
		if cpf != "" || cnpj != "" {
			c, err := r.charge(accountID, p.Body.Txid)
			if err != nil {
				return nil, internal(err)
			}
			if c == nil || c.Body.Devedor == nil || (cpf != "" && c.Body.Devedor.CPF != cpf) || (cnpj != "" && c.Body.Devedor.CNPJ != cnpj) {
				continue
			}
		}
		sel = append(sel, p)
	}
	lo, hi := lq.window(len(sel))
	for _, p := range sel[lo:hi] {
		out.Pix = append(out.Pix, p.Body)
	}
	out.Parametros = lq.params
	return out, nil
}

var devolucaoS = obj(req("valor", valorS()), opt("natureza", enumStr("ORIGINAL", "RETIRADA")), opt("descricao", str(0, 140)))

func devProblem(status int, detail string, vs []Violacao) *apiError {
	return problem(status, tDevInvalida, "Devolução inválida.", detail, vs)
}

// putRefund handles PUT /v2/pix/{e2eId}/devolucao/{id}: 201 with the
// refund EM_PROCESSAMENTO; the worker settles it (DEVOLVIDO, or
// NAO_REALIZADO for 0.01) and notifies the key's webhook.
func (m *Module) putRefund(ctx context.Context, accountID, e2e, id string, body []byte) (*Devolucao, *apiError) {
	if !rules.ValidDevolucaoID(id) {
		return nil, devProblem(http.StatusBadRequest, "id da devolução inválido.", []Violacao{{Razao: "deve ter de 1 a 35 caracteres alfanuméricos", Propriedade: "id", Valor: id}})
	}
	v, err := decodeAny(body)
	if err != nil {
		return nil, devProblem(http.StatusBadRequest, "JSON inválido.", []Violacao{{Razao: "JSON inválido: " + err.Error()}})
	}
	var vs []Violacao
	devolucaoS.check("", v, &vs)
	if len(vs) > 0 {
		return nil, devProblem(http.StatusBadRequest, "A requisição de devolução não respeita o schema.", vs)
	}
	var in struct {
		Valor, Natureza, Descricao string
	}
	_ = remarshal(v, &in)
	cents, err := rules.ParsePixAmount(in.Valor)
	if err != nil || cents <= 0 {
		return nil, devProblem(http.StatusBadRequest, "Valor da devolução inválido.", []Violacao{{Razao: "deve ser maior que zero", Propriedade: "valor", Valor: in.Valor}})
	}
	if in.Natureza == "" {
		in.Natureza = "ORIGINAL"
	}
	var d Devolucao
	ae := m.write(ctx, func(tx *store.Tx, r reader) *apiError {
		p, err := r.pix(accountID, e2e)
		if err != nil {
			return storeErr(err)
		}
		if p == nil {
			return notFound("Pix " + e2e + " não encontrado.")
		}
		var used int64
		for _, d := range p.Body.Devolucoes {
			if d.ID == id {
				e := devProblem(http.StatusConflict, "Já existe uma devolução com o id "+id+" para este Pix.", []Violacao{{Razao: "id de devolução já utilizado", Propriedade: "id", Valor: id}})
				e.p.Nome, e.p.Mensagem = "devolucao_id_duplicado", "Já existe uma devolução com o id "+quote(id)+" para o Pix "+e2e
				return e
			}
			if d.Status != RefundNaoRealizado {
				n, _ := rules.ParsePixAmount(d.Valor)
				used += n
			}
		}
		if used+cents > p.Cents {
			e := devProblem(http.StatusBadRequest, "A soma das devoluções excede o valor do Pix.", []Violacao{{
				Razao:       fmt.Sprintf("valor excede o saldo disponível para devolução (%s de %s)", rules.FormatPixAmount(p.Cents-used), p.Body.Valor),
				Propriedade: "valor", Valor: in.Valor}})
			e.p.Nome, e.p.Mensagem = "saldo_devolucao_insuficiente", "Valor da devolução excede o saldo disponível do Pix"
			return e
		}
		now := m.clk.Now()
		np := *p
		rtr, err := e2eID(tx, 'D', now)
		if err != nil {
			return storeErr(err)
		}
		d = Devolucao{ID: id, RtrID: rtr, Valor: rules.FormatPixAmount(cents), Natureza: in.Natureza, Descricao: in.Descricao,
			Horario: HorarioDev{Solicitacao: ts(now)}, Status: RefundProcessando}
		np.Body.Devolucoes = append(append([]Devolucao(nil), p.Body.Devolucoes...), d)
		if err := m.savePix(tx, accountID, &np); err != nil {
			return storeErr(err)
		}
		return nil
	})
	if ae != nil {
		return nil, ae
	}
	m.enqueue(task{kind: taskRefund, account: accountID, id: e2e, sub: id})
	return &d, nil
}

// getRefund handles GET /v2/pix/{e2eId}/devolucao/{id}.
func (m *Module) getRefund(ctx context.Context, accountID, e2e, id string) (*Devolucao, *apiError) {
	p, err := m.rd(ctx).pix(accountID, e2e)
	if err != nil {
		return nil, internal(err)
	}
	if p == nil {
		return nil, notFound("Pix " + e2e + " não encontrado.")
	}
	for _, d := range p.Body.Devolucoes {
		if d.ID == id {
			return &d, nil
		}
	}
	return nil, notFound("Devolução " + id + " não encontrada.")
}

// processRefund settles a refund: 0.01 is refused (NAO_REALIZADO, the
// sandbox rule), anything else is DEVOLVIDO; the key's webhook is told.
func (m *Module) processRefund(ctx context.Context, accountID, e2e, id string) error {
	return m.st.Tx(ctx, func(tx *store.Tx) error {
		p, err := m.rdTx(tx).pix(accountID, e2e)
		if err != nil || p == nil {
			return err
		}
		np := *p
		np.Body.Devolucoes = append([]Devolucao(nil), p.Body.Devolucoes...)
		idx := -1
		for i, d := range np.Body.Devolucoes {
			if d.ID == id && d.Status == RefundProcessando {
				idx = i
			}
		}
		if idx < 0 {
			return nil
		}
		now := m.clk.Now()
		d := &np.Body.Devolucoes[idx]
		if d.Valor == "0.01" {
			d.Status, d.Motivo = RefundNaoRealizado, "Devolução de 0.01 rejeitada pelo sandbox"
		} else {
			d.Status, d.Horario.Liquidacao = RefundDevolvido, ts(now)
		}
		note := np.Body
		note.Devolucoes = []Devolucao{*d}
		if err := m.savePix(tx, accountID, &np); err != nil {
			return err
		}
		return m.notifyKey(ctx, tx, accountID, p.Body.Chave, []any{note})
	})
}
