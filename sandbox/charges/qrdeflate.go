package charges

import (
	"encoding/binary"
	"math/bits"
)

// The zlib stream of a QR image's PNG data, written without
// compress/flate (which took a third of qrImage's time). The raw data of
// qrPNG has few byte values (a filter byte 0 or 2, then pairs of 4-pixel
// modules: 0x00, 0x0F, 0xF0, 0xFF) and repeats by whole lines: the three
// lines after a module row's first are filter Up with zero bytes, and a
// module row often equals the one before (the quiet zone). qrZlib writes
// one dynamic-Huffman block with a fixed code made for that: 2-3 bits for
// those literals, 7 bits for every length code, 4 bits for the distance
// codes up to 256, and greedy matches: at a line's start one module row or
// one line back, anywhere a run of one byte (the image is not smaller than BestSpeed's, usually
// smaller). Any other byte, a line longer than qrZMaxLine, falls back to
// compress/flate (ok false). The result decodes to the same bytes: the
// tests decode it and compare it with the raw data, and the image with
// the reference drawing.

// qrZMaxLine is the longest image line (filter byte included) qrZlib
// takes: a match of one module row (4 lines) must fit deflate's 258.
const qrZMaxLine = 64

// qrZMinMatch is the shortest match qrZlib writes: a match costs some 16
// bits, a literal 2 or 3.
const qrZMinMatch = 8

// qrZ is the fixed code: per literal/length symbol and distance symbol
// its bit-reversed code and length (0 = not in the code), and the block
// header that describes it.
var qrZ struct {
	lit        [286]uint16
	litLen     [286]uint8
	dist       [16]uint16
	distLen    [16]uint8
	header     []byte
	headerAcc  uint64
	headerBits uint
	lenCode    [259]uint8 // per match length, its length symbol less 257
	lenBase    [29]uint16
	lenXbits   [29]uint8
	distBase   [16]uint16
	distXbits  [16]uint8
}

func init() {
	var litLens [286]uint8
	litLens[0x00], litLens[0xFF] = 2, 2
	litLens[0x0F], litLens[0xF0] = 3, 3
	litLens[0x02] = 6
	for s := 256; s < 286; s++ {
		litLens[s] = 7
	}
	var distLens [16]uint8
	for i := range distLens {
		distLens[i] = 4
	}
	codes := canonical(litLens[:])
	for s := range litLens {
		qrZ.lit[s], qrZ.litLen[s] = codes[s], litLens[s]
	}
	dcodes := canonical(distLens[:])
	for s := range distLens {
		qrZ.dist[s], qrZ.distLen[s] = dcodes[s], distLens[s]
	}
	// length symbols 257..285 and distance symbols 0..15 (RFC 1951 3.2.5)
	base := uint16(3)
	for i := 0; i < 28; i++ {
		x := uint8(0)
		if i >= 8 {
			x = uint8(i/4 - 1)
		}
		qrZ.lenBase[i], qrZ.lenXbits[i] = base, x
		base += 1 << x
	}
	qrZ.lenBase[28], qrZ.lenXbits[28] = 258, 0
	for l := 3; l <= 258; l++ {
		i := 0
		for i < 27 && int(qrZ.lenBase[i+1]) <= l {
			i++
		}
		if l == 258 {
			i = 28
		}
		qrZ.lenCode[l] = uint8(i)
	}
	dbase := uint16(1)
	for i := 0; i < 16; i++ {
		x := uint8(0)
		if i >= 4 {
			x = uint8(i/2 - 1)
		}
		qrZ.distBase[i], qrZ.distXbits[i] = dbase, x
		dbase += 1 << x
	}
	// The block header: BFINAL, BTYPE 2, HLIT 286, HDIST 16, HCLEN 19,
	// the code-length code (4 bits, 5 for 1 and 8-12), then the 302 code
	// lengths run-length coded (16: repeat 3-6, 17: 3-10 zeros, 18: 11-138).
	var clLens [19]uint8
	for s := range clLens {
		clLens[s] = 4
	}
	for _, s := range []int{1, 8, 9, 10, 11, 12} {
		clLens[s] = 5
	}
	clCodes := canonical(clLens[:])
	var w zbits
	w.put(1, 1)
	w.put(2, 2)
	w.put(286-257, 5)
	w.put(16-1, 5)
	w.put(19-4, 4)
	for _, s := range []int{16, 17, 18, 0, 8, 7, 9, 6, 10, 5, 11, 4, 12, 3, 13, 2, 14, 1, 15} {
		w.put(uint64(clLens[s]), 3)
	}
	seq := append(append([]uint8(nil), litLens[:]...), distLens[:]...)
	sym := func(s int) { w.put(uint64(clCodes[s]), uint(clLens[s])) }
	for i := 0; i < len(seq); {
		v, n := seq[i], 1
		for i+n < len(seq) && seq[i+n] == v {
			n++
		}
		i += n
		if v == 0 {
			for n >= 11 {
				k := min(n, 138)
				sym(18)
				w.put(uint64(k-11), 7)
				n -= k
			}
			if n >= 3 {
				sym(17)
				w.put(uint64(n-3), 3)
				n = 0
			}
		} else {
			sym(int(v))
			n--
			for n >= 3 {
				k := min(n, 6)
				sym(16)
				w.put(uint64(k-3), 2)
				n -= k
			}
		}
		for ; n > 0; n-- {
			sym(int(v))
		}
	}
	qrZ.header, qrZ.headerAcc, qrZ.headerBits = w.out, w.acc, w.n
}

// canonical is the deflate code of lengths (RFC 1951 3.2.2), each code
// bit-reversed as the stream carries it.
func canonical(lengths []uint8) []uint16 {
	var count [16]int
	for _, l := range lengths {
		count[l]++
	}
	count[0] = 0
	var next [16]int
	code := 0
	for b := 1; b < 16; b++ {
		code = (code + count[b-1]) << 1
		next[b] = code
	}
	out := make([]uint16, len(lengths))
	for s, l := range lengths {
		if l != 0 {
			out[s] = bits.Reverse16(uint16(next[l])) >> (16 - l)
			next[l]++
		}
	}
	return out
}

// zbits writes a deflate bit stream (least significant bit first).
type zbits struct {
	out []byte
	acc uint64
	n   uint
}

func (w *zbits) put(v uint64, n uint) {
	w.acc |= v << w.n
	w.n += n
	if w.n >= 32 {
		w.out = binary.LittleEndian.AppendUint32(w.out, uint32(w.acc))
		w.acc >>= 32
		w.n -= 32
	}
}

func (w *zbits) flush() {
	for w.n > 0 {
		w.out = append(w.out, byte(w.acc))
		w.acc >>= 8
		w.n -= min(w.n, 8)
	}
}

// qrZlib appends to dst the zlib stream of raw, image lines of line bytes
// each, or returns ok false when raw has a byte the code lacks or lines
// too long (the caller then uses compress/flate).
func qrZlib(dst, raw []byte, line int) ([]byte, bool) {
	if line < 2 || line > qrZMaxLine {
		return dst, false
	}
	w := zbits{out: append(dst, 0x78, 0x01)}
	w.out = append(w.out, qrZ.header...)
	w.acc, w.n = qrZ.headerAcc, qrZ.headerBits
	for p := 0; p < len(raw); {
		// Matches one module row and one line back start at a line's
		// start; runs of a byte anywhere.
		best, bestD := 0, 0
		if p%line == 0 {
			for _, d := range [2]int{4 * line, line} {
				if d <= p {
					if n := matchLen(raw[p:], raw[p-d:], 258); n > best {
						best, bestD = n, d
					}
				}
			}
		}
		if best < qrZMinMatch && p > 0 && raw[p] == raw[p-1] {
			if n := matchLen(raw[p:], raw[p-1:], 258); n > best {
				best, bestD = n, 1
			}
		}
		if best >= qrZMinMatch {
			i := qrZ.lenCode[best]
			s := 257 + int(i)
			w.put(uint64(qrZ.lit[s]), uint(qrZ.litLen[s]))
			if x := qrZ.lenXbits[i]; x > 0 {
				w.put(uint64(best-int(qrZ.lenBase[i])), uint(x))
			}
			dc := distCode(bestD)
			w.put(uint64(qrZ.dist[dc]), uint(qrZ.distLen[dc]))
			if x := qrZ.distXbits[dc]; x > 0 {
				w.put(uint64(bestD-int(qrZ.distBase[dc])), uint(x))
			}
			p += best
			continue
		}
		c := raw[p]
		if qrZ.litLen[c] == 0 {
			return dst, false
		}
		w.put(uint64(qrZ.lit[c]), uint(qrZ.litLen[c]))
		p++
	}
	w.put(uint64(qrZ.lit[256]), uint(qrZ.litLen[256]))
	w.flush()
	return binary.BigEndian.AppendUint32(w.out, adlerZeros(raw)), true
}

// adlerZeros is adler32.Checksum(raw), faster on the zero bytes that make
// most of a QR image's raw data: 8 of them add 8×a to b.
func adlerZeros(raw []byte) uint32 {
	const mod = 65521
	a, b := uint64(1), uint64(0)
	for len(raw) > 0 {
		// a stays below 2^21 and b below 2^33 over 4096 bytes
		chunk := raw[:min(len(raw), 4096)]
		raw = raw[len(chunk):]
		for len(chunk) >= 8 {
			if binary.LittleEndian.Uint64(chunk) == 0 {
				b += 8 * a
			} else {
				for _, c := range chunk[:8] {
					a += uint64(c)
					b += a
				}
			}
			chunk = chunk[8:]
		}
		for _, c := range chunk {
			a += uint64(c)
			b += a
		}
		a %= mod
		b %= mod
	}
	return uint32(b<<16 | a)
}

// distCode is the distance symbol of d (1 to 256).
func distCode(d int) int {
	if d <= 4 {
		return d - 1
	}
	hb := bits.Len(uint(d-1)) - 1 // d-1 in [2^hb, 2^(hb+1))
	return 2*hb + int((d-1)>>(hb-1)&1)
}

// matchLen is how many leading bytes a and b share, at most max (b may
// overlap a from behind: it is read as the bytes are compared).
func matchLen(a, b []byte, limit int) int {
	limit = min(limit, len(a))
	n := 0
	for n+8 <= limit {
		if x := binary.LittleEndian.Uint64(a[n:]) ^ binary.LittleEndian.Uint64(b[n:]); x != 0 {
			return n + bits.TrailingZeros64(x)/8
		}
		n += 8
	}
	for n < limit && a[n] == b[n] {
		n++
	}
	return n
}
