package retorno

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"remessa/internal/cnabtest"
)

// goldenEntries are one event of every kind, as the collector makes them,
// with the test's own money: the golden files below are built from them
// by hand, position by position from the manuals' field tables.
func goldenEntries() []Entry {
	return []Entry{
		{Key: "entrada|charge:101", Event: EventEntrada, SourceRow: 3, SeuNumero: "A1", UsoEmpresa: "ERP-A1", NossoNumero: "101",
			Payer: "MARIA JOSE DA CONCEICAO", PayerDoc: "52998224725", Due: "2027-02-10", Value: 15000, Occurred: "2026-11-28"},
		{Key: "rejeicao|row:1", Event: EventRejeicao, Motivos: []string{"46"}, Text: "CPF 52998224724 inválido", SourceRow: 5, SeuNumero: "C3",
			UsoEmpresa: "ERP-C3", ERPNosso: "000C3", Payer: "JOAO", PayerDoc: "52998224724", Due: "2027-02-10", Value: 5000, Occurred: "2026-11-28"},
		{Key: "vencimento|charge:102|2027-03-10", Event: EventVencimento, SourceRow: 7, SeuNumero: "D4", UsoEmpresa: "ERP-D4", NossoNumero: "102",
			Payer: "ANA", PayerDoc: "52998224725", Due: "2027-03-10", Value: 7000, Occurred: "2026-11-29"},
		{Key: "liquidacao|charge:101", Event: EventLiquidacao, SourceRow: 3, SeuNumero: "A1", UsoEmpresa: "ERP-A1", NossoNumero: "101",
			Payer: "MARIA JOSE DA CONCEICAO", PayerDoc: "52998224725", Due: "2027-02-10", Value: 15000, Paid: 15300, FineInterest: 300,
			Occurred: "2027-02-12", Credit: "2027-02-12"},
		{Key: "liquidacao|charge:103", Event: EventLiquidacao, SourceRow: 9, SeuNumero: "E5", UsoEmpresa: "ERP-E5", NossoNumero: "103",
			Payer: "PEDRO", PayerDoc: "11444777000161", Due: "2027-02-10", Value: 10000, Paid: 9400, Discount: 500, Abatimento: 200, Over: 100,
			Occurred: "2027-02-01", Credit: "2027-02-01"},
		{Key: "manual|charge:104", Event: EventManual, Motivos: []string{"11"}, SourceRow: 11, SeuNumero: "F6", UsoEmpresa: "ERP-F6",
			NossoNumero: "104", Payer: "LUCIA", PayerDoc: "52998224725", Due: "2027-02-10", Value: 8000, Paid: 8000, Occurred: "2027-02-05"},
		{Key: "baixa|charge:105", Event: EventBaixa, Motivos: []string{"11"}, SourceRow: 13, SeuNumero: "G7", UsoEmpresa: "ERP-G7",
			NossoNumero: "105", Payer: "RUI", PayerDoc: "52998224725", Due: "2027-02-10", Value: 6000, Occurred: "2027-01-20"},
		{Key: "abatimento|cobv:TXH8|41", Event: EventAbatimento, SourceRow: 15, SeuNumero: "H8", UsoEmpresa: "ERP-H8", ERPNosso: "000H8",
			Txid: "TXH8", Payer: "BIA", PayerDoc: "52998224725", Due: "2027-02-10", Value: 15000, Abatimento: 1234, Occurred: "2027-01-15"},
		{Key: "abatimento_cancelado|cobv:TXH8|42", Event: EventAbatimentoCancelado, SourceRow: 15, SeuNumero: "H8", UsoEmpresa: "ERP-H8",
			ERPNosso: "000H8", Txid: "TXH8", Payer: "BIA", PayerDoc: "52998224725", Due: "2027-02-10", Value: 15000, Abatimento: 1234,
			Occurred: "2027-01-18"},
		{Key: "estorno|charge:101|15300", Event: EventEstorno, SourceRow: 3, SeuNumero: "A1", UsoEmpresa: "ERP-A1", NossoNumero: "101",
			Payer: "MARIA JOSE DA CONCEICAO", PayerDoc: "52998224725", Due: "2027-02-10", Value: 15000, Refunded: 15300, Occurred: "2027-02-20"},
	}
}

// goldenFor is goldenEntries as the collector makes them for layout: the
// layout's codes, and the baixa motivos each layout has.
func goldenFor(layout string) []Entry {
	var out []Entry
	for _, e := range goldenEntries() {
		e.Code = specs[layout].codes[e.Event]
		if layout == Layout400Brad && e.Event == EventBaixa {
			e.Motivos = []string{"10"}
		}
		if layout != Layout240 && e.Event == EventManual {
			e.Motivos = nil
		}
		if layout == Layout400Itau && e.Event == EventBaixa {
			e.Motivos = nil
		}
		out = append(out, e)
	}
	return out
}

// goldenAt is the retorno's generation time: 13/02/2027 10:15:00 in São Paulo.
var goldenAt = time.Date(2027, 2, 13, 13, 15, 0, 0, time.UTC)

func writeGolden(t *testing.T, layout string, echo *Echo, nsa int) string {
	t.Helper()
	spec, err := specOf(layout)
	if err != nil {
		t.Fatal(err)
	}
	var b bytes.Buffer
	fw := newFileWriter(spec, &b, echo, nsa, goldenAt, "")
	if err := fw.header(); err != nil {
		t.Fatal(err)
	}
	for _, e := range goldenFor(layout) {
		if err := fw.entry(&e); err != nil {
			t.Fatal(err)
		}
	}
	if err := fw.finish(); err != nil {
		t.Fatal(err)
	}
	return b.String()
}

func echoOf(t *testing.T, content string) *Echo {
	t.Helper()
	p := filepath.Join(t.TempDir(), "COB.REM")
	if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
	e, err := readEcho(p, "")
	if err != nil || e == nil {
		t.Fatalf("echo: %v %v", e, err)
	}
	return e
}

func compareLines(t *testing.T, got string, want []cnabtest.Line) {
	t.Helper()
	lines := strings.Split(strings.TrimSuffix(got, "\r\n"), "\r\n")
	if len(lines) != len(want) {
		t.Fatalf("%d lines, want %d:\n%s", len(lines), len(want), got)
	}
	for i := range want {
		if lines[i] == string(want[i]) {
			continue
		}
		for p := 0; p < len(want[i]) && p < len(lines[i]); p++ {
			if lines[i][p] != want[i][p] {
				t.Errorf("line %d differs from position %d:\n got  %q\n want %q", i+1, p+1, lines[i][p:min(p+30, len(lines[i]))], string(want[i][p:min(p+30, len(want[i]))]))
				break
			}
		}
	}
}

func blank(n int) cnabtest.Line { return cnabtest.Blank(n) }

// TestGolden240 writes every occurrence in FEBRABAN's CNAB 240 and checks
// each line against FEBRABAN's positions (Anexo de Cobrança v08.4, segments
// T and U), written here by hand.
func TestGolden240(t *testing.T) {
	a := cnabtest.OkTitle("A1", 15000)
	echo := echoOf(t, cnabtest.File240(3, []cnabtest.Title240{a}, "\r\n"))
	if echo.Layout != Layout240 || echo.Titles[3].UsoEmpresa != "ERP-A1" || echo.Titles[3].NossoNumero != "000A1" {
		t.Fatalf("echo %+v", echo)
	}
	got := writeGolden(t, Layout240, echo, 7)
	head := blank(240).Put(1, 3, "341").Put(4, 7, "0000").Put(8, 8, "0").Put(18, 18, "2").Put(19, 32, "12345678000195").
		Put(33, 52, "CONVENIO123").Put(53, 57, "01234").Put(59, 70, "000000056789").Put(73, 102, "ESCOLA MODELO LTDA").
		Put(103, 132, "BANCO ITAU SA").Put(143, 143, "2").Put(144, 151, "13022027").Put(152, 157, "101500").
		Put(158, 163, "000007").Put(164, 166, "084").Put(167, 171, "00000")
	batch := blank(240).Put(1, 3, "341").Put(4, 7, "0001").Put(8, 8, "1").Put(9, 9, "T").Put(10, 11, "01").Put(14, 16, "043").
		Put(18, 18, "2").Put(19, 33, "012345678000195").Put(34, 53, "CONVENIO123").Put(54, 58, "00000").Put(60, 71, "000000000000").
		Put(74, 103, "ESCOLA MODELO LTDA").Put(184, 191, "00000007").Put(192, 199, "13022027").Put(200, 207, "00000000")
	seq := 0
	tSeg := func(code, nosso, seu, due, valor, uso, kind, doc, name, motivos string) cnabtest.Line {
		seq++
		return blank(240).Put(1, 3, "341").Put(4, 7, "0001").Put(8, 8, "3").Put(9, 13, seq).Put(14, 14, "T").Put(16, 17, code).
			Put(18, 22, "01234").Put(24, 35, "000000056789").Put(38, 57, nosso).Put(58, 58, "1").Put(59, 73, seu).Put(74, 81, due).
			Put(82, 96, valor).Put(97, 99, "000").Put(100, 104, "00000").Put(106, 130, uso).Put(131, 132, "00").Put(133, 133, kind).
			Put(134, 148, doc).Put(149, 188, name).Put(189, 198, "0000000000").Put(199, 213, "000000000000000").Put(214, 223, motivos)
	}
	z15 := "000000000000000"
	uSeg := func(code, acresc, desc, abat, pago, outros, ocorr, cred string) cnabtest.Line {
		seq++
		return blank(240).Put(1, 3, "341").Put(4, 7, "0001").Put(8, 8, "3").Put(9, 13, seq).Put(14, 14, "U").Put(16, 17, code).
			Put(18, 32, acresc).Put(33, 47, desc).Put(48, 62, abat).Put(63, 77, z15).Put(78, 92, pago).Put(93, 107, pago).
			Put(108, 122, z15).Put(123, 137, outros).Put(138, 145, ocorr).Put(146, 153, cred).Put(158, 165, "00000000").
			Put(166, 180, z15).Put(211, 213, "000")
	}
	maria, cpf := "MARIA JOSE DA CONCEICAO", "000052998224725"
	want := []cnabtest.Line{head, batch,
		tSeg("02", "101", "A1", "10022027", "000000000015000", "ERP-A1", "1", cpf, maria, ""),
		uSeg("02", z15, z15, z15, z15, z15, "28112026", "00000000"),
		tSeg("03", "000C3", "C3", "10022027", "000000000005000", "ERP-C3", "1", "000052998224724", "JOAO", "46"),
		uSeg("03", z15, z15, z15, z15, z15, "28112026", "00000000"),
		tSeg("14", "102", "D4", "10032027", "000000000007000", "ERP-D4", "1", cpf, "ANA", ""),
		uSeg("14", z15, z15, z15, z15, z15, "29112026", "00000000"),
		tSeg("06", "101", "A1", "10022027", "000000000015000", "ERP-A1", "1", cpf, maria, ""),
		uSeg("06", "000000000000300", z15, z15, "000000000015300", z15, "12022027", "12022027"),
		tSeg("06", "103", "E5", "10022027", "000000000010000", "ERP-E5", "2", "011444777000161", "PEDRO", ""),
		uSeg("06", z15, "000000000000500", "000000000000200", "000000000009400", "000000000000100", "01022027", "01022027"),
		tSeg("09", "104", "F6", "10022027", "000000000008000", "ERP-F6", "1", cpf, "LUCIA", "11"),
		uSeg("09", z15, z15, z15, "000000000008000", z15, "05022027", "00000000"),
		tSeg("09", "105", "G7", "10022027", "000000000006000", "ERP-G7", "1", cpf, "RUI", "11"),
		uSeg("09", z15, z15, z15, z15, z15, "20012027", "00000000"),
		// a cobv's abatimento of R$ 12,34 granted (12), then cancelled (13): U 48-62 the abatimento
		tSeg("12", "000H8", "H8", "10022027", "000000000015000", "ERP-H8", "1", cpf, "BIA", ""),
		uSeg("12", z15, z15, "000000000001234", z15, z15, "15012027", "00000000"),
		tSeg("13", "000H8", "H8", "10022027", "000000000015000", "ERP-H8", "1", cpf, "BIA", ""),
		uSeg("13", z15, z15, "000000000001234", z15, z15, "18012027", "00000000"),
		// the refund: CNAB 240 has no occurrence for it (listed, not written)
		// batch trailer: 9 titles, 20 records, 150,00+50,00+70,00+150,00+100,00+80,00+60,00+150,00+150,00 = 960,00
		blank(240).Put(1, 3, "341").Put(4, 7, "0001").Put(8, 8, "5").Put(18, 23, "000020").Put(24, 29, "000009").
			Put(30, 46, "00000000000096000").Put(47, 52, "000000").Put(53, 69, "00000000000000000").Put(70, 75, "000000").
			Put(76, 92, "00000000000000000").Put(93, 98, "000000").Put(99, 115, "00000000000000000"),
		blank(240).Put(1, 3, "341").Put(4, 7, "9999").Put(8, 8, "9").Put(18, 23, "000001").Put(24, 29, "000022").Put(30, 35, "000000"),
	}
	compareLines(t, got, want)
	c, err := CheckReader(strings.NewReader(got), Layout240)
	if err != nil || !c.OK || c.Titles != 9 || c.Cents != 96000 {
		t.Errorf("check %+v %v", c, err)
	}
}

// TestGolden400Bradesco is TestGolden240 in Bradesco's CNAB 400 retorno
// (Manual Operacional Cobrança Bradesco, retorno records 0, 1 and 9).
func TestGolden400Bradesco(t *testing.T) {
	echo := echoOf(t, cnabtest.File400("237", 4, []cnabtest.Title400{{Mov: 1, Nosso: 11, Seu: "A1", Due: "100227", Cents: 15000,
		DocType: 1, Doc: "52998224725", Name: "MARIA", Street: "RUA X 1", CEP: "01310100"}}, "\r\n"))
	if echo.Layout != Layout400Brad || echo.Titles[2].UsoEmpresa != "ERP-A1" {
		t.Fatalf("echo %+v", echo)
	}
	got := writeGolden(t, Layout400Brad, echo, 12)
	n := 0
	seq := func(l cnabtest.Line) cnabtest.Line { n++; return l.Put(395, 400, n) }
	z13 := "0000000000000"
	det := func(code, nosso, ocorr, seu, due, valor, abat, desc, pago, acresc, outros, cred, motivos string) cnabtest.Line {
		return seq(blank(400).Put(1, 1, "1").Put(2, 3, "00").Put(4, 17, "00000000000000").Put(21, 37, "00090123400567890").
			Put(38, 62, "ERP-"+seu).Put(71, 82, nosso).Put(108, 108, "0").Put(109, 110, code).Put(111, 116, ocorr).Put(117, 126, seu).
			Put(147, 152, due).Put(153, 165, valor).Put(166, 168, "000").Put(169, 173, "00000").Put(174, 175, "01").
			Put(176, 188, z13).Put(189, 201, z13).Put(202, 214, z13).Put(215, 227, z13).Put(228, 240, abat).Put(241, 253, desc).
			Put(254, 266, pago).Put(267, 279, acresc).Put(280, 292, outros).Put(296, 301, cred).Put(319, 328, motivos))
	}
	want := []cnabtest.Line{
		seq(blank(400).Put(1, 1, "0").Put(2, 2, "2").Put(3, 9, "RETORNO").Put(10, 11, "01").Put(12, 26, "COBRANCA").
			Put(27, 46, "00000000000004455667").Put(47, 76, "ESCOLA MODELO LTDA").Put(77, 79, "237").Put(80, 94, "BRADESCO").
			Put(95, 100, "130227").Put(101, 108, "01600000").Put(109, 113, "00012").Put(380, 385, "000000")),
		det("02", "000000000101", "281126", "A1", "100227", "0000000015000", z13, z13, z13, z13, z13, "000000", ""),
		det("03", "000000000000", "281126", "C3", "100227", "0000000005000", z13, z13, z13, z13, z13, "000000", "46"),
		det("14", "000000000102", "291126", "D4", "100327", "0000000007000", z13, z13, z13, z13, z13, "000000", ""),
		det("06", "000000000101", "120227", "A1", "100227", "0000000015000", z13, z13, "0000000015300", "0000000000300", z13, "120227", ""),
		det("06", "000000000103", "010227", "E5", "100227", "0000000010000", "0000000000200", "0000000000500", "0000000009400", z13, "0000000000100", "010227", ""),
		det("10", "000000000104", "050227", "F6", "100227", "0000000008000", z13, z13, "0000000008000", z13, z13, "000000", ""),
		det("09", "000000000105", "200127", "G7", "100227", "0000000006000", z13, z13, z13, z13, z13, "000000", "10"),
		det("12", "000000000000", "150127", "H8", "100227", "0000000015000", "0000000001234", z13, z13, z13, z13, "000000", ""),
		det("13", "000000000000", "180127", "H8", "100227", "0000000015000", "0000000001234", z13, z13, z13, z13, "000000", ""),
		det("22", "000000000101", "200227", "A1", "100227", "0000000015000", z13, z13, "0000000015300", z13, z13, "000000", ""),
		// trailer: 10 titles, 150+50+70+150+100+80+60+150+150+150 = 1.110,00; 02: 1 of 150,00; 06: 2 of 250,00 paid 247,00;
		// 09 and 10: 2 of 140,00; 13: 1 of 150,00; 14: 1 of 70,00; 12: 1 of 150,00
		seq(blank(400).Put(1, 1, "9").Put(2, 2, "2").Put(3, 4, "01").Put(5, 7, "237").Put(18, 25, "00000010").
			Put(26, 39, "00000000111000").Put(40, 47, "00000012").Put(58, 62, "00001").Put(63, 74, "000000015000").
			Put(75, 86, "000000024700").Put(87, 91, "00002").Put(92, 103, "000000025000").Put(104, 108, "00002").
			Put(109, 120, "000000014000").Put(121, 125, "00001").Put(126, 137, "000000015000").Put(138, 142, "00001").
			Put(143, 154, "000000007000").Put(155, 159, "00001").Put(160, 171, "000000015000").Put(172, 176, "00000").
			Put(177, 188, "000000000000")),
	}
	compareLines(t, got, want)
	c, err := CheckReader(strings.NewReader(got), Layout400Brad)
	if err != nil || !c.OK || c.Titles != 10 || c.Cents != 111000 {
		t.Errorf("check %+v %v", c, err)
	}
}

// TestGolden400Itau is TestGolden240 in Itaú's CNAB 400 retorno (Cobrança
// Itaú, Layout de Arquivos CNAB 400, retorno records 0, 1 and 9).
func TestGolden400Itau(t *testing.T) {
	echo := echoOf(t, cnabtest.File400("341", 0, []cnabtest.Title400{{Mov: 1, Nosso: 11, Seu: "A1", Due: "100227", Cents: 15000,
		DocType: 1, Doc: "52998224725", Name: "MARIA", Street: "RUA X, 1", Hood: "CENTRO", CEP: "01310100", City: "SAO PAULO", UF: "SP"}}, "\r\n"))
	if echo.Layout != Layout400Itau {
		t.Fatalf("echo %+v", echo)
	}
	got := writeGolden(t, Layout400Itau, echo, 5)
	n := 0
	seq := func(l cnabtest.Line) cnabtest.Line { n++; return l.Put(395, 400, n) }
	z13 := "0000000000000"
	det := func(code, nosso, ocorr, seu, due, valor, abat, desc, pago, acresc, outros, cred, name, motivos string) cnabtest.Line {
		return seq(blank(400).Put(1, 1, "1").Put(2, 3, "02").Put(4, 17, "12345678000195").Put(18, 21, "1234").Put(24, 28, "56789").
			Put(29, 29, "5").Put(38, 62, "ERP-"+seu).Put(63, 70, nosso).Put(83, 85, "109").Put(86, 93, nosso).Put(94, 94, "0").
			Put(108, 108, "I").Put(109, 110, code).Put(111, 116, ocorr).Put(117, 126, seu).Put(127, 134, "00000000").
			Put(147, 152, due).Put(153, 165, valor).Put(166, 168, "000").Put(169, 172, "0000").Put(173, 173, "0").Put(174, 175, "01").
			Put(176, 188, z13).Put(215, 227, z13).Put(228, 240, abat).Put(241, 253, desc).Put(254, 266, pago).Put(267, 279, acresc).
			Put(280, 292, outros).Put(296, 301, cred).Put(302, 305, "0000").Put(325, 354, name).Put(378, 385, motivos))
	}
	want := []cnabtest.Line{
		seq(blank(400).Put(1, 1, "0").Put(2, 2, "2").Put(3, 9, "RETORNO").Put(10, 11, "01").Put(12, 26, "COBRANCA").
			Put(27, 30, "1234").Put(33, 37, "56789").Put(38, 38, "5").Put(47, 76, "ESCOLA MODELO LTDA").Put(77, 79, "341").
			Put(80, 94, "BANCO ITAU SA").Put(95, 100, "130227").Put(101, 105, "01600").Put(109, 113, "00005").Put(114, 119, "000000")),
		det("02", "00000101", "281126", "A1", "100227", "0000000015000", z13, z13, z13, z13, z13, "000000", "MARIA JOSE DA CONCEICAO", ""),
		det("03", "00000000", "281126", "C3", "100227", "0000000005000", z13, z13, z13, z13, z13, "000000", "JOAO", "46"),
		det("14", "00000102", "291126", "D4", "100327", "0000000007000", z13, z13, z13, z13, z13, "000000", "ANA", ""),
		det("06", "00000101", "120227", "A1", "100227", "0000000015000", z13, z13, "0000000015300", "0000000000300", z13, "120227", "MARIA JOSE DA CONCEICAO", ""),
		det("06", "00000103", "010227", "E5", "100227", "0000000010000", "0000000000200", "0000000000500", "0000000009400", z13, "0000000000100", "010227", "PEDRO", ""),
		det("10", "00000104", "050227", "F6", "100227", "0000000008000", z13, z13, "0000000008000", z13, z13, "000000", "LUCIA", ""),
		det("09", "00000105", "200127", "G7", "100227", "0000000006000", z13, z13, z13, z13, z13, "000000", "RUI", ""),
		det("12", "00000000", "150127", "H8", "100227", "0000000015000", "0000000001234", z13, z13, z13, z13, "000000", "BIA", ""),
		det("13", "00000000", "180127", "H8", "100227", "0000000015000", "0000000001234", z13, z13, z13, z13, "000000", "BIA", ""),
		// the refund: Itaú's table has no occurrence for it. Trailer: 9 titles, 660,00 + 2 × 150,00 = 960,00
		seq(blank(400).Put(1, 1, "9").Put(2, 2, "2").Put(3, 4, "01").Put(5, 7, "341").Put(18, 25, "00000009").
			Put(26, 39, "00000000096000").Put(58, 65, "00000000").Put(66, 79, "00000000000000").Put(178, 185, "00000000").
			Put(186, 199, "00000000000000").Put(208, 212, "00005").Put(213, 220, "00000009").Put(221, 234, "00000000096000")),
	}
	compareLines(t, got, want)
	c, err := CheckReader(strings.NewReader(got), Layout400Itau)
	if err != nil || !c.OK || c.Titles != 9 || c.Cents != 96000 {
		t.Errorf("check %+v %v", c, err)
	}
}

// TestCheckCatchesABrokenTrailer: a retorno whose trailer says one title
// more, or a cent more, than its records is caught, at its positions.
func TestCheckCatchesABrokenTrailer(t *testing.T) {
	a := cnabtest.OkTitle("A1", 15000)
	got := writeGolden(t, Layout240, echoOf(t, cnabtest.File240(3, []cnabtest.Title240{a}, "\r\n")), 7)
	lines := strings.Split(got, "\r\n")
	bt := cnabtest.Line(lines[len(lines)-3])
	bt.Put(30, 46, "00000000000096001") // one cent more than 960,00
	lines[len(lines)-3] = string(bt)
	c, err := CheckReader(strings.NewReader(strings.Join(lines, "\r\n")), Layout240)
	if err != nil {
		t.Fatal(err)
	}
	if c.OK || len(c.Problems) != 1 || !strings.Contains(c.Problems[0], "linha 21, posições 30–46") || !strings.Contains(c.Problems[0], "96001") {
		t.Fatalf("a trailer one cent off: %+v", c)
	}
	brad := writeGolden(t, Layout400Brad, nil, 1)
	bl := strings.Split(brad, "\r\n")
	tr := cnabtest.Line(bl[len(bl)-2])
	tr.Put(87, 91, "00003") // three 06, the file has two
	bl[len(bl)-2] = string(tr)
	c, err = CheckReader(strings.NewReader(strings.Join(bl, "\r\n")), Layout400Brad)
	if err != nil || c.OK || !strings.Contains(strings.Join(c.Problems, "\n"), "posições 87–91") {
		t.Fatalf("a Bradesco trailer with one 06 more: %+v %v", c, err)
	}
}

// TestBatches240: a CNAB 240 retorno of 10,001 occurrences of R$ 1,00 is
// two batches (5-digit sequence numbers): 10,000 titles in the first,
// one in the second, each with its own header, trailer and count, and the
// file trailer counts both.
func TestBatches240(t *testing.T) {
	var b bytes.Buffer
	fw := newFileWriter(specs[Layout240], &b, nil, 1, goldenAt, "341")
	if err := fw.header(); err != nil {
		t.Fatal(err)
	}
	for i := 0; i < BatchTitles+1; i++ {
		e := Entry{Event: EventEntrada, Code: "02", SeuNumero: "K", NossoNumero: "1", Due: "2027-02-10", Value: 100, Occurred: "2026-11-28"}
		if err := fw.entry(&e); err != nil {
			t.Fatal(err)
		}
	}
	if err := fw.finish(); err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSuffix(b.String(), "\r\n"), "\r\n")
	if len(lines) != 1+(1+20000+1)+(1+2+1)+1 {
		t.Fatalf("%d lines", len(lines))
	}
	b1t, b2h, b2t, ft := lines[20002], lines[20003], lines[20006], lines[20007]
	for _, c := range []struct{ line, pos, want string }{
		{b1t, "4-7", "0001"}, {b1t, "18-23", "020002"}, {b1t, "24-29", "010000"}, {b1t, "30-46", "00000000001000000"},
		{b2h, "4-7", "0002"}, {b2h, "8-8", "1"}, {lines[20004], "9-13", "00001"}, {lines[20005], "9-13", "00002"},
		{b2t, "4-7", "0002"}, {b2t, "18-23", "000004"}, {b2t, "24-29", "000001"}, {b2t, "30-46", "00000000000000100"},
		{ft, "18-23", "000002"}, {ft, "24-29", "020008"},
	} {
		var a, z int
		fmt.Sscanf(c.pos, "%d-%d", &a, &z)
		if got := c.line[a-1 : z]; got != c.want {
			t.Errorf("positions %s of %q: %q, want %q", c.pos, c.line[:14], got, c.want)
		}
	}
	if c, err := CheckReader(strings.NewReader(b.String()), Layout240); err != nil || !c.OK || c.Titles != 10_001 || c.Cents != 1_000_100 {
		t.Errorf("check %+v %v", c, err)
	}
}
