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
	"unicode/utf16"
	"unicode/utf8"
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

// colIndex converts the letters of a cell reference ("C12") to a 0-based
// column index, or -1.
func colIndex(ref string) int {
	n := 0
	i := 0
	for ; i < len(ref); i++ {
		c := ref[i]
		if c >= 'a' && c <= 'z' {
			c -= 'a' - 'A'
		}
		if c < 'A' || c > 'Z' {
			break
		}
		n = n*26 + int(c-'A'+1)
		if n > 16384 {
			return -1
		}
	}
	if i == 0 {
		return -1
	}
	return n - 1
}

// nextRow reads the next <row> of sheetData into x.sc; ok false at the end.
func (x *xlsxReader) nextRow() (num int, ok bool, err error) {
	if x.testRows != nil {
		return x.testRows()
	}
	return x.fastNextRow()
}

func (x *xlsxReader) xmlErr(err error) error {
	if x.budget.hit {
		return x.bombErr()
	}
	if errors.Is(err, errTokenTooLong) {
		lim := sizeText(x.opt.maxLine())
		return &Error{File: x.src.File, Sheet: x.src.Sheet, Row: x.lastRow, Code: CodeTooLarge, Err: err,
			Message:   fmt.Sprintf("a aba tem um texto ou marca com mais de %s perto desta linha; o limite é %s (o Excel guarda até 32.767 caracteres por célula)", lim, lim),
			MessageEN: fmt.Sprintf("the sheet holds a text or tag longer than %s near this row; the limit is %s (Excel keeps up to 32,767 characters a cell)", lim, lim)}
	}
	e := x.corrupt(fmt.Sprintf("XML da aba inválido perto da linha %d: %v", x.lastRow, err), err)
	e.MessageEN = fmt.Sprintf("corrupt XLSX: invalid sheet XML near row %d: %v", x.lastRow, err)
	return e
}

// convert turns a stored cell into a Cell (without position fields).
func (x *xlsxReader) convert(sc *scell, row int) Cell {
	c := Cell{Raw: sc.v}
	switch sc.t {
	case "s":
		i, err := strconv.Atoi(strings.TrimSpace(sc.v))
		if err != nil || i < 0 || i >= len(x.sst) {
			c.Kind = KindError
			c.Value = sc.v
			return c
		}
		c.Raw = x.sst[i]
		c.Value, c.Kind = strings.TrimFunc(c.Raw, isSpaceLike), KindText
	case "inlineStr":
		c.Raw = unescapeXString(sc.inline)
		c.Value, c.Kind = strings.TrimFunc(c.Raw, isSpaceLike), KindText
	case "str":
		c.Value, c.Kind = strings.TrimFunc(sc.v, isSpaceLike), KindText
	case "b":
		c.Kind = KindBool
		c.Value = "false"
		if strings.TrimSpace(sc.v) == "1" {
			c.Value = "true"
		}
	case "e":
		c.Value, c.Kind = sc.v, KindError
	case "d":
		c.Value, c.Kind = sc.v, KindDate
		if len(sc.v) >= 10 {
			c.Value = sc.v[:10]
		}
	default:
		v := strings.TrimSpace(sc.v)
		if v == "" {
			c.Kind = KindEmpty
			break
		}
		class := styleNone
		if sc.s >= 0 && sc.s < len(x.styles) {
			class = x.styles[sc.s]
		}
		switch class {
		case styleDate:
			if d, err := ExcelSerialToDate(v, x.src.Date1904); err == nil {
				c.Value, c.Kind = d.Format("2006-01-02"), KindDate
				break
			}
			c.Value, _ = normalizeNumber(v)
			c.Kind = KindNumber
		case stylePercent:
			if p, ok := shiftNumber(v, 2); ok {
				c.Value, c.Kind = p+"%", KindPercent
				break
			}
			fallthrough
		default:
			c.Value, _ = normalizeNumber(v)
			c.Kind = KindNumber
		}
	}
	if sc.formula {
		if !sc.hasV {
			c.Kind = KindEmpty
		} else {
			c.Kind = KindFormula
		}
	}
	return c
}

func (x *xlsxReader) readHeader() error {
	for {
		num, ok, err := x.nextRow()
		if err != nil {
			return err
		}
		if !ok {
			return &Error{File: x.src.File, Sheet: x.src.Sheet, Code: CodeEmpty,
				Message:   "a aba está vazia: falta a linha de cabeçalho",
				MessageEN: "the sheet is empty: the header row is missing"}
		}
		last := -1
		for i := range x.sc {
			c := x.convert(&x.sc[i], num)
			if c.Value != "" && x.sc[i].col > last {
				last = x.sc[i].col
			}
		}
		if last < 0 {
			continue
		}
		if last >= 16384 {
			return x.corrupt("coluna fora do limite", nil)
		}
		x.ncols = last + 1
		x.src.Headers = make([]string, x.ncols)
		x.letters = make([]string, x.ncols)
		for i := range x.letters {
			x.letters[i] = ColumnLetter(i)
		}
		for i := range x.sc {
			if col := x.sc[i].col; col < x.ncols {
				x.src.Headers[col] = x.convert(&x.sc[i], num).Value
			}
		}
		x.src.Columns = x.letters
		x.src.HeaderRow = num
		x.src.Warnings = append(x.src.Warnings, headerWarnings(x.src.Headers, x.letters, num)...)
		return nil
	}
}

// maxWarningsPerCode bounds the per-cell warnings kept for one code; past
// it a single summary warning says there are more.
const maxWarningsPerCode = 100

func (x *xlsxReader) warn(w Warning) {
	if x.warnCount == nil {
		x.warnCount = map[string]int{}
	}
	x.warnCount[w.Code]++
	switch n := x.warnCount[w.Code]; {
	case n <= maxWarningsPerCode:
		x.src.Warnings = append(x.src.Warnings, w)
	case n == maxWarningsPerCode+1:
		x.src.Warnings = append(x.src.Warnings, Warning{Code: w.Code,
			Message:   fmt.Sprintf("mais ocorrências de %q omitidas (só as primeiras %d são listadas)", w.Code, maxWarningsPerCode),
			MessageEN: fmt.Sprintf("more %q occurrences omitted (only the first %d are listed)", w.Code, maxWarningsPerCode)})
	}
}

func (x *xlsxReader) Source() Source { return x.src }

func (x *xlsxReader) Close() error {
	var err error
	if x.sheetRC != nil {
		err = x.sheetRC.Close()
		x.sheetRC = nil
	}
	if x.zr != nil {
		if e := x.zr.Close(); err == nil {
			err = e
		}
		x.zr = nil
	}
	return err
}

func (x *xlsxReader) Next() (Row, error) {
	if x.done {
		return Row{}, io.EOF
	}
	for {
		num, ok, err := x.nextRow()
		if err != nil {
			x.done = true
			return Row{}, err
		}
		if !ok {
			x.done = true
			if x.rows == 0 {
				return Row{}, noData(x.src)
			}
			return Row{}, io.EOF
		}
		cells := x.cells
		if !x.opt.ReuseCells || cells == nil {
			cells = make([]Cell, x.ncols)
			if x.opt.ReuseCells {
				x.cells = cells
			}
		} else {
			clear(cells)
		}
		empty := true
		for i := range x.sc {
			sc := &x.sc[i]
			c := x.convert(sc, num)
			if sc.col >= x.ncols {
				if c.Value != "" && !x.extraCol[sc.col] {
					x.extraCol[sc.col] = true
					x.src.Warnings = append(x.src.Warnings, Warning{Row: num, Column: ColumnLetter(sc.col), Value: c.Value, Code: WarnDataNoHeader,
						Message: "há dados numa coluna sem cabeçalho; foram ignorados", MessageEN: "data in a column without a header; ignored"})
				}
				continue
			}
			if c.Value != "" {
				empty = false
			}
			if mc := x.opt.maxCell(); mc > 0 && len(c.Raw) > mc {
				x.done = true
				return Row{}, &Error{File: x.src.File, Sheet: x.src.Sheet, Row: num, Column: x.letters[sc.col], Header: x.src.Headers[sc.col], Code: CodeTooLarge,
					Message:   fmt.Sprintf("célula com mais de %s; o limite por célula é %s", sizeText(mc), sizeText(mc)),
					MessageEN: fmt.Sprintf("cell longer than %s; the limit per cell is %s", sizeText(mc), sizeText(mc))}
			}
			if sc.formula && !sc.hasV {
				x.warn(Warning{Row: num, Column: x.letters[sc.col], Header: x.src.Headers[sc.col], Code: WarnFormulaNoValue,
					Message:   "fórmula sem valor calculado (salve a planilha no Excel para calcular); lida como vazia",
					MessageEN: "formula without a cached value (save the workbook in Excel to compute it); read as empty"})
			}
			if c.Kind == KindError {
				x.warn(Warning{Row: num, Column: x.letters[sc.col], Header: x.src.Headers[sc.col], Value: c.Value, Code: WarnCellError,
					Message: "a célula contém um erro do Excel", MessageEN: "the cell holds an Excel error value"})
			}
			cells[sc.col] = c
		}
		if empty {
			continue
		}
		for i := range cells {
			cells[i].Column = x.letters[i]
			cells[i].Header = x.src.Headers[i]
		}
		x.rows++
		if max := x.opt.maxRows(); max > 0 && x.rows > max {
			x.done = true
			return Row{}, tooManyRows(x.src.File, x.src.Sheet, num, max)
		}
		return Row{Number: num, Cells: cells}, nil
	}
}

// runCapReader fails once more than max bytes pass without a '<': no XML
// text run or tag is longer, so encoding/xml never buffers more (it holds
// a whole text run before returning it).
type runCapReader struct {
	r   io.Reader
	max int // 0: no cap
	run int
	hit bool
}

var errRunTooLong = errors.New("XML text run too long")

func (c *runCapReader) Read(p []byte) (int, error) {
	if c.hit {
		return 0, errRunTooLong
	}
	n, err := c.r.Read(p)
	if c.max <= 0 {
		return n, err
	}
	for i := 0; i < n; {
		j := bytes.IndexByte(p[i:n], '<')
		if j < 0 {
			c.run += n - i
			break
		}
		c.run += j
		if c.run > c.max {
			break
		}
		c.run = 0
		i += j + 1
	}
	if c.run > c.max {
		c.hit = true
		return 0, errRunTooLong
	}
	return n, err
}

// unescapeXString decodes the "_xHHHH_" escapes of an OOXML string
// (ECMA-376 ST_Xstring): Excel writes a character XML 1.0 cannot hold,
// such as a control character, as "_x001B_", and a literal "_x0041_" as
// "_x005F_x0041_". Without the decoding a control character pasted into
// Excel would reach the validation as the text "_x001B_".
func unescapeXString(s string) string {
	if !strings.Contains(s, "_x") {
		return s
	}
	var b strings.Builder
	b.Grow(len(s))
	for {
		i := strings.Index(s, "_x")
		if i < 0 {
			b.WriteString(s)
			return b.String()
		}
		b.WriteString(s[:i])
		s = s[i:]
		r, ok := xEscape(s)
		if !ok {
			b.WriteString("_x")
			s = s[2:]
			continue
		}
		s = s[7:]
		if utf16.IsSurrogate(r) {
			if r2, ok := xEscape(s); ok {
				if d := utf16.DecodeRune(r, r2); d != utf8.RuneError {
					b.WriteRune(d)
					s = s[7:]
					continue
				}
			}
		}
		b.WriteRune(r)
	}
}

// xEscape reads "_xHHHH_" at the start of s.
func xEscape(s string) (rune, bool) {
	if len(s) < 7 || s[0] != '_' || s[1] != 'x' || s[6] != '_' {
		return 0, false
	}
	v, err := strconv.ParseUint(s[2:6], 16, 16)
	if err != nil {
		return 0, false
	}
	return rune(v), true
}
