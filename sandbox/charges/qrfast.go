package charges

import (
	"encoding/binary"
	"sync"
)

// The packed path of the QR encoder: what qrImage uses for symbols up to
// 64 modules (versions 1 to 11, BR Codes up to 251 bytes, which covers the
// slips' dynamic ones). It makes the same symbol as qrMatrix(content, -1)
// without a byte per module: the codewords are written byte-wise, the
// Reed-Solomon remainders with log tables, the data bits go straight into
// row and column words (bit x of rows[y] and bit y of cols[x]), the mask
// is chosen on those words (qrBestMaskRows) and the symbol comes out as
// rows. TestQRRowsMatchMatrix compares it with qrMatrix module by module.

// rsTables holds, per EC codeword count, the generator polynomial times
// every byte f (rsTables[ec][f]: the ec products, highest degree first,
// little-endian in 4 words): one Reed-Solomon step is then a one-byte
// shift and 4 XORs.
var rsTables = map[int]*[256][4]uint64{}

// rsTable is rsTables' entry of generator gen (filled by qrenc.go's init,
// after the Galois field tables).
func rsTable(gen []int) *[256][4]uint64 {
	t := new([256][4]uint64)
	for f := 1; f < 256; f++ {
		for j, g := range gen {
			t[f][j/8] |= uint64(gfMul(g, f)) << (8 * (j % 8))
		}
	}
	return t
}

// qrVersionFor is the smallest version (1-20) whose level-M capacity holds
// n bytes in byte mode, or 0.
func qrVersionFor(n int) int {
	for v := 1; v <= 20; v++ {
		b := qrBlocks[v]
		capBits := (b[1]*b[2] + b[3]*b[4]) * 8
		countBits := 8
		if v >= 10 {
			countBits = 16
		}
		if 4+countBits+8*n <= capBits {
			return v
		}
	}
	return 0
}

// qrCodewords is the final codeword sequence of content at version (level
// M, byte mode): data codewords with the 4-bit terminator and the 0xEC/0x11
// pads, split in blocks, each followed by its Reed-Solomon remainder,
// interleaved. The caller checked that content fits the version.
func qrCodewords(content []byte, version int) []byte {
	return qrCodewordsIn(nil, content, version)
}

// qrCodewordsIn is qrCodewords in scratch, when it is large enough.
func qrCodewordsIn(scratch []byte, content []byte, version int) []byte {
	b := qrBlocks[version]
	ec := b[0]
	totalData := b[1]*b[2] + b[3]*b[4]
	nblocks := b[1] + b[3]
	var buf []byte
	if n := totalData + totalData + nblocks*ec; n <= len(scratch) {
		buf = scratch[:n]
	} else {
		buf = make([]byte, n)
	}
	data := buf[:totalData]
	// Mode 0100, the count (8 bits, 16 from version 10), the bytes and the
	// terminator 0000: everything after the mode nibble is shifted by 4
	// bits. 4+8k bits never end on a byte boundary and the version has room
	// for them, so the terminator always fits whole and ends the last byte.
	n := len(content)
	prev := byte(0x4) // the mode nibble
	i := 0
	push := func(v byte) {
		data[i] = prev<<4 | v>>4
		prev = v & 0x0F
		i++
	}
	if version >= 10 {
		push(byte(n >> 8))
	}
	push(byte(n))
	for _, c := range content {
		push(c)
	}
	data[i] = prev << 4
	i++
	for pad := byte(0xEC); i < totalData; pad ^= 0xEC ^ 0x11 {
		data[i] = pad
		i++
	}
	// Reed-Solomon remainders, block by block: the remainder register is
	// 32 bytes in 4 little-endian words (byte 0, the next to leave, is the
	// low byte of w0).
	tab := rsTables[ec]
	ecs := buf[totalData : totalData+nblocks*ec]
	off, blk := 0, 0
	for g := 0; g < 2; g++ {
		for k := 0; k < b[1+2*g]; k++ {
			var w0, w1, w2, w3 uint64
			for _, c := range data[off : off+b[2+2*g]] {
				f := c ^ byte(w0)
				w0 = w0>>8 | w1<<56
				w1 = w1>>8 | w2<<56
				w2 = w2>>8 | w3<<56
				w3 >>= 8
				t := &tab[f]
				w0, w1, w2, w3 = w0^t[0], w1^t[1], w2^t[2], w3^t[3]
			}
			off += b[2+2*g]
			var reg [32]byte
			binary.LittleEndian.PutUint64(reg[0:], w0)
			binary.LittleEndian.PutUint64(reg[8:], w1)
			binary.LittleEndian.PutUint64(reg[16:], w2)
			binary.LittleEndian.PutUint64(reg[24:], w3)
			copy(ecs[blk*ec:(blk+1)*ec], reg[:ec])
			blk++
		}
	}
	// Interleave: the i-th data codeword of every block, then the i-th EC
	// codeword of every block.
	final := buf[totalData+nblocks*ec:][:0]
	for k := 0; k < max(b[2], b[4]); k++ {
		off := 0
		for g := 0; g < 2; g++ {
			for j := 0; j < b[1+2*g]; j++ {
				if k < b[2+2*g] {
					final = append(final, data[off+k])
				}
				off += b[2+2*g]
			}
		}
	}
	for k := 0; k < ec; k++ {
		for j := 0; j < nblocks; j++ {
			final = append(final, ecs[j*ec+k])
		}
	}
	return final
}

// qrRows encodes content as qrMatrix(content, -1) does and returns the
// symbol as row words (bit x of rows[y] is module (x, y), dark = 1) and its
// size, or ok false when the symbol would be larger than 64 modules (or the
// content does not fit at all): the caller then uses qrMatrix.
func qrRows(content []byte) (rows []uint64, size int, ok bool) {
	return qrRowsIn(new(qrScratch), content)
}

// qrScratch is the memory of qrRowsIn: the rows it returns are in it.
type qrScratch struct {
	words [4 * 64]uint64
	cw    [1024]byte // codewords: 658 bytes at most up to version 11
}

// qrScratches keeps qrScratch values for qrImage.
var qrScratches = sync.Pool{New: func() any { return new(qrScratch) }}

// qrRowsIn is qrRows in sc's memory: its rows are sc's until sc is used
// again.
func qrRowsIn(sc *qrScratch, content []byte) (rows []uint64, size int, ok bool) {
	version := qrVersionFor(len(content))
	if version == 0 || 17+4*version > 64 {
		return nil, 0, false
	}
	final := qrCodewordsIn(sc.cw[:], content, version)
	l := qrLayoutOf(version)
	n := l.size
	words := sc.words[:4*n]
	var m [64]uint64
	copy(m[:], l.fnRows)
	total := min(len(final)*8, len(l.dataX))
	for k := 0; k < total; k += 8 {
		c := final[k>>3]
		for j := 0; c != 0 && k+j < total; j++ {
			if c&0x80 != 0 {
				m[l.dataY[k+j]] |= 1 << l.dataX[k+j]
			}
			c <<= 1
		}
	}
	baseRows, baseCols := words[:n], words[n:2*n]
	copy(baseRows, m[:n])
	transpose64(&m)
	copy(baseCols, m[:n])
	mask := qrBestMaskRows(baseRows, baseCols, l, words[2*n:3*n], words[3*n:])
	rows = words[2*n : 3*n]
	mr := l.maskRows[mask]
	for i := range rows {
		rows[i] = baseRows[i] ^ mr[i]
	}
	format := qrFormatBits(mask)
	for i := range l.fmtX {
		x, y := l.fmtX[i], l.fmtY[i]
		b := uint64(format >> (i % 15) & 1)
		rows[y] = rows[y]&^(1<<x) | b<<x
	}
	return rows, n, true
}

// transpose64 transposes a 64×64 bit matrix in place: afterwards bit y of
// m[x] is what bit x of m[y] was (swap the off-diagonal blocks, then do
// the same inside each block, halving down to single bits).
func transpose64(m *[64]uint64) {
	mask := uint64(0x00000000FFFFFFFF)
	for j := 32; j != 0; j >>= 1 {
		for k := 0; k < 64; k = (k + j + 1) &^ j {
			t := (m[k]>>j ^ m[k+j]) & mask
			m[k] ^= t << j
			m[k+j] ^= t
		}
		mask ^= mask << (j >> 1)
	}
}
