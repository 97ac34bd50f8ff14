package formats

import (
	"archive/zip"
	"bytes"
	"math/rand"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"unicode/utf8"
)

// TestUnusableFileSaysWhatItIs: a file that is not a spreadsheet at all is
// refused at Open with what it is (binary, PDF, image, zip, UTF-16, a Word
// document), in a short message, never read as a CSV whose "header" is
// the garbage.
func TestUnusableFileSaysWhatItIs(t *testing.T) {
	dir := t.TempDir()
	rnd := rand.New(rand.NewSource(1))
	garbage := make([]byte, 4096)
	rnd.Read(garbage)
	garbage[3] = 0
	ctrl := bytes.Repeat([]byte("ab\x01\x02\x03\x04;"), 300) // no NUL, but a third control bytes
	zipOf := func(names ...string) []byte {
		var b bytes.Buffer
		zw := zip.NewWriter(&b)
		for _, n := range names {
			w, _ := zw.Create(n)
			w.Write([]byte("<x/>"))
		}
		zw.Close()
		return b.Bytes()
	}
	cases := []struct {
		name string
		data []byte
		code string
		want string
	}{
		{"binario.csv", garbage, CodeUnknownFormat, "não parece uma planilha: é um arquivo binário (tem bytes nulos)"},
		{"controles.csv", ctrl, CodeUnknownFormat, "é um arquivo binário;"},
		{"binario.dat", garbage, CodeUnknownFormat, "é um arquivo binário"},
		{"relatorio.csv", []byte("%PDF-1.7\n%âãÏÓ\n1 0 obj\n"), CodeUnknownFormat, "é um PDF"},
		{"foto.csv", append([]byte("\x89PNG\r\n\x1a\n"), garbage[:100]...), CodeUnknownFormat, "é uma imagem"},
		{"foto.xlsx", append([]byte("\xFF\xD8\xFF\xE0"), garbage[:100]...), CodeUnknownFormat, "é uma imagem"},
		{"planilha.csv", zipOf("[Content_Types].xml", "xl/workbook.xml"), CodeUnknownFormat, "é um arquivo compactado (zip"},
		{"unicode.txt", append([]byte("\xFF\xFE"), []byte("C\x00P\x00F\x00\t\x00")...), CodeUnknownFormat, "UTF-16"},
		{"carta.xlsx", zipOf("[Content_Types].xml", "word/document.xml"), CodeCorrupt, "é um documento do Word"},
		{"calc.xlsx", zipOf("mimetype", "content.xml"), CodeCorrupt, "OpenDocument"},
		{"fotos.xlsx", zipOf("a.jpg", "b.jpg"), CodeCorrupt, `zip que não é uma planilha do Excel (falta xl/workbook.xml; contém: "a.jpg", "b.jpg")`},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			p := filepath.Join(dir, c.name)
			if err := os.WriteFile(p, c.data, 0o644); err != nil {
				t.Fatal(err)
			}
			r, err := Open(p, Options{})
			if err == nil {
				r.Close()
				t.Fatalf("opened; headers %q", r.Source().Headers)
			}
			e, _ := err.(*Error)
			if e == nil || e.Code != c.code || !strings.Contains(e.Message, c.want) || e.MessageEN == "" {
				t.Fatalf("error %v (code %q), want %s and %q", err, codeOf(err), c.code, c.want)
			}
			if n := utf8.RuneCountInString(err.Error()); n > 400 {
				t.Errorf("message of %d characters: %s", n, err)
			}
		})
	}
	// a stray NUL in a cell of a text CSV is the validation's to report
	p := filepath.Join(dir, "nul-na-celula.csv")
	os.WriteFile(p, []byte("Código;Nome;CPF\nA1;Ana\x00 Silva;529.982.247-25\n"), 0o644)
	if r, err := Open(p, Options{}); err != nil {
		t.Errorf("a NUL in one cell: %v", err)
	} else if row, err := r.Next(); err != nil || row.Cells[1].Value != "Ana\x00 Silva" {
		t.Errorf("row %q %v", row.Cells, err)
	}
	// text CSVs (accents, Windows-1252, tabs, a BOM) are still read
	for _, name := range []string{"ptbr-excel-1252.csv", "bom-utf8.csv", "tab.tsv", "quoted-newline.csv"} {
		r, err := Open(filepath.Join("testdata", name), Options{})
		if err != nil {
			t.Errorf("%s: %v", name, err)
			continue
		}
		r.Close()
	}
}

// TestMissingColumnsQuotesFewShortHeaders: the missing-columns error quotes
// at most 10 headers of at most 40 characters, then says how many more.
func TestMissingColumnsQuotesFewShortHeaders(t *testing.T) {
	var headers []string
	for i := 0; i < 50; i++ {
		headers = append(headers, strings.Repeat(string(rune('a'+i%26)), 100)+"\x01")
	}
	headers[0] = "Nome"
	_, err := MatchHeaders(headers, []FieldSpec{{Name: "cpf", Required: true}}, nil)
	e, _ := err.(*Error)
	if e == nil || e.Code != CodeMissingColumns {
		t.Fatalf("err %v", err)
	}
	want := `Cabeçalhos encontrados: "Nome", "` + strings.Repeat("b", 40) + `…", `
	if !strings.Contains(e.Message, want) || !strings.HasSuffix(e.Message, `…" e mais 40`) || !strings.HasSuffix(e.MessageEN, "and 40 more") {
		t.Errorf("message: %s", e.Message)
	}
	if n := utf8.RuneCountInString(e.Message); n > 700 {
		t.Errorf("message of %d characters", n)
	}
	pt, _ := QuoteHeaders([]string{"", "Nome", "CPF\x00x", "a\xffb"})
	if pt != `"Nome", "CPF\x00x", "a\xffb"` {
		t.Errorf("QuoteHeaders = %s", pt)
	}
}
