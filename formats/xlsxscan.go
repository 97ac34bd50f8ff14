package formats

import (
	"bufio"
	"bytes"
	"errors"
	"io"
	"strconv"
	"unicode/utf8"
)

// sheetScanner is a small XML tokenizer for worksheet parts, several times
// faster than encoding/xml for the flat <row><c><v> structure because it
// allocates nothing per token. It understands elements, attributes (either
// quote), character data with entities, CDATA, comments and processing
// instructions; a DOCTYPE, an unterminated construct or a tag without a name
// is an error. It does not check that end tags match start tags: the row
// parser only relies on the names it knows.
type sheetScanner struct {
	r    *bufio.Reader
	tag  []byte // current tag content, between < and >
	text []byte // current character data
	tmp  []byte
	max  int // longest tag or text run, in bytes (0: no cap)
}

// errTokenTooLong is a tag or text run longer than sheetScanner.max.
var errTokenTooLong = errors.New("XML token too long")

type tokKind int

const (
	tokEOF tokKind = iota
	tokStart
	tokEnd
	tokText
)

var errXMLSyntax = errors.New("XML syntax error")

// readUntil appends to dst everything up to and including delim.
func (s *sheetScanner) readUntil(dst []byte, delim byte) ([]byte, error) {
	for {
		chunk, err := s.r.ReadSlice(delim)
		dst = append(dst, chunk...)
		if err == bufio.ErrBufferFull {
			if s.max > 0 && len(dst) > s.max {
				return dst, errTokenTooLong
			}
			continue
		}
		return dst, err
	}
}

// next returns the next token. For tokStart and tokEnd the tag is in s.tag
// (without the brackets; a start tag may end with '/'); for tokText the
// unescaped text is in s.text.
func (s *sheetScanner) next() (tokKind, error) {
	b, err := s.r.ReadByte()
	if err != nil {
		return tokEOF, err
	}
	if b != '<' {
		s.r.UnreadByte()
		s.tmp, err = s.readUntil(s.tmp[:0], '<')
		if err == io.EOF {
			if len(bytes.TrimSpace(s.tmp)) == 0 {
				return tokEOF, io.EOF
			}
			return tokEOF, io.ErrUnexpectedEOF
		}
		if err != nil {
			return tokEOF, err
		}
		s.r.UnreadByte()
		s.text, err = unescapeXML(s.text[:0], s.tmp[:len(s.tmp)-1])
		return tokText, err
	}
	s.tag, err = s.readUntil(s.tag[:0], '>')
	if err != nil {
		return tokEOF, unexpected(err)
	}
	switch {
	case bytes.HasPrefix(s.tag, []byte("!--")):
		for !bytes.HasSuffix(s.tag, []byte("-->")) || len(s.tag) < 6 {
			if s.tag, err = s.readUntil(s.tag, '>'); err != nil {
				return tokEOF, unexpected(err)
			}
		}
		return s.next()
	case bytes.HasPrefix(s.tag, []byte("![CDATA[")):
		for !bytes.HasSuffix(s.tag, []byte("]]>")) {
			if s.tag, err = s.readUntil(s.tag, '>'); err != nil {
				return tokEOF, unexpected(err)
			}
		}
		s.text = append(s.text[:0], s.tag[8:len(s.tag)-3]...)
		return tokText, nil
	case bytes.HasPrefix(s.tag, []byte("?")):
		for !bytes.HasSuffix(s.tag, []byte("?>")) {
			if s.tag, err = s.readUntil(s.tag, '>'); err != nil {
				return tokEOF, unexpected(err)
			}
		}
		return s.next()
	case bytes.HasPrefix(s.tag, []byte("!")):
		return tokEOF, errXMLSyntax
	}
	// A '>' inside a quoted attribute value does not end the tag.
	for !quotesBalanced(s.tag) {
		if s.tag, err = s.readUntil(s.tag, '>'); err != nil {
			return tokEOF, unexpected(err)
		}
	}
	s.tag = s.tag[:len(s.tag)-1]
	if len(s.tag) == 0 {
		return tokEOF, errXMLSyntax
	}
	if s.tag[0] == '/' {
		return tokEnd, nil
	}
	return tokStart, nil
}

func unexpected(err error) error {
	if err == io.EOF {
		return io.ErrUnexpectedEOF
	}
	return err
}

func quotesBalanced(tag []byte) bool {
	var q byte
	for _, c := range tag {
		switch {
		case q != 0:
			if c == q {
				q = 0
			}
		case c == '"' || c == '\'':
			q = c
		}
	}
	return q == 0
}

// name returns the local name of the current tag (prefix dropped).
func (s *sheetScanner) name() []byte {
	t := s.tag
	if len(t) > 0 && t[0] == '/' {
		t = t[1:]
	}
	end := len(t)
	for i, c := range t {
		if c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '/' {
			end = i
			break
		}
	}
	n := t[:end]
	if i := bytes.IndexByte(n, ':'); i >= 0 {
		n = n[i+1:]
	}
	return n
}

// selfClosing reports whether the current start tag ends with "/".
func (s *sheetScanner) selfClosing() bool {
	return len(s.tag) > 0 && s.tag[len(s.tag)-1] == '/'
}

// attrs calls fn for each attribute of the current start tag with its local
// name and raw (still escaped) value.
func (s *sheetScanner) attrs(fn func(name, value []byte)) error {
	t := s.tag
	i := bytes.IndexAny(t, " \t\r\n")
	if i < 0 {
		return nil
	}
	t = t[i:]
	for {
		t = bytes.TrimLeft(t, " \t\r\n")
		if len(t) == 0 || (len(t) == 1 && t[0] == '/') {
			return nil
		}
		eq := bytes.IndexByte(t, '=')
		if eq <= 0 {
			return errXMLSyntax
		}
		name := bytes.TrimRight(t[:eq], " \t\r\n")
		t = bytes.TrimLeft(t[eq+1:], " \t\r\n")
		if len(t) == 0 || (t[0] != '"' && t[0] != '\'') {
			return errXMLSyntax
		}
		q := t[0]
		end := bytes.IndexByte(t[1:], q)
		if end < 0 {
			return errXMLSyntax
		}
		if c := bytes.IndexByte(name, ':'); c >= 0 {
			name = name[c+1:]
		}
		fn(name, t[1:1+end])
		t = t[end+2:]
	}
}

// unescapeXML appends src to dst with the XML entities replaced.
func unescapeXML(dst, src []byte) ([]byte, error) {
	for {
		i := bytes.IndexByte(src, '&')
		if i < 0 {
			return append(dst, src...), nil
		}
		dst = append(dst, src[:i]...)
		src = src[i:]
		semi := bytes.IndexByte(src, ';')
		if semi < 0 || semi > 12 {
			return dst, errXMLSyntax
		}
		ent := src[1:semi]
		src = src[semi+1:]
		switch string(ent) {
		case "amp":
			dst = append(dst, '&')
		case "lt":
			dst = append(dst, '<')
		case "gt":
			dst = append(dst, '>')
		case "quot":
			dst = append(dst, '"')
		case "apos":
			dst = append(dst, '\'')
		default:
			if len(ent) < 2 || ent[0] != '#' {
				return dst, errXMLSyntax
			}
			var n uint64
			var err error
			if ent[1] == 'x' || ent[1] == 'X' {
				n, err = strconv.ParseUint(string(ent[2:]), 16, 32)
			} else {
				n, err = strconv.ParseUint(string(ent[1:]), 10, 32)
			}
			if err != nil || n > utf8.MaxRune {
				return dst, errXMLSyntax
			}
			dst = utf8.AppendRune(dst, rune(n))
		}
	}
}

// fastNextRow is nextRow on the sheetScanner.
func (x *xlsxReader) fastNextRow() (num int, ok bool, err error) {
	s := x.scan
	for {
		k, err := s.next()
		if err == io.EOF {
			return 0, false, nil
		}
		if err != nil {
			return 0, false, x.xmlErr(err)
		}
		switch k {
		case tokStart:
			if string(s.name()) != "row" {
				continue
			}
			num = 0
			if err := s.attrs(func(n, v []byte) {
				if string(n) == "r" {
					num = atoiBytes(v)
				}
			}); err != nil {
				return 0, false, x.xmlErr(err)
			}
			if num <= 0 {
				num = x.lastRow + 1
			}
			x.lastRow = num
			x.sc = x.sc[:0]
			if s.selfClosing() {
				return num, true, nil
			}
			return num, true, x.fastReadCells()
		case tokEnd:
			if string(s.name()) == "sheetData" {
				return 0, false, nil
			}
		}
	}
}

func atoiBytes(b []byte) int {
	n := 0
	for _, c := range b {
		if c < '0' || c > '9' || n > 1<<40 {
			return -1
		}
		n = n*10 + int(c-'0')
	}
	if len(b) == 0 {
		return -1
	}
	return n
}

// cellType interns the few values of the t attribute.
func cellType(v []byte) string {
	switch string(v) {
	case "s":
		return "s"
	case "str":
		return "str"
	case "inlineStr":
		return "inlineStr"
	case "b":
		return "b"
	case "e":
		return "e"
	case "d":
		return "d"
	case "n", "":
		return ""
	}
	return string(v)
}

func (x *xlsxReader) fastReadCells() error {
	s := x.scan
	col := -1
	var cur *scell
	where := ""
	inIS := false
	for {
		k, err := s.next()
		if err != nil {
			return x.xmlErr(unexpected(err))
		}
		switch k {
		case tokStart:
			switch string(s.name()) {
			case "c":
				col++
				x.sc = append(x.sc, scell{col: col})
				cur = &x.sc[len(x.sc)-1]
				if err := s.attrs(func(n, v []byte) {
					switch string(n) {
					case "r":
						if c := colIndex(string(v)); c >= 0 {
							col, cur.col = c, c
						}
					case "s":
						cur.s = atoiBytes(v)
					case "t":
						cur.t = cellType(v)
					}
				}); err != nil {
					return x.xmlErr(err)
				}
				if s.selfClosing() {
					cur = nil
				}
			case "v":
				where = "v"
				if s.selfClosing() {
					where = ""
				}
			case "f":
				if cur != nil {
					cur.formula = true
				}
				where = "f"
				if s.selfClosing() {
					where = ""
				}
			case "is":
				inIS = !s.selfClosing()
			case "t":
				if inIS && !s.selfClosing() {
					where = "t"
				}
			case "rPh":
				if !s.selfClosing() {
					where = "ph"
				}
			}
		case tokEnd:
			switch string(s.name()) {
			case "row":
				return nil
			case "c":
				cur = nil
			case "is":
				inIS = false
			case "v", "f", "t", "rPh":
				where = ""
			}
		case tokText:
			if cur == nil {
				continue
			}
			switch where {
			case "v":
				cur.v += string(s.text)
				cur.hasV = true
			case "t":
				cur.inline += string(s.text)
			}
		}
	}
}
