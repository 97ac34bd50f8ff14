package formats

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"
	"unicode/utf16"
	"unicode/utf8"
)

// Reading an XLSX sheet's rows: cell references, each cell converted by
// its type and number format, the header row, and the rows one by one
// under the reader's size and run budgets.

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
