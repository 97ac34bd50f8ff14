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
	// maxCell and maxLine cap a field and a physical line or record, in
	// bytes, while reading (0: no cap): memory stays a small multiple of
	// them whatever the file holds.
	maxCell, maxLine int
}

// errLineTooLong is readLine's error for a line longer than maxLine; the
// line returned is cut there.
var errLineTooLong = errors.New("csv: line too long")

// tooLongError is a field or a line/record past its cap: the record's
// first line and the 0-based index of the field being read.
type tooLongError struct {
	StartLine, Field int
	Cell             bool // the field is past maxCell (else the line or record past maxLine)
	Limit            int
}

func (e *tooLongError) Error() string { return "csv: field or line too long" }

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
		if p.maxLine > 0 && cap(p.rawBuffer) < p.maxLine+p.r.Size() {
			// once, the most a line can take: no doubling garbage
			p.rawBuffer = make([]byte, 0, p.maxLine+p.r.Size())
		}
		p.rawBuffer = append(p.rawBuffer[:0], line...)
		for err == bufio.ErrBufferFull {
			if p.maxLine > 0 && len(p.rawBuffer) > p.maxLine {
				// stop here: the rest of the line is never held
				p.numLine++
				return p.rawBuffer[:p.maxLine+1], errLineTooLong
			}
			line, err = p.r.ReadSlice('\n')
			p.rawBuffer = append(p.rawBuffer, line...)
		}
		line = p.rawBuffer
	}
	if p.maxLine > 0 && len(line) > p.maxLine+1 { // +1: the newline
		p.numLine++
		return line[:p.maxLine+1], errLineTooLong
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
	if errRead == errLineTooLong {
		return nil, p.numLine, p.lineTooLong(p.numLine, line, 0, false)
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
		if p.maxCell > 0 && len(line) > p.maxCell {
			if err := p.longField(line, recLine); err != nil {
				return nil, recLine, err
			}
		}
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
			if err = p.capField(recLine, len(field)); err != nil {
				break parseField
			}
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
		fieldStart := len(p.recordBuffer)
		for {
			if err = p.capField(recLine, len(p.recordBuffer)-fieldStart); err != nil {
				break parseField
			}
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
				if errRead == errLineTooLong {
					err = p.lineTooLong(recLine, line, len(p.fieldIndexes), true)
					break parseField
				}
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
	if _, ok := err.(*tooLongError); ok {
		return nil, recLine, err
	}
	return p.fields(), recLine, err
}

// capField checks the field being read (n bytes so far) against maxCell
// and the record against maxLine.
func (p *csvParser) capField(recLine, n int) error {
	switch {
	case p.maxCell > 0 && n > p.maxCell:
		return &tooLongError{StartLine: recLine, Field: len(p.fieldIndexes), Cell: true, Limit: p.maxCell}
	case p.maxLine > 0 && len(p.recordBuffer) > p.maxLine:
		return &tooLongError{StartLine: recLine, Field: len(p.fieldIndexes), Limit: p.maxLine}
	}
	return nil
}

// longField finds, on a line without quotes, a field longer than maxCell.
func (p *csvParser) longField(line []byte, recLine int) error {
	line = line[:len(line)-lengthNL(line)]
	for f := 0; ; f++ {
		i := bytes.IndexByte(line, byte(p.comma))
		n := i
		if i < 0 {
			n = len(line)
		}
		if n > p.maxCell {
			return &tooLongError{StartLine: recLine, Field: f, Cell: true, Limit: p.maxCell}
		}
		if i < 0 {
			return nil
		}
		line = line[i+1:]
	}
}

// lineTooLong is the error for a line cut at maxLine: the field it was
// cut in (delimiters counted outside quotes, from field first, inQ when
// the line goes on a quoted field), reported as a cell past maxCell when that field is.
func (p *csvParser) lineTooLong(recLine int, line []byte, first int, inQ bool) error {
	field, start := first, 0
	for i := 0; i < len(line); {
		r, n := utf8.DecodeRune(line[i:])
		switch {
		case r == '"':
			inQ = !inQ
		case r == p.comma && !inQ:
			field++
			start = i + n
		}
		i += n
	}
	if p.maxCell > 0 && len(line)-start > p.maxCell {
		return &tooLongError{StartLine: recLine, Field: field, Cell: true, Limit: p.maxCell}
	}
	return &tooLongError{StartLine: recLine, Field: field, Limit: p.maxLine}
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
