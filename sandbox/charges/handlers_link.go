package charges

import (
	"net/http"
	"time"

	"remessa/rules"
	"remessa/sandbox/auth"
	"remessa/sandbox/httpx"
)

// applyLink validates link settings and applies them to c. On creation
// every setting gets its default; on update only the given ones change.
func applyLink(u *update, c *Charge, req *linkReq, p string, create bool) *Error {
	today := rules.Today(u.now)
	l := &Link{PaymentMethod: "all", CreatedAt: u.now}
	if c.Link != nil {
		cp := *c.Link
		l = &cp
	}
	exp := req.ExpireAt
	expPtr := p + "/expire_at"
	if req.ExpireAtDash != nil {
		if exp != nil && *exp != *req.ExpireAtDash {
			return invalid(p+"/expire-at", "expire_at e expire-at com valores diferentes")
		}
		exp, expPtr = req.ExpireAtDash, p+"/expire-at"
	}
	if exp == nil && create {
		return required(p + "/expire_at")
	}
	if exp != nil {
		d, e := parseDate(expPtr, *exp)
		if e != nil {
			return e
		}
		if d.Before(today) {
			return invalid(expPtr, "A data de expiração deve ser igual ou posterior a hoje (%s)", today.Format(dateLayout))
		}
		if d.Sub(today) > maxDueDays*24*time.Hour {
			return errf(CodeDueTooFar, "invalid_expire_at", "A data de expiração %s está longe demais", *exp)
		}
		l.ExpireAt = *exp
	}
	if req.PaymentMethod != nil {
		switch *req.PaymentMethod {
		case "banking_billet", "credit_card", "all":
			l.PaymentMethod = *req.PaymentMethod
		default:
			return invalid(p+"/payment_method", "payment_method deve ser banking_billet, credit_card ou all (recebido %q)", *req.PaymentMethod)
		}
	}
	if req.Message != nil {
		if e := textLen(p+"/message", *req.Message, 0, rules.MaxLinkMessage); e != nil {
			return e
		}
		l.Message = *req.Message
	}
	total := itemsTotal(c.Items, c.Shippings)
	for _, d := range []struct {
		v   *int64
		dst *int64
		n   string
	}{{req.BilletDiscount, &l.BilletDiscount, "billet_discount"}, {req.CardDiscount, &l.CardDiscount, "card_discount"}} {
		if d.v == nil {
			continue
		}
		if *d.v < 0 || *d.v >= total {
			return invalid(p+"/"+d.n, "%s deve estar entre 0 e o valor da cobrança menos 1 centavo (recebido %d)", d.n, *d.v)
		}
		*d.dst = *d.v
	}
	if (l.BilletDiscount > 0 || l.CardDiscount > 0 || req.ConditionalDiscount != nil) && isSplit(c.Items, c.Shippings) {
		return errf(CodeDiscountSplit, "discount_not_allowed", "Não é permitido desconto em cobrança com repasses (marketplace)")
	}
	if req.ConditionalDiscount != nil {
		cd, e := validCondDiscount(req.ConditionalDiscount, p+"/conditional_discount")
		if e != nil {
			return e
		}
		until, _ := rules.ParseISODate(cd.UntilDate)
		exp, _ := rules.ParseISODate(l.ExpireAt)
		if until.After(exp) {
			return invalid(p+"/conditional_discount/until_date", "until_date deve ser igual ou anterior à expiração do link %s", l.ExpireAt)
		}
		if discountCents(&Discount{cd.Type, cd.Value}, total) >= total {
			return invalid(p+"/conditional_discount/value", "O desconto condicional não pode ser maior ou igual ao valor da cobrança")
		}
		l.ConditionalDiscount = cd
	}
	if req.RequestDeliveryAddress != nil {
		l.RequestDeliveryAddress = *req.RequestDeliveryAddress
	}
	if e := minTotal(total); e != nil {
		return e
	}
	c.Link = l
	switch {
	case create:
		u.setStatus(c, StatusLink, "Link de pagamento criado", nil)
	case c.Status == StatusExpired:
		u.setStatus(c, StatusLink, "Link de pagamento atualizado e reativado", nil)
	default:
		u.history(c, "Link de pagamento atualizado")
	}
	return nil
}

func (m *Module) hOneStepLink(w http.ResponseWriter, r *http.Request, p *auth.Principal) *Error {
	var req oneStepLinkReq
	if e := decode(r, &req); e != nil {
		return e
	}
	items, ships, cid, nurl, e := commonCharge(p, req.Items, req.Shippings, req.Metadata)
	if e != nil {
		return e
	}
	email := ""
	if req.Customer != nil && req.Customer.Email != nil && *req.Customer.Email != "" {
		if !rules.ValidEmail(*req.Customer.Email) {
			return invalid("/customer/email", "E-mail inválido: %s", *req.Customer.Email)
		}
		email = *req.Customer.Email
	}
	if req.Settings == nil {
		return required("/settings")
	}
	u := &update{now: m.now()}
	id, e := m.newChargeID(r.Context())
	if e != nil {
		return e
	}
	c := m.newCharge(u, id, p.AccountID, items, ships, cid, nurl)
	if e := applyLink(u, c, req.Settings, "/settings", true); e != nil {
		return e
	}
	c.Link.Email = email
	if e := m.commitNew(r.Context(), u, nil); e != nil {
		return e
	}
	httpx.V1Data(w, linkView(c, m.base(r)))
	return nil
}

// linkRoute is the shape of POST and PUT /v1/charge/{id}/link: the path's
// {id}, the link body, one mutation of the charge, the link as answer.
func (m *Module) linkRoute(w http.ResponseWriter, r *http.Request, p *auth.Principal, fn func(u *update, c *Charge, req *linkReq) *Error) *Error {
	id, e := pathID(r, "id")
	if e != nil {
		return e
	}
	var req linkReq
	if e := decode(r, &req); e != nil {
		return e
	}
	c, e := m.mutateCharge(r.Context(), p.AccountID, id, func(u *update, c *Charge) *Error { return fn(u, c, &req) })
	if e != nil {
		return e
	}
	httpx.V1Data(w, linkView(c, m.base(r)))
	return nil
}

func (m *Module) hCreateLink(w http.ResponseWriter, r *http.Request, p *auth.Principal) *Error {
	return m.linkRoute(w, r, p, func(u *update, c *Charge, req *linkReq) *Error {
		if c.CarnetID != 0 {
			return belongsToCarnet(c)
		}
		if c.Payment != nil {
			return errf(CodeAlreadyPaymentForm, "payment_method_already_set", "A cobrança %d já tem forma de pagamento definida (%s)", c.ID, c.Payment.Method)
		}
		if c.Status != StatusNew {
			return errf(CodeCannotPay, "invalid_status", "Só é possível gerar link para cobrança com status [new] (status atual [%s])", c.Status)
		}
		return applyLink(u, c, req, "", true)
	})
}

func (m *Module) hUpdateLink(w http.ResponseWriter, r *http.Request, p *auth.Principal) *Error {
	return m.linkRoute(w, r, p, func(u *update, c *Charge, req *linkReq) *Error {
		if c.Link == nil {
			return errf(CodeLinkNotUpdatable, "link_not_updatable", "A cobrança %d não tem link de pagamento", c.ID)
		}
		if c.Status != StatusLink && c.Status != StatusExpired {
			return errf(CodeLinkNotUpdatable, "link_not_updatable", "O link de pagamento só pode ser alterado enquanto o pagamento não foi confirmado (status atual [%s])", c.Status)
		}
		return applyLink(u, c, req, "", false)
	})
}

func (m *Module) hLinkResend(w http.ResponseWriter, r *http.Request, p *auth.Principal) *Error {
	var email string
	read := func() (e *Error) { email, e = validEmailBody(r); return e }
	return m.chargeCode(w, r, p, read, func(u *update, c *Charge) *Error {
		if c.Status != StatusLink {
			return errf(CodeResend, "invalid_status", "Somente links com status [link] podem ser reenviados (status atual [%s])", c.Status)
		}
		u.history(c, "Link de pagamento reenviado para "+email)
		return u.resent(p.AccountID, Resend{Route: "link", Email: email, ChargeID: c.ID})
	})
}
