package rules

import "time"

// CarnetParcelDiscount is the conditional discount parcel n (1-based) of a
// carnet gets from the carnet's conditional_discount d. The charges API
// takes one conditional_discount per carnet with one until_date, "the last
// day the discount is granted", and gives no other date to any parcel: every
// parcel paid on or before d.Until gets the discount, whatever its own due
// date, and no parcel paid after it does (docs/discounts.md has the sources
// and the choice). It returns nil when d is nil or n < 1, else a copy of d.
//
// The sandbox stores this on each parcel it creates, and whoever works out
// what a parcel owed on its paid date (the reconciliation) passes it to
// SlipAmountDue as SlipTerms.ConditionalDiscount.
func CarnetParcelDiscount(d *SlipConditionalDiscount, n int) *SlipConditionalDiscount {
	if d == nil || n < 1 {
		return nil
	}
	c := *d
	c.Until = dateOf(c.Until)
	return &c
}

// ParcelDiscountWindow is when one carnet parcel can be paid with the
// conditional discount: on or before Until (and never late). Due is the
// parcel's due date; Lead is how many calendar days before Due the window
// closes (Due − Until; 0 when Until is the due date).
type ParcelDiscountWindow struct {
	Parcel int
	Due    time.Time
	Until  time.Time
	Lead   int
}

// CarnetDiscountWindows returns the conditional-discount window of every
// parcel of a carnet of repeats parcels whose first parcel is due on first
// (a parcel a month, rules.AddMonthsClamped) and whose conditional_discount
// runs until until: by CarnetParcelDiscount, the same until for all. It
// returns nil for repeats < 1.
func CarnetDiscountWindows(until, first time.Time, repeats int) []ParcelDiscountWindow {
	if repeats < 1 {
		return nil
	}
	until, first = dateOf(until), dateOf(first)
	out := make([]ParcelDiscountWindow, repeats)
	for i := range out {
		due := AddMonthsClamped(first, i)
		d := CarnetParcelDiscount(&SlipConditionalDiscount{Until: until}, i+1)
		out[i] = ParcelDiscountWindow{Parcel: i + 1, Due: due, Until: d.Until, Lead: DaysBetween(d.Until, due)}
	}
	return out
}
