package formats

import (
	"strings"
	"testing"
)

func TestNormalizeHeader(t *testing.T) {
	cases := map[string]string{
		"Data de Vencimento":   "datadevencimento",
		"data_de_vencimento":   "datadevencimento",
		"DATA-DE-VENCIMENTO":   "datadevencimento",
		"  Responsável  ":      "responsavel",
		"CPF/CNPJ":             "cpfcnpj",
		"cpf_cnpj":             "cpfcnpj",
		"Nº":                   "nº",
		"ENDEREÇO":             "endereco",
		"payer.name":           "payername",
		"\uFEFFNome":           "nome",
		"Valor (R$)":           "valorr",
		"Matr\u0131\u0301cula": "matrıcula",
	}
	for in, want := range cases {
		if got := NormalizeHeader(in); got != want {
			t.Errorf("NormalizeHeader(%q) = %q, want %q", in, got, want)
		}
	}
}

var testFields = []FieldSpec{
	{Name: "name", Aliases: []string{"Nome", "Responsável"}, Required: true},
	{Name: "document", Aliases: []string{"CPF", "CNPJ", "Documento", "cpf_cnpj"}, Required: true},
	{Name: "amount", Aliases: []string{"Valor", "value"}, Required: true},
	{Name: "due_date", Aliases: []string{"Vencimento", "vencimento"}, Required: true},
	{Name: "email", Aliases: []string{"E-mail"}},
}

func TestMatchHeadersAnyOrderAccentsAliases(t *testing.T) {
	headers := []string{"VALOR", "Observação", "e_mail", "RESPONSÁVEL", "Due Date", "CPF/CNPJ"}
	m, err := MatchHeaders(headers, testFields, nil)
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]int{"amount": 0, "email": 2, "name": 3, "due_date": 4, "document": 5}
	for f, i := range want {
		if got, ok := m.Column(f); !ok || got != i {
			t.Errorf("field %s -> %d,%v; want %d", f, got, ok, i)
		}
	}
	if len(m.Unknown) != 1 || m.Unknown[0] != "Observação" {
		t.Errorf("unknown = %q", m.Unknown)
	}
}

func TestMatchHeadersMissingListsAll(t *testing.T) {
	headers := []string{"Nome", "Telefone", ""}
	_, err := MatchHeaders(headers, testFields, nil)
	if codeOf(err) != CodeMissingColumns {
		t.Fatalf("err = %v", err)
	}
	msg := err.Error()
	for _, s := range []string{"document", "amount", "due_date", "Vencimento", `Cabeçalhos encontrados: "Nome", "Telefone"`} {
		if !strings.Contains(msg, s) {
			t.Errorf("message %q lacks %q", msg, s)
		}
	}
	if strings.Count(strings.ToLower(msg), "vencimento") != 1 {
		t.Errorf("an accepted name repeated (same after folding): %q", msg)
	}
	if strings.Contains(msg, "email (") {
		t.Errorf("optional field reported missing: %q", msg)
	}
	if e := err.(*Error); e.Value != "document,amount,due_date" || !strings.Contains(e.MessageEN, "missing required columns") {
		t.Errorf("error = %#v", e)
	}
}

func TestMatchHeadersOverrides(t *testing.T) {
	headers := []string{"Aluno", "Responsável Financeiro", "Doc", "Valor", "Vencimento", "Nome"}
	m, err := MatchHeaders(headers, testFields, map[string]string{"name": "responsavel financeiro", "document": "Doc"})
	if err != nil {
		t.Fatal(err)
	}
	if m.ByField["name"] != 1 || m.ByField["document"] != 2 {
		t.Errorf("mapping = %v", m.ByField)
	}
	// "Nome" is left over: the override took the field.
	if strings.Join(m.Unknown, "|") != "Aluno|Nome" {
		t.Errorf("unknown = %q", m.Unknown)
	}
	_, err = MatchHeaders(headers, testFields, map[string]string{"name": "Pagador", "document": "Doc"})
	if codeOf(err) != CodeUnknownColumn || !strings.Contains(err.Error(), `a coluna "Pagador" indicada para o campo name não existe`) {
		t.Errorf("bad override: %v", err)
	}
}

func TestMatchHeadersAmbiguous(t *testing.T) {
	headers := []string{"Nome", "CPF", "Valor", "Vencimento", "cpf"}
	m, err := MatchHeaders(headers, testFields, nil)
	if codeOf(err) != CodeAmbiguous || !strings.Contains(err.Error(), "(B, E") {
		t.Errorf("duplicate CPF column: %v", err)
	}
	if m.ByField["document"] != 1 {
		t.Errorf("mapping = %v", m.ByField)
	}
}
