package jsonscan

import (
	"encoding/json"
	"errors"
	"math"
	"reflect"
	"strconv"
	"strings"
	"testing"
	"unicode/utf8"
)

func TestStrEscapes(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		{`""`, ""},
		{`"abc"`, "abc"},
		{` "ação" `, "ação"},
		{`"\"\\\/\b\f\n\r\t"`, "\"\\/\b\f\n\r\t"},
		{`"\u0041\u00e9\u00E9\u20ac"`, "Aéé€"},
		{`"a\u0000b"`, "a\x00b"},
		{`"\ud83d\ude00"`, "😀"},                      // a surrogate pair
		{`"\uD834\uDD1E!"`, "𝄞!"},                    // upper-case hex
		{`"\ud800"`, "\uFFFD"},                       // a lone high surrogate
		{`"\udc00x"`, "\uFFFDx"},                     // a lone low surrogate
		{`"\ud800\u0041"`, "\uFFFDA"},                // high surrogate, then not a low one
		{`"\ud800\ud800\udc00"`, "\uFFFD\U00010000"}, // the second high one pairs
		{`"\ude00\ud83d"`, "\uFFFD\uFFFD"},           // low then high
		{`"\ud83d\n"`, "\uFFFD\n"},                   // high surrogate then another escape
		{"\"\xff\xfea\"", "\uFFFD\uFFFDa"},           // invalid UTF-8, a U+FFFD a byte
		{"\"\xed\xa0\x80\"", "\uFFFD\uFFFD\uFFFD"},   // a surrogate written in UTF-8
		{"\"\xe2\x82\"", "\uFFFD\uFFFD"},             // a truncated sequence
		{"\"\xe2\x82\\n\"", "\uFFFD\uFFFD\n"},        // the same before an escape
		{"\"\u2028\u2029\x7f\"", "\u2028\u2029\x7f"}, // allowed as they are
		{`"\u00e9` + "\xc3\xa9" + `"`, "éé"},         // an escape beside valid UTF-8
		{`"` + strings.Repeat("x", 300) + `"`, strings.Repeat("x", 300)},
	} {
		s := New([]byte(c.in))
		got, err := s.Str()
		if err == nil {
			err = s.End()
		}
		if err != nil || got != c.want {
			t.Errorf("Str(%s) = %q, %v; want %q", c.in, got, err, c.want)
		}
		var w string
		if err := json.Unmarshal([]byte(c.in), &w); err != nil || w != c.want {
			t.Errorf("encoding/json reads %s as %q (%v), the table says %q", c.in, w, err, c.want)
		}
	}
}

// NewShared's Scanner reads what New's does, its strings without escapes
// all in one allocation.
func TestShared(t *testing.T) {
	b := []byte(`{"a":"uma","b":["dois","","tr\u00eas","ação","\ud83d\ude00"],"c":"\n"}`)
	read := func(s *Scanner) []string {
		var out []string
		err := s.Object(func(key []byte) error {
			if string(key) == "b" {
				return s.Array(func() error {
					v, err := s.Str()
					out = append(out, v)
					return err
				})
			}
			v, err := s.Str()
			out = append(out, v)
			return err
		})
		if err != nil || s.End() != nil {
			t.Fatal(err)
		}
		return out
	}
	want := []string{"uma", "dois", "", "três", "ação", "😀", "\n"}
	for _, s := range []Scanner{New(b), NewShared(b)} {
		if got := read(&s); !reflect.DeepEqual(got, want) {
			t.Errorf("shared %v: got %q, want %q", s.shared, got, want)
		}
	}
	plain := []byte(`["one","two","three","four"]`)
	count := func(mk func([]byte) Scanner) float64 {
		return testing.AllocsPerRun(50, func() {
			s := mk(plain)
			_ = s.Array(func() error { _, err := s.Str(); return err })
		})
	}
	if n, m := count(New), count(NewShared); n != 4 || m != 1 {
		t.Errorf("allocations for 4 strings: %v with New, %v with NewShared; want 4 and 1", n, m)
	}
}

func TestInt(t *testing.T) {
	for _, c := range []struct {
		in   string
		want int64
	}{{"0", 0}, {"-0", 0}, {" 7 ", 7}, {"-12", -12}, {"9223372036854775807", math.MaxInt64}, {"-9223372036854775808", math.MinInt64}} {
		s := New([]byte(c.in))
		got, err := s.Int()
		if err == nil {
			err = s.End()
		}
		if err != nil || got != c.want {
			t.Errorf("Int(%q) = %d, %v; want %d", c.in, got, err, c.want)
		}
	}
	for _, c := range []struct {
		in, msg string
		off     int
	}{
		{"9223372036854775808", "an integer out of int64's range (9223372036854775808)", 0},
		{" -9223372036854775809", "an integer out of int64's range (-9223372036854775809)", 1},
		{"123456789012345678901234567890123456789012345", "an integer out of int64's range (1234567890123456789012345678901234567890…)", 0},
		{"1.5", "a number that is not an integer (1.5)", 0},
		{"1e3", "a number that is not an integer (1e3)", 0},
		{"-0E+1", "a number that is not an integer (-0E+1)", 0},
		{"1.", "text ends where a digit after a decimal point was expected", 2},
		{"1.x", "'x' where a digit after a decimal point was expected", 2},
		{"-", "text ends where an integer was expected", 1},
		{"-a", "'a' where an integer was expected", 1},
		{`"1"`, `'"' where an integer was expected`, 0},
		{"null", "'n' where an integer was expected", 0},
		{"", "text ends where an integer was expected", 0},
	} {
		s := New([]byte(c.in))
		got, err := s.Int()
		checkErr(t, "Int("+strconv.Quote(c.in)+")", err, c.off, c.msg)
		if got != 0 {
			t.Errorf("Int(%q) = %d with an error", c.in, got)
		}
	}
	// "01" is 0 followed by a 1 no JSON text may hold.
	s := New([]byte("01"))
	if v, err := s.Int(); v != 0 || err != nil {
		t.Errorf("Int(01) = %d, %v", v, err)
	}
	checkErr(t, "End after 0 of 01", s.End(), 1, "'1' where the end of the text was expected")
}

func TestNumber(t *testing.T) {
	for _, in := range []string{"0", "-0", "12", "-0.5", "1e5", "1E+05", "2.5e-3", "123456789012345678901234567890.000001e-999"} {
		s := New([]byte(in))
		got, err := s.Number()
		if err != nil || string(got) != in || s.End() != nil {
			t.Errorf("Number(%s) = %s, %v", in, got, err)
		}
	}
	for _, c := range []struct {
		in, msg string
		off     int
	}{
		{"+1", "'+' where a number was expected", 0},
		{".5", "'.' where a number was expected", 0},
		{"1e", "text ends where a digit in an exponent was expected", 2},
		{"1e+", "text ends where a digit in an exponent was expected", 3},
		{"-", "text ends where a number was expected", 1},
	} {
		s := New([]byte(c.in))
		_, err := s.Number()
		checkErr(t, "Number("+c.in+")", err, c.off, c.msg)
	}
}

// checkErr fails unless err is a *SyntaxError at off whose message
// starts with msg.
func checkErr(t *testing.T, what string, err error, off int, msg string) {
	t.Helper()
	var se *SyntaxError
	if !errors.As(err, &se) {
		t.Errorf("%s: error %v, want a *SyntaxError", what, err)
		return
	}
	if se.Offset != off || !strings.HasPrefix(se.Msg, msg) {
		t.Errorf("%s: %q at byte %d, want %q at byte %d", what, se.Msg, se.Offset, msg, off)
	}
	if want := "at byte " + strconv.Itoa(off); !strings.HasSuffix(err.Error(), want) {
		t.Errorf("%s: %q does not say %q", what, err, want)
	}
}

// skipAll reads b as one value and nothing else.
func skipAll(b []byte) error {
	s := New(b)
	if err := s.Skip(); err != nil {
		return err
	}
	return s.End()
}

func TestSkipErrors(t *testing.T) {
	for _, c := range []struct {
		in, msg string
		off     int
	}{
		{`{"a":1,}`, "'}' where a key was expected", 7},
		{`{"a" 1}`, "'1' where ':' after a key was expected", 5},
		{`{"a":1 "b":2}`, `'"' where ',' or '}' after an object member was expected`, 7},
		{`{"a\u0062":1}`, "a key with an escape", 1},
		{`{1:2}`, "'1' where a key was expected", 1},
		{`[1,]`, "']' where a number was expected", 3},
		{`[1 2]`, "'2' where ',' or ']' after an array element was expected", 3},
		{`[1}`, "'}' where ',' or ']' after an array element was expected", 2},
		{`"ab` + "\n" + `c"`, "a control character in a string", 3},
		{`"a\x"`, "an invalid escape", 2},
		{`"a\u12g4"`, `an escape \u without four hex digits`, 2},
		{`"a\u12"`, `an escape \u without four hex digits`, 2},
		{"\"\\u12\x10a\"", `an escape \u without four hex digits`, 1},
		{`tru`, "text ends inside true", 3},
		{`[nul]`, "not the literal null", 1},
		{`fals`, "text ends inside false", 4},
		{`truex`, "'x' where the end of the text was expected", 4},
		{`{} {}`, "'{' where the end of the text was expected", 3},
		{``, "text ends where a number was expected", 0},
		{`   `, "text ends where a number was expected", 3},
		{`{"a":}`, "'}' where a number was expected", 5},
		{"\x00", "'\\x00' where a number was expected", 0},
	} {
		checkErr(t, "Skip("+c.in+")", skipAll([]byte(c.in)), c.off, c.msg)
	}
}

// Every prefix of a text is refused, saying the text ends where it does.
func TestTruncated(t *testing.T) {
	doc := `{"a":[1,-2.5e+3,true,false,null,"x\"\u00e9\ud83d\ude00y",{"b":{}},[]],"c":"ação"}`
	if err := skipAll([]byte(doc)); err != nil {
		t.Fatal(err)
	}
	for n := range len(doc) {
		err := skipAll([]byte(doc[:n]))
		var se *SyntaxError
		if !errors.As(err, &se) || se.Offset > n {
			t.Errorf("%s: %v", doc[:n], err)
			continue
		}
		if se.Offset < n && !strings.HasPrefix(se.Msg, "an escape") {
			t.Errorf("%s: refused at %d (%v), before its end", doc[:n], se.Offset, err)
		}
	}
}

func TestNesting(t *testing.T) {
	deep := func(n int) []byte {
		return []byte(strings.Repeat(`[{"a":`, n/2) + strings.Repeat("[", n%2) + "0" + strings.Repeat("]", n%2) + strings.Repeat("}]", n/2))
	}
	if err := skipAll(deep(MaxDepth)); err != nil {
		t.Errorf("%d levels: %v", MaxDepth, err)
	}
	if err := skipAll(deep(MaxDepth - 1)); err != nil {
		t.Errorf("%d levels: %v", MaxDepth-1, err)
	}
	checkErr(t, "one level too deep", skipAll(deep(MaxDepth+1)), 3*MaxDepth, "nesting deeper than 200")
	// The depth goes back up as containers close.
	b := []byte("[" + strings.Repeat(string(deep(MaxDepth-1))+",", 3) + "1]")
	if err := skipAll(b); err != nil {
		t.Errorf("siblings at %d levels: %v", MaxDepth, err)
	}
}

// Object and Array hand each member and element to the reader, with the
// key's bytes as they stand, and return the reader's error as it is.
func TestObjectArray(t *testing.T) {
	s := New([]byte(` { "a" : [ 1 , "x" ] , "ção" : { } , "c":[] } `))
	var got []string
	err := s.Object(func(key []byte) error {
		got = append(got, string(key))
		if string(key) == "a" {
			return s.Array(func() error {
				v, err := s.Value()
				got = append(got, string(v))
				return err
			})
		}
		return s.Skip()
	})
	if err != nil || s.End() != nil {
		t.Fatal(err)
	}
	if want := []string{"a", "1", `"x"`, "ção", "c"}; !reflect.DeepEqual(got, want) {
		t.Errorf("got %q, want %q", got, want)
	}
	mine := errors.New("mine")
	s = New([]byte(`{"a":1}`))
	if err := s.Object(func([]byte) error { return mine }); err != mine {
		t.Errorf("Object returned %v, not the member's error", err)
	}
	s = New([]byte(`[1]`))
	if err := s.Array(func() error { return mine }); err != mine {
		t.Errorf("Array returned %v, not the element's error", err)
	}
	s = New([]byte(`[1]`))
	checkErr(t, "Object on an array", s.Object(nil), 0, "'[' where an object was expected")
	s = New([]byte(` {}`))
	checkErr(t, "Array on an object", s.Array(nil), 1, "'{' where an array was expected")
	s = New([]byte(`"a"`))
	checkErr(t, "Str of a key", s.Object(nil), 0, `'"' where an object was expected`)
	for _, c := range []struct {
		in   string
		want bool
	}{{"true", true}, {" false", false}} {
		s := New([]byte(c.in))
		if v, err := s.Bool(); err != nil || v != c.want {
			t.Errorf("Bool(%s) = %v, %v", c.in, v, err)
		}
	}
	s = New([]byte(`null`))
	_, err = s.Bool()
	checkErr(t, "Bool(null)", err, 0, "'n' where true or false was expected")
	s = New([]byte(`1`))
	_, err = s.Str()
	checkErr(t, "Str(1)", err, 0, "'1' where a string was expected")
}

// decodeAny decodes b as json.Unmarshal does into an any, with a
// Scanner from NewShared (FuzzStr fuzzes New's); keys that are not valid
// UTF-8 it refuses (encoding/json would replace their bytes).
func decodeAny(b []byte) (any, error) {
	s := NewShared(b)
	v, err := anyValue(&s)
	if err == nil {
		err = s.End()
	}
	return v, err
}

var errKey = errors.New("a key not valid UTF-8")

func anyValue(s *Scanner) (any, error) {
	switch s.Peek() {
	case '{':
		m := map[string]any{}
		err := s.Object(func(key []byte) error {
			if !utf8.Valid(key) {
				return errKey
			}
			v, err := anyValue(s)
			m[string(key)] = v
			return err
		})
		return m, err
	case '[':
		l := []any{}
		err := s.Array(func() error {
			v, err := anyValue(s)
			l = append(l, v)
			return err
		})
		return l, err
	case '"':
		return s.Str()
	case 't', 'f':
		return s.Bool()
	case 'n':
		return nil, s.Skip()
	}
	num, err := s.Number()
	if err != nil {
		return nil, err
	}
	return strconv.ParseFloat(string(num), 64)
}

// byDesign reports whether err is a refusal of valid JSON a Scanner
// makes by design (an escaped key, deep nesting) or decodeAny does (a key
// not valid UTF-8).
func byDesign(err error) bool {
	var se *SyntaxError
	return errors.Is(err, errKey) || errors.As(err, &se) && (se.Msg == "a key with an escape" || strings.HasPrefix(se.Msg, "nesting deeper"))
}

// checkAny fails when a Scanner reads b otherwise than encoding/json: a
// value decoded differently, a text one of them refuses and not the other
// (bar the refusals by design), Skip checking otherwise than json.Valid.
func checkAny(t *testing.T, b []byte) {
	var want any
	werr := json.Unmarshal(b, &want)
	got, err := decodeAny(b)
	switch {
	case err == nil && werr != nil:
		t.Fatalf("%q: read as %v, encoding/json refuses it: %v", b, got, werr)
	case err == nil && !reflect.DeepEqual(got, want):
		t.Fatalf("%q:\n got %#v\nwant %#v", b, got, want)
	case err != nil && werr == nil && !byDesign(err):
		t.Fatalf("%q: refused (%v), encoding/json reads it", b, err)
	}
	if serr := skipAll(b); !byDesign(serr) && (serr == nil) != json.Valid(b) {
		t.Fatalf("%q: Skip says %v, json.Valid %v", b, serr, json.Valid(b))
	}
	s := New(b)
	if v, err := s.Value(); err == nil && !json.Valid(v) {
		t.Fatalf("%q: Value %q is not a JSON value", b, v)
	}
}

func TestDecodeAny(t *testing.T) {
	for _, s := range []string{`{"a":[1,2.5,-3e2,"x\u00e9",true,false,null,{}],"a":{"b":[]},"ç":"\ud83d\ude00"}`, `[]`, ` 0 `, `"\ud800"`,
		`{"a":1,"a":2}`, `1e400`, `[1,2`, `{"a\u0041":1}`, "{\"\xff\":1}", `[-]`, `"` + "\x01" + `"`} {
		checkAny(t, []byte(s))
	}
}

func FuzzDecodeAny(f *testing.F) {
	for _, s := range []string{`{"a":[1,2.5,-3e2,"x\u00e9\ud800\udc00",true,false,null,{}],"b":{"c":[]}}`, `"\ud83d\ude00"`, `-0.0e-0`, `[[[]]]`} {
		f.Add([]byte(s))
	}
	f.Fuzz(checkAny)
}

// checkLike fails when read (a Scanner's method reading a T) and
// json.Unmarshal into a T disagree on b: a value read differently, or a
// text read that encoding/json refuses, or refused that encoding/json
// reads (but null, which encoding/json takes as leaving a T as it is).
func checkLike[T comparable](t *testing.T, b []byte, read func(*Scanner) (T, error)) {
	s := New(b)
	got, err := read(&s)
	if err == nil {
		err = s.End()
	}
	var want T
	werr := json.Unmarshal(b, &want)
	if err == nil && (werr != nil || got != want) {
		t.Fatalf("%q: got %v, encoding/json %v (%v)", b, got, want, werr)
	}
	if first := New(b); err != nil && werr == nil && first.Peek() != 'n' {
		t.Fatalf("%q: refused (%v), encoding/json reads %v", b, err, want)
	}
}

// FuzzStr: a Scanner reads a string exactly as encoding/json does, and
// every string encoding/json reads.
func FuzzStr(f *testing.F) {
	for _, s := range []string{`"a\"\\\/\b\f\n\r\t\u00e9"`, `"\ud83d\ude00\ud800\udc00\udc00\ud800x"`, "\"\xff\xed\xa0\x80é\"", `"` + "\x1f" + `"`, "null"} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) { checkLike(t, b, (*Scanner).Str) })
}

// FuzzInt: a Scanner reads an integer exactly as encoding/json does into
// an int64, and every number encoding/json reads so.
func FuzzInt(f *testing.F) {
	for _, s := range []string{"0", "-0", "9223372036854775807", "-9223372036854775808", "9223372036854775808", "1.0", "1e2", "01", " 12 "} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) { checkLike(t, b, (*Scanner).Int) })
}

// FuzzBool: a Scanner reads true and false as encoding/json does.
func FuzzBool(f *testing.F) {
	for _, s := range []string{"true", " false ", "tru", "null", "1"} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) { checkLike(t, b, (*Scanner).Bool) })
}

func BenchmarkSkip(b *testing.B) {
	doc := []byte(`{"txid":"rmab12cd34ef56ab78cd90ef12ab340001","status":"ATIVA","calendario":{"criacao":"2026-11-26T09:00:00Z","dataDeVencimento":"2026-12-10","validadeAposVencimento":30},` +
		`"loc":{"id":1,"location":"127.0.0.1:8080/v2/cobv/0001","tipoCob":"cobv"},"valor":{"original":"123.45"},"infoAdicionais":[{"nome":"Matrícula","valor":"ação"}],"solicitacaoPagador":"Mensalidade \u003c\u0026\u003e"}`)
	b.SetBytes(int64(len(doc)))
	for b.Loop() {
		if err := skipAll(doc); err != nil {
			b.Fatal(err)
		}
	}
}
