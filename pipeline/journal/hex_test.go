package journal

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"path/filepath"
	"testing"
)

// TestPackHex: runs of lowercase hex digits are packed two to a byte from
// their first letter to their last (at least 16 digits) and come back as
// they were; shorter runs, digit runs, the digits around a token, upper
// case and a value holding the marker byte stay as they are.
func TestPackHex(t *testing.T) {
	for _, c := range []struct {
		in     string
		packed bool
		size   int // packed size, when packed
	}{
		{`{"link":"http://h/charge/1acba74f436196623328776f2afad752/link"}`, true, 25 + 1 + 2 + 14 + 3 + 7},
		{`{"odd":"1acba74f436196623328776f2afad7521"}`, true, 8 + 1 + 2 + 14 + 4 + 2},
		{`{"pix":"/cobv/98a332eba8bbd7667b42cc0806e16b355204000053039865802BR"}`, true, 14 + 2 + 2 + 14 + 21 + 4},
		{`{"pix":"00020101021226780014br.gov"}`, false, 0},
		{`{"pix":"0002010102122677001400000000000000000"}`, false, 0},
		{`{"short":"1acba74f4361966"}`, false, 0},
		{`{"upper":"1ACBA74F436196623328776F2AFAD752"}`, false, 0},
		{"{\"mark\":\"\x1f1acba74f436196623328776f2afad752\"}", false, 0},
		{`a1acba74f436196623328776f2afad752b5c86e9e78fdc54b7b1bdd3cf80b0b5d4`, true, 2 + 32 + 2},
		{``, false, 0},
	} {
		p, ok := packHex(nil, []byte(c.in), nil)
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
	// a run the row's description holds stays text (the coder copies it)
	in := `{"txid":"5c86e9e78fdc54b7b1bdd3cf80b0b5d4","link":"1acba74f436196623328776f2afad752"}`
	p, ok := packHex(nil, []byte(in), []byte(`{"txid":"5c86e9e78fdc54b7b1bdd3cf80b0b5d4"}`))
	if !ok || !bytes.Contains(p, []byte("5c86e9e78fdc54b7b1bdd3cf80b0b5d4")) || bytes.Contains(p, []byte("1acba74f")) {
		t.Fatalf("packed %q", p)
	}
	if _, err := unpackHex([]byte{'a', hexMark, 5, 1, 2}); err == nil {
		t.Fatal("a cut packed run was read")
	}
}

func FuzzPackHex(f *testing.F) {
	f.Add([]byte(`{"link":"http://h/charge/1acba74f436196623328776f2afad752/link"}`))
	f.Add([]byte("\x1f\x05abc"))
	f.Fuzz(func(t *testing.T, v []byte) {
		p, ok := packHex(nil, v, nil)
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
	// tokens of 32 digits starting and ending with a letter, as random
	// as the service's
	token := func(i, k int) string {
		h := sha256.Sum256([]byte(fmt.Sprint(i, "/", k)))
		return "a" + hex.EncodeToString(h[:15]) + "f"
	}
	res := func(i int) json.RawMessage {
		return json.RawMessage(fmt.Sprintf(`{"index":%d,"link":"http://h/v1/documents/charge/%s/link","pdf":"http://h/v1/documents/charge/%s/pdf","pix":"00020101021226770014br.gov.bcb.pix2555h/v2/cobv/%s5204000053039865802BR6304ABCD"}`,
			i, token(i, 1), token(i, 1), token(i, 2)))
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
	if per := stored / n; per > 90 {
		t.Errorf("%d bytes a result, want at most 90", per)
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
