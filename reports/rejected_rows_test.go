package reports_test

import (
	"bytes"
	"context"
	"encoding/csv"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/xuri/excelize/v2"

	"remessa/pipeline"
	"remessa/reports"
)

// rejectedRowsInput: four payers, the 2nd with an invalid CPF and the 4th
// with no value (spreadsheet rows 3 and 5).
var rejectedRowsInput = [][]string{
	{"Código", "Nome", "CPF", "Valor"},
	{"A1", "Ana Souza", "39053344705", "100,00"},
	{"A2", "Bruno Lima", "11111111111", "50,00"},
	{"A3", "Carla Dias", "52998224725", "1.234,56"},
	{"A4", "Davi Reis", "01234567890", ""},
}

const rejectedRowsJob = `version: 1
name: Rejeitadas na validação
input:
  file: %s
  key: Código
issue:
  boletos:
    due: +15d
    items: [{name: "Serviço {{ .Código }}", value: "{{ .Valor }}"}]
`

// validated loads and validates a boletos job over input.
func validated(t *testing.T, dir, input string) *pipeline.Validation {
	t.Helper()
	job := filepath.Join(dir, "job.yaml")
	if err := os.WriteFile(job, []byte(strings.Replace(rejectedRowsJob, "%s", filepath.Base(input), 1)), 0o644); err != nil {
		t.Fatal(err)
	}
	j, err := pipeline.Load(job, pipeline.LoadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	v, err := pipeline.Validate(context.Background(), j)
	if err != nil {
		t.Fatal(err)
	}
	if len(v.Refused) != 2 || v.Refused[0].SourceRow != 3 || v.Refused[1].SourceRow != 5 {
		t.Fatalf("refused rows: %+v", v.Refused)
	}
	return v
}

// checkRejected checks the rows written back: the header plus the
// "Problema" column, then rows 3 and 5 of the input as they were.
func checkRejected(t *testing.T, got [][]string, want map[int]string) {
	t.Helper()
	if len(got) != 3 {
		t.Fatalf("%d rows written, want the header and 2: %q", len(got), got)
	}
	if h := got[0]; len(h) != 5 || strings.Join(h[:4], "|") != strings.Join(rejectedRowsInput[0], "|") || h[4] != "Problema" {
		t.Fatalf("header %q", h)
	}
	for i, src := range []int{3, 5} {
		row := got[i+1]
		in := rejectedRowsInput[src-1]
		for c := range in {
			if c >= len(row) && in[c] == "" {
				continue
			}
			if row[c] != in[c] {
				t.Errorf("row %d column %d: %q, want %q", src, c, row[c], in[c])
			}
		}
		if len(row) != 5 || row[4] != want[src] || want[src] == "" {
			t.Errorf("row %d: problem %q, want %q", src, row[len(row)-1], want[src])
		}
	}
	if !strings.Contains(strings.ToLower(want[3]), "cpf") {
		t.Errorf("row 3's problem does not name the CPF: %q", want[3])
	}
}

func TestWriteRejectedRowsCSV(t *testing.T) {
	dir := t.TempDir()
	var sb strings.Builder
	for _, r := range rejectedRowsInput {
		sb.WriteString(strings.Join(r, ";") + "\n")
	}
	in := filepath.Join(dir, "pagadores.csv")
	if err := os.WriteFile(in, []byte(sb.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	v := validated(t, dir, in)
	want := reports.RejectedRows(v.Refused, "")
	var buf bytes.Buffer
	format, err := reports.WriteRejectedRows(&buf, reports.InputInfo{Path: in}, want, "pt")
	if err != nil || format != "csv" {
		t.Fatalf("format %q, %v", format, err)
	}
	cr := csv.NewReader(&buf)
	cr.Comma = ';'
	cr.FieldsPerRecord = -1
	got, err := cr.ReadAll()
	if err != nil {
		t.Fatalf("%v:\n%s", err, buf.String())
	}
	checkRejected(t, got, want)

	// a row the input does not have: the file is still whole, the error says so
	want[99] = "não existe"
	buf.Reset()
	if _, err := reports.WriteRejectedRows(&buf, reports.InputInfo{Path: in}, want, ""); !errors.Is(err, reports.ErrRowsNotFound) || !strings.Contains(err.Error(), "99") {
		t.Fatalf("missing row: %v", err)
	}
	if n := strings.Count(strings.TrimSpace(buf.String()), "\n"); n != 2 {
		t.Errorf("with a missing row, %d lines after the header:\n%s", n, buf.String())
	}
}

func TestWriteRejectedRowsXLSX(t *testing.T) {
	dir := t.TempDir()
	f := excelize.NewFile()
	if err := f.SetSheetName("Sheet1", "Pagadores"); err != nil {
		t.Fatal(err)
	}
	for r, row := range rejectedRowsInput {
		for c, v := range row {
			ref, _ := excelize.CoordinatesToCellName(c+1, r+1)
			if err := f.SetCellStr("Pagadores", ref, v); err != nil {
				t.Fatal(err)
			}
		}
	}
	in := filepath.Join(dir, "pagadores.xlsx")
	if err := f.SaveAs(in); err != nil {
		t.Fatal(err)
	}
	f.Close()
	v := validated(t, dir, in)
	want := reports.RejectedRows(v.Refused, "pt")
	var buf bytes.Buffer
	format, err := reports.WriteRejectedRows(&buf, reports.InputInfo{Path: in}, want, "pt")
	if err != nil || format != "xlsx" {
		t.Fatalf("format %q, %v", format, err)
	}
	out, err := excelize.OpenReader(&buf)
	if err != nil {
		t.Fatal(err)
	}
	defer out.Close()
	if sheets := out.GetSheetList(); len(sheets) != 1 || sheets[0] != "Pagadores" {
		t.Fatalf("sheets %v", sheets)
	}
	got, err := out.GetRows("Pagadores")
	if err != nil {
		t.Fatal(err)
	}
	checkRejected(t, got, want)
}
