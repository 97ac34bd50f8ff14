package pipeline

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/xuri/excelize/v2"

	"remessa/formats"
	"remessa/pipeline/results"
)

// TestTemplateRoundTrip writes every kind's template in every format, a
// starter job pointing at it, and validates: what template writes,
// validate reads, and its only problem is that the example row is the
// example (linha_exemplo, at its row); the row is otherwise valid.
func TestTemplateRoundTrip(t *testing.T) {
	for _, kind := range []results.Kind{results.Carnets, results.Cobv, results.Boletos} {
		for _, ext := range []string{".xlsx", ".csv", ".yaml"} {
			t.Run(string(kind)+ext, func(t *testing.T) {
				dir := t.TempDir()
				in := filepath.Join(dir, "modelo"+ext)
				if err := WriteTemplate(kind, in, fixedNow, "pt"); err != nil {
					t.Fatal(err)
				}
				jp := filepath.Join(dir, "job.yaml")
				if err := os.WriteFile(jp, []byte(StarterJob(kind, RelativeTo(jp, in))), 0o644); err != nil {
					t.Fatal(err)
				}
				j, err := Load(jp, testOpts(nil))
				if err != nil {
					t.Fatal(err)
				}
				v, err := Validate(context.Background(), j)
				if err != nil {
					t.Fatal(err)
				}
				for _, n := range v.Notes {
					t.Log(n.Localized("pt"))
				}
				if v.Summary.Rows != 1 || v.Summary.Refused != 1 || v.Summary.Warnings != 0 || len(v.Notes) != 1 {
					t.Fatalf("rows %d refused %d warnings %d notes %d; want the example row refused, alone", v.Summary.Rows, v.Summary.Refused, v.Summary.Warnings, len(v.Notes))
				}
				n := v.Notes[0]
				wantRow := 2
				if ext == ".yaml" {
					wantRow = n.Row // the item's line, after the comments
				}
				if n.Code != CodeTemplateExample || n.Row != wantRow || n.Field != FKey || !strings.Contains(n.Message, "é a linha de exemplo do modelo") || !strings.Contains(n.Message, "apague-a") {
					t.Errorf("note %+v", n)
				}
				r := v.Refused[0]
				if r.Key != TemplateExampleKey || r.PayerDoc != "52998224725" || r.PayerName != "Maria José da Conceição" || r.DueDate != "2026-12-10" {
					t.Errorf("refused row %+v", r)
				}
				var want int64 = 15000
				if kind == results.Carnets {
					want *= 12
				}
				if r.AmountCents != want {
					t.Errorf("amount %d, want %d", r.AmountCents, want)
				}
			})
		}
	}
}

// TestTemplateExampleRow: the example row is refused when the whole
// example payer is there (key, name and document; also the A001 of
// earlier templates, however it is spelled), and a real payer sharing one
// or two of its values is not.
func TestTemplateExampleRow(t *testing.T) {
	in := []byte("Código;Nome;CPF;Valor;Vencimento\n" +
		"EXEMPLO;Maria José da Conceição;529.982.247-25;150,00;10/12/2026\n" + // the example: refused
		"a001;MARIA JOSE DA CONCEICAO;52998224725;150,00;10/12/2026\n" + // an older template's example, typed again: refused
		"A002;Maria José da Conceição;529.982.247-25;160,00;10/12/2026\n" + // a real Maria with that CPF: accepted
		"EXEMPLO2;Maria José da Conceição;111.444.777-35;150,00;10/12/2026\n" + // same name, another CPF: accepted
		"A001;João Araújo;529.982.247-25;170,00;10/12/2026\n") // the old example key and CPF, another name: accepted
	r := runCase(t, "version: 1\ninput: {file: in.csv}\nissue:\n  carnets: {repeats: 3}\n", map[string][]byte{"in.csv": in}, nil)
	if got := strings.Join(found(r), " "); got != "linha_exemplo@2:A linha_exemplo@3:A" || r.Accepted != 3 {
		t.Errorf("problems %q accepted %d; want rows 2 and 3 refused as the example, 3 accepted\n%s", got, r.Accepted, messages(r))
	}
	if m := messages(r); !strings.Contains(m, "linha 2, coluna A (Código): é a linha de exemplo do modelo (Código EXEMPLO, Maria José da Conceição); apague-a") {
		t.Errorf("message:\n%s", m)
	}
}

// TestTemplateExampleLooksLikeOne: in the XLSX template the example row
// has the example key, a fill of its own and a note saying to delete it.
func TestTemplateExampleLooksLikeOne(t *testing.T) {
	p := filepath.Join(t.TempDir(), "modelo.xlsx")
	if err := WriteTemplate(results.Carnets, p, fixedNow, "pt"); err != nil {
		t.Fatal(err)
	}
	f, err := excelize.OpenFile(p)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if v, _ := f.GetCellValue(formats.TemplateSheet, "A2"); v != TemplateExampleKey {
		t.Errorf("A2 = %q, want %q", v, TemplateExampleKey)
	}
	for _, cell := range []string{"A2", "C2", "H2"} {
		id, _ := f.GetCellStyle(formats.TemplateSheet, cell)
		st, err := f.GetStyle(id)
		if err != nil || len(st.Fill.Color) == 0 || st.Fill.Color[0] != formats.TemplateExampleFill {
			t.Errorf("%s style %+v: want the example fill", cell, st)
		}
	}
	if id, _ := f.GetCellStyle(formats.TemplateSheet, "A3"); id != 0 {
		if st, _ := f.GetStyle(id); len(st.Fill.Color) > 0 {
			t.Errorf("A3 has a fill %v: only the example row should", st.Fill.Color)
		}
	}
	cs, err := f.GetComments(formats.TemplateSheet)
	if err != nil || len(cs) != 1 || cs[0].Cell != "A2" || !strings.Contains(cs[0].Text+fmt.Sprint(cs[0].Paragraph), "apague") {
		t.Errorf("comments %+v %v", cs, err)
	}
}

func TestTemplateColumns(t *testing.T) {
	cols := TemplateColumns(results.Carnets, fixedNow, "pt")
	byHeader := map[string]int{}
	for i, c := range cols {
		byHeader[c.Header] = i
	}
	for _, h := range []string{"Código", "Nome", "CPF/CNPJ", "CEP", "UF", "Valor", "Vencimento"} {
		if _, ok := byHeader[h]; !ok {
			t.Errorf("missing column %q in %v", h, byHeader)
		}
	}
	if c := cols[byHeader["CPF/CNPJ"]]; c.Kind != "text" || !c.Required {
		t.Errorf("CPF column %+v: want required text", c)
	}
	if c := cols[byHeader["UF"]]; len(c.Choices) != 27 || !strings.Contains(strings.Join(c.Choices, " "), "DF") {
		t.Errorf("UF choices %v", c.Choices)
	}
	if c := cols[byHeader["Vencimento"]]; c.Kind != "date" || c.Example != "10/12/2026" {
		t.Errorf("due date column %+v", c)
	}
}
