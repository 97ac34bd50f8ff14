package pipeline

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"remessa/internal/cnabtest"
)

// TestCNABJob validates a job whose input is a CNAB 240 remessa with no
// issue section: slips by default, each title's fine and daily interest
// its own, and every problem at its line and positions.
func TestCNABJob(t *testing.T) {
	a := cnabtest.OkTitle("A1", 15000)
	a.WithR, a.MultaCod, a.MultaVal, a.Msg3 = true, "2", 200, "REFERENTE A FEVEREIRO"
	a.JurosCod, a.JurosVal = 2, 99 // 0,99% a month: exactly 0,033% a day
	b := cnabtest.OkTitle("B2", 9990)
	b.RawDueFix = "31022027"
	c := cnabtest.OkTitle("C3", 5000)
	c.Doc = "52998224724" // wrong check digit
	d := cnabtest.OkTitle("D4", 7000)
	d.Mov = 6
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "COB.REM"), []byte(cnabtest.File240(3, []cnabtest.Title240{a, b, c, d}, "\r\n")), 0o644); err != nil {
		t.Fatal(err)
	}
	jp := filepath.Join(dir, "job.yaml")
	os.WriteFile(jp, []byte("version: 1\ninput:\n  file: COB.REM\n  bank: \"341\"\non_invalid: skip\n"), 0o644)
	j, err := Load(jp, testOpts(nil))
	if err != nil {
		t.Fatal(err)
	}
	if j.InputFormat != "cnab240" || j.Kind != "boletos" {
		t.Fatalf("format %q kind %q", j.InputFormat, j.Kind)
	}
	v, err := Validate(context.Background(), j)
	if err != nil {
		t.Fatal(err)
	}
	if len(v.Items) != 1 || v.Summary.Refused != 3 {
		t.Fatalf("%d items, %d refused: %+v", len(v.Items), v.Summary.Refused, v.Notes)
	}
	it := v.Items[0]
	bb := it.Slip.Payment.BankingBillet
	if it.Key != "A1" || it.AmountCents != 15000 || bb.ExpireAt != "2027-02-10" || bb.Customer.CPF != "52998224725" ||
		bb.Configurations == nil || bb.Configurations.Fine != 200 || bb.Configurations.Interest != 33 ||
		bb.Message != "NAO RECEBER APOS 30 DIAS\nREFERENTE A FEVEREIRO" || bb.Customer.Address == nil || bb.Customer.Address.Number != "123" {
		t.Errorf("item %+v\nslip %+v", it, bb)
	}
	want := []string{
		"linha 6, posições 78–85 (Data de vencimento do título): '31022027' não é uma data (DDMMAAAA) [cnab_data_invalida]",
		"linha 9, posições 18–33 (Número de inscrição do pagador): CPF 52998224724 inválido: dígitos verificadores não conferem [cpf_invalido]",
		"linha 10, posições 16–17 (Código de movimento remessa): movimento 06 (alteração de vencimento)",
	}
	var got []string
	for _, n := range v.Notes {
		if n.Severity == SevError {
			got = append(got, n.Localized("pt"))
		}
	}
	if len(got) != len(want) {
		t.Fatalf("notes %q", got)
	}
	for i := range want {
		if !strings.HasPrefix(got[i], want[i]) {
			t.Errorf("note %d: %q, want %q", i, got[i], want[i])
		}
	}
	if en := v.Notes[0].Localized("en"); !strings.HasPrefix(en, "line 6, positions 78–85 (Data de vencimento do título): '31022027' is not a date") {
		t.Errorf("en: %q", en)
	}

	// the job names another bank: the whole file is refused at its header
	os.WriteFile(jp, []byte("version: 1\ninput:\n  file: COB.REM\n  bank: \"237\"\n"), 0o644)
	j, err = Load(jp, testOpts(nil))
	if err != nil {
		t.Fatal(err)
	}
	_, err = Validate(context.Background(), j)
	if err == nil || !strings.Contains(err.Error(), "linha 1, posições 1–3 (Código do banco na compensação): o arquivo é do banco 341; o job espera o banco 237") {
		t.Errorf("another bank: %v", err)
	}
	// what remessa validate prints of it: a file, not a spreadsheet
	rep := NewValidationReport("job.yaml", j, nil, err)
	var out strings.Builder
	if err := rep.WriteText(&out, "pt"); err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(out.String(), "O arquivo ") || !strings.Contains(out.String(), "o job espera o banco 237 [cnab_cabecalho]") {
		t.Errorf("report %q", out.String())
	}
	// bank and company only make sense for CNAB
	os.WriteFile(filepath.Join(dir, "p.csv"), []byte("Código;Nome\n1;A\n"), 0o644)
	os.WriteFile(jp, []byte("version: 1\ninput:\n  file: p.csv\n  bank: \"237\"\nissue:\n  boletos: {}\n"), 0o644)
	if _, err := Load(jp, testOpts(nil)); err == nil || !strings.Contains(err.Error(), "so_cnab") && !strings.Contains(err.Error(), "só vale para remessas CNAB") {
		t.Errorf("bank on a sheet: %v", err)
	}
}
