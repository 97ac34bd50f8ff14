package reports

import (
	"bytes"
	"encoding/csv"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

func readCSV(t *testing.T, b []byte, comma rune) [][]string {
	t.Helper()
	r := csv.NewReader(bytes.NewReader(b))
	r.Comma = comma
	recs, err := r.ReadAll()
	if err != nil {
		t.Fatalf("CSV does not parse with %q: %v\n%s", comma, err, b)
	}
	return recs
}

func TestCSVExcelDialect(t *testing.T) {
	dir := t.TempDir()
	files, err := Write(dir, carnetFixture(), Options{Formats: []string{FormatCSV}})
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, f := range files {
		names = append(names, filepath.Base(f))
	}
	if want := []string{"resumo.csv", "linhas.csv", "parcelas.csv", "problemas.csv"}; !slices.Equal(names, want) {
		t.Fatalf("files %v, want %v", names, want)
	}
	b, err := os.ReadFile(filepath.Join(dir, "linhas.csv"))
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.HasPrefix(b, []byte("\xEF\xBB\xBF")) {
		t.Fatal("linhas.csv has no UTF-8 BOM")
	}
	if !bytes.Contains(b, []byte("\r\n")) {
		t.Error("excel dialect should end lines with CRLF")
	}
	recs := readCSV(t, b[3:], ';')
	if len(recs) != 5 {
		t.Fatalf("%d records, want header + 4", len(recs))
	}
	if recs[0][0] != "Linha" || recs[0][3] != "CPF/CNPJ" || len(recs[0]) != 21 {
		t.Errorf("header %q", recs[0])
	}
	r := recs[1]
	if r[0] != "2" || r[1] != "C-001" || r[2] != "Maria da Conceição" || r[3] != "01234567890" ||
		r[4] != "emitida" || r[5] != "300,00" || r[6] != "10/01/2026" || r[8] != "88001" || r[9] != "550001 550002 550003" {
		t.Errorf("first row %q", r)
	}
	if recs[2][5] != "246,90" {
		t.Errorf("second amount %q, want 246,90", recs[2][5])
	}
	if recs[3][19] != "cpf_invalido" || recs[4][19] != "3500034" {
		t.Errorf("error codes %q %q", recs[3][19], recs[4][19])
	}

	p, _ := os.ReadFile(filepath.Join(dir, "parcelas.csv"))
	precs := readCSV(t, bytes.TrimPrefix(p, []byte("\xEF\xBB\xBF")), ';')
	if len(precs) != 6 || precs[5][4] != "2" || precs[5][7] != "123,45" || precs[5][6] != "15/02/2026" {
		t.Errorf("parcelas: %d records, last %q", len(precs), precs[len(precs)-1])
	}

	s, _ := os.ReadFile(filepath.Join(dir, "resumo.csv"))
	srecs := readCSV(t, bytes.TrimPrefix(s, []byte("\xEF\xBB\xBF")), ';')
	find := func(sec, item, month string) []string {
		for _, r := range srecs {
			if r[0] == sec && r[1] == item && r[2] == month {
				return r
			}
		}
		t.Errorf("resumo.csv lacks %s/%s/%s", sec, item, month)
		return make([]string, 6)
	}
	if r := find("totais", "entrada", ""); r[3] != "4" || r[4] != "1246,90" {
		t.Errorf("in: %q", r)
	}
	if r := find("totais", "emitida", ""); r[3] != "2" || r[4] != "546,90" {
		t.Errorf("issued: %q", r)
	}
	if r := find("vencimento", "", "2026-02"); r[4] != "223,45" {
		t.Errorf("2026-02: %q", r)
	}
	if r := find("repasse", payeeAgent, "2026-01"); r[4] != "55,86" {
		t.Errorf("agent 2026-01: %q", r)
	}
	if r := find("repasse", payeeOwn, "2026-01"); r[4] != "167,59" || r[5] != "conta emissora" {
		t.Errorf("own 2026-01: %q", r)
	}
	if r := find("conferencia", "reconciles", ""); r[5] != "Totais conferem ao centavo" {
		t.Errorf("reconciliation: %q", r)
	}
	if r := find("execucao", "service", ""); r[5] != "production" {
		t.Errorf("service: %q", r)
	}
}

func TestCSVCommaDialect(t *testing.T) {
	var buf bytes.Buffer
	if err := WriteCSV(&buf, "linhas.csv", boletoFixture(), Options{CSVDialect: DialectComma, Lang: "en"}); err != nil {
		t.Fatal(err)
	}
	b := buf.Bytes()
	if bytes.HasPrefix(b, []byte("\xEF\xBB\xBF")) {
		t.Fatal("comma dialect must not have a BOM")
	}
	recs := readCSV(t, b, ',')
	if recs[0][0] != "Row" || recs[1][5] != "1234.56" || recs[1][6] != "2026-01-30" || recs[4][5] != "1.00" {
		t.Errorf("rows %q", recs[:2])
	}
	if recs[3][2] != `=HYPERLINK("http://evil")` {
		t.Errorf("comma dialect keeps text as is, got %q", recs[3][2])
	}
	if recs[2][4] != "ambiguous" || recs[2][19] != "ambigua" {
		t.Errorf("ambiguous row %q", recs[2])
	}
}

func TestCSVExcelDefusesFormulas(t *testing.T) {
	var buf bytes.Buffer
	if err := WriteCSV(&buf, "problemas.csv", boletoFixture(), Options{}); err != nil {
		t.Fatal(err)
	}
	recs := readCSV(t, bytes.TrimPrefix(buf.Bytes(), []byte("\xEF\xBB\xBF")), ';')
	var payers []string
	for _, r := range recs[1:] {
		payers = append(payers, r[2])
	}
	if !slices.Contains(payers, `'=HYPERLINK("http://evil")`) {
		t.Errorf("formula not defused: %q", payers)
	}
	// the ambiguous row has a default problem and action
	for _, r := range recs[1:] {
		if r[0] == "3" && (r[6] != "ambigua" || !strings.Contains(r[12], "remessa resume")) {
			t.Errorf("ambiguous problem %q", r)
		}
	}
	if err := WriteCSV(&buf, "nada.csv", boletoFixture(), Options{}); err == nil || !strings.Contains(err.Error(), "nada.csv") {
		t.Errorf("unknown table: %v", err)
	}
}
