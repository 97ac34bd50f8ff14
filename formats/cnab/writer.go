package cnab

import (
	"fmt"
	"strconv"
	"strings"
	"time"

	"golang.org/x/text/encoding/charmap"
)

// Record is one line being written in a layout: fields are set by name,
// formatted as the table says (N right-aligned with zeros, A left-aligned
// with blanks; dates DDMMAAAA or DDMMAA; values with their decimals), fixed
// fields carry their fixed value, unlisted positions are blank.
type Record struct {
	l      *Layout
	rec    string
	line   []byte
	fields map[string]*Field // the record's fields by name (l.byName[rec]): one look-up a field set
}

// NewRecord starts record rec of layout l.
func NewRecord(l *Layout, rec string) (*Record, error) {
	fs, ok := l.Records[rec]
	if !ok {
		return nil, fmt.Errorf("cnab: layout %s has no record %q", l.Name, rec)
	}
	r := &Record{l: l, rec: rec, line: []byte(strings.Repeat(" ", l.LineLen)), fields: l.byName[rec]}
	for i := range fs {
		f := &fs[i]
		switch {
		case f.Fixed != "":
			copy(r.line[f.Start-1:f.End], f.Fixed)
		case f.Num:
			copy(r.line[f.Start-1:f.End], strings.Repeat("0", f.Width()))
		}
	}
	return r, nil
}

func (r *Record) field(name string) (*Field, error) {
	f := r.fields[name]
	if f == nil {
		return nil, fmt.Errorf("cnab: record %s of layout %s has no field %q", r.rec, r.l.Name, name)
	}
	return f, nil
}

// Text sets a field: text is upper-cased, accents written in Windows-1252
// (one byte a position, as ERPs read them), cut to the field's width; a
// numeric field takes digits only, right-aligned.
func (r *Record) Text(name, v string) error {
	f, err := r.field(name)
	if err != nil {
		return err
	}
	if f.Num {
		return putDigits(r, f, v)
	}
	if r.ascii(f, v) {
		return nil
	}
	b := make([]byte, 0, f.Width())
	for _, c := range strings.ToUpper(v) {
		if len(b) == f.Width() {
			break
		}
		x, ok := charmap.Windows1252.EncodeRune(c)
		if !ok || x < 0x20 {
			x = '?'
		}
		b = append(b, x)
	}
	for len(b) < f.Width() {
		b = append(b, ' ')
	}
	copy(r.line[f.Start-1:f.End], b)
	return nil
}

// putDigits writes digits right-aligned and zero-filled into numeric
// field f.
func putDigits[T string | []byte](r *Record, f *Field, v T) error {
	for i := 0; i < len(v); i++ {
		if v[i] < '0' || v[i] > '9' {
			return fmt.Errorf("cnab: %s.%s is numeric: %q", r.rec, f.Name, v)
		}
	}
	if len(v) > f.Width() {
		return fmt.Errorf("cnab: %s.%s: %q is wider than %d positions", r.rec, f.Name, v, f.Width())
	}
	dst := r.line[f.Start-1 : f.End]
	pad := len(dst) - len(v)
	for i := 0; i < pad; i++ {
		dst[i] = '0'
	}
	copy(dst[pad:], v)
	return nil
}

// ascii writes plain ASCII text into a text field, upper-cased, without
// allocating; it reports false (writing nothing) for any other text.
func (r *Record) ascii(f *Field, v string) bool {
	for i := 0; i < len(v); i++ {
		if v[i] < 0x20 || v[i] >= 0x7F {
			return false
		}
	}
	dst := r.line[f.Start-1 : f.End]
	n := copy(dst, v)
	for i := 0; i < n; i++ {
		if c := dst[i]; c >= 'a' && c <= 'z' {
			dst[i] = c - 'a' + 'A'
		}
	}
	for i := n; i < len(dst); i++ {
		dst[i] = ' '
	}
	return true
}

// Int sets a numeric field to n (for a value field, n is in its smallest
// unit: cents for v2).
func (r *Record) Int(name string, n int64) error {
	if n < 0 {
		return fmt.Errorf("cnab: %s.%s: negative %d", r.rec, name, n)
	}
	f, err := r.field(name)
	if err != nil {
		return err
	}
	var buf [20]byte
	if !f.Num {
		return r.Text(name, string(strconv.AppendInt(buf[:0], n, 10)))
	}
	return putDigits(r, f, strconv.AppendInt(buf[:0], n, 10))
}

// Date sets a date field (zero time: zeros).
func (r *Record) Date(name string, t time.Time) error {
	f, err := r.field(name)
	if err != nil {
		return err
	}
	if t.IsZero() {
		return r.Text(name, "")
	}
	switch f.Format {
	case "data8":
		return r.Text(name, t.Format("02012006"))
	case "data6":
		return r.Text(name, t.Format("020106"))
	}
	return fmt.Errorf("cnab: %s.%s is not a date (%q)", r.rec, name, f.Format)
}

// DateOf sets a date field from a year, month and day already checked
// (a real date, year 1..9999): Date without formatting a time.Time, for
// the writers that set hundreds of thousands of them.
func (r *Record) DateOf(name string, year, month, day int) error {
	f, err := r.field(name)
	if err != nil {
		return err
	}
	var b [8]byte
	b[0], b[1] = byte('0'+day/10), byte('0'+day%10)
	b[2], b[3] = byte('0'+month/10), byte('0'+month%10)
	y := year % 10000
	b[4], b[5], b[6], b[7] = byte('0'+y/1000), byte('0'+y/100%10), byte('0'+y/10%10), byte('0'+y%10)
	switch f.Format {
	case "data8":
		return putDigits(r, f, b[:])
	case "data6":
		b[4], b[5] = b[6], b[7]
		return putDigits(r, f, b[:6])
	}
	return fmt.Errorf("cnab: %s.%s is not a date (%q)", r.rec, name, f.Format)
}

// Bytes returns the line, without its line ending.
func (r *Record) Bytes() []byte { return r.line }

// CopyFrom makes r's line src's (the same layout's same record: a record
// reused line after line, reset from one filled with what they share).
func (r *Record) CopyFrom(src *Record) {
	r.l, r.rec, r.fields = src.l, src.rec, src.fields
	r.line = append(r.line[:0], src.line...)
}

// Clone returns a copy of the record: a record filled once with what many
// lines share (the company's fields of a retorno's details), copied for
// each line.
func (r *Record) Clone() *Record {
	return &Record{l: r.l, rec: r.rec, line: append([]byte(nil), r.line...), fields: r.fields}
}
