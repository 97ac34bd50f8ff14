package cnab

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"strconv"
	"time"
	"unicode/utf8"

	"golang.org/x/text/encoding/charmap"
)

// Error codes (stable, for programs; docs/codes.md lists them).
const (
	CodeLineLength    = "cnab_tamanho_linha" // a line is not as long as the layout's lines
	CodeLineEnding    = "cnab_fim_de_linha"  // mixed or bare-CR line endings
	CodeUnknownRecord = "cnab_registro_desconhecido"
	CodeOrder         = "cnab_ordem_registros"      // a record where the layout does not allow it
	CodeMissingQ      = "cnab_sem_segmento_q"       // a P segment without its Q
	CodeNotNumber     = "cnab_numero_invalido"      // a numeric field with other characters
	CodeDate          = "cnab_data_invalida"        // a date field that is no date
	CodeFixed         = "cnab_valor_fixo"           // a field the layout fixes holds something else
	CodeTrailer       = "cnab_trailer_divergente"   // a trailer's count or sum does not add up
	CodeHeader        = "cnab_cabecalho"            // a header naming another bank, layout or company
	CodeSequence      = "cnab_sequencia"            // a record's sequence number out of order
	CodeTruncated     = "cnab_incompleto"           // the file ends before its trailer
	CodeMovement      = "cnab_movimento"            // a movement code not carried out
	CodeNotApplied    = "cnab_campo_nao_aplicado"   // a title field the issuance cannot honour
	CodeNotCNAB       = "cnab_formato_desconhecido" // not a CNAB file of a known layout
)

// Pos is where a field is: line, positions and the manual's name.
type Pos struct {
	Line       int
	Start, End int
	Label      string
}

// Error is a problem in a CNAB file with its line and positions. Title is
// true when it is confined to one title (the reading goes on).
type Error struct {
	Pos
	Value     string
	Code      string
	Message   string
	MessageEN string
	Title     bool
}

// Error returns "linha 7, posições 78–85 (Data de vencimento do título): ...".
func (e *Error) Error() string { return Where("pt", e.Pos) + e.Message }

// ErrorEN is Error in English.
func (e *Error) ErrorEN() string { return Where("en", e.Pos) + e.MessageEN }

// Where renders a position as a prefix of a message ("" when unknown).
func Where(lang string, p Pos) string {
	if p.Line == 0 {
		return ""
	}
	lineW, posW, oneW := "linha", "posições", "posição"
	if lang == "en" {
		lineW, posW, oneW = "line", "positions", "position"
	}
	s := fmt.Sprintf("%s %d", lineW, p.Line)
	switch {
	case p.Start > 0 && p.End > p.Start:
		s += fmt.Sprintf(", %s %d–%d", posW, p.Start, p.End)
	case p.Start > 0:
		s += fmt.Sprintf(", %s %d", oneW, p.Start)
	}
	if p.Label != "" {
		s += " (" + p.Label + ")"
	}
	return s + ": "
}

func errAt(p Pos, code, value, pt, en string) *Error {
	return &Error{Pos: p, Value: value, Code: code, Message: pt, MessageEN: en}
}

// Line is one line of a file, decoded: ASCII lines are sliced as they are;
// lines with other characters (Windows-1252 or UTF-8 accents) by rune.
type Line struct {
	N     int
	Text  string
	runes []rune // nil for ASCII text
	Rec   string // record key in its layout ("3P", "1" ...)
}

// Len is the number of positions of the line.
func (l *Line) Len() int {
	if l.runes != nil {
		return len(l.runes)
	}
	return len(l.Text)
}

// Slice returns positions start..end (1-based, inclusive) of the line.
func (l *Line) Slice(start, end int) string {
	if end > l.Len() {
		end = l.Len()
	}
	if start > end {
		return ""
	}
	if l.runes != nil {
		return string(l.runes[start-1 : end])
	}
	return l.Text[start-1 : end]
}

// byteAt is the character at position pos as a byte (0xFF when it is not
// ASCII).
func (l *Line) byteAt(pos int) byte {
	if l.runes != nil {
		if r := l.runes[pos-1]; r < 0x80 {
			return byte(r)
		}
		return 0xFF
	}
	return l.Text[pos-1]
}

// Get returns the raw text of field f.
func (l *Line) Get(f *Field) string { return l.Slice(f.Start, f.End) }

// At returns the position of f on this line.
func (l *Line) At(f *Field) Pos { return Pos{Line: l.N, Start: f.Start, End: f.End, Label: f.Label} }

// Digits returns a numeric field's digits, or an error when it holds
// anything else. Blank is taken as zero (many ERPs leave optional numeric
// fields blank).
func (l *Line) Digits(f *Field) (string, *Error) {
	s := l.Get(f)
	spaces := 0
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c-'0' <= 9 {
			continue
		}
		if c != ' ' {
			return "", errAt(l.At(f), CodeNotNumber, s,
				fmt.Sprintf("%q não é numérico: o campo leva só dígitos (tipo N)", s),
				fmt.Sprintf("%q is not numeric: the field holds digits only (type N)", s))
		}
		spaces++
	}
	switch {
	case spaces == len(s):
		return "", nil
	case spaces > 0:
		return "", errAt(l.At(f), CodeNotNumber, s,
			fmt.Sprintf("%q não é numérico: campos numéricos são preenchidos com zeros à esquerda, sem brancos", s),
			fmt.Sprintf("%q is not numeric: numeric fields are zero-filled on the left, without blanks", s))
	}
	return s, nil
}

// CheckNumeric checks numeric fields of the line as Digits and Date do
// (digits, or all blank; dates that are dates) and returns the first
// problem. Fields that are all digits and no date are passed over without
// Digits' slicing (the common case of every line).
func (l *Line) CheckNumeric(fields []*Field) *Error {
	t := l.Text
	for _, f := range fields {
		if l.runes == nil && f.End <= len(t) && f.Start >= 1 {
			digits := true
			for i := f.Start - 1; i < f.End; i++ {
				if t[i]-'0' > 9 {
					digits = false
					break
				}
			}
			if digits && (len(f.Format) < 4 || f.Format[:4] != "data") {
				continue
			}
		}
		if len(f.Format) >= 4 && f.Format[:4] == "data" {
			if _, e := l.Date(f); e != nil {
				return e
			}
		} else if _, e := l.Digits(f); e != nil {
			return e
		}
	}
	return nil
}

// Int returns a numeric field as an integer (blank or zeros: 0).
func (l *Line) Int(f *Field) (int64, *Error) {
	if t := l.Text; l.runes == nil && f.Start >= 1 && f.End <= len(t) && f.End-f.Start < 18 {
		// the common case: all digits, parsed in place
		var v int64
		i := f.Start - 1
		for ; i < f.End; i++ {
			c := t[i] - '0'
			if c > 9 {
				break
			}
			v = v*10 + int64(c)
		}
		if i == f.End {
			return v, nil
		}
	}
	d, err := l.Digits(f)
	if err != nil || d == "" {
		return 0, err
	}
	v, perr := strconv.ParseInt(d, 10, 64)
	if perr != nil {
		return 0, errAt(l.At(f), CodeNotNumber, d, fmt.Sprintf("%q é grande demais", d), fmt.Sprintf("%q is too large", d))
	}
	return v, nil
}

// Date returns a data8 (DDMMAAAA) or data6 (DDMMAA, years 00-69 taken as
// 20xx, 70-99 as 19xx) field; blank or all zeros is the zero time.
func (l *Line) Date(f *Field) (time.Time, *Error) {
	d, err := l.Digits(f)
	if err != nil || d == "" || allZeros(d) {
		return time.Time{}, err
	}
	day, _ := strconv.Atoi(d[:2])
	mon, _ := strconv.Atoi(d[2:4])
	var year int
	if len(d) == 8 {
		year, _ = strconv.Atoi(d[4:])
	} else {
		year, _ = strconv.Atoi(d[4:])
		if year < 70 {
			year += 2000
		} else {
			year += 1900
		}
	}
	t := time.Date(year, time.Month(mon), day, 0, 0, 0, 0, time.UTC)
	if mon < 1 || mon > 12 || day < 1 || t.Day() != day || year < 1900 {
		layout := "DDMMAAAA"
		if len(d) == 6 {
			layout = "DDMMAA"
		}
		return time.Time{}, errAt(l.At(f), CodeDate, d,
			fmt.Sprintf("'%s' não é uma data (%s)", d, layout),
			fmt.Sprintf("'%s' is not a date (%s)", d, layout))
	}
	return t, nil
}

func allZeros(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] != '0' {
			return false
		}
	}
	return true
}

// maxLine bounds how much of a line is read: a file that is not CNAB (or
// has no line breaks) is refused after this much, never loaded whole.
const maxLine = 4096

// lineReader splits a file into lines, checking endings and decoding text.
type lineReader struct {
	br     *bufio.Reader
	n      int
	ending string // "\r\n" or "\n", from the first line
	done   bool
	strs   interface{ Bytes([]byte) string }
}

func newLineReader(r io.Reader) *lineReader {
	return &lineReader{br: bufio.NewReaderSize(r, 64<<10)}
}

// next returns the next non-empty line or io.EOF. Empty lines and a DOS
// end-of-file mark (0x1A) after the last record are tolerated; anything
// after them is an error.
func (lr *lineReader) next() (Line, error) {
	for {
		raw, err := lr.br.ReadSlice('\n')
		if err == bufio.ErrBufferFull || len(raw) > maxLine {
			lr.n++
			return Line{}, errAt(Pos{Line: lr.n}, CodeLineLength, "",
				fmt.Sprintf("linha com mais de %d caracteres: não é um arquivo CNAB (ou não tem quebras de linha)", maxLine),
				fmt.Sprintf("line longer than %d characters: not a CNAB file (or it has no line breaks)", maxLine))
		}
		if err != nil && err != io.EOF {
			return Line{}, err
		}
		if len(raw) == 0 && err == io.EOF {
			return Line{}, io.EOF
		}
		lr.n++
		text := raw
		ending := ""
		if len(text) > 0 && text[len(text)-1] == '\n' {
			text = text[:len(text)-1]
			ending = "\n"
			if len(text) > 0 && text[len(text)-1] == '\r' {
				text = text[:len(text)-1]
				ending = "\r\n"
			}
		}
		if i := indexByte(text, '\r'); i >= 0 {
			return Line{}, errAt(Pos{Line: lr.n, Start: i + 1}, CodeLineEnding, "",
				"CR sozinho no meio da linha: o arquivo deve usar CRLF ou LF como fim de linha",
				"a bare CR inside the line: the file must end its lines with CRLF or LF")
		}
		if len(text) == 0 || len(text) == 1 && text[0] == 0x1A {
			lr.done = true
			if err == io.EOF {
				return Line{}, io.EOF
			}
			continue
		}
		if lr.done {
			return Line{}, errAt(Pos{Line: lr.n}, CodeOrder, "",
				"há registros depois de uma linha em branco no fim do arquivo",
				"records follow a blank line at the end of the file")
		}
		if ending != "" {
			if lr.ending == "" {
				lr.ending = ending
			} else if ending != lr.ending {
				name := func(e string) string {
					if e == "\n" {
						return "LF"
					}
					return "CRLF"
				}
				return Line{}, errAt(Pos{Line: lr.n}, CodeLineEnding, "",
					fmt.Sprintf("a linha termina em %s, as anteriores em %s: o arquivo mistura fins de linha (foi editado à mão?)", name(ending), name(lr.ending)),
					fmt.Sprintf("the line ends in %s, the previous ones in %s: the file mixes line endings (edited by hand?)", name(ending), name(lr.ending)))
			}
		}
		return lr.decode(text), nil
	}
}

func indexByte(b []byte, c byte) int { return bytes.IndexByte(b, c) }

// decode makes a Line of raw bytes: ASCII as is; valid UTF-8 by rune;
// anything else as Windows-1252, as ERPs write accents.
func (lr *lineReader) decode(b []byte) Line {
	ascii := true
	for _, c := range b {
		if c >= 0x80 {
			ascii = false
			break
		}
	}
	if ascii {
		if lr.strs != nil {
			return Line{N: lr.n, Text: lr.strs.Bytes(b)}
		}
		return Line{N: lr.n, Text: string(b)}
	}
	var rs []rune
	if utf8.Valid(b) {
		rs = []rune(string(b))
	} else {
		rs = make([]rune, len(b))
		for i, c := range b {
			rs[i] = charmap.Windows1252.DecodeByte(c)
		}
	}
	return Line{N: lr.n, Text: string(rs), runes: rs}
}
