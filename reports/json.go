package reports

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"

	"remessa/pipeline/results"
)

// jsonSink writes results.json: indented with two spaces, fields in struct
// order and map keys sorted, so the same results give the same bytes. Rows
// are encoded one at a time; the bytes are those of encoding the whole value
// at once (tested).
type jsonSink struct {
	w    io.Writer
	file *atomicFile // when writing a file
	buf  bytes.Buffer
	enc  *json.Encoder
	// rowBuf holds a row as appendRow wrote it (reused)
	rowBuf []byte
	null   bool // rows is null, not a list
	n      int
}

var jsonRowsMarker = []byte("\n  \"rows\": null")

// shell encodes r without its rows and splits the bytes around "rows".
func (s *jsonSink) shell(r *results.Results) (head, tail []byte, err error) {
	c := *r
	c.Rows = nil
	s.buf.Reset()
	s.enc.SetIndent("", "  ")
	if err := s.enc.Encode(&c); err != nil {
		return nil, nil, err
	}
	b := s.buf.Bytes()
	i := bytes.Index(b, jsonRowsMarker)
	if i < 0 {
		return nil, nil, fmt.Errorf("reports: results sem o campo rows")
	}
	return append([]byte(nil), b[:i]...), append([]byte(nil), b[i+len(jsonRowsMarker):]...), nil
}

func (s *jsonSink) start(h *results.Results) error {
	s.enc = json.NewEncoder(&s.buf)
	s.enc.SetEscapeHTML(false)
	s.null = h.Rows == nil
	head, _, err := s.shell(h)
	if err != nil {
		return err
	}
	_, err = s.w.Write(append(head, "\n  \"rows\": "...))
	return err
}

func (s *jsonSink) row(row *results.Row) error {
	var b []byte
	if rb, ok := appendRow(s.rowBuf[:0], row); ok {
		s.rowBuf, b = rb, rb
	} else {
		s.buf.Reset()
		s.enc.SetIndent("    ", "  ")
		if err := s.enc.Encode(row); err != nil {
			return err
		}
		b = bytes.TrimSuffix(s.buf.Bytes(), []byte("\n"))
	}
	sep := ",\n    "
	if s.n == 0 {
		sep = "[\n    "
	}
	s.n++
	if _, err := io.WriteString(s.w, sep); err != nil {
		return err
	}
	_, err := s.w.Write(b)
	return err
}

func (s *jsonSink) finish(r *results.Results, _ *digest) ([]string, error) {
	end := "\n  ]"
	switch {
	case s.n == 0 && s.null:
		end = "null"
	case s.n == 0:
		end = "[]"
	}
	_, tail, err := s.shell(r)
	if err == nil {
		_, err = io.WriteString(s.w, end)
	}
	if err == nil {
		_, err = s.w.Write(tail)
	}
	if err != nil || s.file == nil {
		s.abort()
		return nil, err
	}
	if err := s.file.commit(); err != nil {
		return nil, err
	}
	return []string{s.file.path}, nil
}

func (s *jsonSink) abort() { s.file.abort() }

// WriteJSON writes r as results.json to w (see jsonSink for the layout).
func WriteJSON(w io.Writer, r *results.Results) error {
	_, _, err := runPass(memorySource(r), []sink{&jsonSink{w: w}}, newDigest("pt"))
	return err
}
