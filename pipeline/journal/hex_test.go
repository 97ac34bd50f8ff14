package journal

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"path/filepath"
	"testing"
)

// TestPackHex: runs of at least 16 lowercase hex digits with a letter are
// packed two to a byte and come back as they were; shorter runs, digit
// runs, upper case and a value holding the marker byte stay as they are.
func TestPackHex(t *testing.T) {
	for _, c := range []struct {
		in     string
		packed bool
		size   int // packed size, when packed
	}{
		{`{"link":"http://h/charge/1acba74f436196623328776f2afad752/link"}`, true, 64 - 16 + 2},
		{`{"odd":"1acba74f436196623328776f2afad7521"}`, true, 8 + 2 + 16 + 1 + 2},
		{`{"pix":"0002010102122677001400000000000000000"}`, false, 0},
		{`{"short":"1acba74f4361966"}`, false, 0},
		{`{"upper":"1ACBA74F436196623328776F2AFAD752"}`, false, 0},
		{"{\"mark\":\"\x1f1acba74f436196623328776f2afad752\"}", false, 0},
		{`a1acba74f436196623328776f2afad752b5c86e9e78fdc54b7b1bdd3cf80b0b5d4`, true, 2 + 33},
		{``, false, 0},
	} {
		p, ok := packHex(nil, []byte(c.in))
		if ok != c.packed {
			t.Fatalf("%q: packed %v, want %v", c.in, ok, c.packed)
		}
		if !ok {
			continue
		}
		if len(p) != c.size {
			t.Errorf("%q: %d bytes packed, want %d", c.in, len(p), c.size)
		}
		back, err := unpackHex(p)
		if err != nil || string(back) != c.in {
			t.Fatalf("%q: unpacked %q %v", c.in, back, err)
		}
	}
	if _, err := unpackHex([]byte{'a', hexMark, 5, 1, 2}); err == nil {
		t.Fatal("a cut packed run was read")
	}
}

func FuzzPackHex(f *testing.F) {
	f.Add([]byte(`{"link":"http://h/charge/1acba74f436196623328776f2afad752/link"}`))
	f.Add([]byte("\x1f\x05abc"))
	f.Fuzz(func(t *testing.T, v []byte) {
		p, ok := packHex(nil, v)
		if !ok {
			return
		}
		back, err := unpackHex(p)
		if err != nil || !bytes.Equal(back, v) {
			t.Fatalf("%q: unpacked %q %v", v, back, err)
		}
		unpackHex(v) // any input: an error, never a panic
	})
}

// TestJournalHexResults: results carrying the service's hex tokens are
// stored packed (smaller than their tokens' text) and read back as they
// were, through a reopen.
func TestJournalHexResults(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), FileName)
	j, err := Create(path)
	if err != nil {
		t.Fatal(err)
	}
	res := func(i int) json.RawMessage {
		return json.RawMessage(fmt.Sprintf(`{"index":%d,"link":"http://h/v1/documents/charge/%032x/link","pdf":"http://h/v1/documents/charge/%032x/pdf","pix":"00020101021226770014br.gov.bcb.pix2555h/v2/cobv/%032x6304ABCD"}`,
			i, uint64(i)*0x9e3779b97f4a7c15, uint64(i)*0x9e3779b97f4a7c15, uint64(i+7)*0xc2b2ae3d27d4eb4f))
	}
	const n = 40
	if err := j.Tx(ctx, func(tx *Tx) error {
		for i := 0; i < n; i++ {
			if err := tx.AddRow(Row{Index: i, Key: fmt.Sprint("k", i), State: RowPending, Info: json.RawMessage(fmt.Sprintf(`{"index":%d}`, i))}); err != nil {
				return err
			}
		}
		for i := 0; i < n; i++ {
			if err := tx.SetRow(i, RowIssued, res(i)); err != nil {
				return err
			}
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	var stored, packed int
	if err := j.db.QueryRow(`SELECT sum(length(res)), sum(substr(res,1,1) = x'03') FROM rows`).Scan(&stored, &packed); err != nil {
		t.Fatal(err)
	}
	j.Close()
	if packed != n {
		t.Fatalf("%d of %d results packed", packed, n)
	}
	// three random 32-digit tokens a row (one repeated): at most about
	// half their text, plus the rest
	if per := stored / n; per > 80 {
		t.Errorf("%d bytes a result, want at most 80", per)
	}
	if j, err = Open(path); err != nil {
		t.Fatal(err)
	}
	defer j.Close()
	rows, err := j.Rows(ctx)
	if err != nil {
		t.Fatal(err)
	}
	for i, r := range rows {
		if string(r.Res) != string(res(i)) {
			t.Fatalf("row %d: %s, want %s", i, r.Res, res(i))
		}
	}
}
