package pipeline

import (
	"encoding/json"
	"fmt"
	"sort"
	"strconv"
	"strings"
	"time"

	"remessa/rules"
)

// CodeCarnetDiscount is the code of the job warning about a carnet's
// conditional discount (one until_date for the whole carnet).
const CodeCarnetDiscount = "desconto_carne"

// DiscountWindow is one carnet conditional discount as the plan shows it:
// Carnets carnets of Repeats parcels whose first parcel is due on First and
// whose discount (Type "percentage", Value in hundredths of a percent, or
// "currency", Value in cents) runs until Until, one date for every parcel
// (rules.CarnetParcelDiscount; docs/discounts.md).
type DiscountWindow struct {
	Type    string    `json:"type"`
	Value   int64     `json:"value"`
	Until   time.Time `json:"until"`
	First   time.Time `json:"first_due"`
	Repeats int       `json:"repeats"`
	Carnets int       `json:"carnets"`
}

// MarshalJSON writes Until and First as dates (YYYY-MM-DD).
func (w DiscountWindow) MarshalJSON() ([]byte, error) {
	type plain DiscountWindow
	return json.Marshal(struct {
		plain
		Until string `json:"until"`
		First string `json:"first_due"`
	}{plain(w), rules.FormatISODate(w.Until), rules.FormatISODate(w.First)})
}

// maxDiscountWindows bounds the distinct windows a plan lists (first due
// dates from a column can differ on every row); the rest are counted in
// Plan.MoreDiscountWindows.
const maxDiscountWindows = 12

func (b *PlanBuilder) addDiscountWindow(c *CarnetRequest) {
	cd := c.ConditionalDiscount
	if cd == nil {
		return
	}
	until, err1 := rules.ParseISODate(cd.UntilDate)
	first, err2 := rules.ParseISODate(c.ExpireAt)
	if err1 != nil || err2 != nil {
		return
	}
	p := b.p
	for i := range p.DiscountWindows {
		w := &p.DiscountWindows[i]
		if w.Type == cd.Type && w.Value == cd.Value && w.Until.Equal(until) && w.First.Equal(first) && w.Repeats == c.Repeats {
			w.Carnets++
			return
		}
	}
	if len(p.DiscountWindows) >= maxDiscountWindows {
		p.MoreDiscountWindows++
		return
	}
	p.DiscountWindows = append(p.DiscountWindows, DiscountWindow{Type: cd.Type, Value: cd.Value, Until: until, First: first, Repeats: c.Repeats, Carnets: 1})
}

// sortDiscountWindows orders the windows by date, then by amount.
func sortDiscountWindows(ws []DiscountWindow) {
	sort.SliceStable(ws, func(a, b int) bool {
		if !ws[a].Until.Equal(ws[b].Until) {
			return ws[a].Until.Before(ws[b].Until)
		}
		return ws[a].First.Before(ws[b].First)
	})
}

// amount writes the discount as "5%", "2,5%" or "R$ 10,00".
func (w DiscountWindow) amount() string {
	if w.Type == rules.DiscountPercentage {
		s := strconv.FormatInt(w.Value/100, 10)
		if f := w.Value % 100; f != 0 {
			s += "," + strings.TrimRight(fmt.Sprintf("%02d", f), "0")
		}
		return s + "%"
	}
	return rules.FormatBRL(w.Value)
}

func brDate(t time.Time) string { return t.Format("02/01/2006") }

// Text says which parcels get which window, in Portuguese or English
// (lang "en"), e.g. "5% até 05/12/2026, uma só data para o carnê: na 1ª
// parcela (vence 10/12/2026), até 5 dias antes do vencimento; nas parcelas
// 2 a 12 (vencem de 10/01/2027 a 10/11/2027), só se pagas até 05/12/2026,
// antes do vencimento — 40 carnês".
func (w DiscountWindow) Text(lang string) string {
	ws := rules.CarnetDiscountWindows(w.Until, w.First, w.Repeats)
	if len(ws) == 0 {
		return ""
	}
	en := lang == "en"
	p1 := ws[0]
	var s string
	if en {
		s = fmt.Sprintf("%s until %s, one date for the whole carnet: on parcel 1 (due %s), %s", w.amount(), brDate(w.Until), brDate(p1.Due), leadText(p1.Lead, true))
	} else {
		s = fmt.Sprintf("%s até %s, uma só data para o carnê: na 1ª parcela (vence %s), %s", w.amount(), brDate(w.Until), brDate(p1.Due), leadText(p1.Lead, false))
	}
	switch {
	case len(ws) == 2 && en:
		s += fmt.Sprintf("; on parcel 2 (due %s), only if paid by %s, ahead of its due date", brDate(ws[1].Due), brDate(w.Until))
	case len(ws) == 2:
		s += fmt.Sprintf("; na 2ª parcela (vence %s), só se paga até %s, antes do vencimento", brDate(ws[1].Due), brDate(w.Until))
	case len(ws) > 2:
		last := ws[len(ws)-1]
		if en {
			s += fmt.Sprintf("; on parcels 2 to %d (due %s to %s), only if paid by %s, ahead of their due date", last.Parcel, brDate(ws[1].Due), brDate(last.Due), brDate(w.Until))
		} else {
			s += fmt.Sprintf("; nas parcelas 2 a %d (vencem de %s a %s), só se pagas até %s, antes do vencimento", last.Parcel, brDate(ws[1].Due), brDate(last.Due), brDate(w.Until))
		}
	}
	if en {
		return s + fmt.Sprintf(" — %s", plural(w.Carnets, "carnet", "carnets"))
	}
	return s + fmt.Sprintf(" — %s", plural(w.Carnets, "carnê", "carnês"))
}

func leadText(days int, en bool) string {
	switch {
	case days == 0 && en:
		return "until its due date"
	case days == 0:
		return "até o vencimento"
	case en:
		return fmt.Sprintf("until %s before its due date", plural(days, "day", "days"))
	}
	return fmt.Sprintf("até %s antes do vencimento", plural(days, "dia", "dias"))
}

// JobWarnings returns what the job asks for that the service will do
// differently from what its words suggest, with the job file's line and
// column (File is file, the job file as the user named it): today, a
// carnet's conditional discount, which has one date for the whole carnet
// (docs/discounts.md). Nothing is refused for it.
func (j *Job) JobWarnings(file string) []JobProblem {
	if j == nil || j.Spec == nil || j.Spec.Issue.Carnets == nil || j.Spec.Issue.Carnets.ConditionalDiscount == nil {
		return nil
	}
	cd := j.Spec.Issue.Carnets.ConditionalDiscount
	ptr := "/issue/carnets/conditional_discount"
	pos := j.KeyPosition(ptr)
	var when, whenEN string
	if cd.DaysBeforeDue > 0 {
		when = fmt.Sprintf("com days_before_due: %d ela é %s antes do vencimento da 1ª parcela", cd.DaysBeforeDue, plural(cd.DaysBeforeDue, "dia", "dias"))
		whenEN = fmt.Sprintf("with days_before_due: %d it is %s before the first parcel's due date", cd.DaysBeforeDue, plural(cd.DaysBeforeDue, "day", "days"))
	} else {
		when = "é a data de until_date"
		whenEN = "it is until_date"
	}
	return []JobProblem{{File: file, Line: pos.Line, Column: pos.Column, Pointer: ptr, Code: CodeCarnetDiscount,
		Message: "o desconto condicional de um carnê tem uma só data-limite para todas as parcelas (" + when +
			"); as parcelas 2 em diante só têm o desconto se pagas até essa mesma data, antes do vencimento. " +
			"Para um desconto de pontualidade a cada mês, emita um boleto por mês (issue.boletos, com days_before_due contado do vencimento de cada boleto) " +
			"ou uma cobv por mês com desconto por data; veja docs/discounts.md",
		MessageEN: "a carnet's conditional discount has one last day for all its parcels (" + whenEN +
			"); parcels 2 onwards get the discount only if paid by that same date, ahead of their due date. " +
			"For a punctuality discount every month, issue one slip a month (issue.boletos, days_before_due counted from each slip's due date) " +
			"or one cobv a month with a dated discount; see docs/discounts.md"}}
}
