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
	if len(v.Items) != 1 || v.Summary.Refused != 2 {
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
	// the 06 title is not an entry: set aside for pipeline/movements, said once
	var aside []string
	for _, n := range v.Notes {
		if n.Code == "cnab_movimento_acao" {
			aside = append(aside, n.Localized("pt"))
		}
	}
	if len(aside) != 1 || !strings.Contains(aside[0], "linha 10, posições 16–17 (Código de movimento remessa): 1 título(s) com movimento 06 (alteração de vencimento) não são emissões") {
		t.Errorf("set aside: %q", aside)
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

// TestCNABDiscounts: a title's discounts and abatimento, on slips (one
// conditional discount until a date; the abatimento as the unconditional
// discount) and on cobv (desconto with up to three dates, or per day;
// abatimento); what the issuance cannot carry is refused at the discount's
// positions.
func TestCNABDiscounts(t *testing.T) {
	a := cnabtest.OkTitle("A1", 10000) // lines 3, 4
	a.Desc1Cod, a.Desc1Date, a.Desc1, a.Abat = 2, "05022027", 500, 300
	b := cnabtest.OkTitle("B2", 10000) // lines 5, 6, 7 (R)
	b.Desc1Cod, b.Desc1Date, b.Desc1 = 1, "01022027", 1000
	b.WithR, b.Desc2Cod, b.Desc2Date, b.Desc2 = true, 1, "05022027", 500
	c := cnabtest.OkTitle("C3", 10000) // lines 8, 9
	c.Desc1Cod, c.Desc1 = 3, 10
	d := cnabtest.OkTitle("D4", 10000) // lines 10, 11
	d.Desc1Cod, d.Desc1Date, d.Desc1 = 1, "20022027", 100
	e := cnabtest.OkTitle("E5", 10000) // lines 12, 13
	e.Desc1 = 50
	f := cnabtest.OkTitle("F6", 10000) // lines 14, 15, 16
	f.Desc1Cod, f.Desc1Date, f.Desc1 = 1, "01022027", 1000
	f.WithR, f.Desc2Cod, f.Desc2Date, f.Desc2 = true, 2, "05022027", 500
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "COB.REM"), []byte(cnabtest.File240(3, []cnabtest.Title240{a, b, c, d, e, f}, "\r\n")), 0o644); err != nil {
		t.Fatal(err)
	}
	validate := func(issue string) (map[string]*Item, []string) {
		t.Helper()
		jp := filepath.Join(dir, "job.yaml")
		os.WriteFile(jp, []byte("version: 1\ninput: {file: COB.REM}\non_invalid: skip\n"+issue), 0o644)
		j, err := Load(jp, testOpts(nil))
		if err != nil {
			t.Fatal(err)
		}
		v, err := Validate(context.Background(), j)
		if err != nil {
			t.Fatal(err)
		}
		items := map[string]*Item{}
		for i := range v.Items {
			items[v.Items[i].Key] = &v.Items[i]
		}
		var errs []string
		for _, n := range v.Notes {
			if n.Severity == SevError {
				errs = append(errs, n.Localized("pt"))
			}
		}
		return items, errs
	}
	items, errs := validate("")
	if len(items) != 1 {
		t.Fatalf("slips: %d items, errors %q", len(items), errs)
	}
	bb := items["A1"].Slip.Payment.BankingBillet
	if bb.ConditionalDiscount == nil || *bb.ConditionalDiscount != (ConditionalDiscount{Type: "percentage", Value: 500, UntilDate: "2027-02-05"}) ||
		bb.Discount == nil || *bb.Discount != (Discount{Type: "currency", Value: 300}) {
		t.Errorf("A1: discount %+v, conditional %+v", bb.Discount, bb.ConditionalDiscount)
	}
	if bb := items["F6"]; bb != nil {
		t.Errorf("F6 issued with two discounts: %+v", bb)
	}
	want := []string{
		"linha 7, posições 27–41 (Valor/percentual a ser concedido (desconto 2)): o título tem 2 descontos por data (R$ 10,00 até 01/02/2027; R$ 5,00 até 05/02/2027); o boleto leva um só desconto condicional: o título foi recusado",
		"linha 8, posições 151–165 (Valor/percentual a ser concedido (desconto 1)): desconto 1 de R$ 0,10 por dia de antecipação: o boleto não tem desconto por dia de antecipação",
		"linha 10, posições 151–165 (Valor/percentual a ser concedido (desconto 1)): desconto 1 até 20/02/2027, depois do vencimento 10/02/2027",
		"linha 12, posições 151–165 (Valor/percentual a ser concedido (desconto 1)): desconto 1 de R$ 0,50 com código 0 (sem desconto)",
		"linha 16, posições 27–41 (Valor/percentual a ser concedido (desconto 2)): o título tem 2 descontos por data",
	}
	if len(errs) != len(want) {
		t.Fatalf("slip errors %q", errs)
	}
	for i := range want {
		if !strings.HasPrefix(errs[i], want[i]) {
			t.Errorf("slip error %d: %q, want %q", i, errs[i], want[i])
		}
	}

	items, errs = validate("issue:\n  cobv: {chave: financeiro@example.com}\n")
	if len(items) != 3 {
		t.Fatalf("cobv: %d items, errors %q", len(items), errs)
	}
	val := items["A1"].Cobv.Valor
	if val.Desconto == nil || val.Desconto.Modalidade != 2 || len(val.Desconto.DescontoDataFixa) != 1 ||
		val.Desconto.DescontoDataFixa[0] != (DataValor{Data: "2027-02-05", ValorPerc: "5.00"}) ||
		val.Abatimento == nil || *val.Abatimento != (Modalidade{Modalidade: 1, ValorPerc: "3.00"}) {
		t.Errorf("A1 cobv: %+v %+v", val.Desconto, val.Abatimento)
	}
	val = items["B2"].Cobv.Valor
	if val.Desconto == nil || val.Desconto.Modalidade != 1 || len(val.Desconto.DescontoDataFixa) != 2 ||
		val.Desconto.DescontoDataFixa[1] != (DataValor{Data: "2027-02-05", ValorPerc: "5.00"}) || val.Abatimento != nil {
		t.Errorf("B2 cobv: %+v", val.Desconto)
	}
	val = items["C3"].Cobv.Valor
	if val.Desconto == nil || val.Desconto.Modalidade != 3 || val.Desconto.ValorPerc != "0.10" || len(val.Desconto.DescontoDataFixa) != 0 {
		t.Errorf("C3 cobv: %+v", val.Desconto)
	}
	want = []string{
		"linha 10, posições 151–165 (Valor/percentual a ser concedido (desconto 1)): desconto 1 até 20/02/2027, depois do vencimento 10/02/2027",
		"linha 12, posições 151–165 (Valor/percentual a ser concedido (desconto 1)): desconto 1 de R$ 0,50 com código 0",
		"linha 16, posições 27–41 (Valor/percentual a ser concedido (desconto 2)): descontos de tipos diferentes (R$ 10,00 até 01/02/2027; 5,00% até 05/02/2027): a cobv leva uma só modalidade de desconto",
	}
	if len(errs) != len(want) {
		t.Fatalf("cobv errors %q", errs)
	}
	for i := range want {
		if !strings.HasPrefix(errs[i], want[i]) {
			t.Errorf("cobv error %d: %q, want %q", i, errs[i], want[i])
		}
	}
}
