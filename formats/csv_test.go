package formats

import (
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func mustOpen(t *testing.T, path string, opt Options) Reader {
	t.Helper()
	r, err := Open(path, opt)
	if err != nil {
		t.Fatalf("Open(%s): %v", path, err)
	}
	t.Cleanup(func() { r.Close() })
	return r
}

func readRows(t *testing.T, r Reader) ([]Row, []*Error) {
	t.Helper()
	rows, rowErrs, err := ReadAll(r)
	if err != nil {
		t.Fatalf("ReadAll: %v", err)
	}
	return rows, rowErrs
}

func codeOf(err error) string {
	var e *Error
	if errors.As(err, &e) {
		return e.Code
	}
	return ""
}

func TestCSVWindows1252PtBR(t *testing.T) {
	r := mustOpen(t, "testdata/ptbr-excel-1252.csv", Options{})
	src := r.Source()
	if src.Encoding != "windows-1252" || src.Delimiter != ";" || src.Format != "csv" {
		t.Fatalf("source = %+v", src)
	}
	if len(src.Warnings) != 1 || src.Warnings[0].Code != WarnEncoding {
		t.Errorf("warnings = %v, want the encoding warning", src.Warnings)
	}
	want := []string{"Nome", "CPF", "Cidade", "UF", "Valor", "Vencimento", "Observação"}
	if strings.Join(src.Headers, "|") != strings.Join(want, "|") {
		t.Errorf("headers = %q", src.Headers)
	}
	rows, errs := readRows(t, r)
	if len(errs) != 0 || len(rows) != 3 {
		t.Fatalf("rows=%d errs=%v", len(rows), errs)
	}
	if rows[0].Number != 2 || rows[2].Number != 4 {
		t.Errorf("row numbers %d, %d", rows[0].Number, rows[2].Number)
	}
	// "São" must not come out as "SÃ£o" (standards.md §5).
	if c := rows[0].Cells[2]; c.Value != "São Paulo" || c.Column != "C" || c.Header != "Cidade" {
		t.Errorf("cidade = %+v", c)
	}
	if got := rows[0].Cells[0].Value; got != "João da Conceição" {
		t.Errorf("nome = %q", got)
	}
	// cp1252 bytes 0x93/0x94 and 0x80 are curly quotes and the euro sign
	// (they are C1 controls in ISO-8859-1).
	if got := rows[1].Cells[6].Value; got != "“Desconto” à vista" {
		t.Errorf("obs = %q", got)
	}
	if got := rows[2].Cells[6].Value; got != "ação €" {
		t.Errorf("obs = %q", got)
	}
	wantCents := []int64{123456, 8990, -1000}
	for i, row := range rows {
		v, err := ParseMoney(row.Cells[4].Value)
		if err != nil || v != wantCents[i] {
			t.Errorf("row %d valor %q = %d, %v", row.Number, row.Cells[4].Value, v, err)
		}
	}
	d, err := ParseDate(rows[1].Cells[5].Value)
	if err != nil || !d.Equal(date(2027, 3, 5)) {
		t.Errorf("5/3/2027 = %v, %v (must be 5 March)", d, err)
	}
}

func TestCSVBOM(t *testing.T) {
	r := mustOpen(t, "testdata/bom-utf8.csv", Options{})
	src := r.Source()
	if src.Encoding != "utf-8-bom" || src.Headers[0] != "Nome" || len(src.Warnings) != 0 {
		t.Fatalf("source = %+v", src)
	}
	rows, _ := readRows(t, r)
	if len(rows) != 3 || rows[0].Cells[2].Value != "São Paulo" {
		t.Fatalf("rows = %+v", rows)
	}
}

func TestCSVSepLine(t *testing.T) {
	r := mustOpen(t, "testdata/sep-comma.csv", Options{})
	src := r.Source()
	if src.Delimiter != "," || src.HeaderRow != 2 || len(src.Headers) != 3 {
		t.Fatalf("source = %+v", src)
	}
	rows, _ := readRows(t, r)
	if len(rows) != 2 || rows[0].Number != 3 || rows[1].Number != 4 {
		t.Fatalf("rows = %+v", rows)
	}
	if rows[0].Cells[0].Value != "Silva, Ana" || rows[0].Cells[1].Value != "1.234,56" {
		t.Errorf("row 3 = %+v", rows[0].Cells)
	}
}

func TestCSVQuotedNewlineLineNumbers(t *testing.T) {
	r := mustOpen(t, "testdata/quoted-newline.csv", Options{})
	rows, errs := readRows(t, r)
	if len(errs) != 0 {
		t.Fatal(errs)
	}
	// Lines: 1 header, 2-4 Ana (address on three lines), 5 Beto, 6 empty,
	// 7 ";;" (blank, skipped), 8 Carla.
	nums := []int{}
	for _, row := range rows {
		nums = append(nums, row.Number)
	}
	if len(rows) != 3 || nums[0] != 2 || nums[1] != 5 || nums[2] != 8 {
		t.Fatalf("row numbers = %v", nums)
	}
	if got := rows[0].Cells[1].Value; got != "Rua A, 1\nApto 2\nBloco 3" {
		t.Errorf("endereco = %q", got)
	}
	if got := rows[1].Cells[1].Value; got != `Rua "B"` {
		t.Errorf("endereco = %q", got)
	}
}

func TestCSVRaggedRows(t *testing.T) {
	r := mustOpen(t, "testdata/ragged.csv", Options{})
	rows, errs := readRows(t, r)
	if len(rows) != 2 || rows[0].Number != 2 || rows[1].Number != 5 {
		t.Fatalf("rows = %+v", rows)
	}
	if len(errs) != 2 {
		t.Fatalf("errors = %v", errs)
	}
	if errs[0].Row != 3 || errs[0].Code != CodeRagged || !strings.Contains(errs[0].Message, "2 campos") || !strings.Contains(errs[0].Message, "tem 3") {
		t.Errorf("first ragged error = %v", errs[0])
	}
	if errs[1].Row != 4 || !strings.Contains(errs[1].Message, "4 campos") {
		t.Errorf("second ragged error = %v", errs[1])
	}
	if !strings.Contains(errs[0].Error(), "ragged.csv, linha 3: ") {
		t.Errorf("error text %q lacks the position", errs[0].Error())
	}
}

func TestCSVDelimiterSniff(t *testing.T) {
	r := mustOpen(t, "testdata/tab.tsv", Options{})
	if r.Source().Delimiter != "\t" {
		t.Errorf("delimiter %q", r.Source().Delimiter)
	}
	r = mustOpen(t, "testdata/sep-comma.csv", Options{Delimiter: ';'})
	if r.Source().Delimiter != ";" {
		t.Errorf("explicit delimiter ignored: %q", r.Source().Delimiter)
	}
}

func TestCSVBrokenFiles(t *testing.T) {
	if _, err := Open("testdata/empty.csv", Options{}); codeOf(err) != CodeEmpty {
		t.Errorf("empty file: %v", err)
	}
	r := mustOpen(t, "testdata/header-only.csv", Options{})
	if _, err := r.Next(); codeOf(err) != CodeNoData || !strings.Contains(err.Error(), "só tem o cabeçalho") {
		t.Errorf("header only: %v", err)
	}
	if _, err := r.Next(); err != io.EOF {
		t.Errorf("after no-data error: %v", err)
	}
	r = mustOpen(t, "testdata/bare-quote.csv", Options{})
	_, err := r.Next()
	var e *Error
	if !errors.As(err, &e) || e.Code != CodeBadQuote || e.Row != 2 {
		t.Errorf("bare quote: %#v", err)
	}
	if _, err := Open("testdata/does-not-exist.csv", Options{}); codeOf(err) != CodeOpen || !strings.Contains(err.Error(), "não encontrado") {
		t.Errorf("missing file: %v", err)
	}
}

func TestCSVHeaderWarnings(t *testing.T) {
	r := mustOpen(t, "testdata/dup-headers.csv", Options{})
	ws := r.Source().Warnings
	if len(ws) != 2 {
		t.Fatalf("warnings = %v", ws)
	}
	if ws[0].Code != WarnBlankHeader || ws[0].Column != "C" {
		t.Errorf("blank header warning = %+v", ws[0])
	}
	if ws[1].Code != WarnDuplicateHeader || ws[1].Column != "D" || !strings.Contains(ws[1].Message, "coluna A") {
		t.Errorf("duplicate header warning = %+v", ws[1])
	}
}

func TestCSVLimits(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "l.csv")
	os.WriteFile(p, []byte("a\n1\n2\n3\n"), 0o644)
	r := mustOpen(t, p, Options{MaxRows: 2})
	r.Next()
	r.Next()
	if _, err := r.Next(); codeOf(err) != CodeTooManyRows {
		t.Errorf("MaxRows: %v", err)
	}
	if _, err := Open(p, Options{MaxBytes: 3}); codeOf(err) != CodeTooLarge {
		t.Errorf("MaxBytes: %v", err)
	}
}

func TestCSVInvalidUTF8LateInFile(t *testing.T) {
	// The first 300 KB are ASCII; a cp1252 byte comes later. The whole file
	// must be decoded as cp1252, not just the tail.
	dir := t.TempDir()
	p := filepath.Join(dir, "late.csv")
	var b strings.Builder
	b.WriteString("nome;cidade\n")
	for b.Len() < 300_000 {
		b.WriteString("Ana;Rio\n")
	}
	b.WriteString("Jo\xe3o;S\xe3o Paulo\n")
	os.WriteFile(p, []byte(b.String()), 0o644)
	r := mustOpen(t, p, Options{ReuseCells: true})
	var last Row
	for {
		row, err := r.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		last = row
	}
	if r.Source().Encoding != "windows-1252" || last.Cells[1].Value != "São Paulo" {
		t.Errorf("encoding %s, last = %+v", r.Source().Encoding, last.Cells)
	}
}

func TestCP1252ReaderSmallBuffers(t *testing.T) {
	in := "S\xe3o \x80 \x93x\x94"
	rd := newCP1252Reader(strings.NewReader(in))
	var out []byte
	buf := make([]byte, 1)
	for {
		n, err := rd.Read(buf)
		out = append(out, buf[:n]...)
		if err == io.EOF {
			break
		}
	}
	if string(out) != "São € “x”" {
		t.Errorf("decoded %q", out)
	}
}
