package charges

// A small QR code encoder (ISO/IEC 18004) for the slips' BR Codes: byte
// mode, error correction level M, versions 1 to 20. It draws the same
// symbol as github.com/boombuler/barcode/qr (same 8 masks and the same
// penalty rules to choose among them; the test compares them module by
// module) at a fraction of the cost: the function patterns and the data
// placement are computed once, and each mask is scored in two linear
// passes instead of boombuler's per-module bit-list lookups. That matters
// for a carnet of 12 parcels, each with its own QR image.

import (
	"errors"
	"math"
	"math/bits"
	"sync"
	"sync/atomic"
)

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
			rsTables[n] = rsTable(rsGenerators[n])
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

var errQRTooLong = errors.New("QR: content too long for version 20-M")

// qrMatrix encodes content and returns the module matrix (true = dark),
// size×size, row by row: module (x, y) is at y*size+x. mask is the data
// mask 0-7, or -1 to choose the one with the lowest penalty.
func qrMatrix(content []byte, mask int) ([]bool, int, error) {
	version := qrVersionFor(len(content))
	if version == 0 {
		return nil, 0, errQRTooLong
	}
	final := qrCodewords(content, version)
	lay := qrLayoutOf(version)
	size := lay.size
	// base: function modules and the unmasked data bits, 0/1 per module.
	base := make([]byte, size*size)
	copy(base, lay.fn)
	total := len(final) * 8
	for k, p := range lay.dataPos {
		if k >= total {
			break
		}
		base[p] = final[k/8] >> (7 - k%8) & 1
	}
	if mask < 0 && size <= 64 {
		mask = qrBestMaskBits(base, lay)
	}
	w := make([]byte, size*size)
	build := func(mask int) {
		t := lay.tabs[mask]
		for i := range w {
			w[i] = base[i] ^ t[i]
		}
		format := qrFormatBits(mask)
		for i, p := range lay.fmtPos {
			w[p] = byte(format >> (i % 15) & 1)
		}
	}
	if mask < 0 {
		best := uint(math.MaxUint)
		for k := 0; k < 8; k++ {
			build(k)
			if p := qrPenalty(w, size); p < best {
				best, mask = p, k
			}
		}
	}
	build(mask)
	out := make([]bool, len(w))
	for i, v := range w {
		out[i] = v == 1
	}
	return out, size, nil
}

// qrLayout is what depends only on the version: the function modules,
// where the data and format bits go, and the 8 masks over the data
// modules (as bytes and packed in words).
type qrLayout struct {
	size     int
	fn       []byte  // function modules 0/1 (data and format areas 0)
	dataPos  []int32 // data module indexes in placement order
	fmtPos   []int   // format bit i%15 goes to fmtPos[i]
	dataX    []uint8 // dataPos as coordinates (for the packed path)
	dataY    []uint8
	fmtX     []uint8 // fmtPos as coordinates
	fmtY     []uint8
	tabs     [8][]byte
	fnRows   []uint64 // fn packed (size <= 64 only)
	fnCols   []uint64
	maskRows [8][]uint64
	maskCols [8][]uint64
}

var (
	qrLayoutMu sync.Mutex
	qrLayouts  [21]atomic.Pointer[qrLayout]
)

func qrLayoutOf(version int) *qrLayout {
	if l := qrLayouts[version].Load(); l != nil {
		return l
	}
	qrLayoutMu.Lock()
	defer qrLayoutMu.Unlock()
	if l := qrLayouts[version].Load(); l != nil {
		return l
	}
	l := newQRLayout(version)
	qrLayouts[version].Store(l)
	return l
}

func newQRLayout(version int) *qrLayout {
	size := 17 + 4*version
	// Matrix: -1 empty, 0 light, 1 dark.
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
	// Version information (versions 7 and up), BCH(18,6).
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
	l := &qrLayout{size: size, fmtPos: qrFormatPositions(size)}
	// Reserve the format information areas (written per mask).
	for _, p := range l.fmtPos {
		m[p] = 0
	}
	// Data positions in the zigzag order.
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
				l.dataPos = append(l.dataPos, int32(y*size+xx))
				m[y*size+xx] = 0
			}
		}
		dir = -dir
		y += dir
	}
	l.fn = make([]byte, size*size)
	for i, v := range m {
		if v == 1 {
			l.fn[i] = 1
		}
	}
	for k := range l.tabs {
		l.tabs[k] = make([]byte, size*size)
		for _, p := range l.dataPos {
			if qrMaskBit(k, int(p)%size, int(p)/size) {
				l.tabs[k][p] = 1
			}
		}
	}
	for _, p := range l.dataPos {
		l.dataX = append(l.dataX, uint8(int(p)%size))
		l.dataY = append(l.dataY, uint8(int(p)/size))
	}
	for _, p := range l.fmtPos {
		l.fmtX = append(l.fmtX, uint8(p%size))
		l.fmtY = append(l.fmtY, uint8(p/size))
	}
	if size <= 64 {
		l.fnRows, l.fnCols = qrPack(l.fn, size)
		for k := range l.tabs {
			l.maskRows[k], l.maskCols[k] = qrPack(l.tabs[k], size)
		}
	}
	return l
}

// qrPack packs a 0/1 matrix into row words (bit x of rows[y]) and column
// words (bit y of cols[x]).
func qrPack(src []byte, n int) (rows, cols []uint64) {
	rows, cols = make([]uint64, n), make([]uint64, n)
	for y := 0; y < n; y++ {
		for x := 0; x < n; x++ {
			if src[y*n+x] != 0 {
				rows[y] |= 1 << x
				cols[x] |= 1 << y
			}
		}
	}
	return rows, cols
}

// qrFormatBits is the 15-bit format information of level M with mask.
func qrFormatBits(mask int) int {
	data := mask // level M = 00
	rem := data << 10
	for i := 14; i >= 10; i-- {
		if rem>>i&1 == 1 {
			rem ^= 0x537 << (i - 10)
		}
	}
	return (data<<10 | rem) ^ 0x5412
}

// qrFormatPositions lists where format bit i%15 goes: the first 15 entries
// are the copy around the top-left finder, the next 15 the split copy
// (top-right, bottom-left); flat indexes y*size+x.
func qrFormatPositions(size int) []int {
	coords := [15][2]int{{8, 0}, {8, 1}, {8, 2}, {8, 3}, {8, 4}, {8, 5}, {8, 7}, {8, 8}, {7, 8}, {5, 8}, {4, 8}, {3, 8}, {2, 8}, {1, 8}, {0, 8}}
	out := make([]int, 0, 30)
	for _, c := range coords {
		out = append(out, c[1]*size+c[0])
	}
	for i := 0; i < 15; i++ {
		if i < 8 {
			out = append(out, 8*size+size-i-1)
		} else {
			out = append(out, (size-7+(i-8))*size+8)
		}
	}
	return out
}

// qrPenalty scores a masked symbol with the four penalty rules as
// boombuler/barcode computes them: runs of 5 or more (run − 2), 2×2 blocks
// (3 each), finder-like 1011101 with 4 light modules on one side (40
// each), and the distance of the dark share from 50% in steps of 5%.
func qrPenalty(w []byte, n int) uint {
	var p uint
	dark := 0
	for y := 0; y < n; y++ {
		row := w[y*n : y*n+n]
		last := row[0]
		run, win := uint(1), uint(last)
		dark += int(last)
		var next []byte
		if y < n-1 {
			next = w[(y+1)*n : (y+2)*n]
		}
		for x := 1; x < n; x++ {
			v := row[x]
			dark += int(v)
			if v == last {
				run++
				if next != nil && next[x] == v && next[x-1] == v {
					p += 3
				}
			} else {
				if run >= 5 {
					p += run - 2
				}
				run, last = 1, v
			}
			win = (win<<1 | uint(v)) & 0x7FF
			if x >= 10 && (win == 0x5D0 || win == 0x05D) {
				p += 40
			}
		}
		if run >= 5 {
			p += run - 2
		}
	}
	for x := 0; x < n; x++ {
		last := w[x]
		run, win := uint(1), uint(last)
		for y, i := 1, x+n; y < n; y, i = y+1, i+n {
			v := w[i]
			if v == last {
				run++
			} else {
				if run >= 5 {
					p += run - 2
				}
				run, last = 1, v
			}
			win = (win<<1 | uint(v)) & 0x7FF
			if y >= 10 && (win == 0x5D0 || win == 0x05D) {
				p += 40
			}
		}
		if run >= 5 {
			p += run - 2
		}
	}
	perc := float64(dark) * 100 / float64(n*n)
	floor := math.Abs(math.Floor(perc/5) - 10)
	ceil := math.Abs(math.Ceil(perc/5) - 10)
	return p + uint(math.Min(floor, ceil)*10)
}

// qrBestMaskBits chooses the mask like qrPenalty would, on rows and
// columns packed in 64-bit words (symbols up to 64 modules, versions 1 to
// 11): bit x of rows[y] and bit y of cols[x] are module (x, y).
func qrBestMaskBits(base []byte, l *qrLayout) int {
	n := l.size
	words := make([]uint64, 4*n)
	baseRows, baseCols := words[:n], words[n:2*n]
	copy(baseRows, l.fnRows)
	copy(baseCols, l.fnCols)
	for k, p := range l.dataPos {
		if base[p] != 0 {
			x, y := l.dataX[k], l.dataY[k]
			baseRows[y] |= 1 << x
			baseCols[x] |= 1 << y
		}
	}
	return qrBestMaskRows(baseRows, baseCols, l, words[2*n:3*n], words[3*n:])
}

// qrBestMaskRows is qrBestMaskBits on the unmasked symbol already packed
// (function modules and data bits, format areas light); rows and cols are
// scratch space of l.size words each.
func qrBestMaskRows(baseRows, baseCols []uint64, l *qrLayout, rows, cols []uint64) int {
	n := l.size
	best, bestMask := uint(math.MaxUint), 0
	for k := 0; k < 8; k++ {
		mr, mc := l.maskRows[k], l.maskCols[k]
		for i := 0; i < n; i++ {
			rows[i] = baseRows[i] ^ mr[i]
			cols[i] = baseCols[i] ^ mc[i]
		}
		format := qrFormatBits(k)
		for i := range l.fmtX {
			x, y := l.fmtX[i], l.fmtY[i]
			b := uint64(format >> (i % 15) & 1)
			rows[y] = rows[y]&^(1<<x) | b<<x
			cols[x] = cols[x]&^(1<<y) | b<<y
		}
		if p := qrPenaltyBits(rows, cols, n); p < best {
			best, bestMask = p, k
		}
	}
	return bestMask
}

// qrPenaltyBits is qrPenalty on packed rows and columns.
func qrPenaltyBits(rows, cols []uint64, n int) uint {
	all := uint64(1)<<n - 1
	valid5 := uint64(1)<<(n-4) - 1   // starts of 5-module windows
	valid11 := uint64(1)<<(n-10) - 1 // starts of 11-module windows
	valid2 := uint64(1)<<(n-1) - 1   // starts of 2-module windows
	var p uint
	line := func(r uint64) {
		eq := ^(r ^ r>>1)
		// & and >> share one precedence level and associate left: the
		// shifts need their parentheses.
		w5 := eq & (eq >> 1) & (eq >> 2) & (eq >> 3) & valid5
		starts := w5 &^ (eq << 1)
		p += uint(bits.OnesCount64(w5) + 2*bits.OnesCount64(starts))
		nr := ^r
		m1 := r & (nr >> 1) & (r >> 2) & (r >> 3) & (r >> 4) & (nr >> 5) & (r >> 6) & (nr >> 7) & (nr >> 8) & (nr >> 9) & (nr >> 10)
		m2 := nr & (nr >> 1) & (nr >> 2) & (nr >> 3) & (r >> 4) & (nr >> 5) & (r >> 6) & (r >> 7) & (r >> 8) & (nr >> 9) & (r >> 10)
		p += 40 * uint(bits.OnesCount64((m1|m2)&valid11))
	}
	dark := 0
	for y, r := range rows {
		line(r)
		dark += bits.OnesCount64(r & all)
		if y < n-1 {
			s := rows[y+1]
			blocks := ^(r ^ r>>1) & ^(s ^ s>>1) & ^(r ^ s) & valid2
			p += 3 * uint(bits.OnesCount64(blocks))
		}
	}
	for _, c := range cols {
		line(c)
	}
	perc := float64(dark) * 100 / float64(n*n)
	floor := math.Abs(math.Floor(perc/5) - 10)
	ceil := math.Abs(math.Ceil(perc/5) - 10)
	return p + uint(math.Min(floor, ceil)*10)
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
