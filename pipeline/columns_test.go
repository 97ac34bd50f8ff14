package pipeline

import (
	"errors"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"remessa/formats"
)

func TestMatchColumnsSample(t *testing.T) {
	j, err := Load(filepath.Join(samplesDir, "escola/carnes.yaml"), testOpts(nil))
	if err != nil {
		t.Fatal(err)
	}
	cm, err := MatchColumns(j)
	if err != nil {
		t.Fatal(err)
	}
	if cm.Format != "xlsx" || cm.Sheet != "Alunos" || len(cm.Missing) != 0 {
		t.Fatalf("format %q sheet %q missing %v", cm.Format, cm.Sheet, cm.Missing)
	}
	want := []HeaderMatch{
		{"A", "Matrícula", FKey, true}, {"B", "Aluno", "", false}, {"C", "Turma", "", false},
		{"D", "Responsável", FName, true}, {"E", "CPF", FDocument, false}, {"F", "E-mail", FEmail, false},
		{"G", "Telefone", FPhone, false}, {"H", "Logradouro", FStreet, false}, {"I", "Número", FNumber, false},
		{"J", "Bairro", FNeighborhood, false}, {"K", "CEP", FZipcode, false}, {"L", "Cidade", FCity, false},
		{"M", "UF", FState, false}, {"N", "Mensalidade", FValue, true},
	}
	if !slices.Equal(cm.Headers, want) {
		t.Fatalf("headers:\n got %+v\nwant %+v", cm.Headers, want)
	}
	// carnets: every field but txid; the due date comes from first_due
	byID := map[string]FieldChoice{}
	for _, f := range cm.Fields {
		byID[f.ID] = f
	}
	if _, ok := byID[FTxid]; ok || len(cm.Fields) != len(Catalogue)-1 {
		t.Fatalf("fields %+v", cm.Fields)
	}
	for id, req := range map[string]bool{FKey: true, FName: true, FDocument: true, FValue: false, FDueDate: false, FEmail: false} {
		if byID[id].Required != req {
			t.Errorf("field %s: required %v, want %v", id, byID[id].Required, req)
		}
	}
	if byID[FName].Label != "Nome" || byID[FValue].Label != "Valor" {
		t.Errorf("labels: %+v %+v", byID[FName], byID[FValue])
	}
}

// TestMatchColumnsMissing: a boletos job with no due date of its own over
// a CSV without the CPF and due date columns; an unknown header is unused.
func TestMatchColumnsMissing(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "clientes.csv"), []byte("Código;Cliente;Valor (R$);Observação interna\nC1;Ana;10,00;x\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	job := filepath.Join(dir, "job.yaml")
	if err := os.WriteFile(job, []byte(`version: 1
name: Faltam colunas
input: {file: clientes.csv}
issue:
  boletos:
    items: [{name: "Serviço", value: "{{ .Valor }}"}]
`), 0o644); err != nil {
		t.Fatal(err)
	}
	j, err := Load(job, testOpts(nil))
	if err != nil {
		t.Fatal(err)
	}
	cm, err := MatchColumns(j)
	if err != nil {
		t.Fatal(err)
	}
	want := []HeaderMatch{{"A", "Código", FKey, false}, {"B", "Cliente", FName, false}, {"C", "Valor (R$)", FValue, false}, {"D", "Observação interna", "", false}}
	if cm.Format != "csv" || !slices.Equal(cm.Headers, want) {
		t.Fatalf("format %s headers %+v", cm.Format, cm.Headers)
	}
	if !slices.Equal(cm.Missing, []string{FDocument, FDueDate}) {
		t.Fatalf("missing %v", cm.Missing)
	}
	// Validate refuses the same input for the same columns
	var fe *formats.Error
	if _, err := Validate(t.Context(), j); !errors.As(err, &fe) || fe.Code != formats.CodeMissingColumns || fe.Value != "document,due_date" {
		t.Fatalf("Validate: %v", err)
	}
}
