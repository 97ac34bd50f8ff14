package pix

import (
	"context"
	"net/http"
	"net/url"
	"strconv"
	"time"

	"remessa/rules"
	"remessa/sandbox/store"
)

// Paginacao is the pagination object of Pix lists.
type Paginacao struct {
	PaginaAtual            int `json:"paginaAtual"`
	ItensPorPagina         int `json:"itensPorPagina"`
	QuantidadeDePaginas    int `json:"quantidadeDePaginas"`
	QuantidadeTotalDeItens int `json:"quantidadeTotalDeItens"`
}

// Parametros echoes the query of a list.
type Parametros struct {
	Inicio           string    `json:"inicio"`
	Fim              string    `json:"fim"`
	CPF              string    `json:"cpf,omitempty"`
	CNPJ             string    `json:"cnpj,omitempty"`
	Status           string    `json:"status,omitempty"`
	LocationPresente *bool     `json:"locationPresente,omitempty"`
	LoteCobVID       *int64    `json:"loteCobVId,omitempty"`
	Txid             string    `json:"txid,omitempty"`
	Paginacao        Paginacao `json:"paginacao"`
}

// listQuery is a parsed list query.
type listQuery struct {
	inicio, fim time.Time
	page, size  int
	params      Parametros
}

// parseList reads inicio, fim (RFC 3339, required) and the pagination
// parameters. efi selects the error dialect (cob routes).
func parseList(q url.Values, efi bool) (*listQuery, *apiError) {
	bad := func(prop, razao, val string) *apiError {
		if efi {
			return efiErr(http.StatusBadRequest, "valor_invalido", "Parâmetro "+prop+": "+razao)
		}
		return problem(http.StatusBadRequest, tRequisicao, titleRequisicao, "Parâmetro "+prop+" inválido.", []Violacao{{Razao: razao, Propriedade: prop, Valor: val}})
	}
	lq := &listQuery{size: rules.DefaultPageSize}
	var err error
	for _, f := range []struct {
		name string
		dst  *time.Time
	}{{"inicio", &lq.inicio}, {"fim", &lq.fim}} {
		s := q.Get(f.name)
		if s == "" {
			return nil, bad(f.name, "parâmetro obrigatório ausente (data e hora RFC 3339, ex.: 2026-01-01T00:00:00Z)", "")
		}
		if *f.dst, err = time.Parse(time.RFC3339, s); err != nil {
			return nil, bad(f.name, "data e hora RFC 3339 inválida (ex.: 2026-01-01T00:00:00Z)", s)
		}
	}
	if lq.fim.Before(lq.inicio) {
		return nil, bad("fim", "Campo de data fim deve ser maior ou igual ao campo de data inicio", q.Get("fim"))
	}
	if s := q.Get("paginacao.paginaAtual"); s != "" {
		n, err := strconv.Atoi(s)
		if err != nil || n < 0 {
			return nil, bad("paginacao.paginaAtual", "deve ser um inteiro maior ou igual a 0", s)
		}
		lq.page = n
	}
	if s := q.Get("paginacao.itensPorPagina"); s != "" {
		n, err := strconv.Atoi(s)
		if err != nil || n < 1 || n > rules.MaxPageSize {
			return nil, bad("paginacao.itensPorPagina", "deve ser um inteiro de 1 a 1000", s)
		}
		lq.size = n
	}
	lq.params = Parametros{Inicio: ts(lq.inicio), Fim: ts(lq.fim)}
	return lq, nil
}

// window returns the [lo, hi) slice bounds of the requested page of n
// items and fills params.paginacao.
func (lq *listQuery) window(n int) (int, int) {
	pages := (n + lq.size - 1) / lq.size
	lq.params.Paginacao = Paginacao{PaginaAtual: lq.page, ItensPorPagina: lq.size, QuantidadeDePaginas: pages, QuantidadeTotalDeItens: n}
	lo := n // a page past the end is empty; page*size could overflow
	if lq.page <= n/lq.size {
		lo = lq.page * lq.size
	}
	hi := lo + lq.size
	if hi > n {
		hi = n
	}
	return lo, hi
}

// CobList is the answer of GET /v2/cob and GET /v2/cobv.
type CobList struct {
	Parametros Parametros `json:"parametros"`
	Cobs       []Cob      `json:"cobs"`
}

// listCharges handles GET /v2/cob and /v2/cobv with the filters cpf, cnpj,
// status, locationPresente and (cobv) loteCobVId.
func (m *Module) listCharges(ctx context.Context, accountID, kind string, q url.Values) (*CobList, *apiError) {
	efi := kind == kindCob
	lq, e := parseList(q, efi)
	if e != nil {
		return nil, e
	}
	bad := func(prop, razao, val string) *apiError {
		if efi {
			return efiErr(http.StatusBadRequest, "valor_invalido", "Parâmetro "+prop+": "+razao)
		}
		return problem(http.StatusBadRequest, tRequisicao, titleRequisicao, "Parâmetro "+prop+" inválido.", []Violacao{{Razao: razao, Propriedade: prop, Valor: val}})
	}
	cpf, cnpj, status := q.Get("cpf"), q.Get("cnpj"), q.Get("status")
	if cpf != "" && cnpj != "" {
		return nil, bad("cpf", "informe cpf ou cnpj, não ambos", cpf)
	}
	switch status {
	case "", StatusAtiva, StatusConcluida, StatusRemovidaUser, StatusRemovidaPSP:
	default:
		return nil, bad("status", "use ATIVA, CONCLUIDA, REMOVIDA_PELO_USUARIO_RECEBEDOR ou REMOVIDA_PELO_PSP", status)
	}
	var locPres *bool
	if s := q.Get("locationPresente"); s != "" {
		b, err := strconv.ParseBool(s)
		if err != nil {
			return nil, bad("locationPresente", "use true ou false", s)
		}
		locPres = &b
	}
	lote := q.Get("loteCobVId")
	if lote == "" {
		lote = q.Get("loteCobvId")
	}
	var loteID *int64
	if lote != "" {
		if kind != kindCobV {
			return nil, bad("loteCobVId", "filtro só existe para cobranças com vencimento", lote)
		}
		n, err := strconv.ParseInt(lote, 10, 64)
		if err != nil || n < 0 {
			return nil, bad("loteCobVId", "deve ser um inteiro", lote)
		}
		loteID = &n
	}
	lq.params.CPF, lq.params.CNPJ, lq.params.Status, lq.params.LocationPresente, lq.params.LoteCobVID = cpf, cnpj, status, locPres, loteID

	out := &CobList{Cobs: []Cob{}}
	if locPres != nil && !*locPres { // every charge here has a location
		lq.window(0)
		out.Parametros = lq.params
		return out, nil
	}
	// Only ids are read (Keys). A batch's charges are all cobv (a cob has
	// no batch id: I1 0), so with loteCobVId > 0 the kind is not checked
	// and doc_i1 (i1, n, id) serves the count and the page alone.
	q2 := store.Query{Kind: storeCharge, Account: accountID, Keys: true, Where: []store.Cond{
		store.Between(store.ColN, lq.inicio.UnixNano(), lq.fim.UnixNano())}}
	if loteID == nil || *loteID <= 0 {
		q2.Where = append(q2.Where, store.Eq(store.ColS1, kind))
	}
	if status != "" {
		q2.Where = append(q2.Where, store.Eq(store.ColS2, status))
	}
	if cpf != "" {
		q2.Where = append(q2.Where, store.Eq(store.ColS3, cpf))
	}
	if cnpj != "" {
		q2.Where = append(q2.Where, store.Eq(store.ColS4, cnpj))
	}
	if loteID != nil {
		q2.Where = append(q2.Where, store.Eq(store.ColI1, *loteID))
	}
	n, err := m.st.Count(ctx, q2)
	if err != nil {
		return nil, internal(err)
	}
	lo, hi := lq.window(n)
	q2.Offset, q2.Limit = lo, hi-lo
	if hi <= lo {
		out.Parametros = lq.params
		return out, nil
	}
	r := m.rd(ctx)
	ids, err := r.ids(q2)
	if err != nil {
		return nil, internal(err)
	}
	docs, err := m.charges.GetMany(ctx, accountID, ids)
	if err != nil {
		return nil, internal(err)
	}
	out.Cobs = make([]Cob, 0, len(ids))
	for _, txid := range ids {
		c := docs[txid]
		if c == nil {
			continue
		}
		v, err := m.view(r, accountID, c)
		if err != nil {
			return nil, internal(err)
		}
		out.Cobs = append(out.Cobs, v)
	}
	out.Parametros = lq.params
	return out, nil
}
