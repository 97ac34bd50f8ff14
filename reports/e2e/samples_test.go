// Package e2e_test runs the sample jobs through the pipeline and checks their
// reports; it lives apart so that package reports tests on its own.
package e2e_test

import (
	"bytes"
	"context"
	"encoding/csv"
	"encoding/xml"
	"errors"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/xuri/excelize/v2"

	"remessa/formats"
	"remessa/pipeline/results"
	"remessa/pipeline/run"
	"remessa/reports"
	_ "remessa/sandbox/all"
)

// copyDir copies the files of a sample folder.
func copyDir(t *testing.T, from, to string) {
	t.Helper()
	ents, err := os.ReadDir(from)
	if err != nil {
		t.Fatal(err)
	}
	os.MkdirAll(to, 0o755)
	for _, e := range ents {
		if e.IsDir() {
			continue
		}
		b, err := os.ReadFile(filepath.Join(from, e.Name()))
		if err != nil {
			t.Fatal(err)
		}
		os.WriteFile(filepath.Join(to, e.Name()), b, 0o644)
	}
}

func runJob(t *testing.T, job, runs string) *run.Outcome {
	t.Helper()
	out, err := run.Run(context.Background(), job, run.Options{RunsDir: runs, SandboxDir: filepath.Join(runs, ".sandbox"),
		Service: "embedded", Yes: true, Quiet: true, Getenv: func(string) (string, bool) { return "", false }})
	if err != nil {
		var inv *run.InvalidRowsError
		if !errors.As(err, &inv) || out == nil {
			t.Fatalf("run %s: %v", job, err)
		}
	}
	if out == nil || out.Results == nil {
		t.Fatalf("run %s: no results", job)
	}
	// the rows are in results.json (a run returns its totals only)
	full, err := out.LoadResults()
	if err != nil {
		t.Fatalf("run %s: %v", job, err)
	}
	out.Results = full
	return out
}

// cents parses an XLSX money cell (reais as a decimal) exactly.
func cents(t *testing.T, s string) int64 {
	t.Helper()
	neg := strings.HasPrefix(s, "-")
	s = strings.TrimPrefix(s, "-")
	ip, fp, _ := strings.Cut(s, ".")
	fp = (fp + "00")[:2]
	n, err := strconv.ParseInt(ip+fp, 10, 64)
	if err != nil {
		t.Fatalf("money cell %q: %v", s, err)
	}
	if neg {
		n = -n
	}
	return n
}

// TestSampleJobsReports runs the sample jobs on the embedded service and
// checks every report of each against its results.json.
func TestSampleJobsReports(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the sample jobs")
	}
	t.Parallel()
	for _, c := range []struct {
		dir, job string
		spoil    func(t *testing.T, work string) // makes some rows fail
	}{
		{"boletos", "boletos.yaml", nil},
		{"boletos", "boletos.yaml", spoilBoletos},
		{"escola", "carnes.yaml", nil},
		{"split", "associados.yaml", nil},
		{"split", "pedidos.yaml", nil},
		{"mensal", "cobv.yaml", nil},
	} {
		name := c.dir + "/" + c.job
		if c.spoil != nil {
			name += "/failing-rows"
		}
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			work := t.TempDir()
			copyDir(t, filepath.Join("..", "..", "samples", c.dir), work)
			if c.spoil != nil {
				c.spoil(t, work)
			}
			out := runJob(t, filepath.Join(work, c.job), filepath.Join(work, "runs"))
			res := out.Results
			dir := filepath.Join(work, "reports")
			files, r, err := reports.WriteFromFile(dir, filepath.Join(out.Dir, reports.FileJSON), reports.Options{Input: &reports.InputInfo{}})
			if err != nil {
				t.Fatalf("reports: %v (%v)", err, files)
			}
			if ok, diff := r.Totals.Reconciles(); !ok {
				t.Errorf("results do not reconcile: %s", diff)
			}
			if c.spoil != nil && (res.Totals.Refused.Rows != 2 || res.Totals.Refused.AmountCents != 71673) {
				t.Fatalf("spoilt sample: refused %+v, want the 2 spoilt rows (R$ 716,73 + R$ 0,00)", res.Totals.Refused)
			}
			checkXLSX(t, filepath.Join(dir, reports.FileXLSX), res)
			checkCSV(t, filepath.Join(dir, reports.FileLinesCSV), ';', res)
			comma := filepath.Join(work, "reports-comma")
			if _, _, err := reports.WriteFromFile(comma, filepath.Join(out.Dir, reports.FileJSON),
				reports.Options{Formats: []string{reports.FormatCSV}, CSVDialect: reports.DialectComma, Lang: "en"}); err != nil {
				t.Fatal(err)
			}
			checkCSV(t, filepath.Join(comma, reports.FileLinesCSV), ',', res)
			checkHTML(t, filepath.Join(dir, reports.FileHTML), res)
			failing := res.Totals.Refused.Rows + res.Totals.Denied.Rows
			rej, _ := filepath.Glob(filepath.Join(dir, "rejeitadas.*"))
			if failing == 0 && len(rej) > 0 || failing > 0 && len(rej) != 1 {
				t.Fatalf("%d failing rows, rejected files %v", failing, rej)
			}
			if failing > 0 {
				src, rows := readAll(t, rej[0])
				if len(rows) != failing {
					t.Errorf("rejected file has %d rows, want %d", len(rows), failing)
				}
				orig, _ := readAll(t, res.Run.InputFile)
				if src.Encoding != orig.Encoding || src.Delimiter != orig.Delimiter || src.Format != orig.Format {
					t.Errorf("rejected file %s/%s/%q, input %s/%s/%q", src.Format, src.Encoding, src.Delimiter, orig.Format, orig.Encoding, orig.Delimiter)
				}
			}
			if c.spoil != nil {
				rerunFixedBoletos(t, work, rej[0])
			}
			if out.Stop != nil {
				t.Logf("%s: the run stopped: %v", c.dir, out.Stop)
			}
			t.Logf("%s: %d rows, %d split recipients, issued %d (%s cents), refused %d, denied %d, ambiguous %d", c.dir, res.Totals.In.Rows, len(res.Totals.SplitByRecipient),
				res.Totals.Issued.Rows, strconv.FormatInt(res.Totals.Issued.AmountCents, 10), res.Totals.Refused.Rows, res.Totals.Denied.Rows, res.Totals.Ambiguous.Rows)
		})
	}
}

func readAll(t *testing.T, path string) (formats.Source, []formats.Row) {
	t.Helper()
	rd, err := formats.Open(path, formats.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer rd.Close()
	var rows []formats.Row
	for {
		row, err := rd.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		rows = append(rows, row)
	}
	return rd.Source(), rows
}

func checkXLSX(t *testing.T, path string, res *results.Results) {
	t.Helper()
	f, err := excelize.OpenFile(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	rows, err := f.GetRows("Linhas", excelize.Options{RawCellValue: true})
	if err != nil {
		t.Fatal(err)
	}
	if len(rows) != len(res.Rows)+1 {
		t.Fatalf("Linhas has %d rows, want %d", len(rows), len(res.Rows)+1)
	}
	var sum int64
	for i, r := range rows[1:] {
		sum += cents(t, r[5])
		if r[0] != strconv.Itoa(res.Rows[i].SourceRow) || r[3] != res.Rows[i].PayerDoc {
			t.Errorf("Linhas row %d: %q", i+2, r[:6])
		}
	}
	if got := f.GetSheetList(); got[0] != "Resumo" || got[1] != "Linhas" || got[len(got)-1] != "Problemas" {
		t.Errorf("sheets %v", got)
	}
	// CPF as text "@", money with the R$ format, the due date a dd/mm/yyyy date
	for ref, want := range map[string]string{"D2": "@", "F2": `"R$" #,##0.00;-"R$" #,##0.00`, "G2": "dd/mm/yyyy"} {
		id, _ := f.GetCellStyle("Linhas", ref)
		st, err := f.GetStyle(id)
		if err != nil {
			t.Fatal(err)
		}
		got := ""
		if st.CustomNumFmt != nil {
			got = *st.CustomNumFmt
		} else if st.NumFmt == 49 {
			got = "@"
		}
		if got != want {
			t.Errorf("Linhas %s number format %q (id %d), want %q", ref, got, st.NumFmt, want)
		}
	}
	if typ, _ := f.GetCellType("Linhas", "D2"); typ != excelize.CellTypeInlineString && typ != excelize.CellTypeSharedString {
		t.Errorf("Linhas D2 (CPF) type %v, want text", typ)
	}
	if shown, _ := f.GetCellValue("Linhas", "G2"); res.Rows[0].DueDate != "" && shown != res.Rows[0].DueDate[8:10]+"/"+res.Rows[0].DueDate[5:7]+"/"+res.Rows[0].DueDate[:4] {
		t.Errorf("Linhas G2 shows %q, due date %s", shown, res.Rows[0].DueDate)
	}
	if panes, err := f.GetPanes("Linhas"); err != nil || !panes.Freeze || panes.YSplit != 1 {
		t.Errorf("Linhas header not frozen: %+v %v", panes, err)
	}
	if tables, err := f.GetTables("Linhas"); err != nil || len(tables) != 1 || tables[0].Range != "A1:U"+strconv.Itoa(len(res.Rows)+1) {
		t.Errorf("Linhas table (autofilter) %+v %v", tables, err)
	}
	var failing int
	for _, r := range res.Rows {
		if r.Outcome != results.Issued {
			failing += max(1, len(r.Problems))
		}
	}
	if prob, _ := f.GetRows("Problemas"); len(prob) != failing+1 {
		t.Errorf("Problemas has %d rows, want header + %d", len(prob), failing)
	}
	if sum != res.Totals.In.AmountCents {
		t.Errorf("Linhas sums to %d cents, results say %d", sum, res.Totals.In.AmountCents)
	}
	if res.Run.Kind == results.Carnets {
		prows, _ := f.GetRows("Parcelas", excelize.Options{RawCellValue: true})
		var psum int64
		for _, r := range prows[1:] {
			psum += cents(t, r[7])
		}
		if psum != res.Totals.Issued.AmountCents {
			t.Errorf("Parcelas sum to %d cents, issued %d", psum, res.Totals.Issued.AmountCents)
		}
	}
}

func checkCSV(t *testing.T, path string, comma rune, res *results.Results) {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if bom := bytes.HasPrefix(b, []byte("\xEF\xBB\xBF")); bom != (comma == ';') {
		t.Errorf("%s: BOM %v with separator %q", path, bom, comma)
	}
	r := csv.NewReader(bytes.NewReader(bytes.TrimPrefix(b, []byte("\xEF\xBB\xBF"))))
	r.Comma = comma
	recs, err := r.ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	if len(recs) != len(res.Rows)+1 {
		t.Fatalf("linhas.csv has %d records, want %d", len(recs), len(res.Rows)+1)
	}
	var sum int64
	for i, rec := range recs[1:] {
		if rec[0] != strconv.Itoa(res.Rows[i].SourceRow) || rec[1] != res.Rows[i].Key || rec[3] != res.Rows[i].PayerDoc {
			t.Fatalf("linhas.csv record %d %q, want row %d key %q", i+1, rec[:4], res.Rows[i].SourceRow, res.Rows[i].Key)
		}
		amount := rec[5]
		if comma == ';' {
			amount = strings.Replace(amount, ",", ".", 1) // decimal comma, no thousands separator
		}
		sum += cents(t, amount)
	}
	if sum != res.Totals.In.AmountCents {
		t.Errorf("linhas.csv (%q) sums to %d cents, results say %d", comma, sum, res.Totals.In.AmountCents)
	}
}

// checkHTML parses the page as XML and checks its numbers (data-*
// attributes) against results.json: totals of every outcome, the
// reconciliation, issued cents by due month, split shares, problem lines.
func checkHTML(t *testing.T, path string, res *results.Results) {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	dec := xml.NewDecoder(bytes.NewReader(b))
	dec.Strict = true
	attrs := func(e xml.StartElement) map[string]string {
		m := map[string]string{}
		for _, a := range e.Attr {
			m[a.Name.Local] = a.Value
		}
		return m
	}
	var totals, reconciles map[string]string
	months, monthRows, split := map[string]string{}, map[string]string{}, map[string]string{}
	var service string
	var problems int
	var problemCents int64
	for {
		tok, err := dec.Token()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatalf("HTML is not well-formed: %v", err)
		}
		e, ok := tok.(xml.StartElement)
		if !ok {
			continue
		}
		a := attrs(e)
		_, isSplit := a["data-recipient"] // "" for an own share the run left unnamed
		switch {
		case a["data-total-in"] != "":
			totals = a
		case a["data-reconciles"] != "":
			reconciles = a
		case a["data-service"] != "":
			service = a["data-service"]
		case isSplit && a["data-month"] != "":
			split[a["data-recipient"]+"|"+a["data-month"]] = a["data-cents"]
		case a["data-month"] != "" && e.Name.Local == "g":
			months[a["data-month"]] = a["data-cents"]
		case a["data-month"] != "" && e.Name.Local == "tr":
			monthRows[a["data-month"]] = a["data-cents"]
		case a["data-source-row"] != "":
			problems++
			c, _ := strconv.ParseInt(a["data-cents"], 10, 64)
			problemCents += c
		}
	}
	if totals == nil {
		t.Fatal("HTML has no totals table")
	}
	tl := res.Totals
	for name, tally := range map[string]results.Tally{"in": tl.In, "issued": tl.Issued, "refused": tl.Refused,
		"denied": tl.Denied, "ambiguous": tl.Ambiguous, "pending": tl.Pending} {
		if got := totals["data-total-"+name]; got != strconv.FormatInt(tally.AmountCents, 10) {
			t.Errorf("HTML data-total-%s = %q, results say %d", name, got, tally.AmountCents)
		}
		if got := totals["data-rows-"+name]; got != strconv.Itoa(tally.Rows) {
			t.Errorf("HTML data-rows-%s = %q, results say %d", name, got, tally.Rows)
		}
	}
	if ok, _ := tl.Reconciles(); reconciles["data-reconciles"] != strconv.FormatBool(ok) {
		t.Errorf("HTML data-reconciles %q, results reconcile: %v", reconciles["data-reconciles"], ok)
	}
	if len(months) != len(tl.IssuedByDueMonth) || len(monthRows) != len(tl.IssuedByDueMonth) {
		t.Errorf("HTML has %d month bars and %d month rows, results %d months", len(months), len(monthRows), len(tl.IssuedByDueMonth))
	}
	for m, v := range tl.IssuedByDueMonth {
		if want := strconv.FormatInt(v, 10); months[m] != want || monthRows[m] != want {
			t.Errorf("HTML month %s bar %q row %q, results %s", m, months[m], monthRows[m], want)
		}
	}
	n := 0
	for rc, ms := range tl.SplitByRecipient {
		for m, v := range ms {
			n++
			if got := split[rc+"|"+m]; got != strconv.FormatInt(v, 10) {
				t.Errorf("HTML split %s %s = %q, results %d", rc, m, got, v)
			}
		}
	}
	if len(split) != n {
		t.Errorf("HTML has %d split lines, results %d", len(split), n)
	}
	var wantProblems int
	var wantCents int64
	for _, r := range res.Rows {
		if r.Outcome != results.Issued {
			k := max(1, len(r.Problems))
			wantProblems += k
			wantCents += int64(k) * r.AmountCents
		}
	}
	if problems != wantProblems || problemCents != wantCents {
		t.Errorf("HTML has %d problem lines (%d cents), results %d (%d cents)", problems, problemCents, wantProblems, wantCents)
	}
	if want := "service_" + res.Run.Service; service != want {
		t.Errorf("HTML banner data-service %q, want %q", service, want)
	}
	if !bytes.Contains(b, []byte("SERVIÇO EMBUTIDO")) {
		t.Error("HTML lacks the embedded-service banner")
	}
}

// rerunFixedBoletos fixes the two rows spoilBoletos broke in the rejected
// rows file and runs the job on it: exactly those rows are issued.
func rerunFixedBoletos(t *testing.T, work, rej string) {
	t.Helper()
	b, err := os.ReadFile(rej)
	if err != nil {
		t.Fatal(err)
	}
	fixed := strings.Replace(strings.Replace(string(b), "374.993.549-12", "374.993.549-11", 1), ",894;56,", `,"894,56",`, 1)
	os.WriteFile(filepath.Join(work, "corrigidas.csv"), []byte(fixed), 0o644)
	j, _ := os.ReadFile(filepath.Join(work, "boletos.yaml"))
	j = bytes.Replace(j, []byte("file: clientes.csv"), []byte("file: corrigidas.csv"), 1)
	os.WriteFile(filepath.Join(work, "corrigidas.yaml"), j, 0o644)
	second := runJob(t, filepath.Join(work, "corrigidas.yaml"), filepath.Join(work, "runs"))
	var got []string
	for _, r := range second.Results.Rows {
		got = append(got, r.Key+" "+string(r.Outcome)+" "+strconv.FormatInt(r.AmountCents, 10))
	}
	if want := []string{"B-002 issued 71673", "B-004 issued 89456"}; strings.Join(got, "|") != strings.Join(want, "|") {
		t.Errorf("the fixed rejected rows issued %q, want %q", got, want)
	}
}

// spoilBoletos breaks two rows of samples/boletos: B-002's CPF check digit
// (R$ 716,73) and B-004's amount (894;56), and lets the run skip invalid rows.
func spoilBoletos(t *testing.T, work string) {
	t.Helper()
	in := filepath.Join(work, "clientes.csv")
	b, err := os.ReadFile(in)
	if err != nil {
		t.Fatal(err)
	}
	s := string(b)
	for _, r := range [][2]string{{"374.993.549-11", "374.993.549-12"}, {`São Paulo,SP,"894,56",`, `São Paulo,SP,"894;56",`}} {
		if !strings.Contains(s, r[0]) {
			t.Fatalf("samples/boletos/clientes.csv no longer has %q", r[0])
		}
		s = strings.Replace(s, r[0], r[1], 1)
	}
	os.WriteFile(in, []byte(s), 0o644)
	job := filepath.Join(work, "boletos.yaml")
	j, _ := os.ReadFile(job)
	j = bytes.Replace(j, []byte("reports:\n  formats: [html, json]"), []byte("reports:\n  formats: [html, json]\non_invalid: skip"), 1)
	if !bytes.Contains(j, []byte("on_invalid: skip")) {
		t.Fatalf("samples/boletos/boletos.yaml changed:\n%s", j)
	}
	os.WriteFile(job, j, 0o644)
}

// TestRejectedRowsFixedAndRunAgain: a run refuses one row; its rejected-rows
// file, fixed, is the input of a second run, which issues exactly that row.
func TestRejectedRowsFixedAndRunAgain(t *testing.T) {
	if testing.Short() {
		t.Skip("runs jobs")
	}
	t.Parallel()
	work := t.TempDir()
	csvText := "Código;Nome;CPF;Valor\n" +
		"K1;Ana Lima;529.982.247-25;100,00\n" +
		"K2;Bruno Costa;111.111.111-11;55,50\n" +
		"K3;Carla Dias;390.533.447-05;20,00\n"
	os.WriteFile(filepath.Join(work, "pagadores.csv"), []byte(csvText), 0o644)
	job := func(name, input string) string {
		p := filepath.Join(work, name+".yaml")
		os.WriteFile(p, []byte(`version: 1
name: `+name+`
input:
  file: `+input+`
  key: Código
issue:
  boletos:
    due: +15d
    items: [{name: "Serviço {{ .Código }}", value: "{{ .Valor }}"}]
on_invalid: skip
reports:
  formats: [json, csv]
`), 0o644)
		return p
	}
	runs := filepath.Join(work, "runs")
	first := runJob(t, job("primeira", "pagadores.csv"), runs)
	if first.Results.Totals.Issued.Rows != 2 || first.Results.Totals.Refused.Rows != 1 {
		t.Fatalf("first run: %+v", first.Results.Totals)
	}
	rej := filepath.Join(first.Dir, "rejeitadas.csv")
	b, err := os.ReadFile(rej)
	if err != nil {
		t.Fatalf("no rejected rows from the run: %v (reports %v)", err, first.Reports)
	}
	if !strings.HasPrefix(string(b), "Código;Nome;CPF;Valor;Problema\r\nK2;Bruno Costa;111.111.111-11;55,50;") {
		t.Fatalf("rejeitadas.csv:\n%s", b)
	}
	fixed := strings.Replace(string(b), "111.111.111-11", "123.456.789-09", 1)
	os.WriteFile(filepath.Join(work, "corrigidas.csv"), []byte(fixed), 0o644)
	second := runJob(t, job("segunda", "corrigidas.csv"), runs)
	rows := second.Results.Rows
	if len(rows) != 1 || rows[0].Key != "K2" || rows[0].Outcome != results.Issued || rows[0].AmountCents != 5550 {
		t.Fatalf("second run rows: %+v", rows)
	}
}

// TestRejectedXLSXFixedAndRunAgain: the same with a workbook: the rejected
// rows come back as a workbook (same sheet), fixed with excelize, run again.
func TestRejectedXLSXFixedAndRunAgain(t *testing.T) {
	if testing.Short() {
		t.Skip("runs jobs")
	}
	t.Parallel()
	work := t.TempDir()
	f := excelize.NewFile()
	f.SetSheetName("Sheet1", "Clientes")
	text, _ := f.NewStyle(&excelize.Style{NumFmt: 49})
	rows := [][]any{
		{"Código", "Nome", "CPF", "Valor"},
		{"X1", "Ana Lima", "52998224725", 100.0},
		{"X2", "Bruno Costa", "01234567800", 55.5}, // wrong check digits
		{"X3", "Carla Dias", "39053344705", 20.0},
	}
	for i, r := range rows {
		cell, _ := excelize.CoordinatesToCellName(1, i+1)
		if err := f.SetSheetRow("Clientes", cell, &r); err != nil {
			t.Fatal(err)
		}
	}
	f.SetCellStyle("Clientes", "C2", "C4", text)
	if err := f.SaveAs(filepath.Join(work, "clientes.xlsx")); err != nil {
		t.Fatal(err)
	}
	f.Close()
	job := func(name, input string) string {
		p := filepath.Join(work, name+".yaml")
		os.WriteFile(p, []byte(`version: 1
name: `+name+`
input:
  file: `+input+`
  sheet: Clientes
  key: Código
issue:
  boletos:
    due: +10d
    items: [{name: "Serviço {{ .Código }}", value: "{{ .Valor }}"}]
on_invalid: skip
reports:
  formats: [json, html]
`), 0o644)
		return p
	}
	runs := filepath.Join(work, "runs")
	first := runJob(t, job("primeira", "clientes.xlsx"), runs)
	if first.Results.Totals.Issued.Rows != 2 || first.Results.Totals.Refused.Rows != 1 {
		t.Fatalf("first run: %+v", first.Results.Totals)
	}
	rej := filepath.Join(first.Dir, "rejeitadas.xlsx")
	g, err := excelize.OpenFile(rej)
	if err != nil {
		t.Fatalf("no rejected workbook: %v (reports %v)", err, first.Reports)
	}
	got, _ := g.GetRows("Clientes")
	if len(got) != 2 || got[1][0] != "X2" || got[1][2] != "01234567800" || got[1][4] == "" {
		t.Fatalf("rejeitadas.xlsx rows %q", got)
	}
	if err := g.SetCellValue("Clientes", "C2", "12345678909"); err != nil {
		t.Fatal(err)
	}
	if err := g.SaveAs(filepath.Join(work, "corrigidas.xlsx")); err != nil {
		t.Fatal(err)
	}
	g.Close()
	second := runJob(t, job("segunda", "corrigidas.xlsx"), runs)
	rs := second.Results.Rows
	if len(rs) != 1 || rs[0].Key != "X2" || rs[0].Outcome != results.Issued || rs[0].AmountCents != 5550 || rs[0].PayerDoc != "12345678909" {
		t.Fatalf("second run rows: %+v", rs)
	}
}
