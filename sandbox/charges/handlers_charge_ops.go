package charges

import (
	"context"
	"net/http"
	"time"

	"remessa/rules"
	"remessa/sandbox/auth"
	"remessa/sandbox/httpx"
)

// The routes on an existing charge: pay, retry, read, metadata, the
// slip's due date and resend, cancel, settle, history, refund, card
// installments and the notification look-up.

func (m *Module) hPay(w http.ResponseWriter, r *http.Request, p *auth.Principal) *Error {
	id, e := pathID(r, "id")
	if e != nil {
		return e
	}
	var req payReq
	if e := decode(r, &req); e != nil {
		return e
	}
	if e := checkPayment(req.Payment, "/payment"); e != nil {
		return e
	}
	var card *cardInput
	if req.Payment.CreditCard != nil {
		if card, e = validCardReq(req.Payment.CreditCard, "/payment/credit_card", rules.Today(m.now()), true); e != nil {
			return e
		}
	}
	base := m.base(r)
	c, e := m.mutateCharge(r.Context(), p.AccountID, id, func(u *update, c *Charge) *Error {
		if c.CarnetID != 0 {
			return belongsToCarnet(c)
		}
		if c.Payment != nil {
			return errf(CodeAlreadyPaymentForm, "payment_method_already_set", "A cobrança %d já tem forma de pagamento definida (%s)", c.ID, c.Payment.Method)
		}
		if c.Status != StatusNew {
			return errf(CodeCannotPay, "invalid_status", "Não é possível definir a forma de pagamento de uma cobrança com status [%s]", c.Status)
		}
		if card != nil {
			return m.attachCard(u, c, card, "/payment/credit_card")
		}
		return m.attachBillet(u, c, req.Payment.BankingBillet, "/payment/banking_billet", base, p)
	})
	if e != nil {
		return e
	}
	httpx.V1Data(w, paymentView(c, base))
	return nil
}

func belongsToCarnet(c *Charge) *Error {
	return errf(CodeBelongsToCarnet, "charge_belongs_to_carnet", "A cobrança %d é a parcela %d do carnê %d: use as rotas /v1/carnet", c.ID, c.Parcel, c.CarnetID)
}

func (m *Module) hRetry(w http.ResponseWriter, r *http.Request, p *auth.Principal) *Error {
	id, e := pathID(r, "id")
	if e != nil {
		return e
	}
	var req retryReq
	if e := decode(r, &req); e != nil {
		return e
	}
	if req.Payment == nil {
		return required("/payment")
	}
	if req.Payment.CreditCard == nil {
		return required("/payment/credit_card")
	}
	card, e := validCardReq(req.Payment.CreditCard, "/payment/credit_card", rules.Today(m.now()), false)
	if e != nil {
		return e
	}
	c, e := m.mutateCharge(r.Context(), p.AccountID, id, func(u *update, c *Charge) *Error {
		if c.Payment == nil || c.Payment.Card == nil || c.Status != StatusUnpaid {
			return errf(CodeRetry, "retry_not_allowed", "Somente cobranças de cartão com status [unpaid] podem ser retentadas (status atual [%s])", c.Status)
		}
		if card.installments == 0 {
			card.installments = c.Payment.Card.Installments
		}
		return m.attachCard(u, c, card, "/payment/credit_card")
	})
	if e != nil {
		return e
	}
	httpx.V1Data(w, paymentView(c, m.base(r)))
	return nil
}

func (m *Module) hGet(w http.ResponseWriter, r *http.Request, p *auth.Principal) *Error {
	id, e := pathID(r, "id")
	if e != nil {
		return e
	}
	c, cn, e := m.getCharge(r.Context(), p.AccountID, id)
	if e != nil {
		return e
	}
	v := chargeView(c, cn, m.base(r))
	writeCharge(w, &v)
	return nil
}

func (m *Module) hMetadata(w http.ResponseWriter, r *http.Request, p *auth.Principal) *Error {
	var md metadataUpdate
	return m.chargeCode(w, r, p, md.reader(r), func(u *update, c *Charge) *Error {
		if c.CarnetID != 0 {
			return belongsToCarnet(c)
		}
		md.apply(u, &c.CustomID, &c.NotificationURL)
		return nil
	})
}

// metadataUpdate is the checked body of PUT /v1/charge/{id}/metadata and
// PUT /v1/carnet/{id}/metadata.
type metadataUpdate struct {
	req       metadataReq
	cid, nurl *string
}

// reader returns the body reader for chargeCode/carnetCode.
func (md *metadataUpdate) reader(r *http.Request) func() *Error {
	return func() (e *Error) {
		if e := decode(r, &md.req); e != nil {
			return e
		}
		md.cid, md.nurl, e = validMetadata(&md.req, "")
		return e
	}
}

// apply sets the fields present in the request; an empty string clears.
// A changed notification_url retargets the pending notifications (u).
func (md *metadataUpdate) apply(u *update, dstID, dstURL **string) {
	if md.req.CustomID != nil {
		*dstID = md.cid
	}
	if md.req.NotificationURL != nil {
		u.retarget = strOr(*dstURL) != strOr(md.nurl)
		*dstURL = md.nurl
	}
}

func (m *Module) hBilletUpdate(w http.ResponseWriter, r *http.Request, p *auth.Principal) *Error {
	var due time.Time
	read := func() *Error {
		var req expireReq
		if e := decode(r, &req); e != nil {
			return e
		}
		var e *Error
		due, e = validDue(req.ExpireAt, "/expire_at", rules.Today(m.now()))
		return e
	}
	return m.chargeCode(w, r, p, read, func(u *update, c *Charge) *Error {
		if c.CarnetID != 0 {
			return belongsToCarnet(c)
		}
		if c.Payment == nil || c.Payment.Billet == nil {
			return errf(CodeOnlyWaitingUnpaid, "invalid_status", "A cobrança %d não é um boleto", c.ID)
		}
		if c.Status != StatusWaiting && c.Status != StatusUnpaid {
			return errf(CodeOnlyWaitingUnpaid, "invalid_status", "Somente cobranças com status [waiting] ou [unpaid] podem ser atualizadas (status atual [%s])", c.Status)
		}
		return setDue(u, c, due)
	})
}

// setDue changes a slip's due date: new barcode and typed line (same free
// field, new factor); an unpaid slip goes back to waiting.
func setDue(u *update, c *Charge, due time.Time) *Error {
	b := c.Payment.Billet
	codes, err := buildSlipCodes(c.ID, due, c.Total)
	if err != nil {
		return errInternal
	}
	b.Barcode, b.TypedLine, b.ExpireAt = codes.Barcode, codes.TypedLine, due.Format(dateLayout)
	msg := "Vencimento alterado para " + due.Format("02/01/2006")
	if c.Status == StatusUnpaid {
		u.setStatus(c, StatusWaiting, msg, nil)
	} else {
		u.history(c, msg)
	}
	return nil
}

func validEmailBody(r *http.Request) (string, *Error) {
	var req emailReq
	if e := decode(r, &req); e != nil {
		return "", e
	}
	if req.Email == nil || *req.Email == "" {
		return "", &Error{Status: http.StatusBadRequest, Code: CodeRequired, Slug: "property_required",
			Desc: httpx.PropertyError{Property: "/email", Message: "A propriedade email é obrigatória"}}
	}
	if !rules.ValidEmail(*req.Email) {
		return "", invalid("/email", "E-mail inválido: %s", *req.Email)
	}
	return *req.Email, nil
}

func (m *Module) hBilletResend(w http.ResponseWriter, r *http.Request, p *auth.Principal) *Error {
	var email string
	read := func() (e *Error) { email, e = validEmailBody(r); return e }
	return m.chargeCode(w, r, p, read, func(u *update, c *Charge) *Error {
		if c.Payment == nil || c.Payment.Billet == nil || c.Status != StatusWaiting {
			return errf(CodeResend, "invalid_status", "Somente boletos com status [waiting] podem ser reenviados (status atual [%s])", c.Status)
		}
		u.history(c, "Boleto reenviado para "+email)
		return u.resent(p.AccountID, Resend{Route: "billet", Email: email, ChargeID: c.ID})
	})
}

func cancelable(s string) bool {
	return s == StatusNew || s == StatusWaiting || s == StatusUnpaid || s == StatusLink
}

func (m *Module) hCancel(w http.ResponseWriter, r *http.Request, p *auth.Principal) *Error {
	return m.chargeCode(w, r, p, nil, func(u *update, c *Charge) *Error {
		if c.CarnetID != 0 {
			return belongsToCarnet(c)
		}
		if !cancelable(c.Status) {
			return errf(CodeCancel, "invalid_status", "Somente cobranças com status [new], [link], [waiting] ou [unpaid] podem ser canceladas (status atual [%s])", c.Status)
		}
		u.setStatus(c, StatusCanceled, "Cobrança cancelada", nil)
		return nil
	})
}

// settle marks c settled (manual settlement) after the checks of
// real-service §1.1 and the spec's rule 3.
func settle(u *update, c *Charge) *Error {
	if c.Status != StatusNew && c.Status != StatusWaiting && c.Status != StatusUnpaid {
		return errf(CodeSettle, "invalid_status", "Somente cobranças com status [new], [waiting] ou [unpaid] podem ser marcadas como pagas (status atual [%s])", c.Status)
	}
	if c.ViaLink || c.Link != nil {
		return errf(CodeSettle, "invalid_status", "Cobranças de link de pagamento não podem ser marcadas como pagas manualmente")
	}
	if c.Payment != nil && c.Payment.Card != nil {
		return errf(CodeSettle, "invalid_status", "Somente boletos e carnês podem ser marcados como pagos manualmente")
	}
	c.SettledAt = u.now
	u.setStatus(c, StatusSettled, "Cobrança marcada como paga manualmente", nil)
	return nil
}

func (m *Module) hSettle(w http.ResponseWriter, r *http.Request, p *auth.Principal) *Error {
	return m.chargeCode(w, r, p, nil, func(u *update, c *Charge) *Error {
		if c.CarnetID != 0 {
			return belongsToCarnet(c)
		}
		return settle(u, c)
	})
}

func historyBody(r *http.Request) (string, *Error) {
	var req historyReq
	if e := decode(r, &req); e != nil {
		return "", e
	}
	if req.Description == nil {
		return "", required("/description")
	}
	if e := textLen("/description", *req.Description, 1, rules.MaxHistoryDescription); e != nil {
		return "", e
	}
	return *req.Description, nil
}

func (m *Module) hHistory(w http.ResponseWriter, r *http.Request, p *auth.Principal) *Error {
	var desc string
	read := func() (e *Error) { desc, e = historyBody(r); return e }
	return m.chargeCode(w, r, p, read, func(u *update, c *Charge) *Error {
		u.history(c, desc)
		return nil
	})
}

func (m *Module) hRefund(w http.ResponseWriter, r *http.Request, p *auth.Principal) *Error {
	id, e := pathID(r, "id")
	if e != nil {
		return e
	}
	var req refundReq
	if e := decodeOptional(r, &req); e != nil {
		return e
	}
	var amount int64
	if req.Amount != nil {
		if *req.Amount < 1 {
			return invalid("/amount", "amount deve ser um inteiro positivo em centavos (recebido %d)", *req.Amount)
		}
		amount = *req.Amount
	}
	if e := m.refund(r.Context(), p.AccountID, id, amount); e != nil {
		return e
	}
	httpx.V1Code(w)
	return nil
}

// refund refunds amount cents (0 = all that remains) of a paid card charge.
func (m *Module) refund(ctx context.Context, account string, id, amount int64) *Error {
	_, e := m.mutateCharge(ctx, account, id, func(u *update, c *Charge) *Error {
		if c.Payment == nil || c.Payment.Card == nil {
			return errf(CodeRefund, "refund_not_allowed", "Somente cobranças de cartão podem ser estornadas")
		}
		if c.Status != StatusPaid && c.Status != StatusApproved {
			return errf(CodeRefund, "refund_not_allowed", "Somente cobranças de cartão com status [paid] ou [approved] podem ser estornadas (status atual [%s])", c.Status)
		}
		paid := c.PaidValue
		if paid == 0 {
			paid = c.Total
		}
		left := paid - c.RefundedCents
		if amount == 0 {
			amount = left
		}
		if amount > left {
			return errf(CodeRefund, "refund_not_allowed", "Valor do estorno %s acima do saldo estornável %s", rules.FormatBRL(amount), rules.FormatBRL(left))
		}
		c.RefundedCents += amount
		if c.RefundedCents == paid {
			u.setStatus(c, StatusRefunded, "Pagamento estornado: "+rules.FormatBRL(amount), nil)
		} else {
			u.history(c, "Estorno parcial: "+rules.FormatBRL(amount))
		}
		return nil
	})
	return e
}

func (m *Module) hInstallments(w http.ResponseWriter, r *http.Request, p *auth.Principal) *Error {
	opts, e := installmentsQuery(r)
	if e != nil {
		return e
	}
	httpx.V1Data(w, opts)
	return nil
}

func (m *Module) hNotification(w http.ResponseWriter, r *http.Request, p *auth.Principal) *Error {
	tok := r.PathValue("token")
	account, chargeID, carnetID, ok, err := m.tokenRef(r.Context(), aliasNotif, tok)
	if err != nil {
		m.log.Error().Err(err).Msg("charges: notification token")
		return errInternal
	}
	if !ok || account != p.AccountID {
		return notFound("token", "Token de notificação inexistente")
	}
	// Apply due transitions first so the list is current.
	var changes []Change
	if carnetID != 0 {
		cn, e := m.getCarnet(r.Context(), p.AccountID, carnetID)
		if e != nil {
			return e
		}
		changes = append(changes, cn.Changes...)
	} else {
		c, _, e := m.getCharge(r.Context(), p.AccountID, chargeID)
		if e != nil {
			return e
		}
		changes = append(changes, c.Changes...)
	}
	if changes == nil {
		changes = []Change{}
	}
	httpx.V1Data(w, changes)
	return nil
}

// chargeCode is the shape of most charge routes: the path's {id}, then
// the request body (read, may be nil; it runs before the lock is taken),
// then one mutation of the charge under the module lock, persisted before
// the answer {"code":200}. Errors keep that order: a bad id is reported
// before a bad body, a bad body before a missing charge.
func (m *Module) chargeCode(w http.ResponseWriter, r *http.Request, p *auth.Principal, read func() *Error, fn func(u *update, c *Charge) *Error) *Error {
	return codeAfter(w, r, p, read, m.mutateCharge, fn)
}

// carnetCode is chargeCode for the carnet named by the path's {id}.
func (m *Module) carnetCode(w http.ResponseWriter, r *http.Request, p *auth.Principal, read func() *Error, fn func(u *update, cn *Carnet) *Error) *Error {
	return codeAfter(w, r, p, read, m.mutateCarnet, fn)
}

// codeAfter is chargeCode and carnetCode for either kind of object.
func codeAfter[T any](w http.ResponseWriter, r *http.Request, p *auth.Principal, read func() *Error,
	mutate func(ctx context.Context, account string, id int64, fn func(u *update, v *T) *Error) (*T, *Error),
	fn func(u *update, v *T) *Error) *Error {
	id, e := pathID(r, "id")
	if e != nil {
		return e
	}
	if read != nil {
		if e := read(); e != nil {
			return e
		}
	}
	if _, e := mutate(r.Context(), p.AccountID, id, fn); e != nil {
		return e
	}
	httpx.V1Code(w)
	return nil
}
