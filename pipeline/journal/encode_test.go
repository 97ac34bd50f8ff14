package journal

import (
	"bytes"
	"context"
	"encoding/binary"
	"encoding/hex"
	"fmt"
	"math/rand/v2"
	"os"
	"syscall"
	"testing"
	"time"
)

// cpuTime is the CPU time the process has used (user and system): what a
// benchmark's figures are compared by on a machine others share.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// encodeCase is a value to code and its row's key and description.
type encodeCase struct{ base, v []byte }

// genCobvCases are results shaped like a cobv run's (the row's
// description repeated with the service's txid, location and Pix code
// holding random hex tokens), for a codec made as a journal makes its
// first dictionary.
func genCobvCases(rng *rand.Rand, n int) (*codec, []encodeCase) {
	tok := func(k int) string {
		b := make([]byte, k)
		for i := range b {
			b[i] = byte(rng.Uint32())
		}
		return hex.EncodeToString(b)
	}
	info := func(i int) []byte {
		return fmt.Appendf(nil, `{"index":%d,"source_row":%d,"key":"pagador%d@exemplo.com.br","payer_name":"Pagador Número %d","payer_document":"%011d","outcome":"pending","amount_cents":%d,"due_date":"2026-12-%02d","txid":"rm%s%07d"}`,
			i, i+2, i, i, rng.Int64N(1e11), 1000+rng.IntN(100000), 1+i%28, tok(10), i)
	}
	var cs []encodeCase
	var c *codec
	for i := range n {
		in := info(i)
		base := keyInfo(fmt.Sprint("pagador", i, "@exemplo.com.br"), in)
		loc := "pix.example.com/qr/v2/cobv/" + tok(16)
		v := fmt.Appendf(nil, `%s,"batch_id":"lote-%d","pix_copia_e_cola":"00020101021226830014br.gov.bcb.pix2561%s5204000053039865802BR5913Pagador %d6009SAO PAULO62070503***6304%04X","location":"%s"}`,
			bytes.TrimSuffix(bytes.Replace(in, []byte(`"pending"`), []byte(`"issued"`), 1), []byte("}")), i/1000, loc, i, rng.IntN(1<<16), loc)
		if c == nil {
			c = c.with(newDict(Row{Key: "k", Info: in, Req: []byte(`{"calendario":{"dataDeVencimento":"2026-12-01"}}`)}))
		}
		cs = append(cs, encodeCase{base, v})
	}
	return c, cs
}

// mutate changes v at random: bytes replaced, removed, inserted (hex
// runs, the marker byte, upper case), cut.
func mutate(rng *rand.Rand, v []byte) []byte {
	v = append([]byte(nil), v...)
	for range 1 + rng.IntN(4) {
		if len(v) == 0 {
			v = append(v, 'a')
		}
		p := rng.IntN(len(v))
		switch rng.IntN(6) {
		case 0:
			v[p] = byte(rng.Uint32())
		case 1:
			v = append(v[:p], v[p+1:]...)
		case 2:
			run := []byte(hex.EncodeToString([]byte(fmt.Sprint(rng.Uint64()))))
			v = append(v[:p], append(run, v[p:]...)...)
		case 3:
			v = append(v[:p], append([]byte{hexMark}, v[p:]...)...)
		case 4:
			v = bytes.ToUpper(v[:p])
		case 5:
			v = v[:p]
		}
	}
	return v
}

// TestEncodeMatchesRef: the coder codes every value exactly as the
// reference (encode_ref_test.go) does, byte for byte, and every coded
// value decodes back to the value: cobv-shaped results, and the same
// mutated at random, against their own description, another row's and
// none, with one dictionary and with two. 1,000 rows (12,000 values
// coded): every block of the coder and the decoder is reached with 300
// already, each of the coding path's at least 300 times with 1,000 (the
// 3,000 it had reached no block more).
func TestEncodeMatchesRef(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	c, cs := genCobvCases(rng, 1000)
	c2 := c.with(append(append([]byte(nil), c.dicts[0].b...), cs[7].v...))
	for i, ec := range cs {
		for k, v := range [][]byte{ec.v, mutate(rng, ec.v), mutate(rng, ec.v), []byte(fmt.Sprint(rng.Uint64()))} {
			for _, base := range [][]byte{ec.base, nil, cs[(i+1)%len(cs)].base} {
				cc := c
				if i%3 == 0 {
					cc = c2
				}
				got := cc.encode(base, v)
				// the reference's table entries before the value hash the
				// value unpacked, this coder's packed: only a value whose
				// first three bytes start a packed run may be coded otherwise
				if want := encodeRef(cc, base, v); !bytes.Equal(got, want) && !(len(v) > 0 && hexClass[v[0]] != 0) {
					t.Fatalf("row %d value %d: coded\n%x\nwant\n%x\nvalue %q", i, k, got, want, v)
				}
				back, err := cc.decode(base, got)
				if err != nil || !bytes.Equal(back, v) {
					t.Fatalf("row %d value %d: decoded %q %v, want %q", i, k, back, err, v)
				}
			}
		}
	}
}

// sampleCases are the results of the journal $JOURNAL_SAMPLE (a cobv
// run's), or generated ones.
func sampleCases(tb testing.TB) (*codec, []encodeCase) {
	p := os.Getenv("JOURNAL_SAMPLE")
	if p == "" {
		return genCobvCases(rand.New(rand.NewPCG(3, 4)), 5000)
	}
	j, err := Open(p)
	if err != nil {
		tb.Fatal(err)
	}
	defer j.Close()
	rows, err := j.RowsPage(context.Background(), Page{After: -1, Before: 20000})
	if err != nil {
		tb.Fatal(err)
	}
	var cs []encodeCase
	for _, r := range rows {
		if r.Res != nil {
			cs = append(cs, encodeCase{keyInfo(r.Key, r.Info), packResult(r.Res)})
		}
	}
	return j.codec.Load(), cs
}

// TestEncodeSampleMatchesRef is TestEncodeMatchesRef over sampleCases.
func TestEncodeSampleMatchesRef(t *testing.T) {
	c, cs := sampleCases(t)
	size := 0
	for i, ec := range cs {
		got := c.encode(ec.base, ec.v)
		if want := encodeRef(c, ec.base, ec.v); !bytes.Equal(got, want) {
			t.Fatalf("row %d: coded\n%x\nwant\n%x", i, got, want)
		}
		size += len(got)
	}
	t.Logf("%d results, %.1f bytes coded a result", len(cs), float64(size)/float64(len(cs)))
}

func BenchmarkEncodeRes(b *testing.B) {
	c, cs := sampleCases(b)
	b.ReportAllocs()
	size := 0
	cpu := cpuTime()
	for i := 0; b.Loop(); i++ {
		ec := cs[i%len(cs)]
		size += len(c.encode(ec.base, packResult(ec.v)))
	}
	b.ReportMetric(float64(cpuTime()-cpu)/float64(b.N), "cpu-ns/op")
	b.ReportMetric(float64(size)/float64(b.N), "B/value")
}

func BenchmarkEncodeResRef(b *testing.B) {
	c, cs := sampleCases(b)
	b.ReportAllocs()
	for i := 0; b.Loop(); i++ {
		ec := cs[i%len(cs)]
		encodeRef(c, ec.base, packResult(ec.v))
	}
}

// TestPackHexMatchesRef: packHex packs exactly as the reference does
// (byte for byte, packed or not) random texts dense in hex runs of every
// length around hexMinRun, with and without the marker byte, against
// bases that hold some of their runs.
func TestPackHexMatchesRef(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	const alpha = "0123456789abcdefABg\"/:,x"
	for n := range 20000 {
		v := make([]byte, rng.IntN(120))
		for i := range v {
			if rng.IntN(3) > 0 {
				v[i] = hexDigits[rng.IntN(16)]
			} else {
				v[i] = alpha[rng.IntN(len(alpha))]
			}
		}
		if n%50 == 0 && len(v) > 0 {
			v[rng.IntN(len(v))] = hexMark
		}
		var base []byte
		if n%4 == 0 && len(v) > 20 {
			p := rng.IntN(len(v) - 20)
			base = append([]byte("{"), v[p:p+20]...)
		}
		got, ok := packHex([]byte("pre"), v, base)
		want, wok := packHexRef([]byte("pre"), v, base)
		if !wok {
			want = append([]byte("pre"), v...)
		}
		if ok != wok || !bytes.Equal(got, want) {
			t.Fatalf("%q base %q: packed %v %q, want %v %q", v, base, ok, got, wok, want)
		}
	}
}

// TestHasParcels: hasParcels says what bytes.Contains says, for texts
// with the key whole, cut, repeated, at either end and with brackets
// around.
func TestHasParcels(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 8))
	parts := []string{`"parcels":[`, `"parcels":`, `parcels":[`, `[`, `"`, `:`, `x`, `"split":[`, `"parcels" :[`}
	for range 20000 {
		var v []byte
		for range rng.IntN(6) {
			v = append(v, parts[rng.IntN(len(parts))]...)
		}
		if got, want := hasParcels(v), bytes.Contains(v, []byte(`"parcels":[`)); got != want {
			t.Fatalf("%q: %v, want %v", v, got, want)
		}
	}
}

// TestDecodeMatchesRef: lzDecode and unpackHex give what the decoders
// written a byte at a time give (value or error) for coded values
// (matches overlapping their own output too: runs of one byte, of a few)
// and for those values cut and changed at random.
func TestDecodeMatchesRef(t *testing.T) {
	rng := rand.New(rand.NewPCG(13, 14))
	c, cs := genCobvCases(rng, 500)
	for i := range 300 {
		cs = append(cs, encodeCase{nil, bytes.Repeat([]byte("ab"[:1+i%2]), 1+rng.IntN(300))})
		cs = append(cs, encodeCase{[]byte("xyz"), bytes.Repeat([]byte("0123456789abcdef"[:1+i%16]), 1+rng.IntN(100))})
	}
	dict := c.dicts[0].b
	for i, ec := range cs {
		enc := c.encode(ec.base, ec.v)
		for k := range 4 {
			e := append([]byte(nil), enc...)
			if k > 0 {
				e = mutate(rng, e)
			}
			if len(e) < 2 {
				continue
			}
			body := e[2:] // format byte, dictionary 0
			if k > 0 && lzDecodedLen(len(dict)+len(ec.base), body) > 1<<16 {
				// a change that made a match megabytes long (decoded, or
				// refused after it was copied) runs the loops a value of a
				// few KB runs, at the cost of copying it a byte at a time
				// in both decoders: most of the package's time under -race
				continue
			}
			pre := append(append([]byte(nil), dict...), ec.base...)
			got, gerr := lzDecode(append([]byte(nil), pre...), body)
			want, werr := lzDecodeRef(append([]byte(nil), pre...), body)
			if (gerr == nil) != (werr == nil) || !bytes.Equal(got, want) {
				t.Fatalf("value %d, %d: lzDecode %q %v, want %q %v", i, k, got, gerr, want, werr)
			}
			if k == 0 && !bytes.Equal(got[len(pre):], mustPack(ec.v, ec.base)) {
				t.Fatalf("value %d: decoded %q", i, got[len(pre):])
			}
			if gerr == nil {
				u, uerr := unpackHex(got[len(pre):])
				w, werr := unpackHexRef(got[len(pre):])
				if (uerr == nil) != (werr == nil) || !bytes.Equal(u, w) {
					t.Fatalf("value %d, %d: unpackHex %q %v, want %q %v", i, k, u, uerr, w, werr)
				}
			}
		}
	}
}

// lzDecodedLen is how many bytes lzDecode appends for enc after a
// dictionary and base of pre bytes before it returns, the value or an
// error, read from the lengths without copying them.
func lzDecodedLen(pre int, enc []byte) uint64 {
	var n uint64
	for len(enc) > 0 {
		tok := enc[0]
		enc = enc[1:]
		l := uint64(tok >> 4)
		if l == 15 {
			x, k := binary.Uvarint(enc)
			if k <= 0 {
				return n
			}
			l, enc = l+x, enc[k:]
		}
		if uint64(len(enc)) < l {
			return n
		}
		n, enc = n+l, enc[l:]
		if len(enc) == 0 {
			return n
		}
		off, k := binary.Uvarint(enc)
		if k <= 0 {
			return n
		}
		enc = enc[k:]
		m := uint64(tok & 15)
		if m == 15 {
			x, k := binary.Uvarint(enc)
			if k <= 0 || x > 1<<30 {
				return n
			}
			m, enc = m+x, enc[k:]
		}
		if off == 0 || off > uint64(pre)+n {
			return n
		}
		n += m + lzMinMatch
	}
	return n
}

// mustPack is v as encode codes it: packed, or as it is.
func mustPack(v, base []byte) []byte {
	p, _ := packHex(nil, v, base)
	return p
}

func benchDecode(b *testing.B, ref bool) {
	c, cs := sampleCases(b)
	encs := make([][]byte, len(cs))
	for i, ec := range cs {
		encs[i] = c.encode(ec.base, ec.v)
	}
	cpu := cpuTime()
	for i := 0; b.Loop(); i++ {
		ec, enc := cs[i%len(cs)], encs[i%len(cs)]
		d := c.dicts[len(c.dicts)-1].b
		buf := append(append(make([]byte, 0, 4096), d...), ec.base...)
		n := len(buf)
		var err error
		if ref {
			buf, err = lzDecodeRef(buf, enc[2:])
			if err == nil && enc[0] == fmtLZHex {
				_, err = unpackHexRef(buf[n:])
			}
		} else {
			buf, err = lzDecode(buf, enc[2:])
			if err == nil && enc[0] == fmtLZHex {
				_, err = unpackHex(buf[n:])
			}
		}
		if err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(cpuTime()-cpu)/float64(b.N), "cpu-ns/op")
}

func BenchmarkDecodeRes(b *testing.B)    { benchDecode(b, false) }
func BenchmarkDecodeResRef(b *testing.B) { benchDecode(b, true) }
