package charges

import (
	"context"
	"net/http"
	"strconv"
	"time"
	"unicode/utf8"

	"remessa/rules"
	"remessa/sandbox/auth"
	"remessa/sandbox/httpx"
	"remessa/sandbox/store"
)

// handler is a charges API handler: it gets the authenticated principal
// and answers itself, or returns an *Error to be written.
type handler func(w http.ResponseWriter, r *http.Request, p *auth.Principal) *Error

func (m *Module) wrap(h handler) http.Handler {
	inner := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		p, ok := auth.FromContext(r.Context())
		if !ok {
			principalError(w)
			return
		}
		if e := h(w, r, p); e != nil {
			e.write(w)
		}
	})
	if m.d.Auth == nil {
		return inner
	}
	return m.d.Auth.V1(inner)
}

// Register serves every route of the module on mux.
func (m *Module) Register(mux httpx.Mux) {
	routes := map[string]handler{
		"POST /v1/charge":                             m.hCreate,
		"POST /v1/charge/one-step":                    m.hOneStep,
		"POST /v1/charge/one-step/link":               m.hOneStepLink,
		"POST /v1/charge/{id}/pay":                    m.hPay,
		"POST /v1/charge/{id}/link":                   m.hCreateLink,
		"PUT /v1/charge/{id}/link":                    m.hUpdateLink,
		"POST /v1/charge/{id}/link/resend":            m.hLinkResend,
		"GET /v1/charge/{id}":                         m.hGet,
		"GET /v1/charges":                             m.hList,
		"PUT /v1/charge/{id}/metadata":                m.hMetadata,
		"PUT /v1/charge/{id}/billet":                  m.hBilletUpdate,
		"POST /v1/charge/{id}/billet/resend":          m.hBilletResend,
		"PUT /v1/charge/{id}/cancel":                  m.hCancel,
		"PUT /v1/charge/{id}/settle":                  m.hSettle,
		"POST /v1/charge/{id}/history":                m.hHistory,
		"POST /v1/charge/{id}/retry":                  m.hRetry,
		"POST /v1/charge/card/{id}/refund":            m.hRefund,
		"GET /v1/installments":                        m.hInstallments,
		"GET /v1/notification/{token}":                m.hNotification,
		"POST /v1/carnet":                             m.hCarnetCreate,
		"GET /v1/carnet/{id}":                         m.hCarnetGet,
		"PUT /v1/carnet/{id}/metadata":                m.hCarnetMetadata,
		"PUT /v1/carnet/{id}/parcel/{parcel}":         m.hParcelUpdate,
		"PUT /v1/carnet/{id}/parcels":                 m.hParcelsUpdate,
		"PUT /v1/carnet/{id}/cancel":                  m.hCarnetCancel,
		"PUT /v1/carnet/{id}/parcel/{parcel}/cancel":  m.hParcelCancel,
		"POST /v1/carnet/{id}/resend":                 m.hCarnetResend,
		"POST /v1/carnet/{id}/parcel/{parcel}/resend": m.hParcelResend,
		"POST /v1/carnet/{id}/history":                m.hCarnetHistory,
		"PUT /v1/carnet/{id}/settle":                  m.hCarnetSettle,
		"PUT /v1/carnet/{id}/parcel/{parcel}/settle":  m.hParcelSettle,
	}
	for pattern, h := range routes {
		mux.Handle(pattern, m.wrap(h))
	}
	mux.HandleFunc("GET /v1/pubkey", m.handlePubkey)
	mux.HandleFunc("GET /v1/card/{payee_code}/jsonp", m.handleCardJSONP)
	mux.HandleFunc("GET /v1/installments/{payee_code}/jsonp", m.handleInstallmentsJSONP)
	mux.HandleFunc("OPTIONS /v1/pubkey", m.handleOptions)
	mux.HandleFunc("OPTIONS /v1/card/{payee_code}/jsonp", m.handleOptions)
	mux.HandleFunc("OPTIONS /v1/installments/{payee_code}/jsonp", m.handleOptions)
}

func (m *Module) base(r *http.Request) string {
	if m.d.BaseURL != nil {
		return m.d.BaseURL(r)
	}
	scheme := "http"
	if r.TLS != nil {
		scheme = "https"
	}
	return scheme + "://" + r.Host
}

// pathID parses the {name} path value as a positive id.
func pathID(r *http.Request, name string) (int64, *Error) {
	s := r.PathValue(name)
	id, err := strconv.ParseInt(s, 10, 64)
	if err != nil || id < 1 {
		return 0, invalid("/"+name, "%s deve ser um inteiro positivo (recebido %q)", name, truncate(s, 40))
	}
	return id, nil
}

func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n] + "…"
}

func decode(r *http.Request, v any) *Error {
	if de := httpx.DecodeStrict(r, v); de != nil {
		return fromDecode(de)
	}
	return nil
}

// decodeOptional decodes a body that may be absent.
func decodeOptional(r *http.Request, v any) *Error {
	if r.Body == nil || r.Body == http.NoBody || r.ContentLength == 0 {
		return nil
	}
	if de := httpx.DecodeStrict(r, v); de != nil {
		if de.Kind == httpx.ErrEmptyBody {
			return nil
		}
		return fromDecode(de)
	}
	return nil
}

// newCharge builds a charge in status new (not yet stored); id from
// m.newChargeID.
func (m *Module) newCharge(u *update, id int64, account string, items []Item, ships []Shipping, customID, notifURL *string) *Charge {
	c := &Charge{ID: id, Account: account, Total: itemsTotal(items, ships), CustomID: customID,
		NotificationURL: notifURL, Items: items, Shippings: ships, CreatedAt: u.now,
		NotifToken: notificationToken(), DocToken: randomHex(16)}
	u.charge = c
	u.setStatus(c, StatusNew, "Cobrança criada", nil)
	return c
}

// newChargeID reserves a charge id.
func (m *Module) newChargeID(ctx context.Context) (int64, *Error) {
	id, err := m.ids.take(ctx, &m.ids.charge, 1)
	if err != nil {
		m.log.Error().Err(err).Msg("charges: charge id")
		return 0, errInternal
	}
	return id, nil
}

// commitNew stores a new charge or carnet; fn (may be nil) runs inside the
// write transaction before the write (card token checks).
func (m *Module) commitNew(ctx context.Context, u *update, fn func() *Error) *Error {
	if fn == nil {
		// Nobody else sees the new owner yet: encode it before the
		// transaction, which then only writes.
		u.encodeOwner()
	}
	u.created = true
	// The ids' high-water marks are read before the transaction: the id
	// allocator's lock must never be waited for inside one, since on a shared
	// store take() holds it while it reserves a block in a transaction of its
	// own, queued behind this one (TestSharedStoreIDBlocksUnderLoad). The
	// sequences only go up, so a mark read early is still a floor.
	hiCharge, hiCarnet := m.ids.high(&m.ids.charge), m.ids.high(&m.ids.carnet)
	var refusal *Error
	err := m.d.Store.Tx(ctx, func(tx *store.Tx) error {
		u.tx = tx
		if fn != nil {
			if e := fn(); e != nil {
				refusal = e
				return errRefused
			}
		}
		// The checks are done: what follows fails only by a store error,
		// so it needs no savepoint of its own in a group commit.
		tx.Final()
		if err := tx.SetSeq(seqCharge, hiCharge); err != nil {
			return err
		}
		if u.carnet != nil {
			if err := tx.SetSeq(seqCarnet, hiCarnet); err != nil {
				return err
			}
		}
		return m.persist(ctx, tx, u)
	})
	if refusal != nil {
		return refusal
	}
	if err != nil {
		m.log.Error().Err(err).Msg("persist new charge")
		return errInternal
	}
	return nil
}

// commonCharge validates items, shippings, metadata and the split.
func commonCharge(p *auth.Principal, items []itemReq, ships []shippingReq, meta *metadataReq) ([]Item, []Shipping, *string, *string, *Error) {
	it, e := validItems(items, "/items")
	if e != nil {
		return nil, nil, nil, nil, e
	}
	sh, e := validShippings(ships, "/shippings")
	if e != nil {
		return nil, nil, nil, nil, e
	}
	cid, nurl, e := validMetadata(meta, "/metadata")
	if e != nil {
		return nil, nil, nil, nil, e
	}
	if e := checkSplit(it, sh, p.PayeeCode); e != nil {
		return nil, nil, nil, nil, e
	}
	if t := itemsTotal(it, sh); t > maxSlipCents {
		return nil, nil, nil, nil, invalid("/items", "O valor total da cobrança (%s) excede o máximo de %s", rules.FormatBRL(t), rules.FormatBRL(maxSlipCents))
	}
	return it, sh, cid, nurl, nil
}

func (m *Module) hCreate(w http.ResponseWriter, r *http.Request, p *auth.Principal) *Error {
	var req chargeReq
	if e := decode(r, &req); e != nil {
		return e
	}
	items, ships, cid, nurl, e := commonCharge(p, req.Items, req.Shippings, req.Metadata)
	if e != nil {
		return e
	}
	u := &update{now: m.now()}
	id, e := m.newChargeID(r.Context())
	if e != nil {
		return e
	}
	c := m.newCharge(u, id, p.AccountID, items, ships, cid, nurl)
	if e := m.commitNew(r.Context(), u, nil); e != nil {
		return e
	}
	httpx.V1Data(w, createView(c))
	return nil
}

// checkPayment requires exactly one payment form.
func checkPayment(pr *paymentReq, p string) *Error {
	if pr == nil {
		return required(p)
	}
	if pr.BankingBillet == nil && pr.CreditCard == nil {
		return required(p + "/banking_billet")
	}
	if pr.BankingBillet != nil && pr.CreditCard != nil {
		return invalid(p, "Informe banking_billet ou credit_card, não os dois")
	}
	return nil
}

// attachBillet validates the slip request and attaches the slip to c
// (status waiting). It does not touch module state.
func (m *Module) attachBillet(u *update, c *Charge, req *billetReq, p string, base string, pr *auth.Principal) *Error {
	today := rules.Today(u.now)
	cust := Customer{}
	if req.Customer != nil {
		cust = *req.Customer
		if cust.Address != nil {
			a := *cust.Address
			cust.Address = &a
		}
		if cust.JuridicalPerson != nil {
			j := *cust.JuridicalPerson
			cust.JuridicalPerson = &j
		}
	}
	if e := validCustomer(ptrIf(req.Customer != nil, &cust), p+"/customer", forBillet, today); e != nil {
		return e
	}
	due, e := validDue(req.ExpireAt, p+"/expire_at", today)
	if e != nil {
		return e
	}
	conf, e := validConfig(req.Configurations, p+"/configurations", true)
	if e != nil {
		return e
	}
	msg, e := validSlipMessage(req.Message, p+"/message")
	if e != nil {
		return e
	}
	disc, e := validDiscount(req.Discount, p+"/discount")
	if e != nil {
		return e
	}
	cond, e := validCondDiscount(req.ConditionalDiscount, p+"/conditional_discount")
	if e != nil {
		return e
	}
	if (disc != nil || cond != nil) && isSplit(c.Items, c.Shippings) {
		return errf(CodeDiscountSplit, "discount_not_allowed", "Não é permitido desconto em cobrança com repasses (marketplace)")
	}
	if cond != nil {
		until, _ := rules.ParseISODate(cond.UntilDate)
		if until.After(due) {
			return invalid(p+"/conditional_discount/until_date", "until_date deve ser igual ou anterior ao vencimento %s", *req.ExpireAt)
		}
	}
	gross := itemsTotal(c.Items, c.Shippings)
	total := gross - discountCents(disc, gross)
	if disc != nil && total <= 0 {
		return invalid(p+"/discount/value", "O desconto não pode ser maior ou igual ao valor da cobrança")
	}
	if e := minTotal(total); e != nil {
		return e
	}
	if cond != nil && discountCents(&Discount{cond.Type, cond.Value}, total) >= total {
		return invalid(p+"/conditional_discount/value", "O desconto condicional não pode ser maior ou igual ao valor da cobrança")
	}
	b, err := m.makeBillet(c.Account, c.ID, due, total, base, pr.Name)
	if err != nil {
		m.log.Error().Err(err).Int64("charge_id", c.ID).Msg("build slip")
		return errInternal
	}
	b.Customer, b.Configurations, b.Message, b.Discount, b.ConditionalDiscount = cust, conf, msg, disc, cond
	c.Total = total
	c.Payment = &Payment{Method: MethodBillet, CreatedAt: u.now, Message: msg, Billet: b}
	u.setStatus(c, StatusWaiting, "Forma de pagamento selecionada: boleto bancário. Aguardando pagamento", nil)
	return nil
}

func ptrIf[T any](ok bool, v *T) *T {
	if ok {
		return v
	}
	return nil
}

// makeBillet builds the slip codes, BR Code and QR image.
func (m *Module) makeBillet(account string, chargeID int64, due time.Time, total int64, base, merchant string) (*Billet, error) {
	codes, err := buildSlipCodes(chargeID, due, total)
	if err != nil {
		return nil, err
	}
	br, err := buildBRCode(pixLocation(base, account, chargeID), merchant)
	if err != nil {
		return nil, err
	}
	img, err := qrImage(br)
	if err != nil {
		return nil, err
	}
	return &Billet{ExpireAt: due.Format(dateLayout), Barcode: codes.Barcode, TypedLine: codes.TypedLine, BRCode: br, QRImage: img}, nil
}

// cardInput is a validated card request.
type cardInput struct {
	cust         Customer
	billing      Address
	installments int
	token        string
	disc         *Discount
	msg          string
}

func validCardReq(req *cardReq, p string, today time.Time, needInstallments bool) (*cardInput, *Error) {
	in := &cardInput{installments: 1}
	if req.Customer == nil {
		return nil, required(p + "/customer")
	}
	in.cust = *req.Customer
	if in.cust.Address != nil {
		a := *in.cust.Address
		in.cust.Address = &a
	}
	if in.cust.JuridicalPerson != nil {
		j := *in.cust.JuridicalPerson
		in.cust.JuridicalPerson = &j
	}
	if e := validCustomer(&in.cust, p+"/customer", forCard, today); e != nil {
		return nil, e
	}
	if req.BillingAddress == nil {
		return nil, required(p + "/billing_address")
	}
	in.billing = *req.BillingAddress
	if e := validAddress(&in.billing, p+"/billing_address"); e != nil {
		return nil, e
	}
	if req.Installments == nil {
		if needInstallments {
			return nil, required(p + "/installments")
		}
		in.installments = 0
	} else {
		if *req.Installments < 1 || *req.Installments > MaxInstallments {
			return nil, invalid(p+"/installments", "installments deve estar entre 1 e %d (recebido %d)", MaxInstallments, *req.Installments)
		}
		in.installments = int(*req.Installments)
	}
	if req.PaymentToken == nil || *req.PaymentToken == "" {
		return nil, required(p + "/payment_token")
	}
	in.token = *req.PaymentToken
	d, e := validDiscount(req.Discount, p+"/discount")
	if e != nil {
		return nil, e
	}
	in.disc = d
	if req.Message != nil {
		if e := textLen(p+"/message", *req.Message, 0, maxText); e != nil {
			return nil, e
		}
		in.msg = *req.Message
	}
	return in, nil
}

// attachCard charges the card of in on c (caller holds mu): the token is
// used, the charge goes to waiting and, when the sandbox refuses the card
// (last digit 1, 2 or 3), on to unpaid with the reason.
func (m *Module) attachCard(u *update, c *Charge, in *cardInput, p string) *Error {
	if in.disc != nil && isSplit(c.Items, c.Shippings) {
		return errf(CodeDiscountSplit, "discount_not_allowed", "Não é permitido desconto em cobrança com repasses (marketplace)")
	}
	gross := itemsTotal(c.Items, c.Shippings)
	total := gross - discountCents(in.disc, gross)
	if in.disc != nil && total <= 0 {
		return invalid(p+"/discount/value", "O desconto não pode ser maior ou igual ao valor da cobrança")
	}
	if e := minTotal(total); e != nil {
		return e
	}
	tok, e := m.takeToken(u, c.Account, in.token)
	if e != nil {
		return e
	}
	n := in.installments
	value := installmentValue(total, n, brandRate[tok.Brand])
	if n > 1 && value < minInstallment {
		return errf(CodeInstallments, "invalid_installments", "Parcelamento em %d vezes indisponível para %s: parcela mínima de R$ 5,00", n, rules.FormatBRL(total))
	}
	u.tokenID, u.token = in.token, tok
	c.Total = total
	c.Reason = ""
	c.Payment = &Payment{Method: MethodCard, CreatedAt: u.now, Message: in.msg, Card: &Card{Customer: in.cust,
		Installments: n, InstallmentValue: value, Brand: tok.Brand, Mask: tok.Mask, BillingAddress: in.billing, Discount: in.disc}}
	u.setStatus(c, StatusWaiting, "Forma de pagamento selecionada: cartão de crédito. Pagamento em análise", nil)
	if reason := cardOutcome(tok.Last[0]); reason != "" {
		c.Reason = reason
		u.setStatus(c, StatusUnpaid, "Pagamento recusado: "+reason, nil)
	}
	return nil
}

func (m *Module) hOneStep(w http.ResponseWriter, r *http.Request, p *auth.Principal) *Error {
	var req oneStepReq
	if e := decode(r, &req); e != nil {
		return e
	}
	items, ships, cid, nurl, e := commonCharge(p, req.Items, req.Shippings, req.Metadata)
	if e != nil {
		return e
	}
	if e := checkPayment(req.Payment, "/payment"); e != nil {
		return e
	}
	u := &update{now: m.now()}
	today := rules.Today(u.now)
	var card *cardInput
	if req.Payment.CreditCard != nil {
		if card, e = validCardReq(req.Payment.CreditCard, "/payment/credit_card", today, true); e != nil {
			return e
		}
	}
	id, e := m.newChargeID(r.Context())
	if e != nil {
		return e
	}
	c := m.newCharge(u, id, p.AccountID, items, ships, cid, nurl)
	var fn func() *Error
	if card != nil {
		fn = func() *Error { return m.attachCard(u, c, card, "/payment/credit_card") }
	} else if e := m.attachBillet(u, c, req.Payment.BankingBillet, "/payment/banking_billet", m.base(r), p); e != nil {
		return e
	}
	if e := m.commitNew(r.Context(), u, fn); e != nil {
		return e
	}
	httpx.V1Data(w, paymentView(c, m.base(r)))
	return nil
}
