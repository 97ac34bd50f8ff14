package charges

// A small QR code encoder (ISO/IEC 18004) for the slips' BR Codes: byte
// mode, error correction level M, versions 1 to 20, one fixed mask. A
// general encoder tries the 8 masks and keeps the one with the lowest
// penalty; that choice only helps poor scanners, any mask is a valid
// symbol, and skipping it makes a code ~20 times cheaper, which matters
// for a carnet of 12 parcels. The test checks this encoder module by
// module against github.com/boombuler/barcode/qr for the mask that
// library chose.

import "errors"

// qrBlocks is the level-M block structure per version: EC codewords per
// block, then (blocks, data codewords) of groups 1 and 2.
var qrBlocks = [21][5]int{
	{},
	{10, 1, 16, 0, 0}, {16, 1, 28, 0, 0}, {26, 1, 44, 0, 0}, {18, 2, 32, 0, 0}, {24, 2, 43, 0, 0},
	{16, 4, 27, 0, 0}, {18, 4, 31, 0, 0}, {22, 2, 38, 2, 39}, {22, 3, 36, 2, 37}, {26, 4, 43, 1, 44},
	{30, 1, 50, 4, 51}, {22, 6, 36, 2, 37}, {22, 8, 37, 1, 38}, {24, 4, 40, 5, 41}, {24, 5, 41, 5, 42},
	{28, 7, 45, 3, 46}, {28, 10, 46, 1, 47}, {26, 9, 43, 4, 44}, {26, 3, 44, 11, 45}, {26, 3, 41, 13, 42},
}

var qrAlign = [21][]int{
	{}, {}, {6, 18}, {6, 22}, {6, 26}, {6, 30}, {6, 34}, {6, 22, 38}, {6, 24, 42}, {6, 26, 46}, {6, 28, 50},
	{6, 30, 54}, {6, 32, 58}, {6, 34, 62}, {6, 26, 46, 66}, {6, 26, 48, 70}, {6, 26, 50, 74}, {6, 30, 54, 78},
	{6, 30, 56, 82}, {6, 30, 58, 86}, {6, 34, 62, 90},
}

var gfExp, gfLog [512]int

func init() {
	x := 1
	for i := 0; i < 255; i++ {
		gfExp[i] = x
		gfLog[x] = i
		x <<= 1
		if x&0x100 != 0 {
			x ^= 0x11D
		}
	}
	for i := 255; i < 512; i++ {
		gfExp[i] = gfExp[i-255]
	}
	for v := 1; v < len(qrBlocks); v++ {
		if n := qrBlocks[v][0]; rsGenerators[n] == nil {
			rsGenerators[n] = rsGenerator(n)
		}
	}
}

// rsGenerators are the generator polynomials by EC codeword count.
var rsGenerators = map[int][]int{}

func gfMul(a, b int) int {
	if a == 0 || b == 0 {
		return 0
	}
	return gfExp[gfLog[a]+gfLog[b]]
}

// rsGenerator returns the coefficients (highest degree first, leading 1
// omitted) of prod (x - α^i), i < n.
func rsGenerator(n int) []int {
	g := []int{1}
	for i := 0; i < n; i++ {
		next := make([]int, len(g)+1)
		for j, c := range g {
			next[j] ^= c
			next[j+1] ^= gfMul(c, gfExp[i])
		}
		g = next
	}
	return g[1:]
}

func rsEncode(data []byte, gen []int) []byte {
	rem := make([]int, len(gen))
	for _, d := range data {
		f := int(d) ^ rem[0]
		copy(rem, rem[1:])
		rem[len(rem)-1] = 0
		if f != 0 {
			for i, g := range gen {
				rem[i] ^= gfMul(g, f)
			}
		}
	}
	out := make([]byte, len(rem))
	for i, r := range rem {
		out[i] = byte(r)
	}
	return out
}

var errQRTooLong = errors.New("QR: content too long for version 20-M")

// qrMatrix encodes content and returns the module matrix (true = dark),
// size×size, row by row: module (x, y) is at y*size+x.
func qrMatrix(content []byte, mask int) ([]bool, int, error) {
	n := len(content)
	version := 0
	for v := 1; v <= 20; v++ {
		b := qrBlocks[v]
		capBits := (b[1]*b[2] + b[3]*b[4]) * 8
		countBits := 8
		if v >= 10 {
			countBits = 16
		}
		if 4+countBits+8*n <= capBits {
			version = v
			break
		}
	}
	if version == 0 {
		return nil, 0, errQRTooLong
	}
	b := qrBlocks[version]
	totalData := b[1]*b[2] + b[3]*b[4]
	// Data bit stream.
	bits := make([]byte, 0, totalData*8)
	put := func(v, n int) {
		for i := n - 1; i >= 0; i-- {
			bits = append(bits, byte(v>>i&1))
		}
	}
	put(4, 4)
	if version >= 10 {
		put(n, 16)
	} else {
		put(n, 8)
	}
	for _, c := range content {
		put(int(c), 8)
	}
	for i := 0; i < 4 && len(bits) < totalData*8; i++ {
		bits = append(bits, 0)
	}
	for len(bits)%8 != 0 {
		bits = append(bits, 0)
	}
	data := make([]byte, 0, totalData)
	for i := 0; i < len(bits); i += 8 {
		var v byte
		for j := 0; j < 8; j++ {
			v = v<<1 | bits[i+j]
		}
		data = append(data, v)
	}
	for pad := byte(0xEC); len(data) < totalData; pad ^= 0xEC ^ 0x11 {
		data = append(data, pad)
	}
	// Blocks, EC, interleaving.
	gen := rsGenerators[b[0]]
	var blocks, ecs [][]byte
	off := 0
	for g := 0; g < 2; g++ {
		for i := 0; i < b[1+2*g]; i++ {
			blk := data[off : off+b[2+2*g]]
			off += b[2+2*g]
			blocks = append(blocks, blk)
			ecs = append(ecs, rsEncode(blk, gen))
		}
	}
	var final []byte
	for i := 0; i < max(b[2], b[4]); i++ {
		for _, blk := range blocks {
			if i < len(blk) {
				final = append(final, blk[i])
			}
		}
	}
	for i := 0; i < b[0]; i++ {
		for _, ec := range ecs {
			final = append(final, ec[i])
		}
	}
	// Matrix: -1 empty, 0 light, 1 dark.
	size := 17 + 4*version
	m := make([]int8, size*size)
	for i := range m {
		m[i] = -1
	}
	at := func(x, y int) int8 { return m[y*size+x] }
	set := func(x, y int, dark bool) {
		if dark {
			m[y*size+x] = 1
		} else {
			m[y*size+x] = 0
		}
	}
	finder := func(x0, y0 int) {
		for dy := -1; dy <= 7; dy++ {
			for dx := -1; dx <= 7; dx++ {
				x, y := x0+dx, y0+dy
				if x < 0 || y < 0 || x >= size || y >= size {
					continue
				}
				dark := dx >= 0 && dx <= 6 && dy >= 0 && dy <= 6 &&
					(dx == 0 || dx == 6 || dy == 0 || dy == 6 || (dx >= 2 && dx <= 4 && dy >= 2 && dy <= 4))
				set(x, y, dark)
			}
		}
	}
	finder(0, 0)
	finder(size-7, 0)
	finder(0, size-7)
	set(8, size-8, true) // dark module
	pos := qrAlign[version]
	for _, cy := range pos {
		for _, cx := range pos {
			if at(cx, cy) != -1 {
				continue
			}
			for dy := -2; dy <= 2; dy++ {
				for dx := -2; dx <= 2; dx++ {
					set(cx+dx, cy+dy, dx == -2 || dx == 2 || dy == -2 || dy == 2 || (dx == 0 && dy == 0))
				}
			}
		}
	}
	for i := 8; i < size-8; i++ {
		if at(i, 6) == -1 {
			set(i, 6, i%2 == 0)
		}
		if at(6, i) == -1 {
			set(6, i, i%2 == 0)
		}
	}
	// Format information: level M (00) and the mask, BCH(15,5), XOR 0x5412.
	fmtData := mask // M = 00
	rem := fmtData << 10
	for i := 14; i >= 10; i-- {
		if rem>>i&1 == 1 {
			rem ^= 0x537 << (i - 10)
		}
	}
	format := (fmtData<<10 | rem) ^ 0x5412
	coords := [15][2]int{{8, 0}, {8, 1}, {8, 2}, {8, 3}, {8, 4}, {8, 5}, {8, 7}, {8, 8}, {7, 8}, {5, 8}, {4, 8}, {3, 8}, {2, 8}, {1, 8}, {0, 8}}
	for i := 0; i < 15; i++ {
		dark := format>>i&1 == 1
		set(coords[i][0], coords[i][1], dark)
		if i < 8 {
			set(size-i-1, 8, dark)
		} else {
			set(8, size-7+(i-8), dark)
		}
	}
	if version >= 7 {
		rem := version << 12
		for i := 17; i >= 12; i-- {
			if rem>>i&1 == 1 {
				rem ^= 0x1F25 << (i - 12)
			}
		}
		info := version<<12 | rem
		for k := 0; k < 18; k++ {
			dark := info>>k&1 == 1
			i, j := k/3, k%3
			set(i, size-11+j, dark)
			set(size-11+j, i, dark)
		}
	}
	// Data, in the zigzag order, masked.
	bitIndex, total := 0, len(final)*8
	dir := -1
	y := size - 1
	for x := size - 1; x > 0; x -= 2 {
		if x == 6 {
			x--
		}
		for ; y >= 0 && y < size; y += dir {
			for i := 0; i < 2; i++ {
				xx := x - i
				if at(xx, y) != -1 {
					continue
				}
				dark := false
				if bitIndex < total {
					dark = final[bitIndex/8]>>(7-bitIndex%8)&1 == 1
					bitIndex++
				}
				if qrMaskBit(mask, xx, y) {
					dark = !dark
				}
				set(xx, y, dark)
			}
		}
		dir = -dir
		y += dir
	}
	out := make([]bool, len(m))
	for i, v := range m {
		out[i] = v == 1
	}
	return out, size, nil
}

// qrMaskBit is the data mask condition of pattern mask at column x, row y.
func qrMaskBit(mask, x, y int) bool {
	switch mask {
	case 0:
		return (x+y)%2 == 0
	case 1:
		return y%2 == 0
	case 2:
		return x%3 == 0
	case 3:
		return (x+y)%3 == 0
	case 4:
		return (y/2+x/3)%2 == 0
	case 5:
		return (x*y)%2+(x*y)%3 == 0
	case 6:
		return ((x*y)%2+(x*y)%3)%2 == 0
	default:
		return ((x+y)%2+(x*y)%3)%2 == 0
	}
}
