package pipeline

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// A carnet job with a conditional discount: validate warns at the job
// file's line and column of conditional_discount (and still accepts every
// row), and the plan says which parcels get which window, in Portuguese and
// English. Real files in a temp dir; dates by hand: the rows' due date
// 10/12/2026 − 5 days = 05/12/2026; parcels 2 and 3 fall due 10/01/2027 and
// 10/02/2027.
func TestCarnetDiscountWarningAndPlan(t *testing.T) {
	job := `version: 1
input: {file: in.csv}
issue:
  carnets:
    repeats: 3
    fine: 2%
    conditional_discount:
      type: percentage
      value: 5%
      days_before_due: 5
`
	dir := t.TempDir()
	os.WriteFile(filepath.Join(dir, "in.csv"), []byte(baseHeader+"\n"+strings.Join(baseRows, "\n")+"\n"), 0o644)
	jp := filepath.Join(dir, "job.yaml")
	os.WriteFile(jp, []byte(job), 0o644)
	j, err := Load(jp, testOpts(nil))
	if err != nil {
		t.Fatal(err)
	}
	v, err := Validate(context.Background(), j)
	if err != nil {
		t.Fatal(err)
	}
	r := NewValidationReport("job.yaml", j, v, nil)
	if r.ExitCode != ExitClean || r.Accepted != 2 || r.Warnings != 1 || len(r.JobWarnings) != 1 {
		t.Fatalf("exit %d, accepted %d, warnings %d, job warnings %+v: want a clean validation with one job warning", r.ExitCode, r.Accepted, r.Warnings, r.JobWarnings)
	}
	if w := r.JobWarnings[0]; w.Line != 7 || w.Column != 5 || w.Code != CodeCarnetDiscount {
		t.Errorf("warning at %d:%d code %s, want 7:5 %s", w.Line, w.Column, w.Code, CodeCarnetDiscount)
	}
	text := func(write func(*bytes.Buffer, string) error, lang string) string {
		var b bytes.Buffer
		if err := write(&b, lang); err != nil {
			t.Fatal(err)
		}
		return b.String()
	}
	vr := func(b *bytes.Buffer, lang string) error { return r.WriteText(b, lang) }
	for lang, want := range map[string][]string{
		"pt": {"AVISO job.yaml:7:5: o desconto condicional de um carnê tem uma só data-limite para todas as parcelas (com days_before_due: 5 ela é 5 dias antes do vencimento da 1ª parcela); as parcelas 2 em diante só têm o desconto se pagas até essa mesma data, antes do vencimento.",
			"emita um boleto por mês (issue.boletos", "2 linhas: 2 aceitas, 0 recusadas; 0 erros, 1 aviso.", "Tudo certo."},
		"en": {"WARN  job.yaml:7:5: a carnet's conditional discount has one last day for all its parcels (with days_before_due: 5 it is 5 days before the first parcel's due date); parcels 2 onwards get the discount only if paid by that same date, ahead of their due date.",
			"issue one slip a month (issue.boletos", "2 rows: 2 accepted, 0 refused; 0 errors, 1 warning."},
	} {
		got := text(vr, lang)
		for _, w := range want {
			if !strings.Contains(got, w) {
				t.Errorf("validate (%s) lacks %q:\n%s", lang, w, got)
			}
		}
	}

	p := BuildPlan("job.yaml", j, v)
	if len(p.DiscountWindows) != 1 || p.DiscountWindows[0].Carnets != 2 || p.Warnings != 1 {
		t.Fatalf("plan windows %+v, warnings %d: want one window for 2 carnets and 1 warning", p.DiscountWindows, p.Warnings)
	}
	pw := func(b *bytes.Buffer, lang string) error { return p.WriteText(b, lang) }
	for lang, want := range map[string][]string{
		"pt": {"  Desconto condicional:\n    5% até 05/12/2026, uma só data para o carnê: na 1ª parcela (vence 10/12/2026), até 5 dias antes do vencimento; nas parcelas 2 a 3 (vencem de 10/01/2027 a 10/02/2027), só se pagas até 05/12/2026, antes do vencimento — 2 carnês\n",
			"AVISO job.yaml:7:5: o desconto condicional de um carnê"},
		"en": {"  Conditional discount:\n    5% until 05/12/2026, one date for the whole carnet: on parcel 1 (due 10/12/2026), until 5 days before its due date; on parcels 2 to 3 (due 10/01/2027 to 10/02/2027), only if paid by 05/12/2026, ahead of their due date — 2 carnets\n",
			"WARN  job.yaml:7:5: a carnet's conditional discount"},
	} {
		got := text(pw, lang)
		for _, w := range want {
			if !strings.Contains(got, w) {
				t.Errorf("plan (%s) lacks %q:\n%s", lang, w, got)
			}
		}
	}

	// Without a conditional discount there is neither warning nor window.
	os.WriteFile(jp, []byte(strings.Split(job, "    conditional_discount:")[0]), 0o644)
	j, err = Load(jp, testOpts(nil))
	if err != nil {
		t.Fatal(err)
	}
	if v, err = Validate(context.Background(), j); err != nil {
		t.Fatal(err)
	}
	if r := NewValidationReport("job.yaml", j, v, nil); len(r.JobWarnings) != 0 || r.Warnings != 0 {
		t.Errorf("no discount: job warnings %+v, warnings %d, want none", r.JobWarnings, r.Warnings)
	}
	if p := BuildPlan("job.yaml", j, v); len(p.DiscountWindows) != 0 || strings.Contains(text(func(b *bytes.Buffer, l string) error { return p.WriteText(b, l) }, "pt"), "Desconto condicional") {
		t.Errorf("no discount: plan windows %+v", p.DiscountWindows)
	}
}

// Two windows (two first due dates) come out sorted by date; a fixed-value
// discount and a fractional percentage are written as the user typed them.
func TestDiscountWindowText(t *testing.T) {
	w := DiscountWindow{Type: "currency", Value: 1050, Until: day("2027-01-31"), First: day("2027-01-31"), Repeats: 2, Carnets: 1}
	if got, want := w.Text("pt"), "R$ 10,50 até 31/01/2027, uma só data para o carnê: na 1ª parcela (vence 31/01/2027), até o vencimento; na 2ª parcela (vence 28/02/2027), só se paga até 31/01/2027, antes do vencimento — 1 carnê"; got != want {
		t.Errorf("got  %q\nwant %q", got, want)
	}
	w = DiscountWindow{Type: "percentage", Value: 250, Until: day("2027-01-30"), First: day("2027-01-31"), Repeats: 1, Carnets: 3}
	if got, want := w.Text("en"), "2,5% until 30/01/2027, one date for the whole carnet: on parcel 1 (due 31/01/2027), until 1 day before its due date — 3 carnets"; got != want {
		t.Errorf("got  %q\nwant %q", got, want)
	}
	ws := []DiscountWindow{{Until: day("2027-02-05"), First: day("2027-02-10")}, {Until: day("2027-01-05"), First: day("2027-01-10")}}
	sortDiscountWindows(ws)
	if !ws[0].Until.Equal(day("2027-01-05")) {
		t.Errorf("not sorted: %+v", ws)
	}
}

func day(s string) time.Time {
	d, err := time.Parse("2006-01-02", s)
	if err != nil {
		panic(err)
	}
	return d
}

// A negative days_before_due is refused at its own line and column with
// what was typed, not as a missing date.
func TestNegativeDaysBeforeDue(t *testing.T) {
	job := "version: 1\ninput: {file: in.csv}\nissue:\n  carnets:\n    repeats: 3\n    conditional_discount: {type: percentage, value: 5%, days_before_due: -3}\n"
	r := runCase(t, job, map[string][]byte{"in.csv": []byte(baseHeader + "\n" + baseRows[0] + "\n")}, nil)
	if len(r.JobProblems) != 1 {
		t.Fatalf("job problems %+v, want one", r.JobProblems)
	}
	p := r.JobProblems[0]
	if p.Code != "desconto_data" || p.Line != 6 || p.Pointer != "/issue/carnets/conditional_discount/days_before_due" ||
		!strings.Contains(p.Message, "days_before_due deve ser um número positivo de dias antes do vencimento (recebido -3)") {
		t.Errorf("problem %+v", p)
	}
}
