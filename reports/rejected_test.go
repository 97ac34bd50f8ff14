package reports

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/xuri/excelize/v2"
	"golang.org/x/text/encoding/charmap"

	"remessa/formats"
	"remessa/pipeline/results"
)

func sha(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	s := sha256.Sum256(b)
	return hex.EncodeToString(s[:])
}

// inputResults: four input rows (spreadsheet rows 2-5): 2 and 4 issued, 3
// refused, 5 denied.
func inputResults(inputSHA string) *results.Results {
	r := &results.Results{Version: results.FileVersion, Run: runInfo(results.Boletos, "embedded")}
	r.Run.InputSHA256 = inputSHA
	r.Rows = []results.Row{
		{Index: 0, SourceRow: 2, Key: "1", Outcome: results.Issued, AmountCents: 10000},
		{Index: 1, SourceRow: 3, Key: "2", Outcome: results.Refused, AmountCents: 5000,
			Problems: []results.Problem{{Code: "cpf_invalido", Column: "B", Header: "cpf", Value: "11111111111", Message: "CPF inválido", MessageEN: "invalid CPF"}}},
		{Index: 2, SourceRow: 4, Key: "3", Outcome: results.Issued, AmountCents: 123456},
		{Index: 3, SourceRow: 5, Key: "4", Outcome: results.Denied, AmountCents: 2000,
			Problems: []results.Problem{{Code: "3500034", Message: "Propriedade inválida"}}},
	}
	r.Compute()
	return r
}

func readAllRows(t *testing.T, path string, opt formats.Options) (formats.Source, []formats.Row) {
	t.Helper()
	rd, err := formats.Open(path, opt)
	if err != nil {
		t.Fatalf("formats cannot open %s: %v", path, err)
	}
	defer rd.Close()
	var rows []formats.Row
	for {
		row, err := rd.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			t.Fatalf("%s: %v", path, err)
		}
		rows = append(rows, row)
	}
	return rd.Source(), rows
}

func TestRejectedCSVKeepsEncodingAndDelimiter(t *testing.T) {
	dir := t.TempDir()
	in := filepath.Join(dir, "pagadores.csv")
	text := "nome;cpf;valor;vencimento\r\n" +
		"João;01234567890;100,00;10/01/2026\r\n" +
		"Inês Çarvalho;11111111111;50,00;10/01/2026\r\n" +
		"Zé;52998224725;\"1.234,56\";10/02/2026\r\n" +
		"Ana;39053344705;20,00;10/03/2026\r\n"
	enc, err := charmap.Windows1252.NewEncoder().String(text)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(in, []byte(enc), 0o644); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(dir, "out")
	files, err := Write(out, inputResults(sha(t, in)), Options{Formats: []string{FormatJSON}, Input: &InputInfo{Path: in}})
	if err != nil {
		t.Fatal(err)
	}
	rej := filepath.Join(out, "rejeitadas.csv")
	if !slices.Contains(files, rej) {
		t.Fatalf("files %v lack %s", files, rej)
	}
	b, _ := os.ReadFile(rej)
	// Windows-1252: "ê" is the single byte 0xEA, "Ç" 0xC7; no BOM
	if !bytes.Contains(b, []byte("In\xeas \xc7arvalho;11111111111;50,00;10/01/2026;")) {
		t.Errorf("row 3 not kept byte for byte in Windows-1252:\n%q", b)
	}
	if bytes.HasPrefix(b, []byte("\xEF\xBB\xBF")) || bytes.Contains(b, []byte("Jo\xe3o")) || bytes.Contains(b, []byte("Z\xe9")) {
		t.Errorf("wrong rows or a BOM:\n%q", b)
	}
	src, rows := readAllRows(t, rej, formats.Options{})
	if src.Encoding != "windows-1252" || src.Delimiter != ";" {
		t.Errorf("read back as %s with %q", src.Encoding, src.Delimiter)
	}
	if want := []string{"nome", "cpf", "valor", "vencimento", "Problema"}; !slices.Equal(src.Headers, want) {
		t.Errorf("headers %q, want %q", src.Headers, want)
	}
	if len(rows) != 2 || rows[0].Get(0).Value != "Inês Çarvalho" || rows[1].Get(0).Value != "Ana" ||
		!strings.Contains(rows[0].Get(4).Value, "B (cpf): CPF inválido [cpf_invalido]") ||
		!strings.Contains(rows[1].Get(4).Value, "Propriedade inválida [3500034]") {
		t.Errorf("rows %+v", rows)
	}
	// the run's header matching finds the same columns; Problema is just unknown
	m, err := formats.MatchHeaders(src.Headers, []formats.FieldSpec{{Name: "nome", Required: true}, {Name: "cpf", Required: true}, {Name: "valor", Required: true}, {Name: "vencimento", Required: true}}, nil)
	if err != nil || !slices.Equal(m.Unknown, []string{"Problema"}) {
		t.Errorf("header matching: %+v %v", m, err)
	}
}

func TestRejectedXLSXKeepsTypes(t *testing.T) {
	dir := t.TempDir()
	in := filepath.Join(dir, "pagadores.xlsx")
	f := excelize.NewFile()
	f.SetSheetName("Sheet1", "Pagadores")
	f.NewSheet("Outra")
	dateStyle, _ := f.NewStyle(&excelize.Style{NumFmt: 14})
	textStyle, _ := f.NewStyle(&excelize.Style{NumFmt: 49})
	put := func(ref string, v any, style int) {
		if err := f.SetCellValue("Pagadores", ref, v); err != nil {
			t.Fatal(err)
		}
		if style != 0 {
			f.SetCellStyle("Pagadores", ref, ref, style)
		}
	}
	for i, h := range []string{"nome", "cpf", "valor", "vencimento"} {
		ref, _ := excelize.CoordinatesToCellName(i+1, 1)
		put(ref, h, 0)
	}
	rowsIn := []struct {
		name, cpf string
		valor     float64
		due       time.Time
	}{
		{"João", "01234567890", 100, time.Date(2026, 1, 10, 0, 0, 0, 0, time.UTC)},
		{"Inês", "01111111111", 50.5, time.Date(2026, 1, 11, 0, 0, 0, 0, time.UTC)},
		{"Zé", "52998224725", 1234.56, time.Date(2026, 2, 10, 0, 0, 0, 0, time.UTC)},
		{"Ana", "00039053344", 20, time.Date(2026, 3, 10, 0, 0, 0, 0, time.UTC)},
	}
	for i, r := range rowsIn {
		n := i + 2
		put(cellRef(1, n), r.name, 0)
		put(cellRef(2, n), r.cpf, textStyle)
		put(cellRef(3, n), r.valor, 0)
		put(cellRef(4, n), r.due, dateStyle)
	}
	// row 5's value is a formula (=10+10): its result goes back as a number
	if err := f.SetCellFormula("Pagadores", "C5", "10+10"); err != nil {
		t.Fatal(err)
	}
	if err := f.SaveAs(in); err != nil {
		t.Fatal(err)
	}
	f.Close()
	out := filepath.Join(dir, "out")
	path, err := WriteRejected(out, inputResults(sha(t, in)), InputInfo{Path: in, Sheet: "Pagadores"}, Options{Lang: "en"})
	if err != nil {
		t.Fatal(err)
	}
	if filepath.Base(path) != "rejeitadas.xlsx" {
		t.Fatalf("wrote %s", path)
	}
	_, orig := readAllRows(t, in, formats.Options{Sheet: "Pagadores"})
	src, got := readAllRows(t, path, formats.Options{})
	if src.Sheet != "Pagadores" {
		t.Errorf("sheet %q, want Pagadores", src.Sheet)
	}
	if want := []string{"nome", "cpf", "valor", "vencimento", "Problem"}; !slices.Equal(src.Headers, want) {
		t.Errorf("headers %q, want %q", src.Headers, want)
	}
	if len(got) != 2 {
		t.Fatalf("%d rows, want 2", len(got))
	}
	for i, o := range []formats.Row{orig[1], orig[3]} {
		for c := 0; c < 4; c++ {
			g, w := got[i].Get(c), o.Get(c)
			if w.Kind == formats.KindFormula {
				continue
			}
			if g.Value != w.Value || g.Kind != w.Kind {
				t.Errorf("row %d col %d: %q (%v), input had %q (%v)", i, c, g.Value, g.Kind, w.Value, w.Kind)
			}
		}
	}
	if k := orig[3].Get(2).Kind; k != formats.KindFormula {
		t.Fatalf("the input's C5 reads as %v, want a formula", k)
	}
	if c := got[1].Get(2); c.Value != "20" || c.Kind != formats.KindNumber {
		t.Errorf("formula result back as %q (%v), want the number 20", c.Value, c.Kind)
	}
	if got[0].Get(1).Value != "01111111111" || got[0].Get(3).Value != "2026-01-11" || got[0].Get(2).Value != "50.5" {
		t.Errorf("row 3 back as %+v", got[0].Cells)
	}
	if !strings.Contains(got[0].Get(4).Value, "invalid CPF [cpf_invalido]") {
		t.Errorf("english problem %q", got[0].Get(4).Value)
	}
}

func cellRef(c, r int) string { s, _ := excelize.CoordinatesToCellName(c, r); return s }

func TestRejectedRefusesChangedInput(t *testing.T) {
	dir := t.TempDir()
	in := filepath.Join(dir, "p.csv")
	os.WriteFile(in, []byte("nome,cpf\na,1\nb,2\nc,3\nd,4\n"), 0o644)
	_, err := WriteRejected(dir, inputResults(strings.Repeat("0", 64)), InputInfo{Path: in}, Options{})
	if !errors.Is(err, ErrInputChanged) || !strings.Contains(err.Error(), "mudou") {
		t.Errorf("changed input: %v", err)
	}
	// a failing row the file does not have: the file is written, the error names the row
	os.WriteFile(in, []byte("nome,cpf\na,1\nb,2\n"), 0o644)
	path, err := WriteRejected(dir, inputResults(sha(t, in)), InputInfo{Path: in}, Options{})
	if err == nil || !strings.Contains(err.Error(), "5") || path == "" {
		t.Errorf("missing row: %q %v", path, err)
	}
	b, _ := os.ReadFile(path)
	if string(b) != "nome,cpf,Problema\r\nb,2,B (cpf): CPF inválido [cpf_invalido]\r\n" {
		t.Errorf("rejected file %q", b)
	}
	// nothing rejected: nothing written
	r := inputResults("")
	r.Rows[1].Outcome, r.Rows[3].Outcome = results.Issued, results.Ambiguous
	if p, err := WriteRejected(t.TempDir(), r, InputInfo{Path: in}, Options{}); p != "" || err != nil {
		t.Errorf("no rejected rows: %q %v", p, err)
	}
}
