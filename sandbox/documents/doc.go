// Package documents renders what a payer prints: the slip ("boleto", ficha
// de compensação) as a PDF or a printable HTML page, and the carnet (a cover
// and one slip per parcel, three to an A4 page) as a PDF. The renderers are
// pure: they take a Slip or a Carnet and write bytes, nothing else.
//
// The barcode is drawn as Interleaved 2 of 5 from the 44 barcode digits
// (standards.md §1.5: start nnnn, stop Wnn, wide = 3 × narrow) by this
// package itself, so the bar widths are known exactly (ITFWidths) and a test
// can read them back from the drawn PDF. The Pix QR code is the BR Code of
// the same charge, encoded with github.com/boombuler/barcode/qr.
//
// Module wires the document routes into the sandbox (see routes.go).
package documents

import (
	"fmt"
	"strings"
	"time"
	"unicode/utf8"

	"remessa/rules"
)

// BankName is how the issuing bank is printed on every slip.
const BankName = "Efí S.A."

// Address is a postal address as the charges API carries it.
type Address struct {
	Street, Number, Complement, Neighborhood, City, State, Zipcode string
}

// Party is the beneficiary or the payer of a slip.
type Party struct {
	Name     string
	Document string // CPF (11 digits) or CNPJ (14 characters), with or without a mask
	Address  *Address
}

// Discount is a discount printed in the instructions. Type is "percentage"
// (Value in hundredths of a percent: 500 = 5%) or "currency" (Value in
// cents). A zero Until means the discount holds until the due date.
type Discount struct {
	Type  string
	Value int64
	Until time.Time
}

// Slip is one slip: a one-off slip charge or one parcel of a carnet.
type Slip struct {
	ChargeID    int64
	CarnetID    int64 // 0 unless the slip is a carnet parcel
	Parcel      int   // 1-based parcel number; 0 unless a carnet parcel
	Repeats     int   // number of parcels of the carnet
	CustomID    string
	Beneficiary Party
	Payer       Party
	Barcode     string // the 44 barcode digits (standards.md §1.1)
	PixQRCode   string // the BR Code of the same charge; empty when it has none
	ValueCents  int64
	DueDate     time.Time // civil date (00:00 UTC)
	IssuedAt    time.Time // civil date the slip was issued
	// Fine is charged once after the due date, in hundredths of a percent
	// (200 = 2%, the charges API's "fine").
	Fine int
	// Interest is charged per day after the due date in thousandths of a
	// percent (33 = 0.033% a day, the charges API's "interest"); with
	// InterestMonthly it is per month in hundredths of a percent (100 = 1%).
	Interest        int
	InterestMonthly bool
	Discounts       []Discount
	Messages        []string // up to 4 lines of up to 100 characters
	Status          string   // charges API status; "paid", "settled" or "canceled" print a stamp
}

// Carnet is a carnet: a cover and its parcels.
type Carnet struct {
	CarnetID    int64
	CustomID    string
	Beneficiary Party
	Payer       Party
	Message     string // up to 80 characters, printed on the cover
	CreatedAt   time.Time
	Status      string
	Parcels     []Slip
}

// TypedLine returns the formatted typed line of the slip's barcode.
func (s Slip) TypedLine() (string, error) { return rules.TypedLine(s.Barcode) }

// Check reports the first reason the slip cannot be printed.
func (s Slip) Check() error {
	where := fmt.Sprintf("slip of charge %d", s.ChargeID)
	if err := rules.CheckBarcode(s.Barcode); err != nil {
		return fmt.Errorf("documents: %s: barcode %q: %w", where, s.Barcode, err)
	}
	if s.ValueCents <= 0 {
		return fmt.Errorf("documents: %s: value %d cents must be positive", where, s.ValueCents)
	}
	if strings.TrimSpace(s.Beneficiary.Name) == "" {
		return fmt.Errorf("documents: %s: beneficiary name is empty", where)
	}
	if strings.TrimSpace(s.Payer.Name) == "" {
		return fmt.Errorf("documents: %s: payer name is empty", where)
	}
	if len(s.Messages) > rules.MaxSlipMessageLines {
		return fmt.Errorf("documents: %s: %d message lines, at most %d", where, len(s.Messages), rules.MaxSlipMessageLines)
	}
	for i, m := range s.Messages {
		if n := utf8.RuneCountInString(m); n > rules.MaxSlipMessageLine {
			return fmt.Errorf("documents: %s: message line %d has %d characters, at most %d", where, i+1, n, rules.MaxSlipMessageLine)
		}
	}
	for i, d := range s.Discounts {
		if d.Type != "percentage" && d.Type != "currency" {
			return fmt.Errorf("documents: %s: discount %d: type %q, want percentage or currency", where, i+1, d.Type)
		}
		if d.Value <= 0 {
			return fmt.Errorf("documents: %s: discount %d: value %d must be positive", where, i+1, d.Value)
		}
	}
	return nil
}

// Check reports the first reason the carnet cannot be printed.
func (c Carnet) Check() error {
	if len(c.Parcels) == 0 {
		return fmt.Errorf("documents: carnet %d has no parcels", c.CarnetID)
	}
	if n := utf8.RuneCountInString(c.Message); n > rules.MaxCarnetMessage {
		return fmt.Errorf("documents: carnet %d: message has %d characters, at most %d", c.CarnetID, n, rules.MaxCarnetMessage)
	}
	for i, p := range c.Parcels {
		if err := p.Check(); err != nil {
			return fmt.Errorf("documents: carnet %d parcel %d: %w", c.CarnetID, i+1, err)
		}
	}
	return nil
}

// formatDocument prints a CPF or CNPJ with its mask; anything else as given.
func formatDocument(doc string) string {
	c := rules.CleanDocument(doc)
	switch len(c) {
	case 11:
		return "CPF " + rules.FormatCPF(c)
	case 14:
		return "CNPJ " + rules.FormatCNPJ(c)
	}
	return doc
}

func formatDate(d time.Time) string {
	if d.IsZero() {
		return ""
	}
	return d.Format("02/01/2006")
}

// formatAddress returns the address as one or two printable lines.
func formatAddress(a *Address) []string {
	if a == nil {
		return nil
	}
	line1 := strings.TrimSpace(a.Street)
	if a.Number != "" {
		line1 += ", " + a.Number
	}
	if strings.TrimSpace(a.Complement) != "" {
		line1 += " - " + strings.TrimSpace(a.Complement)
	}
	if a.Neighborhood != "" {
		line1 += " - " + a.Neighborhood
	}
	line2 := a.City
	if a.State != "" {
		line2 += "/" + a.State
	}
	if z := rules.CleanDocument(a.Zipcode); len(z) == 8 {
		line2 += " - CEP " + z[:5] + "-" + z[5:]
	} else if a.Zipcode != "" {
		line2 += " - CEP " + a.Zipcode
	}
	var out []string
	for _, l := range []string{line1, line2} {
		if strings.Trim(l, " ,-/") != "" {
			out = append(out, l)
		}
	}
	return out
}

// percent formats v given in units of 10^-scale percent with a decimal
// comma, dropping trailing zeros: percent(200, 2) = "2", percent(33, 3) = "0,033".
func percent(v int64, scale int) string {
	p := int64(1)
	for i := 0; i < scale; i++ {
		p *= 10
	}
	s := fmt.Sprintf("%d", v/p)
	frac := fmt.Sprintf("%0*d", scale, v%p)
	frac = strings.TrimRight(frac, "0")
	if frac != "" {
		s += "," + frac
	}
	return s
}

// conditionalUntil is the last day of the slip's conditional discount (a
// discount with an Until), if it has one.
func (s Slip) conditionalUntil() (time.Time, bool) {
	for _, d := range s.Discounts {
		if !d.Until.IsZero() {
			return d.Until, true
		}
	}
	return time.Time{}, false
}

// hasConditional reports whether a parcel of c has a conditional discount.
func (c Carnet) hasConditional() bool {
	for _, p := range c.Parcels {
		if _, ok := p.conditionalUntil(); ok {
			return true
		}
	}
	return false
}

// discountLine is the cover's sentence on the conditional discount: when
// every discounted parcel shares one last day (a carnet's one until_date,
// docs/discounts.md), that it is one date for the whole carnet and which
// parcel it falls before; "" when no parcel has one or the dates differ (the
// parcels table then shows each).
func (c Carnet) discountLine() string {
	var d *Discount
	for i := range c.Parcels {
		for k := range c.Parcels[i].Discounts {
			x := &c.Parcels[i].Discounts[k]
			if x.Until.IsZero() {
				continue
			}
			if d != nil && (x.Until != d.Until || x.Value != d.Value || x.Type != d.Type) {
				return ""
			}
			d = x
		}
	}
	if d == nil {
		return ""
	}
	amount := rules.FormatBRL(d.Value)
	if d.Type == "percentage" {
		amount = percent(d.Value, 2) + "%"
	}
	var before []int // parcels due on or after the last day of the discount
	for _, p := range c.Parcels {
		if !p.DueDate.Before(d.Until) {
			before = append(before, p.Parcel)
		}
	}
	line := fmt.Sprintf("Desconto de %s para pagamento até %s: uma só data para todas as parcelas do carnê.", amount, formatDate(d.Until))
	if len(before) > 1 {
		line += fmt.Sprintf(" Nas parcelas %d a %d, o desconto só vale se pagas até %s, antes do vencimento.",
			before[1], before[len(before)-1], formatDate(d.Until))
	}
	return line
}

// Instructions returns the instruction lines printed on the slip: fine,
// interest, discounts, then the charge's message lines.
func (s Slip) Instructions() []string {
	var out []string
	if s.Fine > 0 {
		out = append(out, fmt.Sprintf("Após o vencimento, cobrar multa de %s%%.", percent(int64(s.Fine), 2)))
	}
	if s.Interest > 0 {
		if s.InterestMonthly {
			out = append(out, fmt.Sprintf("Após o vencimento, cobrar juros de %s%% ao mês.", percent(int64(s.Interest), 2)))
		} else {
			out = append(out, fmt.Sprintf("Após o vencimento, cobrar juros de %s%% ao dia.", percent(int64(s.Interest), 3)))
		}
	}
	for _, d := range s.Discounts {
		amount := rules.FormatBRL(d.Value)
		if d.Type == "percentage" {
			amount = percent(d.Value, 2) + "%"
		}
		until := s.DueDate
		if !d.Until.IsZero() {
			until = d.Until
		}
		out = append(out, fmt.Sprintf("Desconto de %s para pagamento até %s.", amount, formatDate(until)))
	}
	out = append(out, s.Messages...)
	return out
}

func statusStamp(status string) string {
	switch status {
	case "paid":
		return "PAGO"
	case "settled":
		return "BAIXADO"
	case "canceled":
		return "CANCELADO"
	case "expired":
		return "EXPIRADO"
	}
	return ""
}
