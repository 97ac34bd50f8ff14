package cnab

import (
	"bytes"
	"errors"
	"io"
	"strings"
	"testing"
)

// FuzzReader feeds the reader arbitrary bytes: it must never panic, must
// end (each call consumes at least one line), and must never hold more
// than a line at a time (maxLine bounds what it reads of one).
func FuzzReader(f *testing.F) {
	h240 := strings.Repeat("0", 7) + "0" + strings.Repeat(" ", 232)
	f.Add([]byte(h240 + "\r\n"))
	f.Add([]byte(h240[:100]))
	h400 := "01REMESSA01COBRANCA       " + strings.Repeat(" ", 50) + "237" + strings.Repeat(" ", 315) + "000001"
	f.Add([]byte(h400 + "\n9" + strings.Repeat(" ", 393) + "000002\n"))
	f.Add([]byte("\x1a"))
	f.Fuzz(func(t *testing.T, b []byte) {
		rd, err := NewReader(bytes.NewReader(b), Options{})
		if err != nil {
			return
		}
		for i := 0; i < len(b)+2; i++ {
			tt, err := rd.Next()
			if err == io.EOF {
				return
			}
			var ce *Error
			if err != nil && (!errors.As(err, &ce) || !ce.Title) {
				return
			}
			if err == nil && len(tt.Lines) == 0 {
				t.Fatal("a title without lines")
			}
		}
		t.Fatal("the reader did not end")
	})
}
