package pipeline

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"remessa/pipeline/results"
)

// TestTemplateRoundTrip writes every kind's template in every format, a
// starter job pointing at it, and validates: what template writes,
// validate accepts.
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
				if v.Summary.Rows != 1 || !v.Clean() || v.Summary.Warnings != 0 {
					t.Fatalf("rows %d refused %d warnings %d; want the example row clean", v.Summary.Rows, v.Summary.Refused, v.Summary.Warnings)
				}
				it := v.Items[0]
				if it.PayerDoc != "52998224725" || it.PayerName != "Maria José da Conceição" || it.DueDate != civilDate(2026, 12, 10) {
					t.Errorf("item %+v", it)
				}
				var want int64 = 15000
				if kind == results.Carnets {
					want *= 12
				}
				if it.AmountCents != want {
					t.Errorf("amount %d, want %d", it.AmountCents, want)
				}
			})
		}
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
