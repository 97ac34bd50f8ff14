package control

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"strconv"
	"time"

	"remessa/rules"
	"remessa/sandbox/charges"
	"remessa/sandbox/httpx"
)

// PayRequest is the body of the pay routes (all optional): Value is the
// paid amount in cents (default: what the payer owes on the payment date —
// for a slip or parcel the total with the fine, interest and conditional
// discount of that day by rules.SlipAmountDue; for a card charge its
// total), PaidAt the civil date the bank received it (default: the
// sandbox's today).
type PayRequest struct {
	Value  *int64 `json:"value,omitempty"`
	PaidAt string `json:"paid_at,omitempty"`
}

// RefundRequest is the body of the refund route: Value in cents, default
// everything not yet refunded.
type RefundRequest struct {
	Value *int64 `json:"value,omitempty"`
}

// PayResult is the answer of a successful pay or refund. For a payment,
// Value is what came in and Owed what the payer owed on PaidAt (equal
// when no value was given), with its parts: the conditional Discount
// granted that day, Fine and Interest for DaysLate days.
type PayResult struct {
	ChargeID int64  `json:"charge_id"`
	CarnetID int64  `json:"carnet_id,omitempty"`
	Parcel   int    `json:"parcel,omitempty"`
	Value    int64  `json:"value"`
	PaidAt   string `json:"paid_at,omitempty"`
	Status   string `json:"status"`
	Owed     int64  `json:"owed,omitempty"`
	Discount int64  `json:"discount,omitempty"`
	Fine     int64  `json:"fine,omitempty"`
	Interest int64  `json:"interest,omitempty"`
	DaysLate int    `json:"days_late,omitempty"`
}

// decodeOptional decodes a JSON body that may be empty.
func decodeOptional(w http.ResponseWriter, r *http.Request, v any) bool {
	raw, err := io.ReadAll(http.MaxBytesReader(w, r.Body, 1<<16))
	if err != nil {
		fail(w, http.StatusBadRequest, "invalid_request", "", "corpo ilegível ou maior que 64 KiB")
		return false
	}
	if len(bytes.TrimSpace(raw)) == 0 {
		return true
	}
	if de := httpx.DecodeBytes(raw, v); de != nil {
		fail(w, de.Status(), "invalid_request", de.Pointer, "%s", de.Message)
		return false
	}
	return true
}

// account resolves ?payee_code= to an account id ("" when absent).
func (m *Module) account(w http.ResponseWriter, r *http.Request) (string, bool) {
	code := r.URL.Query().Get("payee_code")
	if code == "" {
		return "", true
	}
	if m.auth != nil {
		if a, ok := m.auth.AccountByPayeeCode(code); ok {
			return a.ID, true
		}
	}
	fail(w, http.StatusNotFound, "account_not_found", "payee_code", "nenhuma conta com payee_code %q", code)
	return "", false
}

func (m *Module) chargesOr503(w http.ResponseWriter) (Charges, bool) {
	c, ok := m.charges()
	if !ok {
		fail(w, http.StatusServiceUnavailable, "charges_unavailable", "", "o módulo de cobranças não está disponível neste sandbox")
	}
	return c, ok
}

func pathID(w http.ResponseWriter, r *http.Request, name string) (int64, bool) {
	s := r.PathValue(name)
	id, err := strconv.ParseInt(s, 10, 64)
	if err != nil || id <= 0 {
		fail(w, http.StatusBadRequest, "invalid_request", name, "%s %q: esperado um inteiro positivo", name, s)
		return 0, false
	}
	return id, true
}

// paidDate returns the moment to report for paid_at: noon in São Paulo of
// that date, or the sandbox's now.
func (m *Module) paidDate(s string) (time.Time, error) {
	if s == "" {
		return m.clk.Now(), nil
	}
	d, err := rules.ParseISODate(s)
	if err != nil {
		return time.Time{}, err
	}
	return time.Date(d.Year(), d.Month(), d.Day(), 12, 0, 0, 0, rules.SaoPaulo), nil
}

// start does what every pay and refund route does first, answering the
// refusal itself when ok is false: the charges module (503 without it),
// the path's ids in order (400), the account of ?payee_code= (404) and the
// optional body into req (400).
func (m *Module) start(w http.ResponseWriter, r *http.Request, req any, names ...string) (c Charges, ids []int64, account string, ok bool) {
	if c, ok = m.chargesOr503(w); !ok {
		return nil, nil, "", false
	}
	for _, name := range names {
		id, ok := pathID(w, r, name)
		if !ok {
			return nil, nil, "", false
		}
		ids = append(ids, id)
	}
	if account, ok = m.account(w, r); !ok {
		return nil, nil, "", false
	}
	if !decodeOptional(w, r, req) {
		return nil, nil, "", false
	}
	return c, ids, account, true
}

// maxPaidCents is the largest value a slip can carry (10 digits in the
// barcode), so the largest a bank can report.
const maxPaidCents = 9_999_999_999

func (m *Module) handlePayCharge(w http.ResponseWriter, r *http.Request) {
	var req PayRequest
	c, ids, account, ok := m.start(w, r, &req, "id")
	if !ok {
		return
	}
	id := ids[0]
	owner, found := c.ChargeAccount(id)
	if !found || (account != "" && owner != account) {
		fail(w, http.StatusNotFound, "charge_not_found", "id", "cobrança %d não encontrada", id)
		return
	}
	doc, err := m.findCharge(r.Context(), owner, id)
	if err != nil {
		m.internal(w, err)
		return
	}
	if doc == nil {
		fail(w, http.StatusNotFound, "charge_not_found", "id", "cobrança %d não encontrada", id)
		return
	}
	m.pay(w, r, c, owner, doc, req)
}

func (m *Module) handlePayParcel(w http.ResponseWriter, r *http.Request) {
	var req PayRequest
	c, ids, account, ok := m.start(w, r, &req, "id", "n")
	if !ok {
		return
	}
	id, n := ids[0], ids[1]
	cn, err := m.findCarnet(r.Context(), account, id)
	if err != nil {
		m.internal(w, err)
		return
	}
	if cn == nil {
		fail(w, http.StatusNotFound, "carnet_not_found", "id", "carnê %d não encontrado", id)
		return
	}
	if n > int64(len(cn.Parcels)) {
		fail(w, http.StatusNotFound, "parcel_not_found", "n", "o carnê %d tem %d parcelas; não há parcela %d", id, len(cn.Parcels), n)
		return
	}
	var parcel *charges.Charge
	for _, p := range cn.Parcels {
		if int64(p.Parcel) == n {
			parcel = p
		}
	}
	if parcel == nil {
		parcel = cn.Parcels[n-1]
	}
	m.pay(w, r, c, cn.Account, parcel, req)
}

func (m *Module) pay(w http.ResponseWriter, r *http.Request, c Charges, account string, doc *charges.Charge, req PayRequest) {
	var value int64 // 0: what the payer owes that day
	if req.Value != nil {
		value = *req.Value
		if value <= 0 || value > maxPaidCents {
			fail(w, http.StatusBadRequest, "invalid_request", "/value", "value %d: o valor pago, em centavos, deve estar entre 1 e %d", value, int64(maxPaidCents))
			return
		}
	}
	at, err := m.paidDate(req.PaidAt)
	if err != nil {
		fail(w, http.StatusBadRequest, "invalid_request", "/paid_at", "paid_at %q: use uma data AAAA-MM-DD", req.PaidAt)
		return
	}
	// A bank reports a payment it has received: not after the sandbox's
	// today, not before the charge existed.
	day, today, created := rules.Today(at), rules.Today(m.clk.Now()), rules.Today(doc.CreatedAt)
	if day.After(today) {
		fail(w, http.StatusBadRequest, "invalid_request", "/paid_at", "paid_at %q é depois de hoje no sandbox (%s): avance o relógio antes (remessa sandbox clock)",
			req.PaidAt, today.Format("2006-01-02"))
		return
	}
	if day.Before(created) {
		fail(w, http.StatusBadRequest, "invalid_request", "/paid_at", "paid_at %q é anterior à criação da cobrança %d (%s)",
			req.PaidAt, doc.ID, created.Format("2006-01-02"))
		return
	}
	p, err := c.Pay(r.Context(), account, doc.ID, value, at)
	if err != nil {
		m.refused(w, err)
		return
	}
	httpx.WriteJSON(w, http.StatusOK, PayResult{ChargeID: doc.ID, CarnetID: doc.CarnetID, Parcel: doc.Parcel, Value: p.Value,
		PaidAt: rules.Today(at).Format("2006-01-02"), Status: charges.StatusPaid,
		Owed: p.Owed, Discount: p.Discount, Fine: p.Fine, Interest: p.Interest, DaysLate: p.DaysLate})
}

func (m *Module) handleRefund(w http.ResponseWriter, r *http.Request) {
	var req RefundRequest
	c, ids, account, ok := m.start(w, r, &req, "id")
	if !ok {
		return
	}
	id := ids[0]
	var cents int64
	if req.Value != nil {
		if cents = *req.Value; cents <= 0 {
			fail(w, http.StatusBadRequest, "invalid_request", "/value", "value %d: o valor a estornar, em centavos, deve ser positivo", cents)
			return
		}
	}
	owner, found := c.ChargeAccount(id)
	if !found || (account != "" && owner != account) {
		fail(w, http.StatusNotFound, "charge_not_found", "id", "cobrança %d não encontrada", id)
		return
	}
	if err := c.RefundCard(r.Context(), owner, id, cents); err != nil {
		m.refused(w, err)
		return
	}
	doc, _ := m.findCharge(r.Context(), owner, id)
	res := PayResult{ChargeID: id, Value: cents}
	if doc != nil {
		res.Status = doc.Status
		if cents == 0 {
			res.Value = doc.RefundedCents
		}
	}
	httpx.WriteJSON(w, http.StatusOK, res)
}

// refused answers a refusal of the charges module in its own dialect
// ({"code", "error", "error_description"}).
func (m *Module) refused(w http.ResponseWriter, err error) {
	var e *charges.Error
	if errors.As(err, &e) {
		httpx.V1Error(w, e.Status, e.Code, e.Slug, e.Desc)
		return
	}
	m.internal(w, err)
}

func (m *Module) internal(w http.ResponseWriter, err error) {
	m.log.Error().Err(err).Msg("control")
	fail(w, http.StatusInternalServerError, "internal", "", "erro interno do sandbox; veja o log")
}

// findCharge reads charge id of account as the charges module stored it;
// a carnet parcel is found inside its carnet. nil when there is none.
func (m *Module) findCharge(ctx context.Context, account string, id int64) (*charges.Charge, error) {
	var c charges.Charge
	found, err := m.st.Get(ctx, charges.KindCharge, account, strconv.FormatInt(id, 10), &c)
	if err != nil {
		return nil, err
	}
	if found {
		return &c, nil
	}
	var parcel *charges.Charge
	stop := errors.New("found")
	err = m.st.EachIn(ctx, charges.KindCarnet, account, func(_ string, raw []byte) error {
		var cn charges.Carnet
		if err := json.Unmarshal(raw, &cn); err != nil {
			return err
		}
		for _, p := range cn.Parcels {
			if p.ID == id {
				parcel = p
				return stop
			}
		}
		return nil
	})
	if err != nil && !errors.Is(err, stop) {
		return nil, err
	}
	return parcel, nil
}

// findCarnet reads carnet id of account ("" = any account).
func (m *Module) findCarnet(ctx context.Context, account string, id int64) (*charges.Carnet, error) {
	accounts := []string{account}
	if account == "" && m.auth != nil {
		accounts = accounts[:0]
		for _, a := range m.auth.Accounts() {
			accounts = append(accounts, a.ID)
		}
	}
	for _, acc := range accounts {
		var cn charges.Carnet
		found, err := m.st.Get(ctx, charges.KindCarnet, acc, strconv.FormatInt(id, 10), &cn)
		if err != nil {
			return nil, err
		}
		if found {
			return &cn, nil
		}
	}
	return nil, nil
}
