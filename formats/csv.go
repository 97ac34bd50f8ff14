package formats

import (
	"bufio"
	"bytes"
	"encoding/binary"
	"encoding/csv"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"unicode/utf8"

	"golang.org/x/text/encoding/charmap"
)

// slabRows is how many rows of cells are allocated at once.
const slabRows = 64

type csvReader struct {
	f          *os.File
	r          *csvParser
	src        Source
	opt        Options
	lineOffset int // lines consumed before the csv.Reader (a "sep=" line)
	letters    []string
	rows       int
	cells      []Cell
	done       bool
}

func openCSV(path string, f *os.File, size int64, opt Options) (Reader, error) {
	if max := opt.maxBytes(DefaultMaxBytes); max > 0 && size > max {
		return nil, tooLarge(path, size, max)
	}
	src := Source{File: path, Format: "csv", Encoding: "utf-8"}
	valid, err := validUTF8Stream(f)
	if err != nil {
		return nil, openErr(path, err)
	}
	if _, err := f.Seek(0, io.SeekStart); err != nil {
		return nil, openErr(path, err)
	}
	var in io.Reader = f
	br := bufio.NewReaderSize(f, 1<<16)
	if bom, _ := br.Peek(3); bytes.Equal(bom, []byte("\xEF\xBB\xBF")) {
		br.Discard(3)
		src.Encoding = "utf-8-bom"
	}
	in = br
	if !valid {
		src.Encoding = "windows-1252"
		in = bufio.NewReaderSize(newCP1252Reader(br), 1<<16)
		src.Warnings = append(src.Warnings, Warning{Code: WarnEncoding,
			Message:   "o arquivo não está em UTF-8; foi lido como Windows-1252 (o \"CSV\" do Excel no Windows). Confira os acentos",
			MessageEN: "the file is not UTF-8; it was read as Windows-1252 (Excel's plain CSV on Windows). Check the accents"})
	}
	bin := in.(*bufio.Reader)
	c := &csvReader{f: f, src: src, opt: opt}
	delim := opt.Delimiter
	// A "sep=;" hint line written by Excel.
	if first, _ := bin.Peek(8); len(first) >= 5 && bytes.EqualFold(first[:4], []byte("sep=")) {
		line, _ := bin.ReadString('\n')
		hint := strings.TrimRight(line[4:], "\r\n")
		if r, n := utf8.DecodeRuneInString(hint); n == len(hint) && n > 0 {
			if delim == 0 {
				delim = r
			}
			c.lineOffset = 1
		} else {
			return nil, &Error{File: path, Row: 1, Code: CodeCorrupt, Value: strings.TrimSpace(line),
				Message: "linha \"sep=\" inválida: deve ter um único caractere separador", MessageEN: "invalid \"sep=\" line: it must name a single separator"}
		}
	}
	if delim == 0 {
		delim = sniffDelimiter(bin)
	}
	c.src.Delimiter = string(delim)
	c.r = newCSVParser(bin, delim)
	c.r.maxCell, c.r.maxLine = opt.maxCell(), opt.maxLine()
	// Header: the first record that is not entirely blank.
	for {
		rec, line, err := c.r.read()
		if err == io.EOF {
			return nil, &Error{File: path, Code: CodeEmpty, Message: "arquivo vazio: falta a linha de cabeçalho", MessageEN: "empty file: the header row is missing"}
		}
		if err != nil {
			return nil, c.csvErr(err)
		}
		if blankRecord(rec) {
			continue
		}
		c.src.HeaderRow = line + c.lineOffset
		c.src.Headers = make([]string, len(rec))
		for i, h := range rec {
			c.src.Headers[i] = strings.TrimFunc(h, isSpaceLike)
		}
		break
	}
	c.letters = make([]string, len(c.src.Headers))
	for i := range c.letters {
		c.letters[i] = ColumnLetter(i)
	}
	c.src.Columns = c.letters
	c.src.Warnings = append(c.src.Warnings, headerWarnings(c.src.Headers, c.letters, c.src.HeaderRow)...)
	return c, nil
}

func tooLarge(path string, size, max int64) *Error {
	return &Error{File: path, Code: CodeTooLarge,
		Message:   fmt.Sprintf("arquivo grande demais: %d bytes (limite %d)", size, max),
		MessageEN: fmt.Sprintf("file too large: %d bytes (limit %d)", size, max)}
}

// trimSpaceLike is strings.TrimFunc(s, isSpaceLike), without the call
// when s neither starts nor ends with a space or a non-ASCII byte.
func trimSpaceLike(s string) string {
	if s == "" || s[0] > ' ' && s[0] < utf8.RuneSelf && s[len(s)-1] > ' ' && s[len(s)-1] < utf8.RuneSelf {
		return s
	}
	return strings.TrimFunc(s, isSpaceLike)
}

func blankRecord(rec []string) bool {
	for _, s := range rec {
		if trimSpaceLike(s) != "" {
			return false
		}
	}
	return true
}

// headerWarnings reports blank and duplicate header cells.
func headerWarnings(headers, letters []string, row int) []Warning {
	var ws []Warning
	seen := map[string]int{}
	blank := 0
	for i, h := range headers {
		if h == "" {
			blank++
			if blank <= 5 {
				ws = append(ws, Warning{Row: row, Column: letters[i], Code: WarnBlankHeader,
					Message: "coluna sem cabeçalho; seus valores serão ignorados", MessageEN: "column without a header; its values are ignored"})
			} else if blank == 6 {
				ws = append(ws, Warning{Row: row, Code: WarnBlankHeader,
					Message: "há mais colunas sem cabeçalho; seus valores serão ignorados", MessageEN: "more columns without a header; their values are ignored"})
			}
			continue
		}
		n := NormalizeHeader(h)
		if j, ok := seen[n]; ok {
			ws = append(ws, Warning{Row: row, Column: letters[i], Header: h, Value: h, Code: WarnDuplicateHeader,
				Message:   fmt.Sprintf("cabeçalho repetido (igual ao da coluna %s)", letters[j]),
				MessageEN: fmt.Sprintf("duplicate header (same as column %s)", letters[j])})
			continue
		}
		seen[n] = i
	}
	return ws
}

func (c *csvReader) Source() Source { return c.src }

func (c *csvReader) Close() error {
	if c.f == nil {
		return nil
	}
	err := c.f.Close()
	c.f = nil
	return err
}

func (c *csvReader) csvErr(err error) error {
	var pe *csv.ParseError
	var tl *tooLongError
	if errors.As(err, &tl) {
		return c.tooLong(tl)
	}
	if errors.As(err, &pe) {
		// pe.Column is a byte offset, not a spreadsheet column: not reported.
		e := &Error{File: c.src.File, Row: pe.StartLine + c.lineOffset, Code: CodeBadQuote, Err: err}
		line := pe.Line + c.lineOffset
		switch {
		case errors.Is(pe.Err, csv.ErrQuote):
			e.Message = fmt.Sprintf("aspas (\") sem fechamento ou fora do lugar (linha física %d)", line)
			e.MessageEN = fmt.Sprintf("unclosed or misplaced quote (\") (physical line %d)", line)
		case errors.Is(pe.Err, csv.ErrBareQuote):
			e.Message = fmt.Sprintf("aspas (\") no meio de um campo sem aspas; coloque o campo entre aspas e duplique as internas (linha física %d)", line)
			e.MessageEN = fmt.Sprintf("bare quote (\") inside an unquoted field; quote the field and double inner quotes (physical line %d)", line)
		default:
			e.Code = CodeCorrupt
			e.Message, e.MessageEN = "CSV inválido: "+pe.Err.Error(), "invalid CSV: "+pe.Err.Error()
		}
		return e
	}
	return &Error{File: c.src.File, Code: CodeOpen, Message: "erro de leitura: " + err.Error(), MessageEN: "read error: " + err.Error(), Err: err}
}

// tooLong places a field or line past its cap at its row and column.
func (c *csvReader) tooLong(tl *tooLongError) *Error {
	e := &Error{File: c.src.File, Row: tl.StartLine + c.lineOffset, Column: ColumnLetter(tl.Field), Code: CodeTooLarge, Err: tl}
	if tl.Field < len(c.src.Headers) {
		e.Header = c.src.Headers[tl.Field]
	}
	if tl.Cell {
		e.Message = fmt.Sprintf("célula com mais de %s; o limite por célula é %s (nenhum campo aceita um texto tão longo: confira se a célula não juntou o resto do arquivo, por exemplo por aspas sem fechamento)", sizeText(tl.Limit), sizeText(tl.Limit))
		e.MessageEN = fmt.Sprintf("cell longer than %s; the limit per cell is %s (no field takes so long a text: check the cell did not swallow the rest of the file, e.g. through an unclosed quote)", sizeText(tl.Limit), sizeText(tl.Limit))
	} else {
		e.Message = fmt.Sprintf("linha com mais de %s (cortada nesta coluna); o limite por linha é %s", sizeText(tl.Limit), sizeText(tl.Limit))
		e.MessageEN = fmt.Sprintf("line longer than %s (cut in this column); the limit per line is %s", sizeText(tl.Limit), sizeText(tl.Limit))
	}
	return e
}

// sizeText writes a byte count as people read it: 256 KB, 1 MB.
func sizeText(n int) string {
	switch {
	case n >= 1<<20 && n%(1<<20) == 0:
		return fmt.Sprintf("%d MB", n>>20)
	case n >= 1<<10 && n%(1<<10) == 0:
		return fmt.Sprintf("%d KB", n>>10)
	}
	return fmt.Sprintf("%d bytes", n)
}

func (c *csvReader) Next() (Row, error) { return c.next(nil) }

// NextCells is Next writing the row's cells into dst when it has room for
// them (see CellsReader).
func (c *csvReader) NextCells(dst []Cell) (Row, error) { return c.next(dst) }

func (c *csvReader) next(dst []Cell) (Row, error) {
	if c.done {
		return Row{}, io.EOF
	}
	for {
		rec, line, err := c.r.read()
		if err == io.EOF {
			c.done = true
			if c.rows == 0 {
				return Row{}, noData(c.src)
			}
			return Row{}, io.EOF
		}
		if err != nil {
			c.done = true
			return Row{}, c.csvErr(err)
		}
		if blankRecord(rec) {
			continue
		}
		line += c.lineOffset
		c.rows++
		if max := c.opt.maxRows(); max > 0 && c.rows > max {
			c.done = true
			return Row{}, tooManyRows(c.src.File, "", line, max)
		}
		if len(rec) != len(c.src.Headers) {
			return Row{Number: line}, &Error{File: c.src.File, Row: line, Code: CodeRagged,
				Value:     fmt.Sprint(len(rec)),
				Message:   fmt.Sprintf("a linha tem %d campos, mas o cabeçalho tem %d (separador %q); confira separadores e aspas", len(rec), len(c.src.Headers), c.src.Delimiter),
				MessageEN: fmt.Sprintf("the row has %d fields but the header has %d (delimiter %q); check delimiters and quotes", len(rec), len(c.src.Headers), c.src.Delimiter)}
		}
		cells := c.cells
		if cap(dst) >= len(rec) {
			cells = dst[:len(rec):len(rec)]
		} else if c.opt.ReuseCells {
			if cap(cells) < len(rec) {
				cells = make([]Cell, len(rec))
				c.cells = cells
			}
			cells = cells[:len(rec)]
		} else {
			// Carve rows out of a slab: one allocation per slabRows rows, and
			// each Row stays valid for as long as the caller keeps it.
			if len(c.cells) < len(rec) {
				c.cells = make([]Cell, len(rec)*slabRows)
			}
			cells = c.cells[:len(rec):len(rec)]
			c.cells = c.cells[len(rec):]
		}
		for i, s := range rec {
			v := trimSpaceLike(s)
			k := KindText
			if v == "" {
				k = KindEmpty
			}
			cells[i] = Cell{Value: v, Column: c.letters[i], Header: c.src.Headers[i], Raw: s, Kind: k}
		}
		return Row{Number: line, Cells: cells}, nil
	}
}

// noData is returned by Next, instead of io.EOF, when a file has a header
// but not a single data row.
func noData(src Source) *Error {
	return &Error{File: src.File, Sheet: src.Sheet, Row: src.HeaderRow, Code: CodeNoData,
		Message:   "o arquivo só tem o cabeçalho, nenhuma linha de dados",
		MessageEN: "the file has only the header row, no data rows"}
}

func tooManyRows(file, sheet string, row, max int) *Error {
	return &Error{File: file, Sheet: sheet, Row: row, Code: CodeTooManyRows,
		Message:   fmt.Sprintf("mais de %d linhas de dados; divida o arquivo", max),
		MessageEN: fmt.Sprintf("more than %d data rows; split the file", max)}
}

// sniffDelimiter picks among ';', ',' and tab the one that appears most in
// the first line (outside quotes); ties prefer ';', then tab, then ','.
func sniffDelimiter(br *bufio.Reader) rune {
	buf, _ := br.Peek(br.Size()) // as much as is there, up to the buffer size
	counts := map[byte]int{}
	inQ := false
	for _, b := range buf {
		if b == '"' {
			inQ = !inQ
			continue
		}
		if inQ {
			continue
		}
		if b == '\n' {
			break
		}
		if b == ';' || b == ',' || b == '\t' {
			counts[b]++
		}
	}
	best, n := byte(';'), counts[';']
	if counts['\t'] > n {
		best, n = '\t', counts['\t']
	}
	if counts[','] > n {
		best = ','
	}
	return rune(best)
}

// validUTF8Stream reports whether the whole stream is valid UTF-8, reading it
// in chunks (no whole-file load) and stopping at the first invalid byte.
func validUTF8Stream(r io.Reader) (bool, error) {
	buf := make([]byte, 1<<18)
	carry := 0
	for {
		n, err := io.ReadFull(r, buf[carry:])
		n += carry
		if n > 0 {
			end := n
			// Hold back an incomplete rune at the end of the chunk.
			if err == nil {
				for k := 1; k <= 3 && k <= n; k++ {
					b := buf[n-k]
					if b < 0x80 {
						break
					}
					if b >= 0xC0 {
						if !utf8.FullRune(buf[n-k : n]) {
							end = n - k
						}
						break
					}
				}
			}
			if !utf8.Valid(buf[:end]) {
				return false, nil
			}
			carry = copy(buf, buf[end:n])
		}
		if err == io.EOF || err == io.ErrUnexpectedEOF {
			if carry > 0 && !utf8.Valid(buf[:carry]) {
				return false, nil
			}
			return true, nil
		}
		if err != nil {
			return false, err
		}
	}
}

var cp1252Table = func() (t [256][]byte) {
	for i := 0; i < 256; i++ {
		r := charmap.Windows1252.DecodeByte(byte(i))
		t[i] = []byte(string(r))
	}
	return t
}()

// cp1252Reader decodes Windows-1252 to UTF-8 with a table built from
// golang.org/x/text/encoding/charmap (faster than a transform.Reader).
type cp1252Reader struct {
	r       io.Reader
	in      []byte
	pending []byte
}

func newCP1252Reader(r io.Reader) io.Reader { return &cp1252Reader{r: r, in: make([]byte, 1<<15)} }

func (c *cp1252Reader) Read(p []byte) (int, error) {
	if len(c.pending) > 0 {
		n := copy(p, c.pending)
		c.pending = c.pending[n:]
		return n, nil
	}
	if len(p) < 3 {
		var tmp [3]byte
		n, err := c.r.Read(c.in[:1])
		if n == 0 {
			return 0, err
		}
		out := append(tmp[:0], cp1252Table[c.in[0]]...)
		k := copy(p, out)
		c.pending = append(c.pending[:0], out[k:]...)
		return k, nil
	}
	n := len(p) / 3
	if n > len(c.in) {
		n = len(c.in)
	}
	m, err := c.r.Read(c.in[:n])
	src, o := c.in[:m], 0
	for len(src) > 0 {
		i := 0
		for i+8 <= len(src) && binary.LittleEndian.Uint64(src[i:])&0x8080808080808080 == 0 {
			i += 8 // eight ASCII bytes at a time
		}
		for i < len(src) && src[i] < 0x80 {
			i++
		}
		o += copy(p[o:], src[:i])
		if i < len(src) {
			o += copy(p[o:], cp1252Table[src[i]])
			i++
		}
		src = src[i:]
	}
	return o, err
}
