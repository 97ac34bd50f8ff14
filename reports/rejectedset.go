package reports

import (
	"bufio"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"maps"
	"os"
	"slices"
)

// wantRows is the set of rejected rows to write back, source row ->
// "Problema" text, taken as the input is read in order.
type wantRows interface {
	// take returns the text of source row n and removes it; false when n
	// is not wanted.
	take(n int) (string, bool, error)
	// left returns the rows never taken, in order.
	left() ([]int, error)
}

// mapWant is a wantRows in memory.
type mapWant map[int]string

func (m mapWant) take(n int) (string, bool, error) {
	s, ok := m[n]
	if ok {
		delete(m, n)
	}
	return s, ok, nil
}

func (m mapWant) left() ([]int, error) { return slices.Sorted(maps.Keys(m)), nil }

// rejectedSpill collects the rejected rows of a pass without holding them:
// while their source rows increase (a run's rows are in input order) they
// are appended to a temporary file, (row, length, text) as varints and
// bytes, and read back in order as the input is; a row out of order moves
// them into a map (memory then grows with the rejected rows, as before).
type rejectedSpill struct {
	f    *os.File
	w    *bufio.Writer
	last int
	n    int
	m    map[int]string // once out of order
	err  error
	buf  [2 * binary.MaxVarintLen64]byte
}

func (s *rejectedSpill) add(row int, text string) {
	if s.err != nil {
		return
	}
	if s.m != nil {
		s.m[row] = text
		return
	}
	if s.n > 0 && row <= s.last {
		if s.m, s.err = s.load(); s.err == nil {
			s.m[row] = text
		}
		return
	}
	if s.f == nil {
		if s.f, s.err = os.CreateTemp("", "remessa-rejeitadas-"); s.err != nil {
			return
		}
		s.w = bufio.NewWriterSize(s.f, 64<<10)
	}
	k := binary.PutUvarint(s.buf[:], uint64(row))
	k += binary.PutUvarint(s.buf[k:], uint64(len(text)))
	if _, s.err = s.w.Write(s.buf[:k]); s.err == nil {
		_, s.err = s.w.WriteString(text)
	}
	s.last = row
	s.n++
}

// len is the number of rows added.
func (s *rejectedSpill) len() int {
	if s.m != nil {
		return len(s.m)
	}
	return s.n
}

// load reads the rows spilled so far into a map and drops the file.
func (s *rejectedSpill) load() (map[int]string, error) {
	m := map[int]string{}
	if s.f == nil {
		return m, nil
	}
	r, err := s.reader()
	if err != nil {
		return nil, err
	}
	for {
		n, text, err := r.next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return nil, err
		}
		m[n] = text
	}
	s.close()
	return m, nil
}

// want returns the rows as a wantRows to take in input order.
func (s *rejectedSpill) want() (wantRows, error) {
	if s.err != nil {
		return nil, fmt.Errorf("linhas rejeitadas: arquivo temporário: %w", s.err)
	}
	if s.m != nil {
		return mapWant(maps.Clone(s.m)), nil
	}
	if s.f == nil {
		return mapWant{}, nil
	}
	r, err := s.reader()
	if err != nil {
		return nil, err
	}
	c := &spillWant{r: r}
	return c, c.advance()
}

func (s *rejectedSpill) reader() (*spillReader, error) {
	if err := s.w.Flush(); err != nil {
		return nil, err
	}
	return &spillReader{r: bufio.NewReaderSize(io.NewSectionReader(s.f, 0, 1<<62), 64<<10)}, nil
}

func (s *rejectedSpill) close() {
	if s.f != nil {
		s.f.Close()
		os.Remove(s.f.Name())
		s.f, s.w = nil, nil
	}
}

type spillReader struct{ r *bufio.Reader }

func (r *spillReader) next() (int, string, error) {
	n, err := binary.ReadUvarint(r.r)
	if err != nil {
		return 0, "", err // io.EOF at the end
	}
	k, err := binary.ReadUvarint(r.r)
	if err != nil {
		return 0, "", io.ErrUnexpectedEOF
	}
	b := make([]byte, k)
	if _, err := io.ReadFull(r.r, b); err != nil {
		return 0, "", io.ErrUnexpectedEOF
	}
	return int(n), string(b), nil
}

// spillWant takes the spilled rows in increasing order: rows the input
// skips past are kept as missing.
type spillWant struct {
	r       *spillReader
	row     int
	text    string
	done    bool
	missing []int
}

func (c *spillWant) advance() error {
	n, text, err := c.r.next()
	if errors.Is(err, io.EOF) {
		c.done = true
		return nil
	}
	if err != nil {
		return fmt.Errorf("linhas rejeitadas: arquivo temporário: %w", err)
	}
	c.row, c.text = n, text
	return nil
}

func (c *spillWant) take(n int) (string, bool, error) {
	for !c.done && c.row < n {
		c.missing = append(c.missing, c.row)
		if err := c.advance(); err != nil {
			return "", false, err
		}
	}
	if c.done || c.row != n {
		return "", false, nil
	}
	text := c.text
	return text, true, c.advance()
}

func (c *spillWant) left() ([]int, error) {
	for !c.done {
		c.missing = append(c.missing, c.row)
		if err := c.advance(); err != nil {
			return nil, err
		}
	}
	return c.missing, nil
}
