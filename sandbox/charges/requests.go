package charges

import (
	"fmt"
	"net/url"
	"regexp"
	"strings"
	"time"
	"unicode/utf8"

	"remessa/rules"
)

// Request bodies. Pointers tell "absent or null" from a zero value so a
// missing required property gets its own 3500034 with its JSON pointer.

type itemReq struct {
	Name        *string         `json:"name"`
	Value       *int64          `json:"value"`
	Amount      *int64          `json:"amount"`
	Marketplace *marketplaceReq `json:"marketplace"`
}

type marketplaceReq struct {
	Mode     *int64       `json:"mode"`
	Repasses []repasseReq `json:"repasses"`
	// Legacy flat form of older SDK typings: {payee_code, percentage}.
	PayeeCode  *string `json:"payee_code"`
	Percentage *int64  `json:"percentage"`
}

type repasseReq struct {
	PayeeCode  *string `json:"payee_code"`
	Percentage *int64  `json:"percentage"`
	Fixed      *int64  `json:"fixed"`
}

type shippingReq struct {
	Name      *string `json:"name"`
	Value     *int64  `json:"value"`
	PayeeCode *string `json:"payee_code"`
}

type metadataReq struct {
	CustomID        *string `json:"custom_id"`
	NotificationURL *string `json:"notification_url"`
	Resend          *bool   `json:"resend"`
}

type discountReq struct {
	Type  *string `json:"type"`
	Value *int64  `json:"value"`
}

type condDiscountReq struct {
	Type      *string `json:"type"`
	Value     *int64  `json:"value"`
	UntilDate *string `json:"until_date"`
}

type configReq struct {
	Fine           *int64 `json:"fine"`
	Interest       *int64 `json:"interest"`
	DaysToWriteOff *int64 `json:"days_to_write_off"`
}

type billetReq struct {
	Customer            *Customer        `json:"customer"`
	ExpireAt            *string          `json:"expire_at"`
	Configurations      *configReq       `json:"configurations"`
	Message             *string          `json:"message" text:"multiline"` // printed on the slip: line breaks allowed
	Discount            *discountReq     `json:"discount"`
	ConditionalDiscount *condDiscountReq `json:"conditional_discount"`
}

type cardReq struct {
	Customer       *Customer    `json:"customer"`
	Installments   *int64       `json:"installments"`
	PaymentToken   *string      `json:"payment_token"`
	BillingAddress *Address     `json:"billing_address"`
	Discount       *discountReq `json:"discount"`
	Message        *string      `json:"message"`
}

type paymentReq struct {
	BankingBillet *billetReq `json:"banking_billet"`
	CreditCard    *cardReq   `json:"credit_card"`
}

type chargeReq struct {
	Items     []itemReq     `json:"items"`
	Shippings []shippingReq `json:"shippings"`
	Metadata  *metadataReq  `json:"metadata"`
}

type oneStepReq struct {
	Items     []itemReq     `json:"items"`
	Shippings []shippingReq `json:"shippings"`
	Metadata  *metadataReq  `json:"metadata"`
	Payment   *paymentReq   `json:"payment"`
}

type payReq struct {
	Payment *paymentReq `json:"payment"`
}

type retryReq struct {
	Payment *struct {
		CreditCard *cardReq `json:"credit_card"`
	} `json:"payment"`
}

type linkReq struct {
	BilletDiscount         *int64           `json:"billet_discount"`
	CardDiscount           *int64           `json:"card_discount"`
	ConditionalDiscount    *condDiscountReq `json:"conditional_discount"`
	Message                *string          `json:"message"`
	PaymentMethod          *string          `json:"payment_method"`
	ExpireAt               *string          `json:"expire_at"`
	ExpireAtDash           *string          `json:"expire-at"`
	RequestDeliveryAddress *bool            `json:"request_delivery_address"`
}

type oneStepLinkReq struct {
	Items     []itemReq     `json:"items"`
	Shippings []shippingReq `json:"shippings"`
	Metadata  *metadataReq  `json:"metadata"`
	Customer  *struct {
		Email *string `json:"email"`
	} `json:"customer"`
	Settings *linkReq `json:"settings"`
}

type carnetReq struct {
	Items               []itemReq        `json:"items"`
	Customer            *Customer        `json:"customer"`
	ExpireAt            *string          `json:"expire_at"`
	Repeats             *int64           `json:"repeats"`
	SplitItems          *bool            `json:"split_items"`
	Metadata            *metadataReq     `json:"metadata"`
	Configurations      *configReq       `json:"configurations"`
	Message             *string          `json:"message" text:"multiline"` // printed on the slip: line breaks allowed
	Discount            *discountReq     `json:"discount"`
	ConditionalDiscount *condDiscountReq `json:"conditional_discount"`
}

type historyReq struct {
	Description *string `json:"description"`
}

type emailReq struct {
	Email *string `json:"email"`
}

type expireReq struct {
	ExpireAt *string `json:"expire_at"`
}

type parcelsReq struct {
	Parcels []struct {
		Parcel   *int64  `json:"parcel"`
		ExpireAt *string `json:"expire_at"`
	} `json:"parcels"`
}

type refundReq struct {
	Amount *int64 `json:"amount"`
}

// Limits of the sandbox beyond rules' table.
const (
	maxText       = 255        // names, custom_id, notification_url
	maxSlipCents  = 9999999999 // 10 digits in the barcode
	minSlipCents  = 500        // R$ 5,00 (4600036)
	maxDueDays    = 3650       // due date at most ~10 years ahead (4600414)
	expirePattern = `^[12][0-9]{3}-(?:0[1-9]|1[0-2])-(?:0[1-9]|[12][0-9]|3[01])$`
)

var reExpire = regexp.MustCompile(expirePattern)

// parseDate checks the spec's expire_at pattern and that the date exists.
func parseDate(p, s string) (time.Time, *Error) {
	if !reExpire.MatchString(s) {
		return time.Time{}, invalid(p, "A string não corresponde ao modelo: %s", expirePattern)
	}
	t, err := rules.ParseISODate(s)
	if err != nil {
		return time.Time{}, invalid(p, "Data inexistente: %s", s)
	}
	return t, nil
}

func textLen(p, s string, min, max int) *Error {
	n := utf8.RuneCountInString(s)
	if !utf8.ValidString(s) {
		return invalid(p, "O texto não é UTF-8 válido")
	}
	if n < min {
		if min == 1 {
			return invalid(p, "O texto não pode ser vazio")
		}
		return invalid(p, "O texto deve ter no mínimo %d caracteres", min)
	}
	if n > max {
		return invalid(p, "O texto deve ter no máximo %d caracteres (recebido %d)", max, n)
	}
	return nil
}

// validItems converts and checks items (without the marketplace rules,
// which need shippings too: see checkSplit).
func validItems(in []itemReq, p string) ([]Item, *Error) {
	if in == nil {
		return nil, required(p)
	}
	if len(in) == 0 {
		return nil, invalid(p, "A lista de itens deve ter ao menos 1 item")
	}
	out := make([]Item, len(in))
	var sum int64
	for i, it := range in {
		ip := fmt.Sprintf("%s/%d", p, i)
		if it.Name == nil {
			return nil, required(ip + "/name")
		}
		if e := textLen(ip+"/name", *it.Name, 1, maxText); e != nil {
			return nil, e
		}
		if it.Value == nil {
			return nil, required(ip + "/value")
		}
		if *it.Value < 1 || *it.Value > maxSlipCents {
			return nil, invalid(ip+"/value", "O valor deve estar entre 1 e %d centavos (recebido %d)", int64(maxSlipCents), *it.Value)
		}
		amount := int64(1)
		if it.Amount != nil {
			amount = *it.Amount
		}
		if amount < 1 || amount > 100000 {
			return nil, invalid(ip+"/amount", "A quantidade deve estar entre 1 e 100000 (recebido %d)", amount)
		}
		if *it.Value*amount > maxSlipCents-sum {
			return nil, invalid(ip, "O valor total dos itens excede o máximo de %s", rules.FormatBRL(maxSlipCents))
		}
		sum += *it.Value * amount
		out[i] = Item{Name: *it.Name, Value: *it.Value, Amount: amount}
		if m := it.Marketplace; m != nil {
			mp := &Marketplace{Mode: 2}
			if m.Mode != nil {
				mp.Mode = int(*m.Mode)
				if *m.Mode != 1 && *m.Mode != 2 {
					return nil, invalid(ip+"/marketplace/mode", "mode deve ser 1 ou 2 (recebido %d)", *m.Mode)
				}
			}
			if m.PayeeCode != nil || m.Percentage != nil {
				if m.Repasses != nil {
					return nil, invalid(ip+"/marketplace", "Use repasses ou payee_code/percentage, não os dois")
				}
				r := Repasse{}
				if m.PayeeCode != nil {
					r.PayeeCode = *m.PayeeCode
				}
				if m.Percentage != nil {
					r.Percentage = *m.Percentage
				}
				mp.Repasses = []Repasse{r}
			} else {
				if m.Repasses == nil {
					return nil, required(ip + "/marketplace/repasses")
				}
				for j, r := range m.Repasses {
					rp := fmt.Sprintf("%s/marketplace/repasses/%d", ip, j)
					if r.PayeeCode == nil {
						return nil, required(rp + "/payee_code")
					}
					x := Repasse{PayeeCode: *r.PayeeCode}
					if r.Percentage != nil {
						x.Percentage = *r.Percentage
					}
					if r.Fixed != nil {
						x.Fixed = *r.Fixed
					}
					if r.Percentage == nil && r.Fixed == nil {
						return nil, required(rp + "/percentage")
					}
					mp.Repasses = append(mp.Repasses, x)
				}
			}
			out[i].Marketplace = mp
		}
	}
	return out, nil
}

func validShippings(in []shippingReq, p string) ([]Shipping, *Error) {
	var out []Shipping
	for i, s := range in {
		sp := fmt.Sprintf("%s/%d", p, i)
		if s.Name == nil {
			return nil, required(sp + "/name")
		}
		if e := textLen(sp+"/name", *s.Name, 1, maxText); e != nil {
			return nil, e
		}
		if s.Value == nil {
			return nil, required(sp + "/value")
		}
		if *s.Value < 0 || *s.Value > maxSlipCents {
			return nil, invalid(sp+"/value", "O valor do frete deve estar entre 0 e %d centavos (recebido %d)", int64(maxSlipCents), *s.Value)
		}
		x := Shipping{Name: *s.Name, Value: *s.Value}
		if s.PayeeCode != nil {
			x.PayeeCode = *s.PayeeCode
		}
		out = append(out, x)
	}
	return out, nil
}

// checkSplit applies the marketplace rules 1-10 (rules.CheckMarketplace)
// and maps the first violation to the real code: duplicate account 3500026,
// a malformed payee_code 3500034, anything else 3500029.
func checkSplit(items []Item, ships []Shipping, own string) *Error {
	var si []rules.SplitItem
	for _, it := range items {
		x := rules.SplitItem{Name: it.Name, ValueCents: it.Value, Amount: it.Amount}
		if it.Marketplace != nil {
			m := &rules.Marketplace{Mode: it.Marketplace.Mode}
			for _, r := range it.Marketplace.Repasses {
				m.Repasses = append(m.Repasses, rules.Repasse{PayeeCode: r.PayeeCode, Percentage: r.Percentage, Fixed: r.Fixed})
			}
			x.Marketplace = m
		}
		si = append(si, x)
	}
	var ss []rules.SplitShipping
	for _, s := range ships {
		ss = append(ss, rules.SplitShipping{Name: s.Name, ValueCents: s.Value, PayeeCode: s.PayeeCode})
	}
	vs := rules.CheckMarketplace(si, ss, own)
	if len(vs) == 0 {
		return nil
	}
	v := vs[0]
	switch v.Rule {
	case "marketplace.10":
		return errf(CodeDuplicatePayee, "duplicate_payee_code", "%s (%s)", v.Message, v.Pointer)
	case "marketplace.8":
		return invalid(v.Pointer, "%s", v.Message)
	}
	return errf(CodeRepasses, "invalid_repasses", "Erro ao mapear repasses: %s (%s)", v.Message, v.Pointer)
}

func isSplit(items []Item, ships []Shipping) bool {
	for _, it := range items {
		if it.Marketplace != nil {
			return true
		}
	}
	for _, s := range ships {
		if s.PayeeCode != "" {
			return true
		}
	}
	return false
}

func itemsTotal(items []Item, ships []Shipping) int64 {
	var t int64
	for _, it := range items {
		t += it.Value * it.Amount
	}
	for _, s := range ships {
		t += s.Value
	}
	return t
}

// validMetadata checks custom_id and notification_url.
func validMetadata(m *metadataReq, p string) (customID, notifURL *string, e *Error) {
	if m == nil {
		return nil, nil, nil
	}
	if m.CustomID != nil {
		if e := textLen(p+"/custom_id", *m.CustomID, 0, maxText); e != nil {
			return nil, nil, e
		}
		if *m.CustomID != "" {
			s := *m.CustomID
			customID = &s
		}
	}
	if m.NotificationURL != nil && *m.NotificationURL != "" {
		u := *m.NotificationURL
		if e := textLen(p+"/notification_url", u, 1, maxText); e != nil {
			return nil, nil, e
		}
		pu, err := url.Parse(u)
		if err != nil || (pu.Scheme != "http" && pu.Scheme != "https") || pu.Host == "" {
			return nil, nil, invalid(p+"/notification_url", "URL inválida: use um endereço http:// ou https:// completo")
		}
		notifURL = &u
	}
	return customID, notifURL, nil
}

// customerKind says which customer fields a payment form requires.
type customerKind int

const (
	forBillet customerKind = iota
	forCard
)

// validCustomer checks and normalises a customer in place.
func validCustomer(c *Customer, p string, kind customerKind, today time.Time) *Error {
	if c == nil {
		return required(p)
	}
	if jp := c.JuridicalPerson; jp != nil {
		if jp.CorporateName == "" {
			return required(p + "/juridical_person/corporate_name")
		}
		if e := textLen(p+"/juridical_person/corporate_name", jp.CorporateName, 1, maxText); e != nil {
			return e
		}
		if jp.CNPJ == "" {
			return required(p + "/juridical_person/cnpj")
		}
		if !rules.ValidCNPJ(jp.CNPJ) {
			return invalid(p+"/juridical_person/cnpj", "CNPJ inválido: %s", jp.CNPJ)
		}
		jp.CNPJ = rules.CleanDocument(jp.CNPJ)
	}
	if c.Name == "" && (c.JuridicalPerson == nil || kind == forCard) {
		return required(p + "/name")
	}
	if c.Name != "" {
		if e := textLen(p+"/name", c.Name, 1, maxText); e != nil {
			return e
		}
	}
	if c.CPF == "" && (c.JuridicalPerson == nil || kind == forCard) {
		return required(p + "/cpf")
	}
	if c.CPF != "" {
		if !rules.ValidCPF(c.CPF) {
			return invalid(p+"/cpf", "CPF inválido: %s", rules.MaskDocument(c.CPF))
		}
		c.CPF = rules.CleanDocument(c.CPF)
	}
	if kind == forCard {
		if c.Email == "" {
			return required(p + "/email")
		}
		if c.Birth == "" {
			return required(p + "/birth")
		}
		if c.PhoneNumber == "" {
			return required(p + "/phone_number")
		}
	}
	if c.Email != "" && !rules.ValidEmail(c.Email) {
		return invalid(p+"/email", "E-mail inválido: %s", c.Email)
	}
	if c.PhoneNumber != "" && !rules.ValidPhone(c.PhoneNumber) {
		return invalid(p+"/phone_number", "Telefone inválido: use DDD e número, só dígitos (10 ou 11)")
	}
	if c.Birth != "" {
		b, e := parseDate(p+"/birth", c.Birth)
		if e != nil {
			return e
		}
		if !b.Before(today) {
			return invalid(p+"/birth", "A data de nascimento deve ser anterior a hoje")
		}
	}
	if c.Address != nil {
		if e := validAddress(c.Address, p+"/address"); e != nil {
			return e
		}
	}
	return nil
}

func validAddress(a *Address, p string) *Error {
	for _, f := range []struct{ name, v string }{
		{"street", a.Street}, {"number", a.Number}, {"neighborhood", a.Neighborhood},
		{"zipcode", a.Zipcode}, {"city", a.City}, {"state", a.State},
	} {
		if f.v == "" {
			return required(p + "/" + f.name)
		}
		if e := textLen(p+"/"+f.name, f.v, 1, 200); e != nil {
			return e
		}
	}
	if !rules.ValidCEP(a.Zipcode) {
		return invalid(p+"/zipcode", "CEP inválido: %s (8 dígitos)", a.Zipcode)
	}
	a.Zipcode = strings.ReplaceAll(a.Zipcode, "-", "")
	if !rules.ValidUF(a.State) {
		return invalid(p+"/state", "UF inválida: %s", a.State)
	}
	if a.Complement != nil {
		if e := textLen(p+"/complement", *a.Complement, 0, 200); e != nil {
			return e
		}
	}
	return nil
}

func validDiscount(d *discountReq, p string) (*Discount, *Error) {
	if d == nil {
		return nil, nil
	}
	if d.Type == nil {
		return nil, required(p + "/type")
	}
	if *d.Type != "percentage" && *d.Type != "currency" {
		return nil, invalid(p+"/type", "type deve ser percentage ou currency (recebido %q)", *d.Type)
	}
	if d.Value == nil {
		return nil, required(p + "/value")
	}
	if *d.Value < 1 || (*d.Type == "percentage" && *d.Value > 10000) || *d.Value > maxSlipCents {
		return nil, invalid(p+"/value", "Valor de desconto inválido: %d", *d.Value)
	}
	return &Discount{Type: *d.Type, Value: *d.Value}, nil
}

func validCondDiscount(d *condDiscountReq, p string) (*ConditionalDiscount, *Error) {
	if d == nil {
		return nil, nil
	}
	base, e := validDiscount(&discountReq{Type: d.Type, Value: d.Value}, p)
	if e != nil {
		return nil, e
	}
	if d.UntilDate == nil {
		return nil, required(p + "/until_date")
	}
	if _, e := parseDate(p+"/until_date", *d.UntilDate); e != nil {
		return nil, e
	}
	return &ConditionalDiscount{Type: base.Type, Value: base.Value, UntilDate: *d.UntilDate}, nil
}

// discountCents is discount d on value cents as rules.SlipAmountDue
// computes it (a percentage rounded half up, never more than value): the
// same arithmetic the payment control uses (and the reconciliation is to).
func discountCents(d *Discount, value int64) int64 {
	if d == nil {
		return 0
	}
	// The dates do not matter for an unconditional discount.
	c, err := rules.SlipAmountDue(value, rules.SlipTerms{Discount: &rules.SlipDiscount{Type: d.Type, Value: d.Value}}, discountDay, discountDay)
	if err != nil { // terms validated before: only a negative value
		return value
	}
	return c.Discount
}

// discountDay is any business day.
var discountDay = time.Date(2026, time.March, 2, 0, 0, 0, 0, time.UTC)

func validConfig(c *configReq, p string, allowWriteOff bool) (Configurations, *Error) {
	var out Configurations
	if c == nil {
		return out, nil
	}
	if c.Fine != nil {
		if *c.Fine < 0 || *c.Fine > rules.MaxFine {
			return out, invalid(p+"/fine", "fine deve estar entre 0 e %d (recebido %d)", rules.MaxFine, *c.Fine)
		}
		out.Fine = *c.Fine
	}
	if c.Interest != nil {
		if *c.Interest < 0 || *c.Interest > rules.MaxInterest {
			return out, invalid(p+"/interest", "interest deve estar entre 0 e %d (recebido %d)", rules.MaxInterest, *c.Interest)
		}
		out.Interest = *c.Interest
	}
	if c.DaysToWriteOff != nil {
		if !allowWriteOff {
			return out, invalid(p+"/days_to_write_off", "Propriedade não permitida aqui")
		}
		if *c.DaysToWriteOff < 0 || *c.DaysToWriteOff > rules.MaxDaysToWriteOff {
			return out, invalid(p+"/days_to_write_off", "days_to_write_off deve estar entre 0 e %d (recebido %d)", rules.MaxDaysToWriteOff, *c.DaysToWriteOff)
		}
		v := *c.DaysToWriteOff
		out.DaysToWriteOff = &v
	}
	return out, nil
}

// validSlipMessage checks up to 4 lines of up to 100 characters.
func validSlipMessage(m *string, p string) (string, *Error) {
	if m == nil {
		return "", nil
	}
	s := strings.ReplaceAll(*m, "\r\n", "\n")
	if !utf8.ValidString(s) {
		return "", invalid(p, "O texto não é UTF-8 válido")
	}
	lines := strings.Split(s, "\n")
	if len(lines) > rules.MaxSlipMessageLines {
		return "", invalid(p, "A mensagem deve ter no máximo %d linhas (recebido %d)", rules.MaxSlipMessageLines, len(lines))
	}
	for i, l := range lines {
		if n := utf8.RuneCountInString(l); n > rules.MaxSlipMessageLine {
			return "", invalid(p, "A linha %d da mensagem tem %d caracteres; o máximo é %d", i+1, n, rules.MaxSlipMessageLine)
		}
	}
	return s, nil
}

// validDue checks a slip due date: pattern, not before today, not too far.
func validDue(s *string, p string, today time.Time) (time.Time, *Error) {
	if s == nil {
		return time.Time{}, required(p)
	}
	d, e := parseDate(p, *s)
	if e != nil {
		return d, e
	}
	if d.Before(today) {
		return d, invalid(p, "A data de vencimento deve ser igual ou posterior a hoje (%s)", today.Format(dateLayout))
	}
	if d.Sub(today) > maxDueDays*24*time.Hour {
		return d, errf(CodeDueTooFar, "invalid_expire_at", "A data de vencimento %s está longe demais: no máximo %d dias a partir de hoje", *s, maxDueDays)
	}
	return d, nil
}

func minTotal(total int64) *Error {
	if total < minSlipCents {
		return errf(CodeMinTotal, "min_value", "O valor total da cobrança (%s) deve ser de no mínimo R$ 5,00", rules.FormatBRL(total))
	}
	if total > maxSlipCents {
		return invalid("/items", "O valor total da cobrança (%s) excede o máximo de um boleto", rules.FormatBRL(total))
	}
	return nil
}
