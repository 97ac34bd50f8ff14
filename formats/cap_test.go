package formats

import (
	"bufio"
	"errors"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
)

// TestCSVHugeCellCapped: a CSV whose one cell is 20 MB long (unquoted, on
// one line; quoted, on one line; quoted, over 20,000 lines) is refused at
// its row and column while reading, with memory a small multiple of the
// caps (the file was read whole before: 844 MB for a 200 MB cell). 20 MB
// is 2.5 times the allocation bound checked below, so a reader that held
// the cell fails the test as it did at 50 MB, for 40% of the work.
func TestCSVHugeCellCapped(t *testing.T) {
	const size = 20 << 20
	dir := t.TempDir()
	write := func(name, before, fill, after string, n int) string {
		p := filepath.Join(dir, name)
		f, err := os.Create(p)
		if err != nil {
			t.Fatal(err)
		}
		w := bufio.NewWriter(f)
		w.WriteString("Código;Nome;CPF\nA0;Ana;529\n" + before)
		for written := 0; written < n; written += len(fill) {
			w.WriteString(fill)
		}
		w.WriteString(after)
		if err := w.Flush(); err != nil {
			t.Fatal(err)
		}
		f.Close()
		return p
	}
	cases := []struct {
		name, before, fill, after string
		cell                      bool
	}{
		{"unquoted.csv", "A1;", strings.Repeat("x", 4096), ";529\n", true},
		{"quoted.csv", "A1;\"", strings.Repeat("x", 4096), "\";529\n", true},
		{"quoted-lines.csv", "A1;\"", strings.Repeat("y", 1023) + "\n", "\";529\n", true},
		{"many-cells.csv", "A1;", strings.Repeat("z", 200<<10) + ";", "529\n", false}, // no cell past 256 KB, the line past 1 MB
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			p := write(c.name, c.before, c.fill, c.after, size)
			runtime.GC()
			var before, after runtime.MemStats
			runtime.ReadMemStats(&before)
			err := readAllErr(p)
			runtime.ReadMemStats(&after)
			var e *Error
			if !errors.As(err, &e) || e.Code != CodeTooLarge || e.Row != 3 {
				t.Fatalf("err %v, want too_large at row 3", err)
			}
			if c.cell && (e.Column != "B" || e.Header != "Nome" || !strings.Contains(e.Error(), "linha 3, coluna B (Nome): célula com mais de 256 KB")) {
				t.Errorf("error %q (column %q)", e, e.Column)
			}
			if !c.cell && (e.Column != "G" || !strings.Contains(e.Error(), "linha com mais de 1 MB")) {
				t.Errorf("error %q (column %q)", e, e.Column)
			}
			alloc := after.TotalAlloc - before.TotalAlloc
			t.Logf("%s: %.1f MB allocated", e, float64(alloc)/(1<<20))
			if alloc > 8*DefaultMaxLineBytes {
				t.Errorf("%d bytes allocated reading a 20 MB cell; want under %d (8 × the line cap; the race detector allocates more)", alloc, 8*DefaultMaxLineBytes)
			}
		})
	}
	// a cell just under the cap is read
	p := write("ok.csv", "A1;", strings.Repeat("w", 1024), ";529\n", DefaultMaxCellBytes-1024)
	if err := readAllErr(p); err != nil {
		t.Errorf("cell under the cap: %v", err)
	}
}

func readAllErr(p string) error {
	r, err := Open(p, Options{ReuseCells: true})
	if err != nil {
		return err
	}
	defer r.Close()
	for {
		if _, err := r.Next(); err == io.EOF {
			return nil
		} else if err != nil {
			return err
		}
	}
}

// TestXLSXHugeTextCapped: a workbook whose shared string or inline cell is
// past the cell cap is refused (a shared string before the sheet is read,
// so without a row; an inline cell at its row and column), and a 20 MB
// shared string is refused without being held (20 MB is 2.5 times the
// allocation bound checked, so holding it fails the test).
func TestXLSXHugeTextCapped(t *testing.T) {
	dir := t.TempDir()
	sheet := func(rows string) string {
		return `<?xml version="1.0" encoding="UTF-8"?><worksheet xmlns="http://schemas.openxmlformats.org/spreadsheetml/2006/main"><sheetData>` + rows + `</sheetData></worksheet>`
	}
	book := func(name, sst, rows string) string {
		p := filepath.Join(dir, name)
		writeZip(t, p, map[string]string{
			"_rels/.rels":                relsXML,
			"xl/workbook.xml":            workbookXML(false, "S"),
			"xl/_rels/workbook.xml.rels": wbRelsXML,
			"xl/sharedStrings.xml":       `<sst xmlns="http://schemas.openxmlformats.org/spreadsheetml/2006/main">` + sst + `</sst>`,
			"xl/worksheets/sheet1.xml":   sheet(rows),
		})
		return p
	}
	big := strings.Repeat("x", 20<<20)
	p := book("sst20.xlsx", "<si><t>Nome</t></si><si><t>"+big+"</t></si>", `<row r="1"><c r="A1" t="s"><v>0</v></c></row><row r="2"><c r="A2" t="s"><v>1</v></c></row>`)
	big = ""
	runtime.GC()
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	err := readAllErr(p)
	runtime.ReadMemStats(&after)
	if codeOf(err) != CodeTooLarge || !strings.Contains(err.Error(), "mais de 256 KB (o 2º dos textos compartilhados)") {
		t.Errorf("20 MB shared string: %v", err)
	}
	if alloc := after.TotalAlloc - before.TotalAlloc; alloc > 8*DefaultMaxLineBytes {
		t.Errorf("%d bytes allocated reading a 20 MB shared string; want under %d (a sixth of the string; the race detector allocates more)", alloc, 8*DefaultMaxLineBytes)
	}
	p = book("sst300k.xlsx", "<si><t>Nome</t></si><si><r><t>"+strings.Repeat("a", 200<<10)+"</t></r><r><t>"+strings.Repeat("b", 100<<10)+"</t></r></si>", `<row r="1"><c r="A1" t="s"><v>0</v></c></row>`)
	if err := readAllErr(p); codeOf(err) != CodeTooLarge {
		t.Errorf("300 KB shared string in two runs: %v", err)
	}
	p = book("inline.xlsx", "", `<row r="1"><c r="A1" t="inlineStr"><is><t>Código</t></is></c><c r="B1" t="inlineStr"><is><t>Nome</t></is></c></row>`+
		`<row r="2"><c r="A2" t="inlineStr"><is><t>A1</t></is></c><c r="B2" t="inlineStr"><is><t>`+strings.Repeat("n", 300<<10)+`</t></is></c></row>`)
	err = readAllErr(p)
	var e *Error
	if !errors.As(err, &e) || e.Code != CodeTooLarge || e.Row != 2 || e.Column != "B" || e.Header != "Nome" {
		t.Errorf("300 KB inline cell: %v", err)
	}
	p = book("inline2m.xlsx", "", `<row r="1"><c r="A1" t="inlineStr"><is><t>Nome</t></is></c></row>`+
		`<row r="2"><c r="A2" t="inlineStr"><is><t>`+strings.Repeat("n", 2<<20)+`</t></is></c></row>`)
	if err := readAllErr(p); !errors.As(err, &e) || e.Code != CodeTooLarge || e.Row != 2 {
		t.Errorf("2 MB inline cell: %v", err)
	}
}

// TestYAMLHugeValueCapped: a YAML value past the cell cap is refused at
// its line and key (the file as a whole is capped at 16 MB).
func TestYAMLHugeValueCapped(t *testing.T) {
	p := filepath.Join(t.TempDir(), "in.yaml")
	os.WriteFile(p, []byte("- {Código: A1, Nome: Ana}\n- Código: A2\n  Nome: "+strings.Repeat("x", 300<<10)+"\n"), 0o644)
	err := readAllErr(p)
	var e *Error
	if !errors.As(err, &e) || e.Code != CodeTooLarge || e.Row != 3 || e.Column != "Nome" {
		t.Errorf("err %v", err)
	}
	// a 15 MB value on one line is refused before the YAML parser holds it
	os.WriteFile(p, []byte("- Código: A2\n  Nome: "+strings.Repeat("x", 15<<20)+"\n"), 0o644)
	runtime.GC()
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	err = readAllErr(p)
	runtime.ReadMemStats(&after)
	if !errors.As(err, &e) || e.Code != CodeTooLarge || e.Row != 2 {
		t.Errorf("15 MB line: %v", err)
	}
	if alloc := after.TotalAlloc - before.TotalAlloc; alloc > 2*15<<20 {
		t.Errorf("%d bytes allocated for a 15 MB YAML line; want about the file once", alloc)
	}
}
