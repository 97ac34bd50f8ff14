package rules

import (
	"errors"
	"testing"
	"time"
)

func intp(n int) *int { return &n }

// Every expected value below is worked out by hand in its comment, never by
// the code under test. Calendar facts used: 2026-03-10 is a Tuesday,
// 2026-03-14 a Saturday, 2026-04-03 Good Friday, 2026-11-20 (Friday)
// Consciência Negra, 2028 is a leap year with Carnival on 28–29 Feb.
func TestSlipAmountDue(t *testing.T) {
	std := SlipTerms{Fine: 200, Interest: 33} // 2 %, 0,033 %/day
	cases := []struct {
		name        string
		value       int64
		terms       SlipTerms
		due, paidOn string
		want        SlipCharge // Base, Discount, Fine, Interest, Total, DaysLate
		notPayable  bool
	}{
		{"on time", 15000, std, "2026-03-10", "2026-03-10",
			// paid on the due date: nothing added
			SlipCharge{Base: 15000, Total: 15000}, false},
		{"early, no discount set", 15000, std, "2026-03-10", "2026-03-01",
			SlipCharge{Base: 15000, Total: 15000}, false},
		{"late 1 day", 15000, std, "2026-03-10", "2026-03-11",
			// 2 % of 150,00 = 3,00; 150,00 × 0,033 % × 1 = 0,0495 → 0,05; 150,00 + 3,00 + 0,05
			SlipCharge{Base: 15000, Fine: 300, Interest: 5, Total: 15305, DaysLate: 1}, false},
		{"late 10 days", 15000, std, "2026-03-10", "2026-03-20",
			// 3,00; 150,00 × 0,033 % × 10 = 0,495 → 0,50 (half up); 153,50
			SlipCharge{Base: 15000, Fine: 300, Interest: 50, Total: 15350, DaysLate: 10}, false},
		{"late 30 days across a month", 15000, std, "2026-03-10", "2026-04-09",
			// 11..31 Mar = 21 days + 1..9 Apr = 9 → 30; 150,00 × 0,033 % × 30 = 1,485 → 1,49; 150,00 + 3,00 + 1,49
			SlipCharge{Base: 15000, Fine: 300, Interest: 149, Total: 15449, DaysLate: 30}, false},
		{"February of a common year", 10000, std, "2026-02-26", "2026-03-02",
			// 27, 28 Feb, 1, 2 Mar = 4 days; 2 % of 100,00 = 2,00; 100,00 × 0,033 % × 4 = 0,132 → 0,13
			SlipCharge{Base: 10000, Fine: 200, Interest: 13, Total: 10213, DaysLate: 4}, false},
		{"leap year", 10000, std, "2028-02-25", "2028-03-02",
			// 26, 27, 28, 29 Feb, 1, 2 Mar = 6 days; 100,00 × 0,033 % × 6 = 0,198 → 0,20; 2,00
			SlipCharge{Base: 10000, Fine: 200, Interest: 20, Total: 10220, DaysLate: 6}, false},
		{"due on Carnival Monday, paid Ash Wednesday", 10000, std, "2028-02-28", "2028-03-01",
			// 28–29 Feb 2028 are Carnival: the adjusted due date is 1 Mar, so on time
			SlipCharge{Base: 10000, Total: 10000}, false},
		{"due on Carnival Monday, paid Thursday", 10000, std, "2028-02-28", "2028-03-02",
			// 1 day after the adjusted 1 Mar: 2,00 + 100,00 × 0,033 % = 0,033 → 0,03
			SlipCharge{Base: 10000, Fine: 200, Interest: 3, Total: 10203, DaysLate: 1}, false},
		{"due Saturday, paid Monday", 15000, std, "2026-03-14", "2026-03-16",
			// the next business day is on time (Lei 7.089/1983)
			SlipCharge{Base: 15000, Total: 15000}, false},
		{"due Saturday, paid Tuesday", 15000, std, "2026-03-14", "2026-03-17",
			// counted from Monday 16: 1 day; 3,00 + 0,0495 → 0,05
			SlipCharge{Base: 15000, Fine: 300, Interest: 5, Total: 15305, DaysLate: 1}, false},
		{"due Good Friday, paid Monday", 15000, std, "2026-04-03", "2026-04-06",
			SlipCharge{Base: 15000, Total: 15000}, false},
		{"zero fine and interest, 30 days late", 15000, SlipTerms{}, "2026-03-10", "2026-04-09",
			SlipCharge{Base: 15000, Total: 15000, DaysLate: 30}, false},
		{"caps: 10 % fine, 0,33 %/day", 15000, SlipTerms{Fine: 1000, Interest: 330}, "2026-03-10", "2026-03-20",
			// 10 % of 150,00 = 15,00; 150,00 × 0,33 % × 10 = 4,95; 150,00 + 15,00 + 4,95
			SlipCharge{Base: 15000, Fine: 1500, Interest: 495, Total: 16995, DaysLate: 10}, false},
		{"half-up rounding per part", 12345, std, "2026-03-10", "2026-03-11",
			// 2 % of 123,45 = 2,469 → 2,47; 123,45 × 0,033 % = 0,0407385 → 0,04; 123,45 + 2,47 + 0,04
			SlipCharge{Base: 12345, Fine: 247, Interest: 4, Total: 12596, DaysLate: 1}, false},
		{"half a cent rounds up", 25, SlipTerms{Fine: 200}, "2026-03-10", "2026-03-11",
			// 2 % of 0,25 = 0,005 → 0,01
			SlipCharge{Base: 25, Fine: 1, Total: 26, DaysLate: 1}, false},
		{"conditional discount, early", 15000,
			SlipTerms{Fine: 200, Interest: 33, ConditionalDiscount: &SlipConditionalDiscount{DiscountCurrency, 1000, day("2026-03-05")}},
			"2026-03-10", "2026-03-05",
			// paid on until_date: 10,00 off; 140,00
			SlipCharge{Base: 15000, Discount: 1000, Total: 14000}, false},
		{"conditional percentage discount, early", 15000,
			SlipTerms{ConditionalDiscount: &SlipConditionalDiscount{DiscountPercentage, 500, day("2026-03-05")}},
			"2026-03-10", "2026-03-01",
			// 5 % of 150,00 = 7,50; 142,50
			SlipCharge{Base: 15000, Discount: 750, Total: 14250}, false},
		{"conditional discount, after its date", 15000,
			SlipTerms{ConditionalDiscount: &SlipConditionalDiscount{DiscountPercentage, 500, day("2026-03-05")}},
			"2026-03-10", "2026-03-06",
			SlipCharge{Base: 15000, Total: 15000}, false},
		{"conditional discount never when late", 15000,
			SlipTerms{Fine: 200, ConditionalDiscount: &SlipConditionalDiscount{DiscountCurrency, 1000, day("2026-03-12")}},
			"2026-03-10", "2026-03-11",
			// until_date is after the due date, but the payment is late: fine only
			SlipCharge{Base: 15000, Fine: 300, Total: 15300, DaysLate: 1}, false},
		{"discount always, late", 20000,
			SlipTerms{Fine: 200, Interest: 33, Discount: &SlipDiscount{DiscountCurrency, 2000}},
			"2026-03-10", "2026-03-15",
			// net 180,00; 2 % = 3,60; 180,00 × 0,033 % × 5 = 0,297 → 0,30; 200,00 − 20,00 + 3,60 + 0,30
			SlipCharge{Base: 20000, Discount: 2000, Fine: 360, Interest: 30, Total: 18390, DaysLate: 5}, false},
		{"discount and conditional discount, early", 20000,
			SlipTerms{Discount: &SlipDiscount{DiscountPercentage, 1000}, ConditionalDiscount: &SlipConditionalDiscount{DiscountPercentage, 500, day("2026-03-10")}},
			"2026-03-10", "2026-03-10",
			// 10 % of 200,00 = 20,00; 5 % of 180,00 = 9,00; 200,00 − 29,00
			SlipCharge{Base: 20000, Discount: 2900, Total: 17100}, false},
		{"write-off: still payable on the last day", 15000,
			SlipTerms{Fine: 200, Interest: 33, DaysToWriteOff: intp(5)},
			"2026-03-10", "2026-03-15",
			// 5 days late: 3,00 + 150,00 × 0,033 % × 5 = 0,2475 → 0,25
			SlipCharge{Base: 15000, Fine: 300, Interest: 25, Total: 15325, DaysLate: 5}, false},
		{"write-off: the day after", 15000, SlipTerms{DaysToWriteOff: intp(5)}, "2026-03-10", "2026-03-16",
			SlipCharge{Base: 15000, Total: 15000, DaysLate: 6}, true},
		{"write-off 0: not payable the next day", 15000, SlipTerms{DaysToWriteOff: intp(0)}, "2026-03-10", "2026-03-11",
			SlipCharge{Base: 15000, Total: 15000, DaysLate: 1}, true},
		{"write-off 0, due Saturday: payable Monday", 15000, SlipTerms{DaysToWriteOff: intp(0)}, "2026-03-14", "2026-03-16",
			SlipCharge{Base: 15000, Total: 15000}, false},
	}
	for _, c := range cases {
		got, err := SlipAmountDue(c.value, c.terms, day(c.due), day(c.paidOn))
		if c.notPayable != errors.Is(err, ErrNotPayable) || (!c.notPayable && err != nil) {
			t.Errorf("%s: err = %v, want not payable %v", c.name, err, c.notPayable)
			continue
		}
		got.Due, got.LastPayable = time.Time{}, time.Time{}
		if got != c.want {
			t.Errorf("%s:\n got %+v\nwant %+v", c.name, got, c.want)
		}
	}
}

func TestSlipAmountDueDates(t *testing.T) {
	c, err := SlipAmountDue(15000, SlipTerms{DaysToWriteOff: intp(0)}, day("2026-11-20"), day("2026-11-23"))
	if err != nil || FormatISODate(c.Due) != "2026-11-23" || FormatISODate(c.LastPayable) != "2026-11-23" {
		t.Errorf("due on a Friday holiday: %+v %v", c, err)
	}
	c, _ = SlipAmountDue(15000, SlipTerms{DaysToWriteOff: intp(30)}, day("2026-03-10"), day("2026-03-10"))
	if FormatISODate(c.LastPayable) != "2026-04-09" {
		t.Errorf("LastPayable %s, want 2026-04-09", FormatISODate(c.LastPayable))
	}
	if c, _ := SlipAmountDue(1, SlipTerms{}, day("2026-03-10"), day("2026-03-10")); !c.LastPayable.IsZero() {
		t.Error("no write-off: LastPayable should be zero")
	}
}

func TestSlipAmountDueInvalid(t *testing.T) {
	due := day("2026-03-10")
	bad := []SlipTerms{
		{Fine: 1001},                // above 10 %
		{Fine: -1},                  //
		{Interest: 331},             // above 0,33 %/day
		{Interest: -1},              //
		{DaysToWriteOff: intp(121)}, // above 120
		{DaysToWriteOff: intp(-1)},  //
		{Discount: &SlipDiscount{"reais", 100}},
		{Discount: &SlipDiscount{DiscountPercentage, 10001}},
		{Discount: &SlipDiscount{DiscountCurrency, -1}},
		{ConditionalDiscount: &SlipConditionalDiscount{DiscountPercentage, 10001, due}},
	}
	for _, terms := range bad {
		if _, err := SlipAmountDue(15000, terms, due, due); err == nil || errors.Is(err, ErrNotPayable) {
			t.Errorf("%+v: want a validation error, got %v", terms, err)
		}
	}
	if _, err := SlipAmountDue(-1, SlipTerms{}, due, due); err == nil {
		t.Error("negative value accepted")
	}
	// A discount larger than the value leaves 0, never a negative total.
	c, err := SlipAmountDue(500, SlipTerms{Discount: &SlipDiscount{DiscountCurrency, 900}}, due, due)
	if err != nil || c.Discount != 500 || c.Total != 0 {
		t.Errorf("oversized discount: %+v %v", c, err)
	}
}

func rule(m int, v int64) *CobvRule { return &CobvRule{Modalidade: m, ValorPerc: v} }

func TestCobvAmountDue(t *testing.T) {
	// R$ 100,00 due Tuesday 2026-03-10 unless said otherwise. Paid Friday
	// 2026-03-20 = 10 calendar days late and 8 business days (11, 12, 13,
	// 16, 17, 18, 19, 20 Mar).
	const due, late10 = "2026-03-10", "2026-03-20"
	cases := []struct {
		name        string
		original    int64
		terms       CobvTerms
		due, paidOn string
		validade    int
		want        CobvCharge // Original, Abatimento, Desconto, Juros, Multa, Final, DaysLate, DaysEarly
		notPayable  bool
	}{
		{"on time", 10000, CobvTerms{Multa: rule(2, 200), Juros: rule(2, 100)}, due, due, 30,
			CobvCharge{Original: 10000, Final: 10000}, false},
		{"juros 1: R$ 0,10 per calendar day", 10000, CobvTerms{Juros: rule(1, 10)}, due, late10, 30,
			// 0,10 × 10 = 1,00
			CobvCharge{Original: 10000, Juros: 100, Final: 10100, DaysLate: 10}, false},
		{"juros 2: 0,50 % per calendar day", 10000, CobvTerms{Juros: rule(2, 50)}, due, late10, 30,
			// 100,00 × 0,5 % × 10 = 5,00
			CobvCharge{Original: 10000, Juros: 500, Final: 10500, DaysLate: 10}, false},
		{"juros 3: 2 % a month, calendar days", 10000, CobvTerms{Juros: rule(3, 200)}, due, late10, 30,
			// 100,00 × 2 % × 10/30 = 0,6667 → 0,67
			CobvCharge{Original: 10000, Juros: 67, Final: 10067, DaysLate: 10}, false},
		{"juros 4: 12 % a year, calendar days", 10000, CobvTerms{Juros: rule(4, 1200)}, due, late10, 30,
			// 100,00 × 12 % × 10/365 = 0,32877 → 0,33
			CobvCharge{Original: 10000, Juros: 33, Final: 10033, DaysLate: 10}, false},
		{"juros 5: R$ 0,10 per business day", 10000, CobvTerms{Juros: rule(5, 10)}, due, late10, 30,
			// 0,10 × 8 = 0,80
			CobvCharge{Original: 10000, Juros: 80, Final: 10080, DaysLate: 8}, false},
		{"juros 6: 0,50 % per business day", 10000, CobvTerms{Juros: rule(6, 50)}, due, late10, 30,
			// 100,00 × 0,5 % × 8 = 4,00
			CobvCharge{Original: 10000, Juros: 400, Final: 10400, DaysLate: 8}, false},
		{"juros 7: 2 % a month, business days", 10000, CobvTerms{Juros: rule(7, 200)}, due, late10, 30,
			// 100,00 × 2 % × 8/21 = 0,7619 → 0,76
			CobvCharge{Original: 10000, Juros: 76, Final: 10076, DaysLate: 8}, false},
		{"juros 8: 12 % a year, business days", 10000, CobvTerms{Juros: rule(8, 1200)}, due, late10, 30,
			// 100,00 × 12 % × 8/252 = 0,38095 → 0,38
			CobvCharge{Original: 10000, Juros: 38, Final: 10038, DaysLate: 8}, false},
		{"business-day juros across Good Friday and a weekend", 10000, CobvTerms{Juros: rule(5, 10)}, "2026-04-02", "2026-04-07", 30,
			// 3 Apr holiday, 4–5 weekend: only 6 and 7 Apr count; 0,10 × 2
			CobvCharge{Original: 10000, Juros: 20, Final: 10020, DaysLate: 2}, false},
		{"calendar juros across the same days", 10000, CobvTerms{Juros: rule(1, 10)}, "2026-04-02", "2026-04-07", 30,
			// 3, 4, 5, 6, 7 Apr: 0,10 × 5
			CobvCharge{Original: 10000, Juros: 50, Final: 10050, DaysLate: 5}, false},
		{"business-day juros across Christmas and New Year", 10000, CobvTerms{Juros: rule(6, 100)}, "2026-12-24", "2027-01-04", 30,
			// 28, 29, 30, 31 Dec and 4 Jan: 100,00 × 1 % × 5 = 5,00
			CobvCharge{Original: 10000, Juros: 500, Final: 10500, DaysLate: 5}, false},
		{"late 30 days, month boundary: multa + juros 3", 10000, CobvTerms{Multa: rule(2, 200), Juros: rule(3, 100)}, due, "2026-04-09", 30,
			// 2 % = 2,00; 100,00 × 1 % × 30/30 = 1,00; 103,00
			CobvCharge{Original: 10000, Multa: 200, Juros: 100, Final: 10300, DaysLate: 30}, false},
		{"late 1 day: multa fixed", 10000, CobvTerms{Multa: rule(1, 500)}, due, "2026-03-11", 30,
			CobvCharge{Original: 10000, Multa: 500, Final: 10500, DaysLate: 1}, false},
		{"abatimento + multa + juros", 10000, CobvTerms{Abatimento: rule(1, 1000), Multa: rule(2, 200), Juros: rule(2, 3)}, due, late10, 30,
			// base 100,00 − 10,00 = 90,00; multa 2 % = 1,80; juros 90,00 × 0,03 % × 10 = 0,27; 90,00 + 1,80 + 0,27
			CobvCharge{Original: 10000, Abatimento: 1000, Multa: 180, Juros: 27, Final: 9207, DaysLate: 10}, false},
		{"abatimento percent, on time", 10000, CobvTerms{Abatimento: rule(2, 500)}, due, due, 30,
			// 5 % of 100,00 = 5,00
			CobvCharge{Original: 10000, Abatimento: 500, Final: 9500}, false},
		{"multa rounding half up", 12345, CobvTerms{Multa: rule(2, 200)}, due, "2026-03-11", 30,
			// 2 % of 123,45 = 2,469 → 2,47
			CobvCharge{Original: 12345, Multa: 247, Final: 12592, DaysLate: 1}, false},
		{"zero multa and juros", 10000, CobvTerms{Multa: rule(2, 0), Juros: rule(2, 0)}, due, late10, 30,
			CobvCharge{Original: 10000, Final: 10000, DaysLate: 10}, false},
		{"desconto tiers: first tier", 10000, CobvTerms{Desconto: tiers()}, due, "2026-02-25", 30,
			// first date on/after 25 Feb is 1 Mar: 5,00
			CobvCharge{Original: 10000, Desconto: 500, Final: 9500}, false},
		{"desconto tiers: second tier", 10000, CobvTerms{Desconto: tiers()}, due, "2026-03-03", 30,
			// first date on/after 3 Mar is 5 Mar: 3,00
			CobvCharge{Original: 10000, Desconto: 300, Final: 9700}, false},
		{"desconto tiers: on the due date", 10000, CobvTerms{Desconto: tiers()}, due, due, 30,
			CobvCharge{Original: 10000, Desconto: 100, Final: 9900}, false},
		{"desconto tiers: late, multa instead", 10000, CobvTerms{Desconto: tiers(), Multa: rule(2, 200)}, due, "2026-03-11", 30,
			CobvCharge{Original: 10000, Multa: 200, Final: 10200, DaysLate: 1}, false},
		{"desconto 2: percent until a date, after abatimento", 10000,
			CobvTerms{Abatimento: rule(1, 1000), Desconto: &CobvDesconto{Modalidade: 2, DataFixa: []CobvDiscountDate{{day("2026-03-05"), 1000}}}},
			due, "2026-03-05", 30,
			// 90,00 × 10 % = 9,00; 100,00 − 10,00 − 9,00
			CobvCharge{Original: 10000, Abatimento: 1000, Desconto: 900, Final: 8100}, false},
		{"desconto 3: R$ 0,50 per calendar day early", 10000, CobvTerms{Desconto: &CobvDesconto{Modalidade: 3, ValorPerc: 50}}, due, "2026-03-05", 30,
			// 5 days early × 0,50 = 2,50
			CobvCharge{Original: 10000, Desconto: 250, Final: 9750, DaysEarly: 5}, false},
		{"desconto 4: R$ 0,50 per business day early", 10000, CobvTerms{Desconto: &CobvDesconto{Modalidade: 4, ValorPerc: 50}}, due, "2026-03-05", 30,
			// Thu 5 → Tue 10: 6, 9, 10 = 3 business days × 0,50
			CobvCharge{Original: 10000, Desconto: 150, Final: 9850, DaysEarly: 3}, false},
		{"desconto 5: 0,10 % per calendar day early", 10000, CobvTerms{Desconto: &CobvDesconto{Modalidade: 5, ValorPerc: 10}}, due, "2026-03-05", 30,
			// 100,00 × 0,1 % × 5 = 0,50
			CobvCharge{Original: 10000, Desconto: 50, Final: 9950, DaysEarly: 5}, false},
		{"desconto 6: 0,10 % per business day early", 10000, CobvTerms{Desconto: &CobvDesconto{Modalidade: 6, ValorPerc: 10}}, due, "2026-03-05", 30,
			// 100,00 × 0,1 % × 3 = 0,30
			CobvCharge{Original: 10000, Desconto: 30, Final: 9970, DaysEarly: 3}, false},
		{"desconto per day capped at the value", 10000, CobvTerms{Desconto: &CobvDesconto{Modalidade: 3, ValorPerc: 10000}}, due, "2026-03-05", 30,
			// 5 × 100,00 = 500,00 > 100,00: capped, final 0
			CobvCharge{Original: 10000, Desconto: 10000, Final: 0, DaysEarly: 5}, false},
		{"due Saturday, paid Monday: no multa", 10000, CobvTerms{Multa: rule(2, 200), Juros: rule(1, 10)}, "2026-03-14", "2026-03-16", 0,
			// adjusted due date Monday 16; validade 0 still lets Monday pay
			CobvCharge{Original: 10000, Final: 10000}, false},
		{"due Saturday, paid Tuesday", 10000, CobvTerms{Multa: rule(2, 200), Juros: rule(1, 10)}, "2026-03-14", "2026-03-17", 30,
			// juros from Monday 16: 1 day × 0,10; multa 2,00
			CobvCharge{Original: 10000, Multa: 200, Juros: 10, Final: 10210, DaysLate: 1}, false},
		{"due on a Friday holiday, paid Tuesday", 10000, CobvTerms{Multa: rule(2, 200), Juros: rule(6, 10)}, "2026-11-20", "2026-11-24", 30,
			// adjusted due Monday 23; 1 business day: 100,00 × 0,1 % = 0,10; multa 2,00
			CobvCharge{Original: 10000, Multa: 200, Juros: 10, Final: 10210, DaysLate: 1}, false},
		{"last valid day (a Sunday)", 10000, CobvTerms{Juros: rule(1, 10)}, due, "2026-03-15", 5,
			// 10 + 5 = 15 Mar: payable, 5 days × 0,10
			CobvCharge{Original: 10000, Juros: 50, Final: 10050, DaysLate: 5}, false},
		{"past validadeAposVencimento", 10000, CobvTerms{Juros: rule(1, 10)}, due, "2026-03-16", 5,
			CobvCharge{Original: 10000, Juros: 60, Final: 10060, DaysLate: 6}, true},
		{"validade 0, paid the next day", 10000, CobvTerms{}, due, "2026-03-11", 0,
			CobvCharge{Original: 10000, Final: 10000, DaysLate: 1}, true},
	}
	for _, c := range cases {
		got, err := CobvAmountDue(c.original, c.terms, day(c.due), day(c.paidOn), c.validade)
		if c.notPayable != errors.Is(err, ErrNotPayable) || (!c.notPayable && err != nil) {
			t.Errorf("%s: err = %v, want not payable %v", c.name, err, c.notPayable)
			continue
		}
		got.Due, got.LastPayable = time.Time{}, time.Time{}
		if got != c.want {
			t.Errorf("%s:\n got %+v\nwant %+v", c.name, got, c.want)
		}
	}
}

// tiers is desconto modalidade 1: R$ 5,00 until 1 Mar, 3,00 until 5 Mar,
// 1,00 until 10 Mar (the due date).
func tiers() *CobvDesconto {
	return &CobvDesconto{Modalidade: 1, DataFixa: []CobvDiscountDate{
		{day("2026-03-01"), 500}, {day("2026-03-05"), 300}, {day("2026-03-10"), 100},
	}}
}

func TestCobvAmountDueDates(t *testing.T) {
	c, err := CobvAmountDue(10000, CobvTerms{}, day("2026-04-03"), day("2026-04-06"), 0)
	if err != nil || FormatISODate(c.Due) != "2026-04-06" || FormatISODate(c.LastPayable) != "2026-04-06" {
		t.Errorf("due Good Friday, validade 0: %+v %v", c, err)
	}
	c, _ = CobvAmountDue(10000, CobvTerms{}, day("2026-03-10"), day("2026-03-10"), 30)
	if FormatISODate(c.LastPayable) != "2026-04-09" {
		t.Errorf("LastPayable %s, want 2026-04-09", FormatISODate(c.LastPayable))
	}
}

func TestCobvAmountDueInvalid(t *testing.T) {
	due := day("2026-03-10")
	bad := []CobvTerms{
		{Multa: rule(3, 100)},
		{Multa: rule(2, 10001)},
		{Juros: rule(0, 1)},
		{Juros: rule(9, 1)},
		{Juros: rule(3, 10001)},
		{Juros: rule(1, -1)},
		{Abatimento: rule(2, 10001)},
		{Desconto: &CobvDesconto{Modalidade: 7, ValorPerc: 1}},
		{Desconto: &CobvDesconto{Modalidade: 1}},
		{Desconto: &CobvDesconto{Modalidade: 2, DataFixa: []CobvDiscountDate{{due, 10001}}}},
		{Desconto: &CobvDesconto{Modalidade: 1, DataFixa: []CobvDiscountDate{{due, 1}, {due, 1}, {due, 1}, {due, 1}}}},
		{Desconto: &CobvDesconto{Modalidade: 5, ValorPerc: 10001}},
	}
	for _, terms := range bad {
		if _, err := CobvAmountDue(10000, terms, due, due, 30); err == nil || errors.Is(err, ErrNotPayable) {
			t.Errorf("%+v: want a validation error, got %v", terms, err)
		}
	}
	if _, err := CobvAmountDue(10000, CobvTerms{}, due, due, -1); err == nil {
		t.Error("negative validade accepted")
	}
	// A fixed abatimento above the original leaves 0.
	c, err := CobvAmountDue(1000, CobvTerms{Abatimento: rule(1, 5000), Multa: rule(2, 200)}, due, day("2026-03-11"), 30)
	if err != nil || c.Abatimento != 1000 || c.Final != 0 {
		t.Errorf("oversized abatimento: %+v %v", c, err)
	}
}

func TestAllocatePayment(t *testing.T) {
	cases := []struct {
		principal, fine, interest, paid int64
		want                            PaymentAllocation
	}{
		// R$ 150,00 + 3,00 fine + 0,50 interest paid in full
		{15000, 300, 50, 15350, PaymentAllocation{Interest: 50, Fine: 300, Principal: 15000}},
		// paid 100,00: interest 0,50 first, then fine 3,00, then 96,50 of principal; 53,50 still owed
		{15000, 300, 50, 10000, PaymentAllocation{Interest: 50, Fine: 300, Principal: 9650, Shortfall: 5350}},
		// paid 0,20: only part of the interest
		{15000, 300, 50, 20, PaymentAllocation{Interest: 20, Shortfall: 15330}},
		// paid 160,00: 6,50 more than due
		{15000, 300, 50, 16000, PaymentAllocation{Interest: 50, Fine: 300, Principal: 15000, Excess: 650}},
		// paid the original value only, late: the fine and interest take 3,50 of it
		{15000, 300, 50, 15000, PaymentAllocation{Interest: 50, Fine: 300, Principal: 14650, Shortfall: 350}},
	}
	for _, c := range cases {
		if got := AllocatePayment(c.principal, c.fine, c.interest, c.paid); got != c.want {
			t.Errorf("AllocatePayment(%d, %d, %d, %d) = %+v, want %+v", c.principal, c.fine, c.interest, c.paid, got, c.want)
		}
	}
}

func FuzzSlipAmountDue(f *testing.F) {
	f.Add(int64(15000), int64(200), int64(33), int64(1000), true, int64(500), int16(0), int16(10), int16(5), int8(-1))
	f.Add(int64(1), int64(1000), int64(330), int64(10000), false, int64(10000), int16(-3), int16(200), int16(-10), int8(0))
	f.Fuzz(func(t *testing.T, value, fine, interest, disc int64, pctDisc bool, cond int64, dueOff, payOff, untilOff int16, wo int8) {
		base := day("2026-01-01")
		due := base.AddDate(0, 0, int(dueOff))
		typ := DiscountCurrency
		if pctDisc {
			typ = DiscountPercentage
		}
		terms := SlipTerms{Fine: fine, Interest: interest,
			Discount:            &SlipDiscount{typ, disc},
			ConditionalDiscount: &SlipConditionalDiscount{typ, cond, due.AddDate(0, 0, int(untilOff))}}
		if wo >= 0 {
			terms.DaysToWriteOff = intp(int(wo))
		}
		c, err := SlipAmountDue(value, terms, due, due.AddDate(0, 0, int(payOff)))
		if err != nil && !errors.Is(err, ErrNotPayable) {
			return
		}
		if c.Total < 0 || c.Discount < 0 || c.Fine < 0 || c.Interest < 0 || c.Discount > c.Base {
			t.Fatalf("negative part: %+v", c)
		}
		if c.Total != c.Base-c.Discount+c.Fine+c.Interest {
			t.Fatalf("total is not the sum of its parts: %+v", c)
		}
	})
}

func FuzzCobvAmountDue(f *testing.F) {
	f.Add(int64(10000), 2, int64(200), 3, int64(100), 1, int64(500), 3, int64(50), int16(-5), int16(0), int16(30), int16(2))
	f.Add(int64(1), 1, int64(999999), 8, int64(10000), 2, int64(10000), 6, int64(10000), int16(-400), int16(400), int16(100), int16(-1))
	f.Fuzz(func(t *testing.T, original int64, mm int, mv int64, jm int, jv int64, am int, av int64, dm int, dv int64, payOff, dueOff, validade, tierOff int16) {
		due := day("2026-01-01").AddDate(0, 0, int(dueOff))
		terms := CobvTerms{Multa: rule(mm, mv), Juros: rule(jm, jv), Abatimento: rule(am, av),
			Desconto: &CobvDesconto{Modalidade: dm, ValorPerc: dv}}
		if dm == 1 || dm == 2 {
			terms.Desconto.DataFixa = []CobvDiscountDate{{due.AddDate(0, 0, int(tierOff)), dv}, {due, dv / 2}}
		}
		c, err := CobvAmountDue(original, terms, due, due.AddDate(0, 0, int(payOff)), int(validade))
		if err != nil && !errors.Is(err, ErrNotPayable) {
			return
		}
		if c.Final < 0 || c.Abatimento < 0 || c.Desconto < 0 || c.Juros < 0 || c.Multa < 0 ||
			c.Abatimento > c.Original || c.Desconto > c.Original-c.Abatimento {
			t.Fatalf("negative part: %+v", c)
		}
		if c.Final != c.Original-c.Abatimento-c.Desconto+c.Juros+c.Multa {
			t.Fatalf("final is not the sum of its parts: %+v", c)
		}
	})
}

func FuzzAllocatePayment(f *testing.F) {
	f.Add(int64(15000), int64(300), int64(50), int64(10000))
	f.Fuzz(func(t *testing.T, p, fi, in, paid int64) {
		// keep the sums inside int64
		p, fi, in, paid = p%1e15, fi%1e15, in%1e15, paid%1e15
		a := AllocatePayment(p, fi, in, paid)
		due := max(p, 0) + max(fi, 0) + max(in, 0)
		if a.Interest+a.Fine+a.Principal+a.Excess != max(paid, 0) || a.Interest+a.Fine+a.Principal+a.Shortfall != due ||
			a.Shortfall < 0 || a.Excess < 0 || (a.Shortfall > 0 && a.Excess > 0) {
			t.Fatalf("%d %d %d %d: %+v", p, fi, in, paid, a)
		}
	})
}

func BenchmarkSlipAmountDue(b *testing.B) {
	terms := SlipTerms{Fine: 200, Interest: 33, DaysToWriteOff: intp(60)}
	due, paid := day("2026-03-14"), day("2026-04-20")
	for b.Loop() {
		_, _ = SlipAmountDue(15000, terms, due, paid)
	}
}

func BenchmarkCobvAmountDue(b *testing.B) {
	terms := CobvTerms{Multa: rule(2, 200), Juros: rule(6, 10), Abatimento: rule(1, 100)}
	due, paid := day("2026-12-24"), day("2027-01-20")
	for b.Loop() {
		_, _ = CobvAmountDue(10000, terms, due, paid, 30)
	}
}

func TestMulDivRound(t *testing.T) {
	cases := []struct {
		den     int64
		factors []int64
		want    int64
		ok      bool
	}{
		{2, []int64{1}, 1, true},                   // 0,5 → 1
		{3, []int64{1}, 0, true},                   // 0,33 → 0
		{3, []int64{2}, 1, true},                   // 0,67 → 1
		{100000, []int64{15000, 33, 10}, 50, true}, // 49,5 → 50
		{1 << 62, []int64{3, 1 << 61, 3}, 5, true}, // 9·2⁶¹ overflows int64: 9/2 = 4,5 → 5 (big path)
		{1 << 20, []int64{1 << 40, 1 << 30}, 1 << 50, true},
		{1, []int64{1 << 62, 4}, 0, false}, // 2⁶⁴ does not fit
	}
	for _, c := range cases {
		got, ok := mulDivRound(c.den, c.factors...)
		if got != c.want || ok != c.ok {
			t.Errorf("mulDivRound(%d, %v) = %d, %v; want %d, %v", c.den, c.factors, got, ok, c.want, c.ok)
		}
	}
}

// TestClassifyPayment: by hand, a parcel of R$ 1.350,00.
func TestClassifyPayment(t *testing.T) {
	for _, c := range []struct {
		name                 string
		face, disc, fi, paid int64
		owed, short, over    int64
	}{
		{"paid R$ 100,00 of it, on time", 135000, 0, 0, 10000, 135000, 125000, 0},
		{"early with 5 % off", 135000, 6750, 0, 128250, 128250, 0, 0},
		{"early but R$ 1.000,00 only: no discount", 135000, 6750, 0, 100000, 135000, 35000, 0},
		{"late, fine 27,00 and interest 4,46", 135000, 0, 3146, 138146, 138146, 0, 0},
		{"late, paid the face value only", 135000, 0, 3146, 135000, 138146, 3146, 0},
		{"paid R$ 10,00 over", 135000, 0, 0, 136000, 135000, 0, 1000},
	} {
		got := ClassifyPayment(c.face, c.disc, c.fi, c.paid)
		if got.Owed != c.owed || got.Short != c.short || got.Over != c.over {
			t.Errorf("%s: %+v, want owed %d short %d over %d", c.name, got, c.owed, c.short, c.over)
		}
		if got.Face-got.Discount+got.FineInterest-got.Short+got.Over != c.paid {
			t.Errorf("%s: the identity does not close: %+v", c.name, got)
		}
	}
}
