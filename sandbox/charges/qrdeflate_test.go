package charges

import (
	"bytes"
	"compress/zlib"
	"hash/adler32"
	"io"
	"math/rand/v2"
	"testing"
)

// inflate decodes a zlib stream with compress/zlib (which checks the
// Adler-32 too).
func inflate(t *testing.T, z []byte) []byte {
	t.Helper()
	r, err := zlib.NewReader(bytes.NewReader(z))
	if err != nil {
		t.Fatalf("zlib header: %v", err)
	}
	out, err := io.ReadAll(r)
	if err != nil {
		t.Fatalf("inflate: %v", err)
	}
	return out
}

// TestQRZlibRoundTrip: qrZlib's streams inflate to their input, for raw
// data shaped like qrPNG's (module rows of a literal line and 3 zero Up
// lines, quiet rows repeated) and for random bytes of its alphabet with
// runs, at every line length it takes.
func TestQRZlibRoundTrip(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 11))
	alphabet := []byte{0x00, 0x02, 0x0F, 0xF0, 0xFF}
	for line := 2; line <= qrZMaxLine; line++ {
		for k := 0; k < 6; k++ {
			var raw []byte
			switch k % 3 {
			case 0: // qrPNG's shape
				mods := 4 + rng.IntN(20)
				var prev []byte
				for m := 0; m < mods; m++ {
					lit := make([]byte, line)
					if m > 0 && rng.IntN(3) == 0 {
						copy(lit, prev)
					} else {
						for i := 1; i < line; i++ {
							lit[i] = alphabet[1+rng.IntN(4)]
						}
					}
					prev = lit
					raw = append(raw, lit...)
					for range 3 {
						raw = append(raw, 2)
						raw = append(raw, make([]byte, line-1)...)
					}
				}
			case 1: // random bytes of the alphabet
				raw = make([]byte, line*(1+rng.IntN(40)))
				for i := range raw {
					raw[i] = alphabet[rng.IntN(len(alphabet))]
				}
			case 2: // long runs, longer than a match
				for len(raw) < 3000 {
					c := alphabet[rng.IntN(len(alphabet))]
					raw = append(raw, bytes.Repeat([]byte{c}, 1+rng.IntN(600))...)
				}
			}
			z, ok := qrZlib([]byte("prefix"), raw, line)
			if !ok {
				t.Fatalf("line %d case %d: qrZlib refused", line, k)
			}
			if string(z[:6]) != "prefix" {
				t.Fatalf("line %d: dst not kept", line)
			}
			if got := inflate(t, z[6:]); !bytes.Equal(got, raw) {
				t.Fatalf("line %d case %d: inflated %d bytes, want %d (first difference at %d)", line, k, len(got), len(raw), firstDiff(got, raw))
			}
		}
	}
}

func firstDiff(a, b []byte) int {
	for i := range min(len(a), len(b)) {
		if a[i] != b[i] {
			return i
		}
	}
	return min(len(a), len(b))
}

// TestQRZlibRefuses: a byte outside the code or a line too long is left
// to compress/flate.
func TestQRZlibRefuses(t *testing.T) {
	raw := bytes.Repeat([]byte{0xFF}, 100)
	raw[57] = 0x10
	if _, ok := qrZlib(nil, raw, 10); ok {
		t.Fatal("byte 0x10 taken")
	}
	if _, ok := qrZlib(nil, make([]byte, 400), qrZMaxLine+1); ok {
		t.Fatalf("line of %d bytes taken", qrZMaxLine+1)
	}
	if _, ok := qrZlib(nil, make([]byte, 400), 1); ok {
		t.Fatal("line of 1 byte taken")
	}
}

// TestQRImageSmaller: qrZlib's images are no larger than compress/flate's
// at BestSpeed (the reference's).
func TestQRImageSmaller(t *testing.T) {
	var got, want int
	for _, c := range qrTestContents(t, qrBRCodes)[:qrBRCodes] {
		g, err := qrImage(c)
		if err != nil {
			t.Fatal(err)
		}
		got += len(g)
		want += len(refQRImage(t, c))
	}
	if got > want {
		t.Fatalf("images total %d bytes, compress/flate's %d", got, want)
	}
	t.Logf("images total %d bytes, compress/flate's %d", got, want)
}

// TestAdlerZeros: adlerZeros is adler32.Checksum, on zero runs, bytes of
// every value and lengths around its 8-byte words and 4096-byte chunks.
func TestAdlerZeros(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 5))
	for k := 0; k < 300; k++ {
		n := rng.IntN(20000)
		if k < 40 {
			n = k
		}
		raw := make([]byte, n)
		for i := 0; i < n; {
			run := 1 + rng.IntN(50)
			if rng.IntN(2) == 0 {
				for j := i; j < min(n, i+run); j++ {
					raw[j] = byte(rng.IntN(256))
				}
			}
			i += run
		}
		if k%7 == 0 {
			for i := range raw {
				raw[i] = 0xFF
			}
		}
		if got, want := adlerZeros(raw), adler32.Checksum(raw); got != want {
			t.Fatalf("%d bytes: adlerZeros %08x, adler32 %08x", n, got, want)
		}
	}
}
