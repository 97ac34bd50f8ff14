package rules

import (
	"testing"
	"time"
)

// Every parcel of a carnet gets the carnet's one until_date; the amount a
// parcel owes follows from it through SlipAmountDue. Amounts are worked by
// hand: parcel R$ 980,00, 5 % = R$ 49,00 → R$ 931,00.
func TestCarnetParcelDiscount(t *testing.T) {
	d := &SlipConditionalDiscount{Type: DiscountPercentage, Value: 500,
		Until: time.Date(2026, 12, 5, 15, 30, 0, 0, time.UTC)} // a time of day is dropped
	if CarnetParcelDiscount(nil, 1) != nil || CarnetParcelDiscount(d, 0) != nil {
		t.Fatal("nil discount or parcel 0 must give nil")
	}
	for _, n := range []int{1, 2, 12} {
		got := CarnetParcelDiscount(d, n)
		if got == d || got.Type != DiscountPercentage || got.Value != 500 || got.Until != day("2026-12-05") {
			t.Fatalf("parcel %d: %+v, want a copy of 5%% until 2026-12-05", n, got)
		}
	}
	owed := func(n int, due, paid string) int64 {
		t.Helper()
		sc, err := SlipAmountDue(98000, SlipTerms{Fine: 200, Interest: 33, ConditionalDiscount: CarnetParcelDiscount(d, n)}, day(due), day(paid))
		if err != nil {
			t.Fatal(err)
		}
		return sc.Total
	}
	cases := []struct {
		n         int
		due, paid string
		want      int64
	}{
		{1, "2026-12-10", "2026-12-05", 93100}, // on until_date: 980,00 − 49,00
		{1, "2026-12-10", "2026-12-06", 98000}, // the day after: no discount, not late
		{2, "2027-01-10", "2026-11-27", 93100}, // parcel 2 paid before the carnet's until_date: discount
		{2, "2027-01-10", "2027-01-05", 98000}, // 5 days before its own due date: no discount
		{3, "2027-02-10", "2026-12-05", 93100}, // parcel 3 on until_date
	}
	for _, c := range cases {
		if got := owed(c.n, c.due, c.paid); got != c.want {
			t.Errorf("parcel %d due %s paid %s: owes %d, want %d", c.n, c.due, c.paid, got, c.want)
		}
	}
}

func TestCarnetDiscountWindows(t *testing.T) {
	if CarnetDiscountWindows(day("2026-12-05"), day("2026-12-10"), 0) != nil {
		t.Fatal("0 parcels must give nil")
	}
	// First due 31/01/2027: February clamps to the 28th.
	w := CarnetDiscountWindows(day("2027-01-26"), day("2027-01-31"), 3)
	want := []ParcelDiscountWindow{
		{1, day("2027-01-31"), day("2027-01-26"), 5},
		{2, day("2027-02-28"), day("2027-01-26"), 33},
		{3, day("2027-03-31"), day("2027-01-26"), 64},
	}
	if len(w) != len(want) {
		t.Fatalf("%d windows, want %d", len(w), len(want))
	}
	for i := range want {
		if w[i] != want[i] {
			t.Errorf("parcel %d: %+v, want %+v", i+1, w[i], want[i])
		}
	}
}
