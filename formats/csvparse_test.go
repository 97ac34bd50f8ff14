package formats

import (
	"bufio"
	"encoding/csv"
	"errors"
	"io"
	"reflect"
	"strings"
	"testing"

	"golang.org/x/text/encoding/charmap"
)

// csvParser must read what encoding/csv reads (FieldsPerRecord -1, no lazy
// quotes): the same records, start lines and errors.

type csvStep struct {
	Rec  []string
	Line int
	Err  string
}

func stdCSV(data string, comma rune) []csvStep {
	r := csv.NewReader(strings.NewReader(data))
	r.Comma, r.FieldsPerRecord, r.ReuseRecord = comma, -1, true
	var out []csvStep
	for i := 0; i < 200; i++ {
		rec, err := r.Read()
		if err == io.EOF {
			break
		}
		st := csvStep{}
		if err != nil {
			st.Err = err.Error()
			var pe *csv.ParseError
			if !errors.As(err, &pe) {
				out = append(out, st)
				break
			}
		} else {
			st.Rec = append([]string(nil), rec...)
			st.Line, _ = r.FieldPos(0)
		}
		out = append(out, st)
		if err != nil {
			break
		}
	}
	return out
}

func ourCSV(data string, comma rune) []csvStep {
	p := newCSVParser(bufio.NewReaderSize(strings.NewReader(data), 16), comma)
	var out []csvStep
	for i := 0; i < 200; i++ {
		rec, line, err := p.read()
		if err == io.EOF {
			break
		}
		st := csvStep{}
		if err != nil {
			st.Err = err.Error()
		} else {
			st.Rec = append([]string(nil), rec...)
			st.Line = line
		}
		out = append(out, st)
		if err != nil {
			break
		}
	}
	return out
}

func checkCSVParser(t *testing.T, data string, comma rune) {
	t.Helper()
	want, got := stdCSV(data, comma), ourCSV(data, comma)
	if !reflect.DeepEqual(want, got) {
		t.Errorf("input %q, delimiter %q:\nencoding/csv %+v\ncsvParser    %+v", data, comma, want, got)
	}
}

var csvParserCases = []string{
	"", "\n", "a;b\n", "a;b", "a;b\r\n1;2\r\n", "a;b\r", "\n\na;b\n\n1;2\n", "a;\"b\nc\";d\n1;2;3\n", "a;\"b\"\"c\"\n", "a;b\"c\n",
	"a;\"b\"c\n", "a;\"unclosed\n1;2\n", "\"\"\n", "\"a\";\"\"\n", ";\n;;\n", "a;\"b\r\nc\"\n", "x\"\n", "\"a\"\r\n", "é;ç\n", "a,b;c\tq\n",
	"\"a\n\n\nb\"\n", "\"a\"\"\"\n", "\"\"\"\"\n", "a;\"b\";\"c\"", "a;\"b", "\"" + strings.Repeat("x", 40) + "\n" + strings.Repeat("y", 40) + "\"\n",
	strings.Repeat("long;", 30) + "\n", "a;b\n\r\n1;2\n", "\r\n", "\r", "a\r\rb\n",
}

func TestCSVParserMatchesEncodingCSV(t *testing.T) {
	for _, c := range csvParserCases {
		for _, comma := range []rune{';', ',', '\t', '|', '§'} {
			checkCSVParser(t, c, comma)
		}
	}
	checkCSVParser(t, "a§b\n1§\"2§3\"\n", '§')
	if _, _, err := newCSVParser(bufio.NewReader(strings.NewReader("a\n")), '"').read(); err == nil || err.Error() != errInvalidDelim.Error() {
		t.Errorf("delimiter '\"': %v", err)
	}
}

func FuzzCSVParser(f *testing.F) {
	for _, c := range csvParserCases {
		f.Add(c, true)
	}
	f.Fuzz(func(t *testing.T, data string, semicolon bool) {
		comma := ','
		if semicolon {
			comma = ';'
		}
		checkCSVParser(t, data, comma)
	})
}

// TestCP1252Reader decodes every byte value, in runs of ASCII of every
// length around the 8-byte steps, through reads of several sizes, and
// compares with golang.org/x/text's decoder.
func TestCP1252Reader(t *testing.T) {
	var in []byte
	for i := 0; i < 256; i++ {
		in = append(in, strings.Repeat("a", i%19)...)
		in = append(in, byte(i))
	}
	want, err := charmap.Windows1252.NewDecoder().Bytes(in)
	if err != nil {
		t.Fatal(err)
	}
	for _, size := range []int{1, 2, 3, 7, 64, 4096} {
		r := newCP1252Reader(strings.NewReader(string(in)))
		var got []byte
		buf := make([]byte, size)
		for {
			n, err := r.Read(buf)
			got = append(got, buf[:n]...)
			if err == io.EOF {
				break
			}
			if err != nil {
				t.Fatal(err)
			}
		}
		if string(got) != string(want) {
			t.Errorf("reads of %d bytes: decoded text differs from x/text's", size)
		}
	}
}
