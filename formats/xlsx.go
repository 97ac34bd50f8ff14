package formats

import (
	"archive/zip"
	"bufio"
	"bytes"
	"encoding/xml"
	"errors"
	"fmt"
	"io"
	"os"
	"path"
	"strconv"
	"strings"
)

// The XLSX reader streams the worksheet XML straight from the zip with
// encoding/xml (RawToken), so it sees each cell's style index (needed to tell
// a date serial from a number) and never unzips a sheet to memory or disk.
// Shared strings are loaded once (they are needed for random access).

// testSheetRows, set only by tests, replaces the sheet scanner with
// another parser of the worksheet part (the differential tests use
// encoding/xml as the reference); it returns the function that reads the
// next row into x.sc, as nextRow does.
var testSheetRows func(x *xlsxReader, r io.Reader) func() (num int, ok bool, err error)

type styleClass uint8

const (
	styleNone styleClass = iota
	styleDate
	stylePercent
)

type xlsxReader struct {
	zr        *zip.ReadCloser
	sheetRC   io.ReadCloser
	scan      *sheetScanner
	testRows  func() (num int, ok bool, err error) // see testSheetRows
	src       Source
	opt       Options
	sst       []string
	styles    []styleClass
	letters   []string
	ncols     int
	rows      int
	budget    *budget
	limit     int64
	done      bool
	cells     []Cell
	extraCol  map[int]bool
	warnCount map[string]int
	lastRow   int
	sc        []scell // scratch for one row
}

type scell struct {
	col     int
	t       string
	s       int
	v       string
	formula bool
	inline  string
	hasV    bool
}

// budget counts uncompressed bytes read from the zip (zip-bomb guard: entry
// headers can lie about sizes).
type budget struct {
	left int64
	hit  bool
}

type budgetReader struct {
	r io.Reader
	b *budget
}

var errBudget = errors.New("unzip limit exceeded")

func (br *budgetReader) Read(p []byte) (int, error) {
	if br.b.left <= 0 {
		br.b.hit = true
		return 0, errBudget
	}
	if int64(len(p)) > br.b.left {
		p = p[:br.b.left]
	}
	n, err := br.r.Read(p)
	br.b.left -= int64(n)
	return n, err
}

func openXLSX(file string, size int64, opt Options) (Reader, error) {
	if max := opt.maxBytes(DefaultMaxBytes); max > 0 && size > max {
		return nil, tooLarge(file, size, max)
	}
	zr, err := zip.OpenReader(file)
	if err != nil {
		head, _ := readHead(file, sniffHead)
		if bytes.HasPrefix(head, oleMagic) {
			return nil, oleError(file)
		}
		if pt, en := foreignContent(head); pt != "" && !bytes.HasPrefix(head, zipMagic) {
			return nil, notASpreadsheet(file, pt, en)
		}
		return nil, &Error{File: file, Code: CodeCorrupt, Err: err,
			Message:   "o arquivo não é um XLSX válido (zip corrompido, incompleto ou de outro formato); abra no Excel e salve de novo como .xlsx",
			MessageEN: "not a valid XLSX file (corrupt, truncated or another format); open it in Excel and save it again as .xlsx"}
	}
	limit := opt.MaxUnzipBytes
	if limit == 0 {
		limit = DefaultMaxUnzipBytes
	}
	if limit < 0 {
		limit = 1<<63 - 1
	}
	x := &xlsxReader{zr: zr, opt: opt, budget: &budget{left: limit}, limit: limit, extraCol: map[int]bool{}}
	x.src = Source{File: file, Format: "xlsx", Encoding: "utf-8"}
	if err := x.init(); err != nil {
		zr.Close()
		if x.sheetRC != nil {
			x.sheetRC.Close()
		}
		return nil, err
	}
	return x, nil
}

func readHead(file string, n int) ([]byte, error) {
	f, err := os.Open(file)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	b := make([]byte, n)
	k, _ := io.ReadFull(f, b)
	return b[:k], nil
}

func (x *xlsxReader) corrupt(what string, err error) *Error {
	return &Error{File: x.src.File, Sheet: x.src.Sheet, Code: CodeCorrupt, Err: err,
		Message:   "XLSX corrompido: " + what,
		MessageEN: "corrupt XLSX: " + what}
}

func (x *xlsxReader) bombErr() *Error {
	return &Error{File: x.src.File, Sheet: x.src.Sheet, Code: CodeTooLarge,
		Message:   fmt.Sprintf("conteúdo descompactado grande demais (limite %d bytes); possível arquivo malicioso (zip bomb) ou planilha enorme", x.limit),
		MessageEN: "uncompressed content too large; possibly a malicious file or a huge sheet"}
}

func (x *xlsxReader) entry(name string) *zip.File {
	for _, f := range x.zr.File {
		if f.Name == name || strings.EqualFold(f.Name, name) {
			return f
		}
	}
	return nil
}

func (x *xlsxReader) openEntry(f *zip.File) (io.ReadCloser, io.Reader, error) {
	if int64(f.UncompressedSize64) > x.budget.left || f.UncompressedSize64 > 1<<62 {
		x.budget.hit = true
		return nil, nil, x.bombErr()
	}
	rc, err := f.Open()
	if err != nil {
		return nil, nil, x.corrupt(f.Name+": "+err.Error(), err)
	}
	return rc, &budgetReader{r: rc, b: x.budget}, nil
}

// decodeSmall unmarshals a small part (workbook, rels, styles).
func (x *xlsxReader) decodeSmall(name string, v any) (bool, error) {
	f := x.entry(name)
	if f == nil {
		return false, nil
	}
	rc, r, err := x.openEntry(f)
	if err != nil {
		return true, err
	}
	defer rc.Close()
	if err := xml.NewDecoder(r).Decode(v); err != nil {
		if x.budget.hit {
			return true, x.bombErr()
		}
		return true, x.corrupt(name+": "+err.Error(), err)
	}
	return true, nil
}

type xRels struct {
	Rels []struct {
		ID     string `xml:"Id,attr"`
		Type   string `xml:"Type,attr"`
		Target string `xml:"Target,attr"`
	} `xml:"Relationship"`
}

type xWorkbook struct {
	Pr struct {
		Date1904 string `xml:"date1904,attr"`
	} `xml:"workbookPr"`
	Sheets []struct {
		Name  string     `xml:"name,attr"`
		Attrs []xml.Attr `xml:",any,attr"`
	} `xml:"sheets>sheet"`
}

type xStyles struct {
	NumFmts []struct {
		ID   int    `xml:"numFmtId,attr"`
		Code string `xml:"formatCode,attr"`
	} `xml:"numFmts>numFmt"`
	Xfs []struct {
		NumFmtID int `xml:"numFmtId,attr"`
	} `xml:"cellXfs>xf"`
}

func resolveTarget(base, target string) string {
	if strings.HasPrefix(target, "/") {
		return strings.TrimPrefix(target, "/")
	}
	return path.Clean(path.Join(path.Dir(base), target))
}

func (x *xlsxReader) init() error {
	// Find the workbook part.
	wbPath := "xl/workbook.xml"
	var root xRels
	if ok, err := x.decodeSmall("_rels/.rels", &root); err != nil {
		return err
	} else if ok {
		for _, r := range root.Rels {
			if strings.HasSuffix(r.Type, "/officeDocument") {
				wbPath = resolveTarget("", r.Target)
			}
		}
	}
	var wb xWorkbook
	if ok, err := x.decodeSmall(wbPath, &wb); err != nil {
		return err
	} else if !ok {
		return x.notWorkbook(wbPath)
	}
	x.src.Date1904 = wb.Pr.Date1904 == "1" || strings.EqualFold(wb.Pr.Date1904, "true")
	var rels xRels
	relsPath := path.Join(path.Dir(wbPath), "_rels", path.Base(wbPath)+".rels")
	if _, err := x.decodeSmall(relsPath, &rels); err != nil {
		return err
	}
	targets := map[string]string{}
	var sstPath, stylesPath string
	for _, r := range rels.Rels {
		targets[r.ID] = resolveTarget(wbPath, r.Target)
		switch {
		case strings.HasSuffix(r.Type, "/sharedStrings"):
			sstPath = resolveTarget(wbPath, r.Target)
		case strings.HasSuffix(r.Type, "/styles"):
			stylesPath = resolveTarget(wbPath, r.Target)
		}
	}
	if sstPath == "" {
		sstPath = path.Join(path.Dir(wbPath), "sharedStrings.xml")
	}
	if stylesPath == "" {
		stylesPath = path.Join(path.Dir(wbPath), "styles.xml")
	}
	if len(wb.Sheets) == 0 {
		return x.corrupt("a pasta de trabalho não tem abas", nil)
	}
	sheetPath := ""
	for _, s := range wb.Sheets {
		x.src.Sheets = append(x.src.Sheets, s.Name)
	}
	pick := -1
	if x.opt.Sheet == "" {
		// The first visible sheet (a hidden first sheet is usually a list of
		// choices or a lookup table).
		pick = 0
		for i, s := range wb.Sheets {
			hidden := false
			for _, a := range s.Attrs {
				if a.Name.Local == "state" && (a.Value == "hidden" || a.Value == "veryHidden") {
					hidden = true
				}
			}
			if !hidden {
				pick = i
				break
			}
		}
	} else {
		for i, s := range wb.Sheets {
			if s.Name == x.opt.Sheet {
				pick = i
				break
			}
		}
		if pick < 0 {
			for i, s := range wb.Sheets {
				if NormalizeHeader(s.Name) == NormalizeHeader(x.opt.Sheet) {
					pick = i
					break
				}
			}
		}
		if pick < 0 {
			list := strings.Join(quoteAll(x.src.Sheets), ", ")
			return &Error{File: x.src.File, Code: CodeSheetNotFound, Value: x.opt.Sheet,
				Message:   fmt.Sprintf("aba %q não existe; abas da planilha: %s", x.opt.Sheet, list),
				MessageEN: fmt.Sprintf("sheet %q does not exist; sheets in the workbook: %s", x.opt.Sheet, list)}
		}
	}
	s := wb.Sheets[pick]
	x.src.Sheet = s.Name
	for _, a := range s.Attrs {
		if a.Name.Local == "id" && a.Name.Space != "" {
			sheetPath = targets[a.Value]
		}
	}
	if sheetPath == "" || x.entry(sheetPath) == nil {
		return x.corrupt(fmt.Sprintf("a aba %q não tem conteúdo", s.Name), nil)
	}
	if err := x.loadStyles(stylesPath); err != nil {
		return err
	}
	if err := x.loadSST(sstPath); err != nil {
		return err
	}
	rc, r, err := x.openEntry(x.entry(sheetPath))
	if err != nil {
		return err
	}
	x.sheetRC = rc
	if testSheetRows != nil {
		x.testRows = testSheetRows(x, bufio.NewReaderSize(r, 1<<16))
	} else {
		x.scan = &sheetScanner{r: bufio.NewReaderSize(r, 1<<16), max: x.opt.maxLine()}
	}
	return x.readHeader()
}

// notWorkbook explains a zip without a workbook part: an OpenDocument
// spreadsheet (.ods), a Word or PowerPoint file, or some other archive
// (Code stays CodeCorrupt, as before the message said what it is).
func (x *xlsxReader) notWorkbook(wbPath string) *Error {
	what, whatEN := "", ""
	switch {
	case x.entry("word/document.xml") != nil:
		what, whatEN = "um documento do Word", "a Word document"
	case x.entry("ppt/presentation.xml") != nil:
		what, whatEN = "uma apresentação do PowerPoint", "a PowerPoint presentation"
	case x.entry("content.xml") != nil && x.entry("mimetype") != nil:
		what, whatEN = "uma planilha ou documento OpenDocument (LibreOffice, .ods/.odt)", "an OpenDocument file (LibreOffice, .ods/.odt)"
	}
	if what != "" {
		return &Error{File: x.src.File, Code: CodeCorrupt,
			Message:   "o arquivo não é uma planilha do Excel: é " + what + "; abra a planilha e salve como .xlsx ou CSV UTF-8",
			MessageEN: "the file is not an Excel workbook: it is " + whatEN + "; open the sheet and save it as .xlsx or CSV UTF-8"}
	}
	var names []string
	for _, f := range x.zr.File {
		names = append(names, f.Name)
	}
	list, listEN := QuoteHeaders(names)
	return &Error{File: x.src.File, Code: CodeCorrupt,
		Message:   "o arquivo é um zip que não é uma planilha do Excel (falta " + wbPath + "; contém: " + list + "); salve a planilha como .xlsx",
		MessageEN: "the file is a zip that is not an Excel workbook (" + wbPath + " is missing; it holds: " + listEN + "); save the sheet as .xlsx"}
}

func quoteAll(ss []string) []string {
	out := make([]string, len(ss))
	for i, s := range ss {
		out[i] = strconv.Quote(s)
	}
	return out
}

func (x *xlsxReader) loadStyles(name string) error {
	var st xStyles
	if _, err := x.decodeSmall(name, &st); err != nil {
		return err
	}
	custom := map[int]string{}
	for _, nf := range st.NumFmts {
		custom[nf.ID] = nf.Code
	}
	x.styles = make([]styleClass, len(st.Xfs))
	for i, xf := range st.Xfs {
		x.styles[i] = classifyNumFmt(xf.NumFmtID, custom)
	}
	return nil
}

// classifyNumFmt says whether a number format shows a date or a percentage.
func classifyNumFmt(id int, custom map[int]string) styleClass {
	if code, ok := custom[id]; ok {
		return classifyFormatCode(code)
	}
	switch {
	case id >= 14 && id <= 17, id == 22, id >= 27 && id <= 36, id >= 50 && id <= 58:
		return styleDate
	case id == 9 || id == 10:
		return stylePercent
	}
	return styleNone
}

func classifyFormatCode(code string) styleClass {
	// First section only; drop quoted text, escapes and [brackets].
	var b strings.Builder
	inQ, inB := false, false
	for i := 0; i < len(code); i++ {
		c := code[i]
		switch {
		case inQ:
			inQ = c != '"'
		case inB:
			inB = c != ']'
		case c == '"':
			inQ = true
		case c == '[':
			inB = true
		case c == '\\' || c == '_' || c == '*':
			i++
		case c == ';':
			i = len(code)
		default:
			b.WriteByte(c)
		}
	}
	s := strings.ToLower(b.String())
	if s == "general" || s == "@" {
		return styleNone
	}
	if strings.ContainsAny(s, "dy") || (strings.Contains(s, "m") && !strings.ContainsAny(s, "hs0#")) {
		return styleDate
	}
	if strings.Contains(s, "%") {
		return stylePercent
	}
	return styleNone
}

func (x *xlsxReader) loadSST(name string) error {
	f := x.entry(name)
	if f == nil {
		return nil
	}
	rc, r, err := x.openEntry(f)
	if err != nil {
		return err
	}
	defer rc.Close()
	run := &runCapReader{r: r, max: x.opt.maxLine()}
	dec := xml.NewDecoder(bufio.NewReaderSize(run, 1<<16))
	maxCell := x.opt.maxCell()
	tooLong := func() *Error {
		lim := sizeText(maxCell)
		return &Error{File: x.src.File, Code: CodeTooLarge,
			Message:   fmt.Sprintf("a planilha tem um texto com mais de %s (o %dº dos textos compartilhados); o limite por célula é %s (o Excel guarda até 32.767 caracteres por célula)", lim, len(x.sst)+1, lim),
			MessageEN: fmt.Sprintf("the workbook holds a text longer than %s (shared string %d); the limit per cell is %s (Excel keeps up to 32,767 characters a cell)", lim, len(x.sst)+1, lim)}
	}
	var cur []byte
	inSI, inT, inPh := false, false, 0
	for {
		tok, err := dec.RawToken()
		if err == io.EOF {
			return nil
		}
		if err != nil {
			if x.budget.hit {
				return x.bombErr()
			}
			if run.hit {
				if maxCell == 0 {
					maxCell = run.max
				}
				return tooLong()
			}
			return x.corrupt("sharedStrings: "+err.Error(), err)
		}
		switch t := tok.(type) {
		case xml.StartElement:
			switch t.Name.Local {
			case "si":
				inSI, cur = true, cur[:0]
			case "t":
				inT = true
			case "rPh":
				inPh++
			}
		case xml.EndElement:
			switch t.Name.Local {
			case "si":
				inSI = false
				x.sst = append(x.sst, unescapeXString(string(cur)))
			case "t":
				inT = false
			case "rPh":
				inPh--
			}
		case xml.CharData:
			if inSI && inT && inPh == 0 {
				cur = append(cur, t...)
				if maxCell > 0 && len(cur) > maxCell {
					return tooLong()
				}
			}
		}
	}
}
