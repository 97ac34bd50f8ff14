package formats

import (
	"archive/zip"
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/xuri/excelize/v2"
)

// writeZip writes files (name -> content) into a zip at path.
func writeZip(t *testing.T, path string, files map[string]string) {
	t.Helper()
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	zw := zip.NewWriter(f)
	for name, content := range files {
		w, err := zw.Create(name)
		if err != nil {
			t.Fatal(err)
		}
		w.Write([]byte(content))
	}
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	f.Close()
}

const (
	relsXML   = `<?xml version="1.0" encoding="UTF-8"?><Relationships xmlns="http://schemas.openxmlformats.org/package/2006/relationships"><Relationship Id="rId1" Type="http://schemas.openxmlformats.org/officeDocument/2006/relationships/officeDocument" Target="xl/workbook.xml"/></Relationships>`
	wbRelsXML = `<?xml version="1.0" encoding="UTF-8"?><Relationships xmlns="http://schemas.openxmlformats.org/package/2006/relationships">` +
		`<Relationship Id="rId1" Type="http://schemas.openxmlformats.org/officeDocument/2006/relationships/worksheet" Target="worksheets/sheet1.xml"/>` +
		`<Relationship Id="rId2" Type="http://schemas.openxmlformats.org/officeDocument/2006/relationships/sharedStrings" Target="sharedStrings.xml"/>` +
		`<Relationship Id="rId3" Type="http://schemas.openxmlformats.org/officeDocument/2006/relationships/styles" Target="/xl/styles.xml"/></Relationships>`
	stylesXML = `<?xml version="1.0" encoding="UTF-8"?><styleSheet xmlns="http://schemas.openxmlformats.org/spreadsheetml/2006/main">` +
		`<numFmts count="2"><numFmt numFmtId="164" formatCode="dd/mm/yyyy;@"/><numFmt numFmtId="165" formatCode="0.000%"/></numFmts>` +
		`<cellXfs count="5"><xf numFmtId="0"/><xf numFmtId="164" applyNumberFormat="1"/><xf numFmtId="165"/><xf numFmtId="14"/><xf numFmtId="49"/></cellXfs></styleSheet>`
	sstXML = `<?xml version="1.0" encoding="UTF-8"?><sst xmlns="http://schemas.openxmlformats.org/spreadsheetml/2006/main" count="7" uniqueCount="7">` +
		`<si><t>Nome</t></si><si><t>Total</t></si><si><t>Ativo</t></si><si><t>Juros</t></si><si><t>Erro</t></si>` +
		`<si><t xml:space="preserve">  Ana &amp; Cia  </t></si>` +
		`<si><r><rPr><b/></rPr><t>Ca</t></r><r><t>rla</t></r><rPh sb="0" eb="1"><t>カ</t></rPh></si></sst>`
)

func workbookXML(date1904 bool, sheets ...string) string {
	pr := ""
	if date1904 {
		pr = `<workbookPr date1904="1"/>`
	}
	s := `<?xml version="1.0" encoding="UTF-8"?><workbook xmlns="http://schemas.openxmlformats.org/spreadsheetml/2006/main" xmlns:r="http://schemas.openxmlformats.org/officeDocument/2006/relationships">` + pr + `<sheets>`
	for i, name := range sheets {
		s += `<sheet name="` + name + `" sheetId="` + string(rune('1'+i)) + `" r:id="rId` + string(rune('1'+i)) + `"/>`
	}
	return s + `</sheets></workbook>`
}

func craftedSheet(rows string) string {
	return `<?xml version="1.0" encoding="UTF-8"?><worksheet xmlns="http://schemas.openxmlformats.org/spreadsheetml/2006/main"><sheetData>` + rows + `</sheetData></worksheet>`
}

// A hand-written workbook exercising what spreadsheet programs produce: the
// 1904 date system, shared and inline strings, rich text with phonetic runs,
// a formula with its cached value and one without, booleans, error values,
// a custom percent format, rows and cells without r attributes, a header
// below empty rows, data beyond the header and an ISO date cell.
func TestXLSXCrafted1904(t *testing.T) {
	p := filepath.Join(t.TempDir(), "crafted.xlsx")
	rows := `<row r="3"><c r="A3" t="s"><v>0</v></c><c r="B3" t="inlineStr"><is><t>Vencimento</t></is></c><c r="C3" t="s"><v>1</v></c><c r="D3" t="s"><v>2</v></c><c r="E3" t="s"><v>3</v></c><c r="F3" t="s"><v>4</v></c></row>` +
		`<row r="5"><c r="A5" t="s"><v>5</v></c><c r="B5" s="1"><v>44561</v></c><c r="C5"><f>SUM(1,2)</f><v>3</v></c><c r="D5" t="b"><v>1</v></c><c r="E5" s="2"><v>3.3E-4</v></c><c r="F5" t="e"><v>#N/A</v></c><c r="H5" t="inlineStr"><is><t>stray</t></is></c></row>` +
		`<row><c t="inlineStr"><is><t>Bia</t></is></c><c s="1"><v>0</v></c><c><f>A1*2</f></c><c t="b"><v>0</v></c></row>` +
		`<row r="7"><c r="A7" s="1"/><c r="B7" s="1"/></row>` +
		`<row r="8"><c r="A8" t="s"><v>6</v></c><c r="B8" t="d"><v>2027-02-10T00:00:00</v></c><c r="C8" s="3"><v>46023</v></c></row>`
	writeZip(t, p, map[string]string{
		"_rels/.rels":                relsXML,
		"xl/workbook.xml":            workbookXML(true, "Dados"),
		"xl/_rels/workbook.xml.rels": wbRelsXML,
		"xl/styles.xml":              stylesXML,
		"xl/sharedStrings.xml":       sstXML,
		"xl/worksheets/sheet1.xml":   craftedSheet(rows),
	})
	r := mustOpen(t, p, Options{})
	src := r.Source()
	if !src.Date1904 || src.Sheet != "Dados" || src.HeaderRow != 3 {
		t.Fatalf("source = %+v", src)
	}
	if got := strings.Join(src.Headers, "|"); got != "Nome|Vencimento|Total|Ativo|Juros|Erro" {
		t.Fatalf("headers = %q", got)
	}
	got, errs := readRows(t, r)
	if len(errs) != 0 || len(got) != 3 {
		t.Fatalf("rows = %+v, errs = %v", got, errs)
	}
	if got[0].Number != 5 || got[1].Number != 6 || got[2].Number != 8 {
		t.Errorf("row numbers %d %d %d, want 5 6 8", got[0].Number, got[1].Number, got[2].Number)
	}
	type want struct {
		value string
		kind  CellKind
	}
	check := func(row Row, i int, w want) {
		t.Helper()
		c := row.Cells[i]
		if c.Value != w.value || c.Kind != w.kind {
			t.Errorf("row %d col %s = %q (%v), want %q (%v)", row.Number, c.Column, c.Value, c.Kind, w.value, w.kind)
		}
	}
	r5 := got[0]
	check(r5, 0, want{"Ana & Cia", KindText})
	if r5.Cells[0].Raw != "  Ana & Cia  " || r5.Cells[0].Column != "A" || r5.Cells[0].Header != "Nome" {
		t.Errorf("A5 = %+v", r5.Cells[0])
	}
	check(r5, 1, want{"2026-01-01", KindDate}) // 44561 in the 1904 system
	if r5.Cells[1].Raw != "44561" {
		t.Errorf("B5 raw = %q", r5.Cells[1].Raw)
	}
	check(r5, 2, want{"3", KindFormula})
	check(r5, 3, want{"true", KindBool})
	check(r5, 4, want{"0.033%", KindPercent})
	check(r5, 5, want{"#N/A", KindError})
	r6 := got[1]
	check(r6, 0, want{"Bia", KindText})
	check(r6, 1, want{"1904-01-01", KindDate})
	check(r6, 2, want{"", KindEmpty})
	check(r6, 3, want{"false", KindBool})
	check(r6, 5, want{"", KindEmpty})
	r8 := got[2]
	check(r8, 0, want{"Carla", KindText})
	check(r8, 1, want{"2027-02-10", KindDate})
	check(r8, 2, want{"2030-01-02", KindDate}) // built-in format 14, 1904 system: 46023 + 1462 days from 1899-12-30
	codes := map[string]string{}
	for _, w := range r.Source().Warnings {
		codes[w.Code] = w.Column
	}
	if codes[WarnDataNoHeader] != "H" || codes[WarnFormulaNoValue] != "C" || codes[WarnCellError] != "F" {
		t.Errorf("warnings = %v", r.Source().Warnings)
	}
}

// An XLSX written by excelize the way Excel does it: shared strings, a cover
// sheet first, CPF and CEP typed as numbers, a date serial with a date
// style, a date typed as text, a percent, a money format and a gap row.
func TestXLSXExcelize(t *testing.T) {
	p := filepath.Join(t.TempDir(), "alunos.xlsx")
	f := excelize.NewFile()
	f.SetSheetName("Sheet1", "Capa")
	f.SetCellStr("Capa", "A1", "Mensalidades 2027")
	f.NewSheet("Alunos")
	dateFmt := "dd/mm/yyyy"
	dateStyle, _ := f.NewStyle(&excelize.Style{CustomNumFmt: &dateFmt})
	pctStyle, _ := f.NewStyle(&excelize.Style{NumFmt: 10})
	moneyStyle, _ := f.NewStyle(&excelize.Style{NumFmt: 4})
	hdr := []string{"Responsável", "CPF", "CEP", "Valor", "Vencimento", "Vencimento (texto)", "Multa"}
	for i, h := range hdr {
		cell, _ := excelize.CoordinatesToCellName(i+1, 1)
		f.SetCellStr("Alunos", cell, h)
	}
	f.SetCellStr("Alunos", "A2", "Conceição Araújo")
	f.SetCellInt("Alunos", "B2", 1234567890) // CPF 012.345.678-90 typed as a number
	f.SetCellInt("Alunos", "C2", 1310100)    // CEP 01310-100 typed as a number
	f.SetCellFloat("Alunos", "D2", 1234.56, -1, 64)
	f.SetCellStyle("Alunos", "D2", "D2", moneyStyle)
	f.SetCellFloat("Alunos", "E2", 46428, -1, 64) // 2027-02-10
	f.SetCellStyle("Alunos", "E2", "E2", dateStyle)
	f.SetCellStr("Alunos", "F2", "10/02/2027")
	f.SetCellFloat("Alunos", "G2", 0.02, -1, 64)
	f.SetCellStyle("Alunos", "G2", "G2", pctStyle)
	f.SetCellStr("Alunos", "A4", "Zé")
	f.SetCellStr("Alunos", "B4", "529.982.247-25")
	f.SetCellFloat("Alunos", "D4", 0.1+0.2, -1, 64) // stored as 0.30000000000000004
	if err := f.SaveAs(p); err != nil {
		t.Fatal(err)
	}
	f.Close()
	zr, err := zip.OpenReader(p)
	if err != nil {
		t.Fatal(err)
	}
	hasSST := false
	for _, zf := range zr.File {
		hasSST = hasSST || zf.Name == "xl/sharedStrings.xml"
	}
	zr.Close()
	if !hasSST {
		t.Fatal("excelize did not write shared strings; the test would not cover them")
	}

	// The first sheet is the cover; choose by name (case-insensitive).
	r := mustOpen(t, p, Options{Sheet: "alunos"})
	if r.Source().Sheet != "Alunos" || len(r.Source().Sheets) != 2 {
		t.Fatalf("source = %+v", r.Source())
	}
	rows, _ := readRows(t, r)
	if len(rows) != 2 || rows[0].Number != 2 || rows[1].Number != 4 {
		t.Fatalf("rows = %+v", rows)
	}
	c := rows[0].Cells
	if c[0].Value != "Conceição Araújo" || c[0].Header != "Responsável" {
		t.Errorf("A2 = %+v", c[0])
	}
	if doc, restored := RestoreDocument(c[1].Value); doc != "01234567890" || !restored || c[1].Kind != KindNumber {
		t.Errorf("CPF %+v restored to %q, %v", c[1], doc, restored)
	}
	if cep, restored := RestoreCEP(c[2].Value); cep != "01310100" || !restored {
		t.Errorf("CEP %q restored to %q", c[2].Value, cep)
	}
	if v, err := ParseMoneyCell(c[3]); err != nil || v != 123456 {
		t.Errorf("valor %+v = %d, %v", c[3], v, err)
	}
	if c[4].Kind != KindDate || c[4].Value != "2027-02-10" || c[4].Raw != "46428" {
		t.Errorf("vencimento = %+v", c[4])
	}
	if d, err := ParseDate(c[5].Value); err != nil || !d.Equal(date(2027, 2, 10)) || c[5].Kind != KindText {
		t.Errorf("vencimento texto = %+v", c[5])
	}
	if v, err := ParsePercent(c[6].Value, 2); err != nil || v != 200 || c[6].Kind != KindPercent {
		t.Errorf("multa %+v = %d, %v", c[6], v, err)
	}
	if got := rows[1].Cells[3]; got.Value != "0.3" {
		t.Errorf("0.1+0.2 shown as %q, want 0.3 (15 significant digits, as Excel shows)", got.Value)
	}

	// No sheet named: the first one, which has a header but no data.
	r = mustOpen(t, p, Options{})
	if r.Source().Sheet != "Capa" {
		t.Errorf("default sheet = %q", r.Source().Sheet)
	}
	if _, err := r.Next(); codeOf(err) != CodeNoData {
		t.Errorf("cover sheet: %v", err)
	}

	_, err = Open(p, Options{Sheet: "Turmas"})
	if codeOf(err) != CodeSheetNotFound || !strings.Contains(err.Error(), `"Capa", "Alunos"`) || !strings.Contains(err.Error(), `aba "Turmas" não existe`) {
		t.Errorf("wrong sheet: %v", err)
	}
	r = mustOpen(t, p, Options{Sheet: "Alunos", MaxRows: 1})
	r.Next()
	if _, err := r.Next(); codeOf(err) != CodeTooManyRows {
		t.Errorf("MaxRows: %v", err)
	}
}

// TestXLSXZipBomb: a sheet that inflates past MaxUnzipBytes is refused;
// within the limit the same sheet reads. 30,000 rows inflate to 1.9 MB,
// almost twice the 1 MB limit tried.
func TestXLSXZipBomb(t *testing.T) {
	p := filepath.Join(t.TempDir(), "bomb.xlsx")
	var b strings.Builder
	b.WriteString(`<row r="1"><c t="inlineStr"><is><t>a</t></is></c></row>`)
	for i := 0; i < 30_000; i++ {
		b.WriteString(`<row><c t="inlineStr"><is><t>aaaaaaaaaaaaaaaaaaaa</t></is></c></row>`)
	}
	writeZip(t, p, map[string]string{
		"_rels/.rels":                relsXML,
		"xl/workbook.xml":            workbookXML(false, "S"),
		"xl/_rels/workbook.xml.rels": wbRelsXML,
		"xl/worksheets/sheet1.xml":   craftedSheet(b.String()),
	})
	st, _ := os.Stat(p)
	if st.Size() > 200_000 {
		t.Fatalf("test file not compressed enough: %d", st.Size())
	}
	_, err := Open(p, Options{MaxUnzipBytes: 1 << 20})
	if codeOf(err) != CodeTooLarge || !strings.Contains(err.Error(), "descompactado grande demais") {
		t.Errorf("zip bomb: %v", err)
	}
	// Within the limit it reads.
	r := mustOpen(t, p, Options{MaxUnzipBytes: 64 << 20})
	rows, _ := readRows(t, r)
	if len(rows) != 30_000 || rows[29_999].Number != 30_001 {
		t.Errorf("read %d rows", len(rows))
	}
}

func TestXLSXBrokenFiles(t *testing.T) {
	_, err := Open("testdata/corrupt.xlsx", Options{})
	if codeOf(err) != CodeCorrupt || !strings.Contains(err.Error(), "não é um XLSX válido") {
		t.Errorf("corrupt: %v", err)
	}
	_, err = Open("testdata/encrypted.xlsx", Options{})
	if codeOf(err) != CodeEncrypted || !strings.Contains(err.Error(), "protegida por senha") {
		t.Errorf("encrypted: %v", err)
	}
	_, err = Open("testdata/old.xls", Options{})
	if codeOf(err) != CodeOldXLS || !strings.Contains(err.Error(), ".xls") {
		t.Errorf("old xls: %v", err)
	}
	var e *Error
	if !errors.As(err, &e) || e.File != "testdata/old.xls" || e.MessageEN == "" {
		t.Errorf("error fields: %#v", err)
	}
	dir := t.TempDir()
	// A zip that is not a workbook.
	p := filepath.Join(dir, "notwb.xlsx")
	writeZip(t, p, map[string]string{"hello.txt": "hi"})
	if _, err := Open(p, Options{}); codeOf(err) != CodeCorrupt {
		t.Errorf("zip without workbook: %v", err)
	}
	// Broken sheet XML.
	p = filepath.Join(dir, "badxml.xlsx")
	writeZip(t, p, map[string]string{
		"xl/workbook.xml":            workbookXML(false, "S"),
		"xl/_rels/workbook.xml.rels": wbRelsXML,
		"xl/worksheets/sheet1.xml":   craftedSheet(`<row r="1"><c t="inlineStr"><is><t>a</t></is></c></row><row r="2"><c><v>1</v></c`),
	})
	r, err := Open(p, Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	if _, err := r.Next(); codeOf(err) != CodeCorrupt {
		t.Errorf("bad xml: %v", err)
	}
	// An empty sheet.
	p = filepath.Join(dir, "empty.xlsx")
	writeZip(t, p, map[string]string{
		"xl/workbook.xml":            workbookXML(false, "S"),
		"xl/_rels/workbook.xml.rels": wbRelsXML,
		"xl/worksheets/sheet1.xml":   craftedSheet(``),
	})
	if _, err := Open(p, Options{}); codeOf(err) != CodeEmpty {
		t.Errorf("empty sheet: %v", err)
	}
}

func TestClassifyFormatCode(t *testing.T) {
	cases := map[string]styleClass{
		"dd/mm/yyyy":                       styleDate,
		"[$-416]d\" de \"mmmm\" de \"yyyy": styleDate,
		"mmm-yy":                           styleDate,
		"0.00%":                            stylePercent,
		"#,##0.00":                         styleNone,
		"\"R$\" #,##0.00":                  styleNone,
		"[Red]#,##0.00;-#,##0.00":          styleNone,
		"General":                          styleNone,
		"@":                                styleNone,
		"h:mm:ss":                          styleNone,
		"\"dia\" 0":                        styleNone,
	}
	for code, want := range cases {
		if got := classifyFormatCode(code); got != want {
			t.Errorf("classifyFormatCode(%q) = %v, want %v", code, got, want)
		}
	}
}

func TestColumnLetter(t *testing.T) {
	for i, want := range map[int]string{0: "A", 25: "Z", 26: "AA", 27: "AB", 701: "ZZ", 702: "AAA", 16383: "XFD"} {
		if got := ColumnLetter(i); got != want {
			t.Errorf("ColumnLetter(%d) = %q, want %q", i, got, want)
		}
		if got := colIndex(want + "12"); got != i {
			t.Errorf("colIndex(%q) = %d, want %d", want+"12", got, i)
		}
	}
}

// The fast scanner and encoding/xml read the same rows from workbooks
// written by excelize (shared strings, styles) and from the crafted one.
func TestXLSXParsersAgree(t *testing.T) {
	dir := t.TempDir()
	tpl := filepath.Join(dir, "t.xlsx")
	if err := WriteTemplate(tpl, "T", templateCols, nil); err != nil {
		t.Fatal(err)
	}
	crafted := filepath.Join(dir, "c.xlsx")
	writeZip(t, crafted, map[string]string{
		"xl/workbook.xml":            workbookXML(true, "S"),
		"xl/_rels/workbook.xml.rels": wbRelsXML,
		"xl/styles.xml":              stylesXML,
		"xl/sharedStrings.xml":       sstXML,
		"xl/worksheets/sheet1.xml": `<?xml version="1.0"?><!-- c --><x:worksheet xmlns:x="http://schemas.openxmlformats.org/spreadsheetml/2006/main"><x:sheetData>` +
			`<x:row r='1'><x:c t='inlineStr'><x:is><x:t>a &amp; &#233;&#xE9; &lt;b&gt;</x:t></x:is></x:c><x:c t="inlineStr"><x:is><x:t><![CDATA[<cd>]]></x:t></x:is></x:c></x:row>` +
			`<x:row r="2" spans="1:2"><x:c r="A2" s="1"><x:v>44561</x:v></x:c><x:c r="B2" t="s"><x:v>6</x:v></x:c></x:row><x:row r="3"/>` +
			`<x:row r="4"><x:c r="B4"><x:f t="shared" si="0"/><x:v>7</x:v></x:c></x:row></x:sheetData></x:worksheet>`,
	})
	for _, p := range []string{tpl, crafted} {
		std, err1 := readXLSXWith(p, true)
		fast, err2 := readXLSXWith(p, false)
		if err1 != nil || err2 != nil {
			t.Fatalf("%s: %v / %v", p, err1, err2)
		}
		if !reflect.DeepEqual(std, fast) {
			t.Errorf("%s: parsers disagree:\nstd  %+v\nfast %+v", p, std, fast)
		}
	}
	fast, _ := readXLSXWith(crafted, false)
	rows := fast.([]any)[1].([]Row)
	src := fast.([]any)[0].(Source)
	if src.Headers[0] != "a & éé <b>" || src.Headers[1] != "<cd>" {
		t.Errorf("headers = %q", src.Headers)
	}
	if len(rows) != 2 || rows[0].Cells[0].Value != "2026-01-01" || rows[0].Cells[1].Value != "Carla" || rows[1].Number != 4 || rows[1].Cells[1].Value != "7" || rows[1].Cells[1].Kind != KindFormula {
		t.Errorf("rows = %+v", rows)
	}
}

// A 1904-system workbook written by excelize (as Excel for Mac used to).
func TestXLSXExcelize1904(t *testing.T) {
	p := filepath.Join(t.TempDir(), "mac.xlsx")
	f := excelize.NewFile()
	yes := true
	if err := f.SetWorkbookProps(&excelize.WorkbookPropsOptions{Date1904: &yes}); err != nil {
		t.Fatal(err)
	}
	dateFmt := "dd/mm/yyyy"
	ds, _ := f.NewStyle(&excelize.Style{CustomNumFmt: &dateFmt})
	f.SetCellStr("Sheet1", "A1", "Vencimento")
	f.SetCellInt("Sheet1", "A2", 44561) // 2026-01-01 in the 1904 system (46023 - 1462)
	f.SetCellStyle("Sheet1", "A2", "A2", ds)
	if err := f.SaveAs(p); err != nil {
		t.Fatal(err)
	}
	f.Close()
	r := mustOpen(t, p, Options{})
	rows, _ := readRows(t, r)
	if !r.Source().Date1904 || len(rows) != 1 || rows[0].Cells[0].Value != "2026-01-01" {
		t.Errorf("date1904=%v rows=%+v", r.Source().Date1904, rows)
	}
}

func TestXLSXFirstVisibleSheet(t *testing.T) {
	p := filepath.Join(t.TempDir(), "h.xlsx")
	f := excelize.NewFile()
	f.SetSheetName("Sheet1", "Listas")
	f.SetCellStr("Listas", "A1", "UF")
	f.NewSheet("Pagadores")
	f.SetCellStr("Pagadores", "A1", "Nome")
	f.SetCellStr("Pagadores", "A2", "Ana")
	f.SetActiveSheet(1)
	if err := f.SetSheetVisible("Listas", false); err != nil {
		t.Fatal(err)
	}
	if err := f.SaveAs(p); err != nil {
		t.Fatal(err)
	}
	f.Close()
	r := mustOpen(t, p, Options{})
	if r.Source().Sheet != "Pagadores" {
		t.Errorf("default sheet = %q, want the first visible one", r.Source().Sheet)
	}
}

func TestXLSXWarningsBounded(t *testing.T) {
	p := filepath.Join(t.TempDir(), "errs.xlsx")
	var b strings.Builder
	b.WriteString(`<row r="1"><c t="inlineStr"><is><t>A</t></is></c></row>`)
	for i := 0; i < 500; i++ {
		b.WriteString(`<row><c t="e"><v>#N/A</v></c></row>`)
	}
	writeZip(t, p, map[string]string{
		"xl/workbook.xml":            workbookXML(false, "S"),
		"xl/_rels/workbook.xml.rels": wbRelsXML,
		"xl/worksheets/sheet1.xml":   craftedSheet(b.String()),
	})
	r := mustOpen(t, p, Options{})
	rows, _ := readRows(t, r)
	if len(rows) != 500 {
		t.Fatalf("rows = %d", len(rows))
	}
	if n := len(r.Source().Warnings); n != maxWarningsPerCode+1 {
		t.Errorf("%d warnings, want %d", n, maxWarningsPerCode+1)
	}
}
