// Package cnabtest builds CNAB remessa files for tests, from the manuals'
// field tables by hand: every position is written as the manual prints it,
// not read from the layout tables the code under test uses.
package cnabtest

import (
	"bufio"
	"fmt"
	"io"
	"strings"
)

// Line is a fixed-width record being filled.
type Line []byte

// Blank is a record of n blanks.
func Blank(n int) Line { return Line(strings.Repeat(" ", n)) }

// Put writes v at positions start..end (1-based, inclusive); numbers are
// right-aligned with zeros, text left-aligned with blanks, as the manuals say.
func (l Line) Put(start, end int, v any) Line {
	w := end - start + 1
	var s string
	switch x := v.(type) {
	case int:
		s = fmt.Sprintf("%0*d", w, x)
	case int64:
		s = fmt.Sprintf("%0*d", w, x)
	case string:
		s = x
		if len(s) < w {
			s += strings.Repeat(" ", w-len(s))
		}
	}
	if len(s) != w {
		panic(fmt.Sprintf("put %d-%d: %q is %d wide", start, end, s, len(s)))
	}
	copy(l[start-1:end], s)
	return l
}

// Title240 is one title of a CNAB 240 remessa, in the test's own terms.
type Title240 struct {
	Mov       int
	Nosso     string
	Seu       string
	Due       string // DDMMAAAA
	Cents     int64
	JurosCod  int
	JurosVal  int64
	Desc1     int64
	Desc1Cod  int
	Desc1Date string // DDMMAAAA
	Desc2Cod  int    // R 18; with Desc2Date (R 19–26) and Desc2 (R 27–41)
	Desc2Date string
	Desc2     int64
	Desc3Cod  int // R 42, 43–50, 51–65
	Desc3Date string
	Desc3     int64
	Abat      int64
	DocType   int
	Doc       string
	Name      string
	Street    string
	Hood      string
	CEP       string
	City      string
	UF        string
	MultaCod  string
	MultaVal  int64
	Msg3      string
	WithR     bool
	WithS     bool
	WithoutQ  bool
	SegOver   string // replaces the P segment letter
	RawDueFix string // raw text for positions 78-85 (hostile)
}

// File240 builds a remessa of bank 341 (any FEBRABAN bank), company
// 12.345.678/0001-95, NSA nsa, one batch of ts, with its trailers.
func File240(nsa int, ts []Title240, eol string) string {
	var b strings.Builder
	Write240(&b, nsa, len(ts), func(i int) Title240 { return ts[i] }, eol)
	return b.String()
}

// BatchTitles is the most titles Write240 puts in one batch.
const BatchTitles = 10_000

// Write240 writes File240's file of n titles, title(i) each, as it goes
// (for files too big to hold).
func Write240(w io.Writer, nsa, n int, title func(i int) Title240, eol string) error {
	bw := bufio.NewWriterSize(w, 1<<16)
	lines := 0
	emit := func(l Line) {
		bw.Write(l)
		bw.WriteString(eol)
		lines++
	}
	h := Blank(240).Put(1, 3, 341).Put(4, 7, 0).Put(8, 8, 0).Put(18, 18, 2).Put(19, 32, "12345678000195").
		Put(33, 52, "CONVENIO123").Put(53, 57, 1234).Put(59, 70, 56789).Put(73, 102, "ESCOLA MODELO LTDA").
		Put(103, 132, "BANCO ITAU SA").Put(143, 143, 1).Put(144, 151, "28112026").Put(152, 157, "101500").
		Put(158, 163, nsa).Put(164, 166, 84).Put(167, 171, 0)
	emit(h)
	// BatchTitles titles a batch at most: its sequence numbers have 5 digits
	batch, seq, batchTitles := 0, 0, 0
	var sum int64
	closeBatch := func() {
		lt := Blank(240).Put(1, 3, 341).Put(4, 7, batch).Put(8, 8, 5).Put(18, 23, seq+2).Put(24, 29, batchTitles).Put(30, 46, sum)
		emit(lt)
	}
	openBatch := func() {
		batch++
		seq, batchTitles, sum = 0, 0, 0
		lh := Blank(240).Put(1, 3, 341).Put(4, 7, batch).Put(8, 8, 1).Put(9, 9, "R").Put(10, 11, 1).Put(14, 16, 42).
			Put(18, 18, 2).Put(19, 33, "012345678000195").Put(34, 53, "CONVENIO123").Put(74, 103, "ESCOLA MODELO LTDA").
			Put(104, 143, "NAO RECEBER APOS 30 DIAS").Put(184, 191, nsa).Put(192, 199, "28112026")
		emit(lh)
	}
	openBatch()
	for i := 0; i < n; i++ {
		if batchTitles == BatchTitles {
			closeBatch()
			openBatch()
		}
		batchTitles++
		t := title(i)
		seq++
		seg := "P"
		if t.SegOver != "" {
			seg = t.SegOver
		}
		p := Blank(240).Put(1, 3, 341).Put(4, 7, batch).Put(8, 8, 3).Put(9, 13, seq).Put(14, 14, seg).Put(16, 17, t.Mov).
			Put(18, 22, 1234).Put(24, 35, 56789).Put(38, 57, t.Nosso).Put(58, 58, 1).Put(63, 77, t.Seu).
			Put(78, 85, t.Due).Put(86, 100, t.Cents).Put(107, 108, 4).Put(109, 109, "N").Put(110, 117, "28112026").
			Put(118, 118, t.JurosCod).Put(127, 141, t.JurosVal).Put(151, 165, t.Desc1).Put(181, 195, t.Abat).
			Put(196, 220, "ERP-"+t.Seu).Put(228, 229, 9)
		if t.Desc1Cod != 0 {
			p.Put(142, 142, t.Desc1Cod).Put(143, 150, t.Desc1Date)
		}
		if t.RawDueFix != "" {
			p.Put(78, 85, t.RawDueFix)
		}
		emit(p)
		sum += t.Cents
		if !t.WithoutQ {
			seq++
			q := Blank(240).Put(1, 3, 341).Put(4, 7, batch).Put(8, 8, 3).Put(9, 13, seq).Put(14, 14, "Q").Put(16, 17, t.Mov).
				Put(18, 18, t.DocType).Put(19, 33, fmt.Sprintf("%015s", t.Doc)).Put(34, 73, t.Name).Put(74, 113, t.Street).
				Put(114, 128, t.Hood).Put(129, 133, t.CEP[:5]).Put(134, 136, t.CEP[5:]).Put(137, 151, t.City).Put(152, 153, t.UF)
			emit(q)
		}
		if t.WithR {
			seq++
			r := Blank(240).Put(1, 3, 341).Put(4, 7, batch).Put(8, 8, 3).Put(9, 13, seq).Put(14, 14, "R").Put(16, 17, t.Mov).
				Put(66, 66, t.MultaCod).Put(67, 74, 0).Put(75, 89, t.MultaVal).Put(100, 139, t.Msg3)
			if t.Desc2Cod != 0 {
				r.Put(18, 18, t.Desc2Cod).Put(19, 26, t.Desc2Date).Put(27, 41, t.Desc2)
			}
			if t.Desc3Cod != 0 {
				r.Put(42, 42, t.Desc3Cod).Put(43, 50, t.Desc3Date).Put(51, 65, t.Desc3)
			}
			emit(r)
		}
		if t.WithS {
			seq++
			s := Blank(240).Put(1, 3, 341).Put(4, 7, batch).Put(8, 8, 3).Put(9, 13, seq).Put(14, 14, "S").Put(16, 17, t.Mov).
				Put(18, 18, 3).Put(19, 58, "MENSAGEM DE IMPRESSAO")
			emit(s)
		}
	}
	closeBatch()
	ft := Blank(240).Put(1, 3, 341).Put(4, 7, 9999).Put(8, 8, 9).Put(18, 23, batch).Put(24, 29, lines+1)
	emit(ft)
	return bw.Flush()
}

// OkTitle is a clean title for key k.
func OkTitle(k string, cents int64) Title240 {
	return Title240{Mov: 1, Nosso: "000" + k, Seu: k, Due: "10022027", Cents: cents, DocType: 1, Doc: "52998224725",
		Name: "MARIA JOSE DA CONCEICAO", Street: "RUA DAS FLORES, 123 AP 12", Hood: "CENTRO", CEP: "01310100",
		City: "SAO PAULO", UF: "SP"}
}

// Title400 is one title of a CNAB 400 remessa, in the test's own terms.
type Title400 struct {
	Mov        int
	Nosso      int64
	Seu        string
	Due        string // DDMMAA
	Cents      int64
	JurosDia   int64 // cents a day
	DocType    int
	Doc        string
	Name       string
	Street     string // Bradesco: the whole address line
	Hood       string
	CEP        string
	City       string
	UF         string
	MultaPct   int64  // hundredths of a percent (Bradesco 66-70; Itaú record 2 code 2)
	Msg        string // Bradesco record 2, message 1
	RawDueFix  string
	BadSeqNext bool // the next record's sequence number is off by one
}

// File400 builds a CNAB 400 remessa of bank "237" (Bradesco) or "341"
// (Itaú), NSA nsa (Bradesco only), from the banks' manuals.
func File400(bank string, nsa int, ts []Title400, eol string) string {
	var lines []Line
	seq := func() int { return len(lines) + 1 }
	h := Blank(400).Put(1, 1, 0).Put(2, 2, 1).Put(3, 9, "REMESSA").Put(10, 11, 1).Put(12, 26, "COBRANCA")
	if bank == "237" {
		h.Put(27, 46, 4455667).Put(47, 76, "ESCOLA MODELO LTDA").Put(77, 79, 237).Put(80, 94, "BRADESCO").
			Put(95, 100, "281126").Put(109, 110, "MX").Put(111, 117, nsa)
	} else {
		h.Put(27, 30, 1234).Put(31, 32, 0).Put(33, 37, 56789).Put(38, 38, 5).Put(47, 76, "ESCOLA MODELO LTDA").
			Put(77, 79, 341).Put(80, 94, "BANCO ITAU SA").Put(95, 100, "281126")
	}
	h.Put(395, 400, seq())
	lines = append(lines, h)
	for _, t := range ts {
		d := Blank(400).Put(1, 1, 1).Put(109, 110, t.Mov).Put(111, 120, t.Seu).Put(121, 126, t.Due).Put(127, 139, t.Cents).
			Put(151, 156, "281126").Put(161, 173, t.JurosDia).Put(174, 179, 0).Put(180, 192, 0).Put(193, 205, 0).Put(206, 218, 0).
			Put(219, 220, t.DocType).Put(221, 234, fmt.Sprintf("%014s", t.Doc))
		if bank == "237" {
			d.Put(2, 20, strings.Repeat("0", 19)).Put(21, 37, "00090123400567890").Put(38, 62, "ERP-"+t.Seu).Put(63, 65, 0)
			if t.MultaPct > 0 {
				d.Put(66, 66, 2).Put(67, 70, t.MultaPct)
			} else {
				d.Put(66, 70, 0)
			}
			d.Put(71, 81, t.Nosso).Put(82, 82, "P").Put(83, 92, 0).Put(93, 93, 2).Put(94, 94, "N").Put(140, 147, 0).
				Put(148, 149, 1).Put(150, 150, "N").Put(157, 160, 0).Put(235, 274, t.Name).Put(275, 314, t.Street).
				Put(327, 331, t.CEP[:5]).Put(332, 334, t.CEP[5:])
		} else {
			d.Put(2, 3, 2).Put(4, 17, "12345678000195").Put(18, 21, 1234).Put(22, 23, 0).Put(24, 28, 56789).Put(29, 29, 5).
				Put(34, 37, 0).Put(38, 62, "ERP-"+t.Seu).Put(63, 70, t.Nosso).Put(71, 83, 0).Put(84, 86, 109).Put(108, 108, "I").
				Put(140, 142, 341).Put(143, 147, 0).Put(148, 149, "01").Put(150, 150, "N").Put(235, 264, t.Name).
				Put(275, 314, t.Street).Put(315, 326, t.Hood).Put(327, 334, t.CEP).Put(335, 349, t.City).Put(350, 351, t.UF).
				Put(386, 391, 0).Put(392, 393, 0)
		}
		if t.RawDueFix != "" {
			d.Put(121, 126, t.RawDueFix)
		}
		d.Put(395, 400, seq())
		lines = append(lines, d)
		if bank == "237" && t.Msg != "" {
			r := Blank(400).Put(1, 1, 2).Put(2, 81, t.Msg).Put(322, 327, 0).Put(328, 340, 0).Put(341, 346, 0).Put(347, 359, 0).
				Put(367, 369, 9).Put(370, 374, 1234).Put(375, 381, 56789).Put(382, 382, "0").Put(383, 393, t.Nosso).Put(394, 394, "P").
				Put(395, 400, seq())
			lines = append(lines, r)
		}
		if bank == "341" && t.MultaPct > 0 {
			r := Blank(400).Put(1, 1, 2).Put(2, 2, "2").Put(3, 10, "11022027").Put(11, 23, t.MultaPct).Put(395, 400, seq())
			lines = append(lines, r)
		}
		if t.BadSeqNext {
			lines[len(lines)-1].Put(395, 400, seq()+1)
		}
	}
	lines = append(lines, Blank(400).Put(1, 1, 9).Put(395, 400, seq()))
	var b strings.Builder
	for _, l := range lines {
		b.Write(l)
		b.WriteString(eol)
	}
	return b.String()
}
