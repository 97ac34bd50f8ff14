package charges

import (
	"net/http"
	"strconv"
	"strings"
	"time"

	"remessa/rules"
	"remessa/sandbox/auth"
	"remessa/sandbox/httpx"
	"remessa/sandbox/store"
)

type listCustomer struct {
	Name          string `json:"name,omitempty"`
	CPF           string `json:"cpf,omitempty"`
	CorporateName string `json:"corporate_name,omitempty"`
	CNPJ          string `json:"cnpj,omitempty"`
	PhoneNumber   string `json:"phone_number,omitempty"`
	Email         string `json:"email,omitempty"`
}

type listBillet struct {
	Barcode        string    `json:"barcode"`
	ExpireAt       string    `json:"expire_at"`
	Link           string    `json:"link"`
	PDF            pdfCharge `json:"pdf"`
	Configurations configOut `json:"configurations"`
}

type listCarnet struct {
	CarnetID       int64     `json:"carnet_id"`
	Parcel         int       `json:"parcel"`
	Barcode        string    `json:"barcode"`
	ExpireAt       string    `json:"expire_at"`
	Link           string    `json:"link"`
	Configurations configOut `json:"configurations"`
}

type listCard struct {
	Installments     int    `json:"installments"`
	InstallmentValue int64  `json:"installment_value"`
	Mask             string `json:"mask"`
}

type listPayment struct {
	PaymentMethod    string      `json:"payment_method"`
	PaidAt           string      `json:"paid_at,omitempty"`
	ReceivedByBankAt string      `json:"received_by_bank_at,omitempty"`
	PaidValue        int64       `json:"paid_value,omitempty"`
	BankingBillet    *listBillet `json:"banking_billet,omitempty"`
	CreditCard       *listCard   `json:"credit_card,omitempty"`
	Carnet           *listCarnet `json:"carnet,omitempty"`
}

type listLink struct {
	PaymentURL    string `json:"payment_url"`
	PaymentMethod string `json:"payment_method"`
	ExpireAt      string `json:"expire_at"`
}

type listItem struct {
	ID        int64         `json:"id"`
	Total     int64         `json:"total"`
	Status    string        `json:"status"`
	CustomID  *string       `json:"custom_id"`
	CreatedAt string        `json:"created_at"`
	Customer  *listCustomer `json:"customer,omitempty"`
	Payment   *listPayment  `json:"payment,omitempty"`
	Link      *listLink     `json:"link,omitempty"`
}

type listPagination struct {
	Limit  int `json:"limit"`
	Offset int `json:"offset"`
	Page   int `json:"page"`
	Total  int `json:"total"`
}

type listParams struct {
	BeginDate  string         `json:"begin_date"`
	EndDate    string         `json:"end_date"`
	Pagination listPagination `json:"pagination"`
}

type listBody struct {
	Code   int        `json:"code"`
	Data   []listItem `json:"data"`
	Params listParams `json:"params"`
}

var listStatuses = map[string]bool{StatusNew: true, StatusWaiting: true, StatusLink: true, StatusPaid: true,
	StatusUnpaid: true, StatusCanceled: true, StatusIdentified: true, StatusSettled: true, StatusExpired: true,
	StatusApproved: true, StatusRefunded: true, StatusContested: true}

// listFilter is a parsed GET /v1/charges query.
type listFilter struct {
	chargeType, status, dateOf, document, customID string
	begin, end                                     time.Time
	value                                          int64
	hasValue                                       bool
	limit, page                                    int
}

func parseListQuery(r *http.Request) (*listFilter, *Error) {
	q := r.URL.Query()
	f := &listFilter{chargeType: q.Get("charge_type"), status: q.Get("status"), dateOf: q.Get("date_of"),
		document: rules.CleanDocument(q.Get("customer_document")), customID: q.Get("custom_id"), limit: 100, page: 1}
	switch f.chargeType {
	case "":
		return nil, required("/charge_type")
	case "billet", "card", "carnet", "subscription":
	default:
		return nil, invalid("/charge_type", "charge_type deve ser billet, card, carnet ou subscription (recebido %q)", truncate(f.chargeType, 40))
	}
	for _, d := range []struct {
		name string
		dst  *time.Time
	}{{"begin_date", &f.begin}, {"end_date", &f.end}} {
		s := q.Get(d.name)
		if s == "" {
			return nil, required("/" + d.name)
		}
		t, e := parseDate("/"+d.name, s)
		if e != nil {
			return nil, e
		}
		*d.dst = t
	}
	if f.end.Before(f.begin) {
		return nil, invalid("/end_date", "end_date deve ser igual ou posterior a begin_date")
	}
	if f.status != "" && !listStatuses[f.status] {
		return nil, invalid("/status", "status desconhecido: %q", truncate(f.status, 40))
	}
	switch f.dateOf {
	case "":
		f.dateOf = "creation"
	case "creation", "payment", "expired":
	default:
		return nil, invalid("/date_of", "date_of deve ser creation, payment ou expired (recebido %q)", truncate(f.dateOf, 40))
	}
	if s := q.Get("value"); s != "" {
		v, err := strconv.ParseInt(s, 10, 64)
		if err != nil || v < 0 {
			return nil, invalid("/value", "value deve ser um inteiro em centavos (recebido %q)", truncate(s, 40))
		}
		f.value, f.hasValue = v, true
	}
	if s := q.Get("limit"); s != "" {
		v, err := strconv.Atoi(s)
		if err != nil || v < 1 || v > rules.MaxPageSize {
			return nil, invalid("/limit", "limit deve estar entre 1 e %d (recebido %q)", rules.MaxPageSize, truncate(s, 40))
		}
		f.limit = v
	}
	if s := q.Get("page"); s != "" {
		v, err := strconv.Atoi(s)
		if err != nil || v < 1 || v > 1000000000 {
			return nil, invalid("/page", "page deve ser um inteiro a partir de 1 (recebido %q)", truncate(s, 40))
		}
		f.page = v
	} else if s := q.Get("offset"); s != "" {
		v, err := strconv.Atoi(s)
		if err != nil || v < 0 || v > 1000000000 {
			return nil, invalid("/offset", "offset deve ser um inteiro não negativo (recebido %q)", truncate(s, 40))
		}
		f.page = v/f.limit + 1
	}
	return f, nil
}

func listView(c *Charge, cn *Carnet, base string) listItem {
	it := listItem{ID: c.ID, Total: c.Total, Status: c.Status, CustomID: c.CustomID, CreatedAt: efiTime(c.CreatedAt)}
	if cn != nil {
		it.CustomID = cn.CustomID
	}
	if cust := chargeCustomer(c, cn); cust != nil {
		lc := &listCustomer{Name: cust.Name, CPF: cust.CPF, PhoneNumber: cust.PhoneNumber, Email: cust.Email}
		if jp := cust.JuridicalPerson; jp != nil {
			lc.CorporateName, lc.CNPJ = jp.CorporateName, jp.CNPJ
		}
		it.Customer = lc
	}
	if p := c.Payment; p != nil {
		lp := &listPayment{PaymentMethod: p.Method, ReceivedByBankAt: c.ReceivedByBank, PaidValue: c.PaidValue}
		if !c.PaidAt.IsZero() {
			lp.PaidAt = efiTime(c.PaidAt)
		}
		switch {
		case cn != nil:
			lp.PaymentMethod = "carnet"
			b := p.Billet
			lp.Carnet = &listCarnet{CarnetID: cn.ID, Parcel: c.Parcel, Barcode: b.TypedLine, ExpireAt: b.ExpireAt,
				Link: chargeLink(base, c.DocToken), Configurations: configOut{Interest: b.Configurations.Interest, Fine: b.Configurations.Fine}}
		case p.Billet != nil:
			b := p.Billet
			lp.BankingBillet = &listBillet{Barcode: b.TypedLine, ExpireAt: b.ExpireAt, Link: chargeLink(base, c.DocToken),
				PDF: pdfCharge{chargePDF(base, c.DocToken)}, Configurations: configOut{b.Configurations.Interest, b.Configurations.Fine, b.Configurations.DaysToWriteOff}}
		case p.Card != nil:
			lp.CreditCard = &listCard{Installments: p.Card.Installments, InstallmentValue: p.Card.InstallmentValue, Mask: p.Card.Mask}
		}
		it.Payment = lp
	}
	if c.Link != nil {
		it.Link = &listLink{PaymentURL: paymentURL(base, c.DocToken), PaymentMethod: c.Link.PaymentMethod, ExpireAt: c.Link.ExpireAt}
	}
	return it
}

func (m *Module) hList(w http.ResponseWriter, r *http.Request, p *auth.Principal) *Error {
	f, e := parseListQuery(r)
	if e != nil {
		return e
	}
	ctx := r.Context()
	if e := m.refreshAccount(ctx, p.AccountID); e != nil {
		return e
	}
	base := m.base(r)
	off := (f.page - 1) * f.limit
	body := listBody{Code: 200, Data: []listItem{}, Params: listParams{BeginDate: f.begin.Format(dateLayout),
		EndDate: f.end.Format(dateLayout), Pagination: listPagination{Limit: f.limit, Offset: off, Page: f.page}}}
	if f.chargeType == "subscription" {
		httpx.WriteJSON(w, http.StatusOK, body)
		return nil
	}
	// The filters are index columns: the count and the page come from the
	// index, and only the page's charges are read.
	q := store.Query{Kind: idxList, Account: p.AccountID, Where: []store.Cond{store.Eq(store.ColS1, f.chargeType)}}
	if f.status != "" {
		q.Where = append(q.Where, store.Eq(store.ColS2, f.status))
	}
	if f.customID != "" {
		q.Where = append(q.Where, store.Eq(store.ColS3, f.customID))
	}
	if f.document != "" {
		q.Where = append(q.Where, store.Eq(store.ColS4, f.document))
	}
	if f.hasValue {
		q.Where = append(q.Where, store.Eq(store.ColI4, f.value))
	}
	col := map[string]store.Col{"creation": store.ColI1, "payment": store.ColI2, "expired": store.ColI3}[f.dateOf]
	q.Where = append(q.Where, store.Between(col, dayOf(f.begin.Format(dateLayout)), dayOf(f.end.Format(dateLayout))))
	n, err := m.d.Store.Count(ctx, q)
	if err != nil {
		m.log.Error().Err(err).Msg("charges: count list")
		return errInternal
	}
	body.Params.Pagination.Total = n
	if off < n {
		q.Offset, q.Limit = off, f.limit
		type hit struct {
			id, carnet int64
		}
		var hits []hit
		err := m.d.Store.Find(ctx, q, func(id string, ix store.Index) error {
			h := hit{id: ix.N}
			if strings.HasPrefix(ix.Owner, "n") {
				h.carnet, _ = strconv.ParseInt(ix.Owner[1:], 10, 64)
			}
			hits = append(hits, h)
			return nil
		})
		if err != nil {
			m.log.Error().Err(err).Msg("charges: list")
			return errInternal
		}
		var standalone, carnets []string
		for _, h := range hits {
			if h.carnet != 0 {
				carnets = append(carnets, idKey(h.carnet))
			} else {
				standalone = append(standalone, idKey(h.id))
			}
		}
		cs, err := m.charges.GetMany(ctx, p.AccountID, standalone)
		if err != nil {
			return errInternal
		}
		cns, err := m.carnets.GetMany(ctx, p.AccountID, carnets)
		if err != nil {
			return errInternal
		}
		for _, h := range hits {
			if h.carnet != 0 {
				cn := cns[idKey(h.carnet)]
				if cn == nil {
					continue
				}
				for _, pc := range cn.Parcels {
					if pc.ID == h.id {
						body.Data = append(body.Data, listView(pc, cn, base))
					}
				}
			} else if c := cs[idKey(h.id)]; c != nil {
				body.Data = append(body.Data, listView(c, nil, base))
			}
		}
	}
	httpx.WriteJSON(w, http.StatusOK, body)
	return nil
}
