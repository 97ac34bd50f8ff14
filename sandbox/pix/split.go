package pix

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"regexp"
	"strconv"
	"strings"

	"remessa/rules"
	"remessa/sandbox/store"
)

// SplitConfig is a split configuration (one revision).
type SplitConfig struct {
	ID         string     `json:"id"`
	Txid       string     `json:"txid,omitempty"`
	Status     string     `json:"status"`
	Revisao    int        `json:"revisao"`
	Descricao  string     `json:"descricao,omitempty"`
	Lancamento Lancamento `json:"lancamento"`
	Split      SplitSpec  `json:"split"`
}

// Lancamento says when the split is settled.
type Lancamento struct {
	Imediato bool `json:"imediato"`
}

// SplitSpec is the division of a split configuration.
type SplitSpec struct {
	DivisaoTarifa string         `json:"divisaoTarifa"`
	MinhaParte    SplitParte     `json:"minhaParte"`
	Repasses      []SplitRepasse `json:"repasses"`
}

// SplitParte is the own account's share.
type SplitParte struct {
	Tipo  string `json:"tipo"`
	Valor string `json:"valor"`
}

// SplitRepasse is another account's share.
type SplitRepasse struct {
	Tipo       string          `json:"tipo"`
	Valor      string          `json:"valor"`
	Favorecido SplitFavorecido `json:"favorecido"`
}

// SplitFavorecido identifies the receiving account.
type SplitFavorecido struct {
	CPF   string `json:"cpf,omitempty"`
	CNPJ  string `json:"cnpj,omitempty"`
	Conta string `json:"conta"`
}

// splitDoc is the stored form: every revision, the latest last.
type splitDoc struct {
	ID   string        `json:"id"`
	Revs []SplitConfig `json:"revs"`
}

var (
	reSplitID = regexp.MustCompile(`^[a-zA-Z0-9]{1,35}$`)
	tipoS     = enumStr(rules.PixSplitPercent, rules.PixSplitFixed)
	splitS    = obj(
		opt("descricao", str(0, 80)),
		opt("txid", pat(`^[a-zA-Z0-9]{1,35}$`, "[a-zA-Z0-9]{1,35}")),
		req("lancamento", obj(req("imediato", boolean()))),
		req("split", obj(
			req("divisaoTarifa", enumStr("assumir_total", "proporcional")),
			req("minhaParte", obj(req("tipo", tipoS), req("valor", valorS()))),
			req("repasses", arr(obj(
				req("tipo", tipoS),
				req("valor", valorS()),
				req("favorecido", obj(
					opt("cpf", pat(`^\d{11}$`, "11 dígitos")),
					opt("cnpj", pat(`^[0-9A-Z]{12}\d{2}$`, "14 caracteres")),
					req("conta", pat(`^[0-9]{1,20}$`, "número da conta, só dígitos")),
				)),
			), 1, rules.MaxPixSplitAccounts)),
		)),
	)
)

func splitProblem(detail string, vs []Violacao) *apiError {
	return problem(http.StatusBadRequest, tSplitConfig, "Configuração de split inválida.", detail, vs)
}

// pointerToPath turns "/split/repasses/1/valor" into "split.repasses[1].valor".
func pointerToPath(p string) string {
	var b strings.Builder
	for _, seg := range strings.Split(strings.TrimPrefix(p, "/"), "/") {
		if seg == "" {
			continue
		}
		if _, err := strconv.Atoi(seg); err == nil {
			b.WriteString("[" + seg + "]")
			continue
		}
		if b.Len() > 0 {
			b.WriteByte('.')
		}
		b.WriteString(seg)
	}
	return b.String()
}

// checkSplit validates a split configuration body.
func (m *Module) checkSplit(ai accountInfo, body []byte) (*SplitConfig, *apiError) {
	v, err := decodeAny(body)
	if err != nil {
		return nil, splitProblem("JSON inválido.", []Violacao{{Razao: "JSON inválido: " + err.Error()}})
	}
	var vs []Violacao
	splitS.check("", v, &vs)
	if len(vs) > 0 {
		return nil, splitProblem("A configuração de split não respeita o schema.", vs)
	}
	var c SplitConfig
	if err := remarshal(v, &c); err != nil {
		return nil, splitProblem("Corpo inválido.", []Violacao{{Razao: err.Error()}})
	}
	ps := rules.PixSplit{DivisaoTarifa: c.Split.DivisaoTarifa}
	mp, _ := rules.ParseDecimal(c.Split.MinhaParte.Valor, 2)
	ps.MinhaParte = rules.PixSplitPart{Tipo: c.Split.MinhaParte.Tipo, Valor: mp}
	for i, r := range c.Split.Repasses {
		n, _ := rules.ParseDecimal(r.Valor, 2)
		ps.Repasses = append(ps.Repasses, rules.PixSplitPart{Tipo: r.Tipo, Valor: n, CPF: r.Favorecido.CPF, CNPJ: r.Favorecido.CNPJ, Conta: r.Favorecido.Conta})
		if m.auth != nil && r.Favorecido.Conta != ai.Conta {
			if _, ok := m.auth.AccountByConta(r.Favorecido.Conta); !ok {
				vs = append(vs, Violacao{Razao: "conta não encontrada: o split só funciona entre contas do sandbox", Propriedade: fmt.Sprintf("split.repasses[%d].favorecido.conta", i), Valor: r.Favorecido.Conta})
			}
		}
	}
	for _, x := range rules.CheckPixSplit(ps, ai.Conta) {
		vs = append(vs, Violacao{Razao: x.Message, Propriedade: pointerToPath(x.Pointer)})
	}
	if len(vs) > 0 {
		return nil, splitProblem("A configuração de split viola as regras de split.", vs)
	}
	c.Status = SplitConfigAtiva
	return &c, nil
}

// saveSplit creates config id or adds a revision when the body changed.
func (m *Module) saveSplit(ctx context.Context, ai accountInfo, id string, body []byte) (*SplitConfig, *apiError) {
	c, e := m.checkSplit(ai, body)
	if e != nil {
		return nil, e
	}
	c.ID = id
	out := c
	e = m.write(ctx, func(tx *store.Tx, r reader) *apiError {
		doc, err := r.split(ai.ID, id)
		if err != nil {
			return storeErr(err)
		}
		nd := &splitDoc{ID: id}
		if doc != nil {
			nd.Revs = append(nd.Revs, doc.Revs...)
			last := doc.Revs[len(doc.Revs)-1]
			c.Revisao = last.Revisao
			if sameSplit(last, *c) {
				out = &last
				return nil
			}
			c.Revisao = last.Revisao + 1
		}
		nd.Revs = append(nd.Revs, *c)
		if err := m.splits.Put(tx, ai.ID, id, nd); err != nil {
			return storeErr(err)
		}
		return nil
	})
	if e != nil {
		return nil, e
	}
	return out, nil
}

func sameSplit(a, b SplitConfig) bool {
	a.Revisao, b.Revisao = 0, 0
	x, _ := json.Marshal(a)
	y, _ := json.Marshal(b)
	return string(x) == string(y)
}

func (m *Module) getSplit(ctx context.Context, accountID, id, revisao string) (*SplitConfig, *apiError) {
	nf := problem(http.StatusNotFound, tSplitConfigNE, "Configuração de split não encontrada.", "Configuração de split "+id+" não encontrada.", nil)
	doc, err := m.rd(ctx).split(accountID, id)
	if err != nil {
		return nil, internal(err)
	}
	if doc == nil {
		return nil, nf
	}
	revs := doc.Revs
	if revisao == "" {
		c := revs[len(revs)-1]
		return &c, nil
	}
	n, err := strconv.Atoi(revisao)
	if err != nil || n < 0 {
		return nil, problem(http.StatusBadRequest, tRequisicao, titleRequisicao, "Parâmetro revisao inválido.", []Violacao{{Razao: "deve ser um inteiro maior ou igual a 0", Propriedade: "revisao", Valor: revisao}})
	}
	for _, c := range revs {
		if c.Revisao == n {
			return &c, nil
		}
	}
	nf.p.Detail = fmt.Sprintf("Configuração de split %s não tem a revisão %d.", id, n)
	return nil, nf
}

// SplitRef names the configuration linked to a charge.
type SplitRef struct {
	ID        string `json:"id"`
	Status    string `json:"status"`
	Descricao string `json:"descricao,omitempty"`
}

// CobSplit is a charge with its split configuration.
type CobSplit struct {
	Cob
	Config SplitRef `json:"config"`
}

// linkSplit handles PUT /v2/gn/split/cob[v]/{txid}/vinculo/{splitConfigId}.
func (m *Module) linkSplit(ctx context.Context, accountID, kind, txid, cfgID string) *apiError {
	return m.write(ctx, func(tx *store.Tx, r reader) *apiError {
		c, err := r.charge(accountID, txid)
		if err != nil {
			return storeErr(err)
		}
		if c == nil || c.Kind != kind {
			return notFound("Cobrança " + txid + " não encontrada.")
		}
		doc, err := r.split(accountID, cfgID)
		if err != nil {
			return storeErr(err)
		}
		if doc == nil {
			return problem(http.StatusNotFound, tSplitConfigNE, "Configuração de split não encontrada.", "Configuração de split "+cfgID+" não encontrada.", nil)
		}
		if c.Body.Status != StatusAtiva {
			return problem(http.StatusBadRequest, tSplitOp, "Operação de split inválida.", "Só uma cobrança ATIVA pode ser vinculada a um split.",
				[]Violacao{{Razao: "cobrança com status " + c.Body.Status, Propriedade: "txid", Valor: txid}})
		}
		last := doc.Revs[len(doc.Revs)-1]
		if last.Split.MinhaParte.Tipo == rules.PixSplitFixed {
			total, _ := rules.ParseDecimal(last.Split.MinhaParte.Valor, 2)
			for _, r := range last.Split.Repasses {
				n, _ := rules.ParseDecimal(r.Valor, 2)
				total += n
			}
			if total != c.Cents {
				return problem(http.StatusBadRequest, tSplitOp, "Operação de split inválida.", "Os valores fixos do split não somam o valor da cobrança.",
					[]Violacao{{Razao: fmt.Sprintf("split fixo soma %s e a cobrança vale %s", rules.FormatPixAmount(total), c.Body.Valor.Original), Propriedade: "split", Valor: rules.FormatPixAmount(total)}})
			}
		}
		nc := *c
		nc.SplitID, nc.SplitRev = cfgID, last.Revisao
		if err := m.saveCharge(tx, accountID, &nc); err != nil {
			return storeErr(err)
		}
		return nil
	})
}

// unlinkSplit handles DELETE /v2/gn/split/cob[v]/{txid}/vinculo.
func (m *Module) unlinkSplit(ctx context.Context, accountID, kind, txid string) *apiError {
	return m.write(ctx, func(tx *store.Tx, r reader) *apiError {
		c, err := r.charge(accountID, txid)
		if err != nil {
			return storeErr(err)
		}
		if c == nil || c.Kind != kind {
			return notFound("Cobrança " + txid + " não encontrada.")
		}
		if c.SplitID == "" {
			return problem(http.StatusNotFound, tCobSplitNE, "Cobrança sem split.", "A cobrança "+txid+" não está vinculada a um split.", nil)
		}
		nc := *c
		nc.SplitID, nc.SplitRev = "", 0
		if err := m.saveCharge(tx, accountID, &nc); err != nil {
			return storeErr(err)
		}
		return nil
	})
}

// getCobSplit handles GET /v2/gn/split/cob[v]/{txid}.
func (m *Module) getCobSplit(ctx context.Context, accountID, kind, txid string) (*CobSplit, *apiError) {
	r := m.rd(ctx)
	c, err := r.charge(accountID, txid)
	if err != nil {
		return nil, internal(err)
	}
	if c == nil || c.Kind != kind {
		return nil, notFound("Cobrança " + txid + " não encontrada.")
	}
	var doc *splitDoc
	if c.SplitID != "" {
		if doc, err = r.split(accountID, c.SplitID); err != nil {
			return nil, internal(err)
		}
	}
	if doc == nil {
		return nil, problem(http.StatusNotFound, tCobSplitNE, "Cobrança sem split.", "A cobrança "+txid+" não está vinculada a um split.", nil)
	}
	revs := doc.Revs
	cfg := revs[len(revs)-1]
	for _, r := range revs {
		if r.Revisao == c.SplitRev {
			cfg = r
		}
	}
	v, err := m.view(r, accountID, c)
	if err != nil {
		return nil, internal(err)
	}
	return &CobSplit{Cob: v, Config: SplitRef{ID: cfg.ID, Status: cfg.Status, Descricao: cfg.Descricao}}, nil
}
