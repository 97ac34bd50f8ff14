package pix

import (
	"math/big"
	"time"

	"remessa/rules"
)

// amountDue is what a cobv costs when paid on day (a São Paulo civil
// date), by the central bank's rules for the valor modalities:
//
//   - abatimento (1 fixed, 2 percent of the original) always applies;
//   - until the due date, desconto applies: 1/2 the value or percentage of
//     the first descontoDataFixa whose date is on or after day; 3/4 a
//     value per calendar/business day of anticipation; 5/6 a percentage
//     of the original per calendar/business day of anticipation;
//   - after the due date (a due date on a weekend moves to Monday), multa
//     (1 fixed, 2 percent) and juros: 1 value per calendar day, 2 percent
//     per calendar day, 3 percent per month (1/30 per day), 4 percent per
//     year (1/365 per day), 5-8 the same counting business days
//     (Monday-Friday; holidays are not known to the sandbox).
//
// Amounts are exact rationals rounded half up to cents; the result is at
// least 1 cent. A cob (or a cobv without modalities) costs its original.
func amountDue(c *charge, day time.Time) int64 {
	if c.Kind != kindCobV {
		return c.Cents
	}
	v := c.Body.Valor
	due, err := rules.ParseISODate(c.Body.Calendario.DataDeVencimento)
	if err != nil {
		return c.Cents
	}
	orig := big.NewRat(c.Cents, 1)
	total := new(big.Rat).Set(orig)
	pct := func(s string) *big.Rat { // hundredths of a percent -> fraction
		n, _ := rules.ParsePixAmount(s)
		return big.NewRat(n, 10000)
	}
	val := func(s string) *big.Rat {
		n, _ := rules.ParsePixAmount(s)
		return big.NewRat(n, 1)
	}
	if a := v.Abatimento; a != nil {
		if a.Modalidade == 2 {
			total.Sub(total, new(big.Rat).Mul(orig, pct(a.ValorPerc)))
		} else {
			total.Sub(total, val(a.ValorPerc))
		}
	}
	effDue := due
	for effDue.Weekday() == time.Saturday || effDue.Weekday() == time.Sunday {
		effDue = effDue.AddDate(0, 0, 1)
	}
	switch {
	case !day.After(effDue):
		if d := v.Desconto; d != nil {
			total.Sub(total, discount(d, orig, day, due))
		}
	default:
		if m := v.Multa; m != nil {
			if m.Modalidade == 2 {
				total.Add(total, new(big.Rat).Mul(orig, pct(m.ValorPerc)))
			} else {
				total.Add(total, val(m.ValorPerc))
			}
		}
		if j := v.Juros; j != nil {
			mod := j.Modalidade
			days := calendarDays(due, day)
			if mod >= 5 {
				days = businessDays(due, day)
				mod -= 4
			}
			n := big.NewRat(int64(days), 1)
			var inc *big.Rat
			switch mod {
			case 1:
				inc = new(big.Rat).Mul(val(j.ValorPerc), n)
			case 2:
				inc = new(big.Rat).Mul(new(big.Rat).Mul(orig, pct(j.ValorPerc)), n)
			case 3:
				inc = new(big.Rat).Mul(new(big.Rat).Mul(orig, pct(j.ValorPerc)), new(big.Rat).Quo(n, big.NewRat(30, 1)))
			default:
				inc = new(big.Rat).Mul(new(big.Rat).Mul(orig, pct(j.ValorPerc)), new(big.Rat).Quo(n, big.NewRat(365, 1)))
			}
			total.Add(total, inc)
		}
	}
	cents := roundHalfUp(total)
	if cents < 1 {
		cents = 1
	}
	return cents
}

// discount is the desconto of a cobv paid on day (not after due).
func discount(d *Desconto, orig *big.Rat, day, due time.Time) *big.Rat {
	zero := new(big.Rat)
	n := func(s string) *big.Rat {
		x, _ := rules.ParsePixAmount(s)
		return big.NewRat(x, 1)
	}
	switch d.Modalidade {
	case 1, 2:
		for _, f := range d.DescontoDataFixa {
			until, err := rules.ParseISODate(f.Data)
			if err != nil || day.After(until) {
				continue
			}
			if d.Modalidade == 1 {
				return n(f.ValorPerc)
			}
			return new(big.Rat).Mul(orig, new(big.Rat).Quo(n(f.ValorPerc), big.NewRat(10000, 1)))
		}
		return zero
	case 3, 4, 5, 6:
		days := calendarDays(day, due)
		if d.Modalidade == 4 || d.Modalidade == 6 {
			days = businessDays(day, due)
		}
		per := n(d.ValorPerc)
		if d.Modalidade >= 5 {
			per = new(big.Rat).Mul(orig, new(big.Rat).Quo(per, big.NewRat(10000, 1)))
		}
		return new(big.Rat).Mul(per, big.NewRat(int64(days), 1))
	}
	return zero
}

// calendarDays counts the days after from up to and including to (0 when
// to is not after from).
func calendarDays(from, to time.Time) int {
	n := int(to.Sub(from).Hours() / 24)
	if n < 0 {
		return 0
	}
	return n
}

// businessDays counts Monday-Friday days after from up to and including to.
func businessDays(from, to time.Time) int {
	n := 0
	for d := from.AddDate(0, 0, 1); !d.After(to); d = d.AddDate(0, 0, 1) {
		if d.Weekday() != time.Saturday && d.Weekday() != time.Sunday {
			n++
		}
	}
	return n
}

// roundHalfUp rounds a non-negative rational to the nearest integer, ties up.
func roundHalfUp(r *big.Rat) int64 {
	num := new(big.Int).Set(r.Num())
	den := r.Denom()
	if num.Sign() < 0 {
		return 0
	}
	num.Mul(num, big.NewInt(2))
	num.Add(num, den)
	den2 := new(big.Int).Mul(den, big.NewInt(2))
	q := new(big.Int).Quo(num, den2)
	return q.Int64()
}
