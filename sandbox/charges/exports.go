package charges

import (
	"context"
	"errors"
	"net/http"
	"strings"
	"time"

	"remessa/rules"
)

// PaySlip records the payment of paidCents (> 0) on a slip, a carnet
// parcel or a card charge: Pay with an explicit value.
func (m *Module) PaySlip(ctx context.Context, account string, chargeID int64, paidCents int64, paidDate time.Time) error {
	if paidCents <= 0 {
		return invalid("/value", "o valor pago deve ser positivo (recebido %d)", paidCents)
	}
	_, err := m.Pay(ctx, account, chargeID, paidCents, paidDate)
	return err
}

// SlipPayment is what Pay recorded: Value came in; Owed is what the payer
// owed on the payment date (rules.SlipAmountDue's Total for a slip or
// parcel, the total for a card or payment-link charge) and Discount, Fine,
// Interest and DaysLate its parts.
type SlipPayment struct {
	Value    int64
	Owed     int64
	Discount int64 // conditional discount granted on the day (the unconditional one is already off the total)
	Fine     int64
	Interest int64
	DaysLate int
}

// Pay records the payment of a slip, a carnet parcel or a card charge
// (the bank or acquirer confirmation the sandbox simulates): the charge
// goes to paid with the paid value and paidDate as received_by_bank_at,
// and the change is notified with value and received_by_bank_at.
// paidCents 0 pays what the payer owes on paidDate's São Paulo date: for a
// slip, rules.SlipAmountDue on the charge total (which already has the
// unconditional discount off) with the slip's fine, interest,
// days_to_write_off and conditional discount; for a card or link charge,
// the total. Allowed from waiting, unpaid, link (paid through the payment
// link) and, for slips, canceled (a slip printed before the cancellation
// and paid at a branch). A slip paid after its last payable day
// (rules.SlipCharge.LastPayable: due + days_to_write_off, never before the
// adjusted due date) is refused with CodeWrittenOff, whatever the value.
// Account is the internal account id (auth.Account.ID).
func (m *Module) Pay(ctx context.Context, account string, chargeID int64, paidCents int64, paidDate time.Time) (SlipPayment, error) {
	if paidCents < 0 {
		return SlipPayment{}, invalid("/value", "o valor pago deve ser positivo (recebido %d)", paidCents)
	}
	var out SlipPayment
	_, e := m.mutateCharge(ctx, account, chargeID, func(u *update, c *Charge) *Error {
		billet := c.Payment != nil && c.Payment.Billet != nil
		switch {
		case c.Status == StatusWaiting, c.Status == StatusUnpaid, c.Status == StatusLink:
		case c.Status == StatusCanceled && billet:
		default:
			return errf(CodeCannotPay, "invalid_status", "Não é possível registrar pagamento de uma cobrança com status [%s]", c.Status)
		}
		day := rules.Today(paidDate)
		out = SlipPayment{Owed: c.Total}
		if billet {
			sc, e := m.slipOwed(c, day)
			if e != nil {
				return e
			}
			out = SlipPayment{Owed: sc.Total, Discount: sc.Discount, Fine: sc.Fine, Interest: sc.Interest, DaysLate: sc.DaysLate}
		}
		out.Value = paidCents
		if out.Value == 0 {
			out.Value = out.Owed
		}
		if out.Value <= 0 {
			return invalid("/value", "nada a pagar em %s: o valor devido é zero", day.Format(dateLayout))
		}
		if c.Status == StatusLink {
			c.ViaLink = true
		}
		paid := out.Value
		c.PaidValue, c.PaidAt, c.ReceivedByBank = paid, u.now, day.Format(dateLayout)
		msg := "Pagamento confirmado: " + rules.FormatBRL(paid)
		if c.Status == StatusCanceled {
			msg = "Pagamento confirmado de boleto impresso antes do cancelamento: " + rules.FormatBRL(paid)
		}
		u.setStatus(c, StatusPaid, msg, func(ch *Change) {
			ch.Value = ptr(paid)
			ch.ReceivedByBankAt = c.ReceivedByBank
		})
		return nil
	})
	if e != nil {
		return SlipPayment{}, e
	}
	return out, nil
}

// slipOwed is what the payer of slip c owes on day, by rules.SlipAmountDue
// with the slip's terms; a day after the last payable one is refused
// (CodeWrittenOff). c.Total already has the unconditional discount taken
// off (see attachBillet, and the carnet parcels), so it is passed with Discount nil.
func (m *Module) slipOwed(c *Charge, day time.Time) (rules.SlipCharge, *Error) {
	b := c.Payment.Billet
	due, err := rules.ParseISODate(b.ExpireAt)
	if err != nil {
		return rules.SlipCharge{}, errInternal
	}
	t := rules.SlipTerms{Fine: b.Configurations.Fine, Interest: b.Configurations.Interest}
	if w := b.Configurations.DaysToWriteOff; w != nil {
		n := int(*w)
		t.DaysToWriteOff = &n
	}
	if cd := b.ConditionalDiscount; cd != nil {
		until, err := rules.ParseISODate(cd.UntilDate)
		if err != nil {
			return rules.SlipCharge{}, errInternal
		}
		t.ConditionalDiscount = &rules.SlipConditionalDiscount{Type: cd.Type, Value: cd.Value, Until: until}
	}
	sc, err := rules.SlipAmountDue(c.Total, t, due, day)
	switch {
	case errors.Is(err, rules.ErrNotPayable):
		return sc, errf(CodeWrittenOff, "billet_written_off", "O boleto da cobrança %d vencido em %s foi baixado: o último dia de pagamento era %s (days_to_write_off %d); pagamento em %s recusado",
			c.ID, due.Format(dateLayout), sc.LastPayable.Format(dateLayout), *t.DaysToWriteOff, day.Format(dateLayout))
	case err != nil:
		m.log.Error().Err(err).Int64("charge_id", c.ID).Msg("slip terms")
		return sc, errInternal
	}
	return sc, nil
}

// RefundCard refunds cents (0 = everything not yet refunded) of a paid card
// charge; a full refund moves it to refunded.
func (m *Module) RefundCard(ctx context.Context, account string, chargeID int64, cents int64) error {
	if cents < 0 {
		return invalid("/amount", "amount negativo: %d", cents)
	}
	if e := m.refund(ctx, account, chargeID, cents); e != nil {
		return e
	}
	return nil
}

// Party is the beneficiary or the payer of a document.
type Party struct {
	Name     string
	Document string // CPF (11 digits) or CNPJ (14 characters)
	Email    string
	Address  *PartyAddress
}

// PartyAddress is a postal address with plain strings.
type PartyAddress struct {
	Street, Number, Complement, Neighborhood, City, State, Zipcode string
}

// DiscountView is a discount for printing: Type "percentage" (Value in
// hundredths of a percent) or "currency" (cents); Until is zero for an
// unconditional discount, else the last day of a conditional one.
type DiscountView struct {
	Type  string
	Value int64
	Until time.Time
}

// LinkView is what a payment page needs.
type LinkView struct {
	PaymentMethod          string // banking_billet, credit_card or all
	ExpireAt               time.Time
	Message                string
	BilletDiscount         int64 // cents
	CardDiscount           int64 // cents
	Conditional            *DiscountView
	RequestDeliveryAddress bool
	Email                  string
}

// SlipView is what a document needs about a charge (mirrors
// documents.Slip): for a slip or parcel the barcode (44 digits), typed
// line, BR Code and QR image; for a payment link Link; for a card charge
// Method "credit_card" and no slip data.
type SlipView struct {
	Account     string
	ChargeID    int64
	CarnetID    int64 // 0 unless a carnet parcel
	Parcel      int
	Repeats     int
	CustomID    string
	Method      string // banking_billet, credit_card or "" (no payment form yet)
	Beneficiary Party
	Payer       Party
	Barcode     string
	TypedLine   string
	PixQRCode   string
	QRCodeImage string // data:image/png;base64,...
	ValueCents  int64
	DueDate     time.Time // civil date, 00:00 UTC
	IssuedAt    time.Time // civil date the slip was issued
	Fine        int       // hundredths of a percent, once after due date
	Interest    int       // thousandths of a percent per day
	// DaysToWriteOff is -1 when not set.
	DaysToWriteOff int
	Discounts      []DiscountView
	Messages       []string
	Status         string
	Items          []Item
	Link           *LinkView
}

// CarnetView is what a carnet document needs (mirrors documents.Carnet).
type CarnetView struct {
	Account     string
	CarnetID    int64
	CustomID    string
	Beneficiary Party
	Payer       Party
	Message     string
	CreatedAt   time.Time
	Status      string
	Parcels     []SlipView
}

func (m *Module) beneficiary(account string) Party {
	if m.d.Auth != nil {
		if a, ok := m.d.Auth.Account(account); ok {
			return Party{Name: a.Name, Document: rules.CleanDocument(a.CNPJ)}
		}
	}
	return Party{Name: "Conta sandbox"}
}

func payerParty(c *Customer) Party {
	if c == nil {
		return Party{}
	}
	p := Party{Name: c.Name, Document: c.CPF, Email: c.Email}
	if jp := c.JuridicalPerson; jp != nil {
		p.Name, p.Document = jp.CorporateName, jp.CNPJ
	}
	if a := c.Address; a != nil {
		pa := &PartyAddress{Street: a.Street, Number: a.Number, Neighborhood: a.Neighborhood, City: a.City, State: a.State, Zipcode: a.Zipcode}
		if a.Complement != nil {
			pa.Complement = *a.Complement
		}
		p.Address = pa
	}
	return p
}

func strOr(s *string) string {
	if s == nil {
		return ""
	}
	return *s
}

// projected is c's status as of today, counting transitions not yet
// written.
func projected(c *Charge, today time.Time) string {
	if !needsRefresh(c, today) {
		return c.Status
	}
	if c.Status == StatusLink {
		return StatusExpired
	}
	return StatusUnpaid
}

func (m *Module) slipView(c *Charge, cn *Carnet, today time.Time) SlipView {
	v := SlipView{Account: c.Account, ChargeID: c.ID, CarnetID: c.CarnetID, Parcel: c.Parcel, CustomID: strOr(c.CustomID),
		Beneficiary: m.beneficiary(c.Account), Payer: payerParty(chargeCustomer(c, cn)), ValueCents: c.Total,
		IssuedAt: rules.Today(c.CreatedAt), Status: projected(c, today), Items: c.Items, DaysToWriteOff: -1}
	if cn != nil {
		v.Repeats, v.CustomID = cn.Repeats, strOr(cn.CustomID)
	}
	if p := c.Payment; p != nil {
		v.Method = p.Method
		v.IssuedAt = rules.Today(p.CreatedAt)
		if b := p.Billet; b != nil {
			v.Barcode, v.TypedLine, v.PixQRCode, v.QRCodeImage = b.Barcode, b.TypedLine, b.BRCode, b.QRImage
			v.DueDate, _ = rules.ParseISODate(b.ExpireAt)
			v.Fine, v.Interest = int(b.Configurations.Fine), int(b.Configurations.Interest)
			if b.Configurations.DaysToWriteOff != nil {
				v.DaysToWriteOff = int(*b.Configurations.DaysToWriteOff)
			}
			if b.Discount != nil {
				v.Discounts = append(v.Discounts, DiscountView{Type: b.Discount.Type, Value: b.Discount.Value})
			}
			if cd := b.ConditionalDiscount; cd != nil {
				until, _ := rules.ParseISODate(cd.UntilDate)
				v.Discounts = append(v.Discounts, DiscountView{Type: cd.Type, Value: cd.Value, Until: until})
			}
			for _, l := range strings.Split(b.Message, "\n") {
				if strings.TrimSpace(l) != "" {
					v.Messages = append(v.Messages, l)
				}
			}
		}
	}
	if l := c.Link; l != nil {
		lv := &LinkView{PaymentMethod: l.PaymentMethod, Message: l.Message, BilletDiscount: l.BilletDiscount,
			CardDiscount: l.CardDiscount, RequestDeliveryAddress: l.RequestDeliveryAddress, Email: l.Email}
		lv.ExpireAt, _ = rules.ParseISODate(l.ExpireAt)
		if cd := l.ConditionalDiscount; cd != nil {
			until, _ := rules.ParseISODate(cd.UntilDate)
			lv.Conditional = &DiscountView{Type: cd.Type, Value: cd.Value, Until: until}
		}
		v.Link = lv
	}
	return v
}

// ChargeDocument returns the document data of the charge or parcel whose
// document token is token (the {token} of /v1/documents/charge/{token}/...).
func (m *Module) ChargeDocument(token string) (SlipView, bool) {
	today := rules.Today(m.now())
	ctx := context.Background()
	account, chargeID, _, ok, err := m.docRef(ctx, token)
	if err != nil || !ok || chargeID == 0 {
		return SlipView{}, false
	}
	c, cn, err := m.readCharge(ctx, nil, account, chargeID)
	if err != nil || c == nil {
		return SlipView{}, false
	}
	return m.slipView(c, cn, today), true
}

// LinkDocument is ChargeDocument for a payment-link charge (the {token}
// of /v1/documents/link/{token}); false when the charge has no link.
func (m *Module) LinkDocument(token string) (SlipView, bool) {
	v, ok := m.ChargeDocument(token)
	if !ok || v.Link == nil {
		return SlipView{}, false
	}
	return v, true
}

// CarnetDocument returns the document data of the carnet whose document
// token is token (the {token} of /v1/documents/carnet/{token}/...).
func (m *Module) CarnetDocument(token string) (CarnetView, bool) {
	today := rules.Today(m.now())
	ctx := context.Background()
	account, _, carnetID, ok, err := m.docRef(ctx, token)
	if err != nil || !ok || carnetID == 0 {
		return CarnetView{}, false
	}
	cn, err := m.carnets.Get(ctx, account, idKey(carnetID))
	if err != nil || cn == nil {
		return CarnetView{}, false
	}
	v := CarnetView{Account: cn.Account, CarnetID: cn.ID, CustomID: strOr(cn.CustomID), Beneficiary: m.beneficiary(cn.Account),
		Payer: payerParty(&cn.Customer), Message: cn.Message, CreatedAt: cn.CreatedAt, Status: cn.Status}
	for _, p := range cn.Parcels {
		v.Parcels = append(v.Parcels, m.slipView(p, cn, today))
	}
	return v, true
}

// ChargeAccount tells which account owns charge id (for control routes
// that receive only an id); false when no account has it.
func (m *Module) ChargeAccount(id int64) (string, bool) {
	if m.d.Auth == nil {
		return "", false
	}
	ctx := context.Background()
	for _, a := range m.d.Auth.Accounts() {
		if c, _, err := m.readCharge(ctx, nil, a.ID, id); err == nil && c != nil {
			return a.ID, true
		}
	}
	return "", false
}

// ErrorStatus returns the HTTP status and charges API code of an error
// returned by PaySlip or RefundCard (400 and the code for a refusal, 500
// otherwise), so control routes can answer like the API.
func ErrorStatus(err error) (status, code int) {
	if e, ok := err.(*Error); ok {
		return e.Status, e.Code
	}
	return http.StatusInternalServerError, CodeInternal
}
