package formats

import (
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"remessa/internal/cnabtest"
)

func writeTemp(t *testing.T, name, content string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

// readCNAB reads every row and every row-level error of a file.
func readCNAB(t *testing.T, path string, opt Options) (Source, []Row, []*Error, error) {
	t.Helper()
	r, err := Open(path, opt)
	if err != nil {
		return Source{}, nil, nil, err
	}
	defer r.Close()
	rows, rowErrs, err := ReadAll(r)
	return r.Source(), rows, rowErrs, err
}

func cell(r Row, header string) Cell {
	for i, h := range cnabHeaders {
		if h == header {
			return r.Cells[i]
		}
	}
	return Cell{}
}

func TestCNAB240Titles(t *testing.T) {
	a := cnabtest.OkTitle("A1", 15000)
	a.WithR, a.MultaCod, a.MultaVal, a.Msg3 = true, "2", 200, "REFERENTE A FEVEREIRO"
	a.JurosCod, a.JurosVal = 2, 100       // 1,00% a month
	a.Name = "JOS\xc9 DA CONCEI\xc7\xc3O" // Windows-1252 accents
	b := cnabtest.OkTitle("B2", 123456)
	b.DocType, b.Doc, b.Name = 2, "11222333000181", "PADARIA BOM PAO LTDA"
	b.Street = "AV BRASIL 1500"
	b.WithS = true
	path := writeTemp(t, "COB2811.REM", cnabtest.File240(7, []cnabtest.Title240{a, b}, "\r\n"))
	src, rows, rowErrs, err := readCNAB(t, path, Options{})
	if err != nil || len(rowErrs) > 0 {
		t.Fatalf("err %v, row errors %v", err, rowErrs)
	}
	if src.Format != "cnab240" || src.Layout != "febraban240-remessa" || src.Bank != "341" || src.NSA != 7 || src.CompanyDoc != "12345678000195" {
		t.Errorf("source %+v", src)
	}
	if len(rows) != 2 {
		t.Fatalf("%d rows", len(rows))
	}
	want := []map[string]string{
		{"Código": "A1", "Nome": "JOSÉ DA CONCEIÇÃO", "CPF/CNPJ": "52998224725", "Logradouro": "RUA DAS FLORES", "Número": "123",
			"Complemento": "AP 12", "Bairro": "CENTRO", "CEP": "01310100", "Cidade": "SAO PAULO", "UF": "SP", "Valor": "150.00",
			"Vencimento": "2027-02-10", "Mensagem": "NAO RECEBER APOS 30 DIAS\nREFERENTE A FEVEREIRO", "Multa": "2,00%",
			"Juros": "0,033%", "Nosso número": "000A1", "Movimento": "01", "Uso da empresa": "ERP-A1", "Emissão": "2026-11-28"},
		{"Código": "B2", "Nome": "PADARIA BOM PAO LTDA", "CPF/CNPJ": "11222333000181", "Logradouro": "AV BRASIL", "Número": "1500",
			"Complemento": "", "Valor": "1234.56", "Multa": "0%", "Juros": "0%", "Mensagem": "NAO RECEBER APOS 30 DIAS"},
	}
	for i, w := range want {
		for h, v := range w {
			if got := cell(rows[i], h).Value; got != v {
				t.Errorf("row %d %s = %q, want %q", i, h, got, v)
			}
		}
	}
	// lines: 1 header, 2 batch header, 3 P, 4 Q, 5 R, 6 P, 7 Q, 8 S
	if rows[0].Number != 3 || rows[1].Number != 6 {
		t.Errorf("row numbers %d %d", rows[0].Number, rows[1].Number)
	}
	for _, c := range []struct{ h, col, label string }{
		{"Vencimento", "3:78-85", "Data de vencimento do título"},
		{"Nome", "4:34-73", "Nome do pagador"},
		{"CPF/CNPJ", "4:18-33", "Número de inscrição do pagador"},
		{"CEP", "4:129-136", "CEP do pagador"},
		{"Multa", "5:75-89", "Valor/percentual a ser aplicado (multa)"},
	} {
		got := cell(rows[0], c.h)
		if got.Column != c.col || got.Header != c.label {
			t.Errorf("%s at %q (%q), want %q (%q)", c.h, got.Column, got.Header, c.col, c.label)
		}
	}
	// 1,00% a month is 0,0333...% a day: said, not silent; the S segment too
	if len(src.Warnings) != 2 || src.Warnings[0].Code != "cnab_juros_convertidos" || src.Warnings[0].Row != 3 ||
		src.Warnings[1].Code != "cnab_segmento_s_ignorado" || src.Warnings[1].Row != 8 {
		t.Errorf("warnings %+v", src.Warnings)
	}
}

func TestCNAB240LF(t *testing.T) {
	path := writeTemp(t, "x.txt", cnabtest.File240(1, []cnabtest.Title240{cnabtest.OkTitle("K", 100)}, "\n"))
	src, rows, _, err := readCNAB(t, path, Options{})
	if err != nil || len(rows) != 1 || src.Format != "cnab240" {
		t.Fatalf("%v %d %s", err, len(rows), src.Format)
	}
}

// hostile runs one bad file and returns the error text of the first
// problem (final or row-level).
func hostile(t *testing.T, content string, opt Options) (final string, rowErr string) {
	t.Helper()
	path := writeTemp(t, "bad.rem", content)
	_, _, rowErrs, err := readCNAB(t, path, opt)
	if err != nil {
		final = err.Error()
	}
	if len(rowErrs) > 0 {
		rowErr = rowErrs[0].Error()
	}
	return
}

func TestCNAB240Hostile(t *testing.T) {
	good := cnabtest.OkTitle("K1", 1000)
	badDate := cnabtest.OkTitle("K2", 1000)
	badDate.RawDueFix = "31022027"
	_, re := hostile(t, cnabtest.File240(1, []cnabtest.Title240{good, badDate}, "\r\n"), Options{})
	if !strings.Contains(re, "linha 5, posições 78–85 (Data de vencimento do título): '31022027' não é uma data") {
		t.Errorf("bad date: %q", re)
	}
	notNum := cnabtest.OkTitle("K3", 1000)
	notNum.Nosso = "X"
	f := cnabtest.File240(1, []cnabtest.Title240{notNum}, "\n")
	f = strings.Replace(f, "000000001000", "00000000I000", 1) // the value's digits, positions 86-100
	_, re = hostile(t, f, Options{})
	if !strings.Contains(re, "linha 3, posições 86–100 (Valor nominal do título)") || !strings.Contains(re, "não é numérico") {
		t.Errorf("non-numeric: %q", re)
	}
	noQ := cnabtest.OkTitle("K4", 1000)
	noQ.WithoutQ = true
	_, re = hostile(t, cnabtest.File240(1, []cnabtest.Title240{noQ, good}, "\n"), Options{})
	if !strings.Contains(re, "linha 3, posição 14") || !strings.Contains(re, "sem o segmento Q") {
		t.Errorf("P without Q: %q", re)
	}
	unk := cnabtest.OkTitle("K5", 1000)
	unk.SegOver = "Y"
	_, re = hostile(t, cnabtest.File240(1, []cnabtest.Title240{good, unk}, "\n"), Options{})
	if !strings.Contains(re, "segmento 'Y' não é lido") {
		t.Errorf("unknown segment: %q", re)
	}
	mov := cnabtest.OkTitle("K6", 1000)
	mov.Mov = 9
	_, re = hostile(t, cnabtest.File240(1, []cnabtest.Title240{mov}, "\n"), Options{})
	if !strings.Contains(re, "linha 3, posições 16–17 (Código de movimento remessa): movimento 09 (protestar): o serviço não tem esta instrução") || !strings.Contains(re, "recusado, não ignorado") {
		t.Errorf("movement 09: %q", re)
	}

	// file-level problems
	lines := strings.Split(cnabtest.File240(1, []cnabtest.Title240{good, good}, "\r\n"), "\r\n")
	short := strings.Join(append(append([]string{}, lines[:3]...), append([]string{lines[3][:239]}, lines[4:]...)...), "\r\n")
	fe, _ := hostile(t, short, Options{})
	if !strings.Contains(fe, "linha 4: a linha tem 239 caracteres; no CNAB 240 todas têm 240") {
		t.Errorf("short line: %q", fe)
	}
	mixed := strings.Join(lines[:4], "\r\n") + "\n" + strings.Join(lines[4:], "\r\n")
	fe, _ = hostile(t, mixed, Options{})
	if !strings.Contains(fe, "linha 5: a linha termina em CRLF, as anteriores em CRLF") && !strings.Contains(fe, "mistura fins de linha") {
		t.Errorf("mixed endings: %q", fe)
	}
	// the batch trailer counts 6 records; say 7
	trl := strings.Join(lines, "\r\n")
	bt := []byte(lines[len(lines)-3]) // the batch trailer ("" after the last CRLF, then the file trailer)
	if bt[7] != '5' {
		t.Fatalf("not the batch trailer: %q", bt)
	}
	copy(bt[17:23], "000007")
	bad := strings.Join(append(append(append([]string{}, lines[:len(lines)-3]...), string(bt)), lines[len(lines)-2:]...), "\r\n")
	fe, _ = hostile(t, bad, Options{})
	if !strings.Contains(fe, "posições 18–23 (Quantidade de registros no lote): o trailer diz 7; o lote tem 6") {
		t.Errorf("trailer count: %q", fe)
	}
	// the trailer's sum: 20,00 written as 20,01
	bad = strings.Replace(trl, "00000000000002000", "00000000000002001", 1)
	fe, _ = hostile(t, bad, Options{})
	if !strings.Contains(fe, "o trailer soma 20,01; os títulos somam 20,00") {
		t.Errorf("trailer sum: %q", fe)
	}
	// truncated: no file trailer
	fe, _ = hostile(t, strings.Join(lines[:len(lines)-2], "\r\n")+"\r\n", Options{})
	if !strings.Contains(fe, "termina sem o trailer de arquivo") {
		t.Errorf("truncated: %q", fe)
	}
	// another bank, another company, a retorno
	fe, _ = hostile(t, trl, Options{CNAB: CNABOptions{Bank: "237"}})
	if !strings.Contains(fe, "linha 1, posições 1–3 (Código do banco na compensação): o arquivo é do banco 341; o job espera o banco 237") {
		t.Errorf("bank: %q", fe)
	}
	fe, _ = hostile(t, trl, Options{CNAB: CNABOptions{CompanyDoc: "11222333000181"}})
	if !strings.Contains(fe, "o arquivo é da empresa 12345678000195; o job espera 11222333000181") {
		t.Errorf("company: %q", fe)
	}
	ret := []byte(trl)
	ret[142] = '2'
	fe, _ = hostile(t, string(ret), Options{})
	if !strings.Contains(fe, "posição 143") || !strings.Contains(fe, "arquivo de retorno") {
		t.Errorf("retorno: %q", fe)
	}
	// a bare CR line ending
	fe, _ = hostile(t, strings.ReplaceAll(trl, "\r\n", "\r"), Options{Format: "cnab240"})
	if fe == "" {
		t.Errorf("CR endings accepted")
	}
	// a batch header of payments (service 03) and one of another bank
	pay := []byte(trl)
	copy(pay[242+9:242+11], "03")
	fe, _ = hostile(t, string(pay), Options{})
	if !strings.Contains(fe, "lote do serviço 03") {
		t.Errorf("service: %q", fe)
	}
}

func TestCNABNotCNAB(t *testing.T) {
	p := writeTemp(t, "x.rem", "NOME;CPF\nA;1\n")
	_, err := Open(p, Options{})
	var fe *Error
	if !errors.As(err, &fe) || !strings.Contains(fe.Error(), "não é um arquivo CNAB") {
		t.Errorf("got %v", err)
	}
	p = writeTemp(t, "x.csv", "NOME;CPF\nA;1\n")
	r, err := Open(p, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if r.Source().Format != "csv" {
		t.Errorf("a CSV read as %s", r.Source().Format)
	}
	r.Close()
	_, err = Open(p, Options{Format: "cnab300"})
	if err == nil || !strings.Contains(err.Error(), "cnab300") {
		t.Errorf("format: %v", err)
	}
}

func TestCNABEmptyRows(t *testing.T) {
	path := writeTemp(t, "e.rem", cnabtest.File240(1, nil, "\n"))
	r, err := Open(path, Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	_, err = r.Next()
	var fe *Error
	if !errors.As(err, &fe) || fe.Code != CodeNoData {
		t.Errorf("no titles: %v", err)
	}
	if _, err := r.Next(); err != io.EOF && err == nil {
		t.Errorf("after the end: %v", err)
	}
}

func TestSplitStreet(t *testing.T) {
	for _, c := range []struct{ in, s, n, cpl string }{
		{"RUA DAS FLORES, 123 AP 12", "RUA DAS FLORES", "123", "AP 12"},
		{"AV BRASIL 1500", "AV BRASIL", "1500", ""},
		{"RUA 7 DE SETEMBRO", "RUA 7 DE SETEMBRO", "S/N", ""},
		{"RUA 25 DE MARCO 100 CASA 2", "RUA 25 DE MARCO", "100", "CASA 2"},
		{"ESTRADA VELHA, S/N", "ESTRADA VELHA", "S/N", ""},
	} {
		s, n, cpl := SplitStreet(c.in)
		if s != c.s || n != c.n || cpl != c.cpl {
			t.Errorf("%q: %q %q %q", c.in, s, n, cpl)
		}
	}
}

func TestCNAB400Bradesco(t *testing.T) {
	a := cnabtest.Title400{Mov: 1, Nosso: 12345, Seu: "MAT01", Due: "100227", Cents: 45000, JurosDia: 15, DocType: 1, Doc: "52998224725",
		Name: "ANA DE SOUZA", Street: "RUA DAS FLORES, 123 CENTRO SAO PAULO/SP", CEP: "01310100", MultaPct: 200, Msg: "MENSALIDADE FEVEREIRO"}
	b := cnabtest.Title400{Mov: 1, Nosso: 12346, Seu: "MAT02", Due: "100227", Cents: 30000, DocType: 2, Doc: "11222333000181", Name: "EMPRESA X LTDA", CEP: "20040002"}
	path := writeTemp(t, "CB281101.REM", cnabtest.File400("237", 11, []cnabtest.Title400{a, b}, "\r\n"))
	src, rows, rowErrs, err := readCNAB(t, path, Options{})
	if err != nil || len(rowErrs) > 0 || len(rows) != 2 {
		t.Fatalf("%v %v %d", err, rowErrs, len(rows))
	}
	if src.Format != "cnab400" || src.Layout != "bradesco400-remessa" || src.Bank != "237" || src.NSA != 11 {
		t.Errorf("source %+v", src)
	}
	want := map[string]string{"Código": "MAT01", "Nome": "ANA DE SOUZA", "CPF/CNPJ": "52998224725", "Valor": "450.00", "Vencimento": "2027-02-10",
		"Multa": "2,00%", "Juros": "0,033%", "Nosso número": "00000012345", "Mensagem": "MENSALIDADE FEVEREIRO", "Logradouro": "", "CEP": "", "Uso da empresa": "ERP-MAT01"}
	for h, v := range want {
		if got := cell(rows[0], h).Value; got != v {
			t.Errorf("%s = %q, want %q", h, got, v)
		}
	}
	if got := cell(rows[1], "CPF/CNPJ").Value; got != "11222333000181" {
		t.Errorf("CNPJ %q", got)
	}
	if c := cell(rows[0], "Vencimento"); c.Column != "2:121-126" {
		t.Errorf("due at %q", c.Column)
	}
	// R$ 0,15 a day on R$ 450,00 is 0,0333...%: converted with a warning; the address with one
	codes := map[string]bool{}
	for _, w := range src.Warnings {
		codes[w.Code] = true
	}
	if !codes["cnab_juros_convertidos"] || !codes["cnab_endereco_nao_separado"] {
		t.Errorf("warnings %+v", src.Warnings)
	}

	// a record's sequence number off: the file is refused at it
	a.BadSeqNext = true
	fe, _ := hostile(t, cnabtest.File400("237", 11, []cnabtest.Title400{a, b}, "\n"), Options{})
	if !strings.Contains(fe, "linha 3, posições 395–400") || !strings.Contains(fe, "falta ou sobra uma linha") {
		t.Errorf("sequence: %q", fe)
	}
	a.BadSeqNext = false
	a.RawDueFix = "300227"
	_, re := hostile(t, cnabtest.File400("237", 11, []cnabtest.Title400{a, b}, "\n"), Options{})
	if !strings.Contains(re, "linha 2, posições 121–126 (Data do vencimento do título): '300227' não é uma data (DDMMAA)") {
		t.Errorf("date: %q", re)
	}
	// a bank without a CNAB 400 table
	f := []byte(cnabtest.File400("237", 11, []cnabtest.Title400{b}, "\n"))
	copy(f[76:79], "001")
	fe, _ = hostile(t, string(f), Options{})
	if !strings.Contains(fe, "banco 001 não tem leiaute CNAB 400 aqui (há: 237, 341)") {
		t.Errorf("bank 001: %q", fe)
	}
}

func TestCNAB400Itau(t *testing.T) {
	a := cnabtest.Title400{Mov: 1, Nosso: 777, Seu: "NF1001", Due: "150327", Cents: 123456, DocType: 1, Doc: "52998224725",
		Name: "JO\xc3O DA SILVA", Street: "AV PAULISTA 1000", Hood: "BELA VISTA", CEP: "01310100", City: "SAO PAULO", UF: "SP", MultaPct: 250}
	path := writeTemp(t, "IT.txt", cnabtest.File400("341", 0, []cnabtest.Title400{a}, "\n"))
	src, rows, rowErrs, err := readCNAB(t, path, Options{})
	if err != nil || len(rowErrs) > 0 || len(rows) != 1 {
		t.Fatalf("%v %v %d", err, rowErrs, len(rows))
	}
	if src.Layout != "itau400-remessa" {
		t.Errorf("layout %s", src.Layout)
	}
	want := map[string]string{"Código": "NF1001", "Nome": "JOÃO DA SILVA", "Logradouro": "AV PAULISTA", "Número": "1000", "Bairro": "BELA VISTA",
		"CEP": "01310100", "Cidade": "SAO PAULO", "UF": "SP", "Valor": "1234.56", "Vencimento": "2027-03-15", "Multa": "2,50%", "Juros": "0%", "Nosso número": "00000777"}
	for h, v := range want {
		if got := cell(rows[0], h).Value; got != v {
			t.Errorf("%s = %q, want %q", h, got, v)
		}
	}
	if c := cell(rows[0], "Multa"); c.Column != "3:11-23" {
		t.Errorf("multa at %q", c.Column)
	}
}

// TestCNABMovementsSetAside: a file mixing entries, action movements and
// discounts. Read for the issuance, the 02 and 06 titles are passed over
// and counted in one warning a code at their first title's positions;
// read with CNABMovements, only they come back. Discounts come as
// "code|date|value" cells at their positions.
func TestCNABMovementsSetAside(t *testing.T) {
	a := cnabtest.OkTitle("A1", 10000)
	a.Desc1Cod, a.Desc1Date, a.Desc1 = 2, "05022027", 500
	a.WithR, a.Desc2Cod, a.Desc2Date, a.Desc2 = true, 1, "01022027", 1250
	a.Abat = 300
	b := cnabtest.OkTitle("B2", 20000)
	b.Mov = 2 // line 6
	c := cnabtest.OkTitle("C3", 30000)
	c.Mov, c.Due = 6, "10032027"
	d := cnabtest.OkTitle("D4", 40000)
	d.Mov = 2
	e := cnabtest.OkTitle("E5", 50000)
	e.Mov, e.Abat = 4, 1500
	path := writeTemp(t, "MIX.REM", cnabtest.File240(9, []cnabtest.Title240{a, b, c, d, e}, "\r\n"))
	src, rows, rowErrs, err := readCNAB(t, path, Options{})
	if err != nil || len(rowErrs) > 0 || len(rows) != 1 {
		t.Fatalf("entries: %v, %v, %d rows", err, rowErrs, len(rows))
	}
	for h, want := range map[string][2]string{CNABDiscount1: {"2|2027-02-05|5.00", "3:151-165"}, CNABDiscount2: {"1|2027-02-01|12.50", "5:27-41"},
		CNABDiscount3: {"", ""}, CNABRebate: {"3.00", "3:181-195"}} {
		if c := cell(rows[0], h); c.Value != want[0] || c.Column != want[1] {
			t.Errorf("%s: %q at %q, want %q at %q", h, c.Value, c.Column, want[0], want[1])
		}
	}
	var warns []string
	for _, w := range src.Warnings {
		if w.Code == "cnab_movimento_acao" {
			warns = append(warns, Place("pt", w.Row, w.Column, w.Header)+": "+w.Message)
		}
	}
	want := []string{
		"linha 6, posições 16–17 (Código de movimento remessa): 2 título(s) com movimento 02 (pedido de baixa) não são emissões",
		"linha 8, posições 16–17 (Código de movimento remessa): 1 título(s) com movimento 06 (alteração de vencimento) não são emissões",
		"linha 12, posições 16–17 (Código de movimento remessa): 1 título(s) com movimento 04 (concessão de abatimento) não são emissões",
	}
	if len(warns) != len(want) {
		t.Fatalf("warnings %q", warns)
	}
	for i := range want {
		if !strings.HasPrefix(warns[i], want[i]) {
			t.Errorf("warning %d: %q, want %q", i, warns[i], want[i])
		}
	}
	_, rows, rowErrs, err = readCNAB(t, path, Options{CNABMovements: true})
	if err != nil || len(rowErrs) > 0 || len(rows) != 4 {
		t.Fatalf("movements: %v, %v, %d rows", err, rowErrs, len(rows))
	}
	var got []string
	for _, r := range rows {
		got = append(got, strings.Join([]string{CNABCell(r, CNABMovement).Value, CNABCell(r, CNABKey).Value, CNABCell(r, CNABDue).Value,
			CNABCell(r, CNABValue).Value, CNABCell(r, CNABRebate).Value, CNABCell(r, CNABMovement).Column}, " "))
	}
	wantRows := []string{"02 B2 2027-02-10 200.00 0.00 6:16-17", "06 C3 2027-03-10 300.00 0.00 8:16-17", "02 D4 2027-02-10 400.00 0.00 10:16-17",
		"04 E5 2027-02-10 500.00 15.00 12:16-17"}
	if strings.Join(got, "\n") != strings.Join(wantRows, "\n") {
		t.Errorf("movement rows:\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(wantRows, "\n"))
	}
	// a file of movements only has no entry, and that is not an error
	only := writeTemp(t, "MOV.REM", cnabtest.File240(10, []cnabtest.Title240{b}, "\r\n"))
	if _, rows, _, err := readCNAB(t, only, Options{}); err != nil || len(rows) != 0 {
		t.Errorf("movements only: %v, %d rows", err, len(rows))
	}
}
