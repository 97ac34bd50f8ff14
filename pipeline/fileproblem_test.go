package pipeline

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"
)

// TestHugeCellNamesLineAndColumn: a CSV whose cell on line 2 is 20 MB long
// is refused with the line, the column and its header in the text report
// (both languages), in the JSON report and in what the desk shows, not only
// "célula com mais de 256 KB".
func TestHugeCellNamesLineAndColumn(t *testing.T) {
	job := `version: 1
name: t
service: embedded
input:
  file: big.csv
  key: Código
  columns:
    name: Nome
    document: CPF
issue:
  carnets:
    repeats: 2
    first_due: 10/01/2027
    items:
      - name: "x"
        value: "10,00"
`
	csv := "Código;Nome;CPF\nA0;" + strings.Repeat("x", 20<<20) + ";529\n"
	r := runCase(t, job, map[string][]byte{"big.csv": []byte(csv)}, nil)
	if r.FileProblem == nil {
		t.Fatalf("no file problem: %+v", r)
	}
	var pt, en bytes.Buffer
	r.WriteText(&pt, "pt")
	r.WriteText(&en, "en")
	if want := "A planilha big.csv não pode ser usada: linha 2, coluna B (Nome): célula com mais de 256 KB"; !strings.HasPrefix(pt.String(), want) {
		t.Errorf("pt:\n%s\nwant it to start with\n%s", pt.String(), want)
	}
	if want := "The input big.csv cannot be used: row 2, column B (Nome): cell longer than 256 KB"; !strings.HasPrefix(en.String(), want) {
		t.Errorf("en:\n%s\nwant it to start with\n%s", en.String(), want)
	}
	var js bytes.Buffer
	if err := r.WriteJSON(&js); err != nil {
		t.Fatal(err)
	}
	var back struct {
		FileProblem struct {
			Row            int
			Column, Header string
		} `json:"file_problem"`
	}
	if err := json.Unmarshal(js.Bytes(), &back); err != nil {
		t.Fatal(err)
	}
	if fp := back.FileProblem; fp.Row != 2 || fp.Column != "B" || fp.Header != "Nome" {
		t.Errorf("JSON file_problem %+v, want row 2, column B, header Nome", fp)
	}
}
