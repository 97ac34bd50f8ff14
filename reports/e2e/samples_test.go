// Package e2e_test runs the sample jobs through the pipeline and checks their
// reports; it lives apart so that package reports tests on its own.
package e2e_test

import (
	"bytes"
	"context"
	"encoding/csv"
	"errors"
	"io"
	"os"
	"path/filepath"
	"regexp"
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
	for _, c := range []struct{ dir, job string }{
		{"boletos", "boletos.yaml"},
		{"escola", "carnes.yaml"},
		{"split", "associados.yaml"},
		{"split", "pedidos.yaml"},
		{"mensal", "cobv.yaml"},
	} {
		t.Run(c.dir+"/"+c.job, func(t *testing.T) {
			work := t.TempDir()
			copyDir(t, filepath.Join("..", "..", "samples", c.dir), work)
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
			checkXLSX(t, filepath.Join(dir, reports.FileXLSX), res)
			checkCSV(t, filepath.Join(dir, reports.FileLinesCSV), res)
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

func checkCSV(t *testing.T, path string, res *results.Results) {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	r := csv.NewReader(bytes.NewReader(bytes.TrimPrefix(b, []byte("\xEF\xBB\xBF"))))
	r.Comma = ';'
	recs, err := r.ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	if len(recs) != len(res.Rows)+1 {
		t.Fatalf("linhas.csv has %d records, want %d", len(recs), len(res.Rows)+1)
	}
	for i, rec := range recs[1:] {
		if rec[1] != res.Rows[i].Key {
			t.Fatalf("linhas.csv record %d key %q, want %q", i+1, rec[1], res.Rows[i].Key)
		}
	}
}

func checkHTML(t *testing.T, path string, res *results.Results) {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	for name, v := range map[string]int64{
		"total-in": res.Totals.In.AmountCents, "total-issued": res.Totals.Issued.AmountCents,
		"total-refused": res.Totals.Refused.AmountCents, "total-denied": res.Totals.Denied.AmountCents,
		"total-ambiguous": res.Totals.Ambiguous.AmountCents, "rows-in": int64(res.Totals.In.Rows),
	} {
		m := regexp.MustCompile(`data-` + name + `="(-?\d+)"`).FindSubmatch(b)
		if m == nil || string(m[1]) != strconv.FormatInt(v, 10) {
			t.Errorf("HTML data-%s = %q, results say %d", name, m, v)
		}
	}
	for rc, months := range res.Totals.SplitByRecipient {
		for m, v := range months {
			want := `data-recipient="` + rc + `" data-month="` + m + `" data-cents="` + strconv.FormatInt(v, 10) + `"`
			if !bytes.Contains(b, []byte(want)) {
				t.Errorf("HTML lacks split share %s", want)
			}
		}
	}
	if !bytes.Contains(b, []byte("SERVIÇO EMBUTIDO")) {
		t.Error("HTML lacks the embedded-service banner")
	}
}

// TestRejectedRowsFixedAndRunAgain: a run refuses one row; its rejected-rows
// file, fixed, is the input of a second run, which issues exactly that row.
func TestRejectedRowsFixedAndRunAgain(t *testing.T) {
	if testing.Short() {
		t.Skip("runs jobs")
	}
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
