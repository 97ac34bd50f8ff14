package conciliacao_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/xuri/excelize/v2"

	"remessa/pipeline/results"
	"remessa/pipeline/status"
	"remessa/reports/conciliacao"
	"remessa/rules"
)

func civil(s string) time.Time {
	t, err := time.Parse("2006-01-02", s)
	if err != nil {
		panic(err)
	}
	return t
}

// schoolTerms are the escola sample's carnet terms: 2 % fine, 0,033 % a
// day, 5 % off until 05/12/2026 (the first parcel's window).
func schoolTerms() *conciliacao.Terms {
	return &conciliacao.Terms{Carnet: true, Email: "claudia@example.com", Phone: "31998075125", Slip: rules.SlipTerms{Fine: 200, Interest: 33,
		ConditionalDiscount: &rules.SlipConditionalDiscount{Type: rules.DiscountPercentage, Value: 500, Until: civil("2026-12-05")}}}
}

// classifyCase builds a small carnet run: row 0 (Cláudia) and row 1
// (João), every amount worked by hand below.
func classifyCase() (*results.Results, []status.Charge, map[int]*conciliacao.Terms, time.Time) {
	res := &results.Results{Run: results.RunInfo{ID: "r1", Kind: results.Carnets}}
	paid := func(row, parcel int, id int64, due string, value, paidCents int64, on string) status.Charge {
		return status.Charge{Key: "charge:" + due + string(rune('a'+row)), RowIndex: row, SourceRow: row + 2, RowKey: []string{"2027-001", "2027-002"}[row],
			Payer: []string{"Cláudia Ribeiro", "João Lima"}[row], Parcel: parcel, ChargeID: id, Due: due, ValueCents: value,
			Status: "paid", State: status.StatePaid, PaidCents: paidCents, PaidAt: on + "T10:00:00-03:00", Method: status.MethodBoleto}
	}
	cs := []status.Charge{
		// early, inside the window: 980,00 − 5 % (49,00) = 931,00
		paid(0, 1, 1, "2026-12-10", 98000, 93100, "2026-12-01"),
		// 11 days late (due Thursday 10/12): fine 19,60 + interest
		// 980,00 × 0,033 % × 11 = 3,5574 → 3,56: 1.003,16
		paid(0, 2, 2, "2026-12-10", 98000, 100316, "2026-12-21"),
		// R$ 100,00 of a 1.350,00 parcel, on time, after the window: paid
		// 1.250,00 short, no discount
		paid(1, 1, 3, "2027-01-11", 135000, 10000, "2026-12-21"),
		// 10,00 over, on its due date
		paid(1, 2, 4, "2026-12-10", 98000, 99000, "2026-12-10"),
	}
	// unpaid, due Monday 11/01/2027, 35 days late on 15/02/2027: fine
	// 19,60 + interest 980,00 × 0,033 % × 35 = 11,319 → 11,32 today
	cs = append(cs, status.Charge{Key: "charge:5", RowIndex: 1, SourceRow: 3, RowKey: "2027-002", Payer: "João Lima", Parcel: 3, ChargeID: 5,
		Due: "2027-01-11", ValueCents: 98000, Status: "unpaid", State: status.StateOpen})
	// not yet due
	cs = append(cs, status.Charge{Key: "charge:6", RowIndex: 1, SourceRow: 3, RowKey: "2027-002", Payer: "João Lima", Parcel: 4, ChargeID: 6,
		Due: "2027-03-10", ValueCents: 98000, Status: "waiting", State: status.StateOpen})
	terms := map[int]*conciliacao.Terms{0: schoolTerms(), 1: schoolTerms()}
	terms[1].Email, terms[1].Phone = "joao@example.com", ""
	return res, cs, terms, civil("2027-02-15")
}

// TestPartialPaymentIsShortNotDiscount: a partial payment is paid short
// (with its own aging), not a discount; early, late and over payments are
// classified by the terms; who owes lists the payers with their contact.
func TestPartialPaymentIsShortNotDiscount(t *testing.T) {
	t.Parallel()
	res, cs, terms, asOf := classifyCase()
	r := conciliacao.Build(res, cs, terms, "2027-02-15T13:00:00Z", asOf)
	if !r.Reconcile.OK {
		t.Fatalf("does not reconcile: %v", r.Reconcile.Problems)
	}
	want := []struct {
		disc, fi, short, over, owed int64
		shortBucket                 string
	}{
		{4900, 0, 0, 0, 93100, ""},
		{0, 1960 + 356, 0, 0, 100316, ""},
		{0, 0, 125000, 0, 135000, conciliacao.Bucket60}, // due 11/01/2027, 35 days before 15/02
		{0, 0, 0, 1000, 98000, ""},
	}
	for i, w := range want {
		l := r.Lines[i]
		if l.Discount != w.disc || l.FineInterest != w.fi || l.Short != w.short || l.Over != w.over || l.Owed != w.owed || l.ShortBucket != w.shortBucket {
			t.Errorf("line %d: discount %d, fine and interest %d, short %d, over %d, owed %d, short bucket %q; want %+v",
				i, l.Discount, l.FineInterest, l.Short, l.Over, l.Owed, l.ShortBucket, w)
		}
	}
	tot := r.Totals
	for _, c := range []struct {
		name      string
		got, want int64
	}{
		{"issued", tot.Expected, 98000 + 98000 + 135000 + 98000 + 98000 + 98000},
		{"received", tot.Received, 93100 + 100316 + 10000 + 99000},
		{"discount", tot.Discount, 4900},
		{"fine and interest", tot.FineInterest, 2316},
		{"short", tot.Short, 125000},
		{"over", tot.Over, 1000},
		{"overdue", tot.Overdue, 98000},
		{"open", tot.Open, 98000},
		{"short 31-60", r.ShortAging[conciliacao.Bucket60], 125000},
	} {
		if c.got != c.want {
			t.Errorf("%s: %d, want %d", c.name, c.got, c.want)
		}
	}
	// who owes: João (overdue 980,00 + 19,60 + 11,32, short 1.250,00);
	// Cláudia owes nothing
	if len(r.WhoOwes) != 1 {
		t.Fatalf("who owes: %+v", r.WhoOwes)
	}
	d := r.WhoOwes[0]
	if d.Key != "2027-002" || d.Email != "joao@example.com" || d.Overdue != 1 || len(d.Parcels) != 1 || d.Parcels[0] != 3 ||
		d.Face != 98000 || d.FineInterest != 1960+1132 || d.Short != 125000 || d.Total != 98000+3092+125000 || d.DaysLate != 35 || d.OldestDue != "2027-01-11" {
		t.Errorf("who owes: %+v", d)
	}
	// every format has who owes, in words for an accountant
	dir := t.TempDir()
	if _, err := conciliacao.Write(dir, r, "pt"); err != nil {
		t.Fatal(err)
	}
	x, err := excelize.OpenFile(filepath.Join(dir, "conciliacao.xlsx"))
	if err != nil {
		t.Fatal(err)
	}
	rows, _ := x.GetRows("Quem deve")
	x.Close()
	if len(rows) != 2 || rows[1][1] != "2027-002" || rows[1][3] != "joao@example.com" || rows[1][6] != "3" || rows[1][12] != "11/01/2027" {
		t.Errorf("the Quem deve sheet: %q", rows)
	}
	raw, _ := os.ReadFile(filepath.Join(dir, "conciliacao-quem-deve.csv"))
	if want := "3;2027-002;João Lima;joao@example.com;;1;3;980,00;30,92;1250,00;2260,92;35;11/01/2027\r\n"; !strings.Contains(string(raw), want) {
		t.Errorf("conciliacao-quem-deve.csv lacks %q:\n%s", want, raw)
	}
	js, _ := os.ReadFile(filepath.Join(dir, "conciliacao.json"))
	if !strings.Contains(string(js), `"who_owes":[{"source_row":3,"key":"2027-002"`) || !strings.Contains(string(js), `"as_of":"2027-02-15"`) ||
		!strings.Contains(string(js), `"short_cents":125000`) {
		t.Errorf("conciliacao.json lacks who owes, the ISO as_of or the paid short")
	}
	html, _ := os.ReadFile(filepath.Join(dir, "conciliacao.html"))
	for _, want := range []string{"Posição em 15/02/2027", "15/02/2027 10:00 (horário de Brasília)", "Quem deve", "R$ 2.260,92", "jan/2027", "Pago a menor"} {
		if !strings.Contains(string(html), want) {
			t.Errorf("conciliacao.html lacks %q", want)
		}
	}
	if strings.Contains(string(html), "2027-02-15") || strings.Contains(string(html), "T13:00") {
		t.Errorf("conciliacao.html shows an ISO date or time")
	}
	en := t.TempDir()
	if _, err := conciliacao.Write(en, r, "en"); err != nil {
		t.Fatal(err)
	}
	html, _ = os.ReadFile(filepath.Join(en, "conciliacao.html"))
	for _, want := range []string{"Who owes", "Paid short", "Jan 2027", "São Paulo time"} {
		if !strings.Contains(string(html), want) {
			t.Errorf("the English conciliacao.html lacks %q", want)
		}
	}
}

// TestCheckCatchesABrokenClassification: one paid line classified wrong
// (the partial payment shown as a discount, the totals moved with it so
// that every sum still closes) fails the check, which names the line.
func TestCheckCatchesABrokenClassification(t *testing.T) {
	t.Parallel()
	res, cs, terms, asOf := classifyCase()
	r := conciliacao.Build(res, cs, terms, "", asOf)
	if !r.Reconcile.OK {
		t.Fatalf("a sound reconciliation fails: %v", r.Reconcile.Problems)
	}
	l := &r.Lines[2]
	l.Discount, l.Short, l.ShortBucket = l.Short, 0, ""
	for _, a := range []*conciliacao.Amounts{&r.Totals} {
		a.Discount += 125000
		a.Short -= 125000
	}
	m := r.ByMonth["2027-01"]
	m.Discount += 125000
	m.Short -= 125000
	r.ByMonth["2027-01"] = m
	delete(r.ShortAging, conciliacao.Bucket60)
	r.WhoOwes[0].Short -= 125000
	c := r.Check()
	if c.OK {
		t.Fatal("a partial payment classified as a discount passes the check")
	}
	all := strings.Join(c.Problems, "\n")
	if !strings.Contains(all, "linha 3 (2027-002), parcela 1") || !strings.Contains(all, "pago a menor R$ 1.250,00") {
		t.Errorf("the check does not name the line and what its terms give:\n%s", all)
	}
	if strings.Contains(all, "soma das linhas") || strings.Contains(all, "não fecha") {
		t.Errorf("the sums should still close (only the classification is wrong):\n%s", all)
	}
}

// TestServiceWordWins: the service says unpaid (or a link expired) while
// the dates, as of the day counted from, say not yet due: overdue, in the
// reconciliation and in status's summary alike.
func TestServiceWordWins(t *testing.T) {
	t.Parallel()
	res := &results.Results{Run: results.RunInfo{ID: "r1", Kind: results.Boletos}}
	cs := []status.Charge{
		{Key: "charge:1", SourceRow: 2, ChargeID: 1, Due: "2027-01-11", ValueCents: 15000, State: status.StateOpen, Status: "unpaid"},
		{Key: "charge:2", SourceRow: 3, RowIndex: 1, ChargeID: 2, Due: "2027-01-11", ValueCents: 9990, State: status.StateCancelled, Status: "expired"},
		{Key: "charge:3", SourceRow: 4, RowIndex: 2, ChargeID: 3, Due: "2027-01-11", ValueCents: 5000, State: status.StateOpen, Status: "waiting"},
	}
	asOf := civil("2027-01-11") // the due date itself: not yet overdue by the dates
	r := conciliacao.Build(res, cs, nil, "", asOf)
	if r.Totals.Overdue != 15000+9990 || r.Totals.Open != 5000 || r.Totals.Cancelled != 0 || r.Aging[conciliacao.Bucket30].Overdue != 24990 {
		t.Errorf("totals %+v, aging %+v; want 249,90 overdue by the service's word, 50,00 not yet due", r.Totals, r.Aging)
	}
	if r.Lines[0].DaysLate != 1 || r.Lines[0].State != "overdue" {
		t.Errorf("line 1: %+v", r.Lines[0])
	}
	if !r.Reconcile.OK {
		t.Errorf("does not reconcile: %v", r.Reconcile.Problems)
	}
	s := status.Summarize(cs, asOf)
	if s.Overdue.Cents != 24990 || s.Open.Cents != 5000 || s.Cancel.Cents != 0 {
		t.Errorf("status's summary: overdue %+v, open %+v, cancelled %+v", s.Overdue, s.Open, s.Cancel)
	}
}
