package formats

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/xuri/excelize/v2"
)

var templateCols = []TemplateColumn{
	{Header: "Nome", Description: "Nome do pagador", Example: "João da Conceição", Kind: TemplateText, Required: true},
	{Header: "CPF", Description: "CPF ou CNPJ", Example: "01234567890", Kind: TemplateText, Required: true},
	{Header: "CEP", Description: "CEP", Example: "01310100", Kind: TemplateText},
	{Header: "UF", Description: "Estado", Example: "SP", Kind: TemplateUF},
	{Header: "Valor", Description: "Valor da parcela", Example: "1.234,56", Kind: TemplateMoney, Required: true},
	{Header: "Vencimento", Description: "Primeiro vencimento", Example: "10/02/2027", Kind: TemplateDate, Required: true},
	{Header: "Multa", Description: "Multa por atraso", Example: "2%", Kind: TemplatePercent},
	{Header: "Juros ao dia", Description: "Juros diários", Example: "0,033%", Kind: TemplatePercent},
	{Header: "Parcelas", Description: "Número de parcelas", Example: "12", Kind: TemplateInt},
	{Header: "Turma", Description: "Turma do aluno", Example: "5º ano B", Kind: TemplateText, Choices: []string{"5º ano A", "5º ano B"}},
}

// What WriteTemplate writes, Open reads: every format, read back with the
// package's own readers, gives the example values exactly.
func TestTemplateRoundTrip(t *testing.T) {
	dir := t.TempDir()
	for _, ext := range []string{".xlsx", ".csv", ".yaml"} {
		t.Run(ext, func(t *testing.T) {
			p := filepath.Join(dir, "modelo"+ext)
			if err := WriteTemplate(p, "Modelo de carnês", templateCols, []string{"Uma linha por aluno."}); err != nil {
				t.Fatal(err)
			}
			r := mustOpen(t, p, Options{})
			src := r.Source()
			if len(src.Headers) != len(templateCols) {
				t.Fatalf("headers = %q", src.Headers)
			}
			for i, c := range templateCols {
				if src.Headers[i] != c.Header {
					t.Errorf("header %d = %q, want %q", i, src.Headers[i], c.Header)
				}
			}
			rows, errs := readRows(t, r)
			if len(rows) != 1 || len(errs) != 0 {
				t.Fatalf("rows = %+v errs = %v", rows, errs)
			}
			c := rows[0].Cells
			if rows[0].Number != 2 && ext != ".yaml" {
				t.Errorf("example row number %d", rows[0].Number)
			}
			for _, i := range []int{0, 1, 2, 3, 8, 9} {
				if c[i].Value != templateCols[i].Example {
					t.Errorf("%s = %q, want %q", templateCols[i].Header, c[i].Value, templateCols[i].Example)
				}
			}
			if v, err := ParseMoneyCell(c[4]); err != nil || v != 123456 {
				t.Errorf("Valor %+v = %d, %v", c[4], v, err)
			}
			if d, err := ParseDate(c[5].Value); err != nil || !d.Equal(date(2027, 2, 10)) {
				t.Errorf("Vencimento %+v = %v, %v", c[5], d, err)
			}
			if v, err := ParsePercent(c[6].Value, 2); err != nil || v != 200 {
				t.Errorf("Multa %+v = %d, %v", c[6], v, err)
			}
			if v, err := ParsePercent(c[7].Value, 3); err != nil || v != 33 {
				t.Errorf("Juros %+v = %d, %v", c[7], v, err)
			}
			if ext == ".csv" {
				b, _ := os.ReadFile(p)
				if !strings.HasPrefix(string(b), "\xEF\xBB\xBFNome;CPF;") || src.Delimiter != ";" {
					t.Errorf("CSV start %q", b[:20])
				}
			}
			if ext == ".yaml" {
				b, _ := os.ReadFile(p)
				if !strings.Contains(string(b), "# Modelo de carnês") || !strings.Contains(string(b), "Valor da parcela (obrigatório") {
					t.Errorf("YAML comments missing:\n%s", b)
				}
			}
		})
	}
}

func TestTemplateXLSXDetails(t *testing.T) {
	p := filepath.Join(t.TempDir(), "modelo.xlsx")
	if err := WriteTemplate(p, "Modelo", templateCols, nil); err != nil {
		t.Fatal(err)
	}
	f, err := excelize.OpenFile(p)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if got := f.GetSheetList(); len(got) != 2 || got[0] != TemplateSheet || got[1] != TemplateInstructionsSheet {
		t.Errorf("sheets = %q", got)
	}
	// Bold headers.
	sid, _ := f.GetCellStyle(TemplateSheet, "A1")
	st, _ := f.GetStyle(sid)
	if st == nil || st.Font == nil || !st.Font.Bold {
		t.Errorf("header A1 style = %+v", st)
	}
	// CPF column formatted as text ("@"), so typed zeros survive.
	sid, _ = f.GetColStyle(TemplateSheet, "B")
	st, _ = f.GetStyle(sid)
	if st == nil || st.CustomNumFmt == nil || *st.CustomNumFmt != "@" {
		t.Errorf("CPF column style = %+v", st)
	}
	sid, _ = f.GetColStyle(TemplateSheet, "F")
	st, _ = f.GetStyle(sid)
	if st == nil || st.CustomNumFmt == nil || *st.CustomNumFmt != "dd/mm/yyyy" {
		t.Errorf("date column style = %+v", st)
	}
	// Drop-downs for UF (27 states) and for Turma.
	dvs, _ := f.GetDataValidations(TemplateSheet)
	var found []string
	for _, dv := range dvs {
		found = append(found, dv.Sqref+"="+dv.Formula1)
	}
	joined := strings.Join(found, " ")
	if !strings.Contains(joined, "D2:D10001") || !strings.Contains(joined, "AC,AL,AP") || !strings.Contains(joined, "J2:J10001") {
		t.Errorf("data validations = %q", joined)
	}
	// Every column explained.
	rows, _ := f.GetRows(TemplateInstructionsSheet)
	text := ""
	for _, r := range rows {
		text += strings.Join(r, "|") + "\n"
	}
	for _, c := range templateCols {
		if !strings.Contains(text, c.Header+"|") || !strings.Contains(text, c.Description) {
			t.Errorf("instructions lack column %s:\n%s", c.Header, text)
		}
	}
	if err := WriteTemplate(filepath.Join(t.TempDir(), "x.pdf"), "t", templateCols, nil); codeOf(err) != CodeUnknownFormat {
		t.Errorf("pdf: %v", err)
	}
}
