package formats

import (
	"bufio"
	"bytes"
	"encoding/csv"
	"errors"
	"io"
	"strings"
	"unicode/utf8"
)

// csvParser reads RFC 4180 records exactly as encoding/csv.Reader does with
// FieldsPerRecord -1, LazyQuotes false and no comment character (the same
// records, the same *csv.ParseError values; csvparse_test.go checks it
// against encoding/csv), but cuts the fields' strings out of large shared
// buffers instead of allocating one string a record: a million-row file
// costs a few thousand allocations instead of a million.
type csvParser struct {
	r            *bufio.Reader
	comma        rune
	numLine      int
	rawBuffer    []byte
	recordBuffer []byte
	fieldIndexes []int
	record       []string
	arena        Arena
}

// errInvalidDelim is encoding/csv's error for an unusable delimiter.
var errInvalidDelim = errors.New("csv: invalid field or comment delimiter")

func newCSVParser(r *bufio.Reader, comma rune) *csvParser {
	return &csvParser{r: r, comma: comma}
}

// readLine is encoding/csv's readLine: the next line with \r\n
// normalised to \n (a trailing \r at EOF dropped).
func (p *csvParser) readLine() ([]byte, error) {
	line, err := p.r.ReadSlice('\n')
	if err == bufio.ErrBufferFull {
		p.rawBuffer = append(p.rawBuffer[:0], line...)
		for err == bufio.ErrBufferFull {
			line, err = p.r.ReadSlice('\n')
			p.rawBuffer = append(p.rawBuffer, line...)
		}
		line = p.rawBuffer
	}
	readSize := len(line)
	if readSize > 0 && err == io.EOF {
		err = nil
		if line[readSize-1] == '\r' {
			line = line[:readSize-1]
		}
	}
	p.numLine++
	if n := len(line); n >= 2 && line[n-2] == '\r' && line[n-1] == '\n' {
		line[n-2] = '\n'
		line = line[:n-1]
	}
	return line, err
}

func lengthNL(b []byte) int {
	if len(b) > 0 && b[len(b)-1] == '\n' {
		return 1
	}
	return 0
}

func nextRune(b []byte) rune {
	r, _ := utf8.DecodeRune(b)
	return r
}

func validDelim(r rune) bool {
	return r != 0 && r != '"' && r != '\r' && r != '\n' && utf8.ValidRune(r) && r != utf8.RuneError
}

// read returns the next record (valid until the next call; its strings
// stay valid) and the line it starts on. Empty lines are skipped; io.EOF
// at the end.
func (p *csvParser) read() (record []string, recLine int, err error) {
	if !validDelim(p.comma) {
		return nil, 0, errInvalidDelim
	}
	var line []byte
	var errRead error
	for errRead == nil {
		line, errRead = p.readLine()
		if errRead == nil && len(line) == lengthNL(line) {
			line = nil
			continue // skip empty lines
		}
		break
	}
	if errRead == io.EOF {
		return nil, 0, errRead
	}
	const quoteLen = len(`"`)
	commaLen := utf8.RuneLen(p.comma)
	recLine = p.numLine
	p.recordBuffer = p.recordBuffer[:0]
	p.fieldIndexes = p.fieldIndexes[:0]
	line0, col := p.numLine, 1
	if p.comma < utf8.RuneSelf && bytes.IndexByte(line, '"') < 0 {
		// No quote on the line (the common case): the fields are the
		// line's pieces between delimiters.
		str := p.arena.Bytes(line[:len(line)-lengthNL(line)])
		rec := p.record[:0]
		for {
			i := strings.IndexByte(str, byte(p.comma))
			if i < 0 {
				rec = append(rec, str)
				break
			}
			rec = append(rec, str[:i])
			str = str[i+1:]
		}
		p.record = rec
		return rec, recLine, errRead
	}
parseField:
	for {
		if len(line) == 0 || line[0] != '"' {
			// Unquoted field.
			var i int
			if p.comma < utf8.RuneSelf {
				i = bytes.IndexByte(line, byte(p.comma))
			} else {
				i = bytes.IndexRune(line, p.comma)
			}
			field := line
			if i >= 0 {
				field = field[:i]
			} else {
				field = field[:len(field)-lengthNL(field)]
			}
			if j := bytes.IndexByte(field, '"'); j >= 0 {
				err = &csv.ParseError{StartLine: recLine, Line: p.numLine, Column: col + j, Err: csv.ErrBareQuote}
				break parseField
			}
			p.recordBuffer = append(p.recordBuffer, field...)
			p.fieldIndexes = append(p.fieldIndexes, len(p.recordBuffer))
			if i >= 0 {
				line = line[i+commaLen:]
				col += i + commaLen
				continue parseField
			}
			break parseField
		}
		// Quoted field.
		line = line[quoteLen:]
		col += quoteLen
		for {
			i := bytes.IndexByte(line, '"')
			switch {
			case i >= 0:
				p.recordBuffer = append(p.recordBuffer, line[:i]...)
				line = line[i+quoteLen:]
				col += i + quoteLen
				switch rn := nextRune(line); {
				case rn == '"': // "" is a quote
					p.recordBuffer = append(p.recordBuffer, '"')
					line = line[quoteLen:]
					col += quoteLen
				case rn == p.comma: // ", ends the field
					line = line[commaLen:]
					col += commaLen
					p.fieldIndexes = append(p.fieldIndexes, len(p.recordBuffer))
					continue parseField
				case lengthNL(line) == len(line): // "\n ends the record
					p.fieldIndexes = append(p.fieldIndexes, len(p.recordBuffer))
					break parseField
				default: // a quote inside a quoted field
					err = &csv.ParseError{StartLine: recLine, Line: p.numLine, Column: col - quoteLen, Err: csv.ErrQuote}
					break parseField
				}
			case len(line) > 0:
				// The field goes on on the next line.
				p.recordBuffer = append(p.recordBuffer, line...)
				if errRead != nil {
					break parseField
				}
				col += len(line)
				line, errRead = p.readLine()
				if len(line) > 0 {
					line0++
					col = 1
				}
				if errRead == io.EOF {
					errRead = nil
				}
			default:
				// End of input inside quotes.
				if errRead == nil {
					err = &csv.ParseError{StartLine: recLine, Line: line0, Column: col, Err: csv.ErrQuote}
					break parseField
				}
				p.fieldIndexes = append(p.fieldIndexes, len(p.recordBuffer))
				break parseField
			}
		}
	}
	if err == nil {
		err = errRead
	}
	return p.fields(), recLine, err
}

// fields cuts the record's fields out of one arena string.
func (p *csvParser) fields() []string {
	str := p.arena.Bytes(p.recordBuffer)
	if cap(p.record) < len(p.fieldIndexes) {
		p.record = make([]string, len(p.fieldIndexes))
	}
	p.record = p.record[:len(p.fieldIndexes)]
	pre := 0
	for i, idx := range p.fieldIndexes {
		p.record[i] = str[pre:idx]
		pre = idx
	}
	return p.record
}
