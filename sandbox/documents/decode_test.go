package documents

import (
	"bytes"
	"fmt"
	"image"
	"image/color"
	"math"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"testing"

	"github.com/makiuchi-d/gozxing"
	"github.com/makiuchi-d/gozxing/oned"
	"github.com/makiuchi-d/gozxing/qrcode"
)

// decodeITF reads Interleaved 2 of 5 from element widths (bar, space, bar,
// ..., in any unit) following standards.md §1.5, independently of the
// encoder: an element is wide when it is more than twice the narrowest.
func decodeITF(widths []float64) (string, error) {
	if len(widths) < 17 || (len(widths)-7)%10 != 0 {
		return "", fmt.Errorf("%d elements is not start + pairs of digits + stop", len(widths))
	}
	narrow := math.Inf(1)
	for _, w := range widths {
		narrow = math.Min(narrow, w)
	}
	el := make([]byte, len(widths))
	for i, w := range widths {
		el[i] = 'n'
		if w > 2*narrow {
			el[i] = 'w'
			if r := w / narrow; r < 2.2 || r > 3.3 {
				return "", fmt.Errorf("element %d: wide/narrow ratio %.2f", i, r)
			}
		}
	}
	if string(el[:4]) != "nnnn" {
		return "", fmt.Errorf("start pattern %q, want nnnn", el[:4])
	}
	if string(el[len(el)-3:]) != "wnn" {
		return "", fmt.Errorf("stop pattern %q, want wnn", el[len(el)-3:])
	}
	table := map[string]byte{"nnwwn": '0', "wnnnw": '1', "nwnnw": '2', "wwnnn": '3', "nnwnw": '4',
		"wnwnn": '5', "nwwnn": '6', "nnnww": '7', "wnnwn": '8', "nwnwn": '9'}
	var out []byte
	for i := 4; i < len(el)-3; i += 10 {
		var bars, spaces []byte
		for k := 0; k < 10; k += 2 {
			bars = append(bars, el[i+k])
			spaces = append(spaces, el[i+k+1])
		}
		a, ok1 := table[string(bars)]
		b, ok2 := table[string(spaces)]
		if !ok1 || !ok2 {
			return "", fmt.Errorf("pair at element %d: bars %s spaces %s", i, bars, spaces)
		}
		out = append(out, a, b)
	}
	return string(out), nil
}

type rect struct{ x, y, w, h float64 }

var reFill = regexp.MustCompile(`(-?[0-9.]+) (-?[0-9.]+) (-?[0-9.]+) (-?[0-9.]+) re f\n`)

// pageRects returns the filled rectangles ("x y w h re f", in points,
// y up) of every content stream of an uncompressed PDF, stream by stream.
func pageRects(t *testing.T, pdf []byte) [][]rect {
	t.Helper()
	var pages [][]rect
	for _, stream := range strings.Split(string(pdf), "endstream") {
		var rs []rect
		for _, m := range reFill.FindAllStringSubmatch(stream, -1) {
			var v [4]float64
			for i := range v {
				f, err := strconv.ParseFloat(m[i+1], 64)
				if err != nil {
					t.Fatal(err)
				}
				v[i] = f
			}
			rs = append(rs, rect{v[0], v[1], v[2], v[3]})
		}
		if len(rs) > 0 {
			pages = append(pages, rs)
		}
	}
	return pages
}

const ptPerMM = 72 / 25.4

// barcodesOf groups the bars (rectangles ITFHeightMM high) by their top
// edge, top of the page first, and returns each group left to right.
func barcodesOf(rs []rect) [][]rect {
	byY := map[float64][]rect{}
	for _, r := range rs {
		if math.Abs(-r.h-ITFHeightMM*ptPerMM) < 0.02 {
			byY[r.y] = append(byY[r.y], r)
		}
	}
	var ys []float64
	for y := range byY {
		ys = append(ys, y)
	}
	sort.Sort(sort.Reverse(sort.Float64Slice(ys)))
	var out [][]rect
	for _, y := range ys {
		g := byY[y]
		sort.Slice(g, func(i, j int) bool { return g[i].x < g[j].x })
		out = append(out, g)
	}
	return out
}

// barWidths turns bars into the bar, space, bar, ... width sequence.
func barWidths(bars []rect) []float64 {
	var w []float64
	for i, b := range bars {
		if i > 0 {
			prev := bars[i-1]
			w = append(w, b.x-(prev.x+prev.w))
		}
		w = append(w, b.w)
	}
	return w
}

// rasterBars draws bars as a 3-pixels-per-module image with quiet zones,
// for a third-party decoder.
func rasterBars(bars []rect) image.Image {
	narrow := math.Inf(1)
	for _, b := range bars {
		narrow = math.Min(narrow, b.w)
	}
	const px = 3
	x0 := bars[0].x
	end := bars[len(bars)-1].x + bars[len(bars)-1].w
	width := int(math.Round((end-x0)/narrow))*px + 40*px
	img := image.NewGray(image.Rect(0, 0, width, 80))
	for i := range img.Pix {
		img.Pix[i] = 0xff
	}
	for _, b := range bars {
		from := 20*px + int(math.Round((b.x-x0)/narrow))*px
		to := from + int(math.Round(b.w/narrow))*px
		for x := from; x < to; x++ {
			for y := 10; y < 70; y++ {
				img.SetGray(x, y, color.Gray{})
			}
		}
	}
	return img
}

// qrCodesOf groups the non-bar rectangles into QR codes (by module size
// and vertical distance) and rasterises each into an image, 6 pixels per
// module with a 4-module quiet zone.
func qrCodesOf(rs []rect) []image.Image {
	var mods []rect
	for _, r := range rs {
		if math.Abs(-r.h-ITFHeightMM*ptPerMM) >= 0.02 {
			mods = append(mods, r)
		}
	}
	sort.SliceStable(mods, func(i, j int) bool { return mods[i].y > mods[j].y })
	var groups [][]rect
	for i, r := range mods {
		if i == 0 || mods[i-1].y-r.y > 5*(-r.h) || math.Abs(mods[i-1].h-r.h) > 0.02 {
			groups = append(groups, nil)
		}
		groups[len(groups)-1] = append(groups[len(groups)-1], r)
	}
	var out []image.Image
	for _, g := range groups {
		mod := -g[0].h
		minX, maxY := math.Inf(1), math.Inf(-1)
		maxX := math.Inf(-1)
		for _, r := range g {
			minX = math.Min(minX, r.x)
			maxX = math.Max(maxX, r.x+r.w)
			maxY = math.Max(maxY, r.y)
		}
		n := int(math.Round((maxX - minX) / mod))
		const px, qz = 6, 4
		size := (n + 2*qz) * px
		img := image.NewGray(image.Rect(0, 0, size, size))
		for i := range img.Pix {
			img.Pix[i] = 0xff
		}
		for _, r := range g {
			col := int(math.Round((r.x - minX) / mod))
			row := int(math.Round((maxY - r.y) / mod))
			l := int(math.Round(r.w / mod))
			for x := (col + qz) * px; x < (col+l+qz)*px; x++ {
				for y := (row + qz) * px; y < (row+1+qz)*px; y++ {
					img.SetGray(x, y, color.Gray{})
				}
			}
		}
		out = append(out, img)
	}
	return out
}

func zxingQR(t *testing.T, img image.Image) string {
	t.Helper()
	bmp, err := gozxing.NewBinaryBitmapFromImage(img)
	if err != nil {
		t.Fatal(err)
	}
	res, err := qrcode.NewQRCodeReader().Decode(bmp, map[gozxing.DecodeHintType]any{gozxing.DecodeHintType_PURE_BARCODE: true})
	if err != nil {
		t.Fatalf("QR code drawn in the PDF does not decode: %v", err)
	}
	return res.GetText()
}

func zxingITF(t *testing.T, img image.Image) string {
	t.Helper()
	bmp, err := gozxing.NewBinaryBitmapFromImage(img)
	if err != nil {
		t.Fatal(err)
	}
	res, err := oned.NewITFReader().Decode(bmp, map[gozxing.DecodeHintType]any{gozxing.DecodeHintType_ALLOWED_LENGTHS: []int{44}})
	if err != nil {
		t.Fatalf("barcode drawn in the PDF does not decode: %v", err)
	}
	return res.GetText()
}

func renderUncompressed(t *testing.T, f func(*bytes.Buffer) error) []byte {
	t.Helper()
	compress = false
	defer func() { compress = true }()
	var b bytes.Buffer
	if err := f(&b); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

func TestITFWidthsStandardVector(t *testing.T) {
	// standards.md §1.5: "12" → W n N w N n N n W w after the start nnnn,
	// then the stop W n n.
	got, err := ITFWidths("12")
	if err != nil {
		t.Fatal(err)
	}
	want := []int{1, 1, 1, 1, 3, 1, 1, 3, 1, 1, 1, 1, 3, 3, 3, 1, 1}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("ITFWidths(12) = %v, want %v", got, want)
	}
	// A 44-digit boleto is 227 elements and 405 modules with wide = 3×.
	w, err := ITFWidths(vectorBarcode)
	if err != nil {
		t.Fatal(err)
	}
	sum := 0
	for _, x := range w {
		sum += x
	}
	if len(w) != 227 || sum != 405 {
		t.Fatalf("44 digits: %d elements, %d modules; want 227 and 405", len(w), sum)
	}
	fw := make([]float64, len(w))
	for i, x := range w {
		fw[i] = float64(x)
	}
	if d, err := decodeITF(fw); err != nil || d != vectorBarcode {
		t.Fatalf("decode(ITFWidths) = %q, %v; want %s", d, err, vectorBarcode)
	}
}

// TestITFWideTwiceNarrow is standards.md §1.5's other width vector: with
// wide = 2 × narrow a 44-digit boleto is 316 modules (227 elements, 114
// bars), checked on the bars the slip renderers draw (ITFBars' code), and
// "12" is W n N w N n N n W w with every W two modules.
func TestITFWideTwiceNarrow(t *testing.T) {
	bars, modules, err := itfBars(vectorBarcode, 2)
	if err != nil {
		t.Fatal(err)
	}
	if modules != 316 || len(bars) != 114 {
		t.Fatalf("44 digits at wide = 2×: %d modules, %d bars; want 316 and 114", modules, len(bars))
	}
	if last := bars[len(bars)-1]; last.X+last.W != 316 {
		t.Fatalf("last bar ends at module %d, want 316 (the stop's narrow bar closes the symbol)", last.X+last.W)
	}
	w, err := itfWidths("12", 2)
	if err != nil {
		t.Fatal(err)
	}
	if want := []int{1, 1, 1, 1, 2, 1, 1, 2, 1, 1, 1, 1, 2, 2, 2, 1, 1}; fmt.Sprint(w) != fmt.Sprint(want) {
		t.Fatalf("itfWidths(12, 2) = %v, want %v", w, want)
	}
	// Same symbol as the 3× one (which decodeITF reads back in
	// TestITFWidthsStandardVector): the wide elements in the same places.
	two, err := itfWidths(vectorBarcode, 2)
	if err != nil {
		t.Fatal(err)
	}
	three, err := ITFWidths(vectorBarcode)
	if err != nil {
		t.Fatal(err)
	}
	wide := 0
	for i := range two {
		if (two[i] == 2) != (three[i] == 3) || (two[i] != 1 && two[i] != 2) {
			t.Fatalf("element %d is %d modules at 2× and %d at 3×", i, two[i], three[i])
		}
		if two[i] == 2 {
			wide++
		}
	}
	if wide != 316-227 {
		t.Fatalf("%d wide elements, want 89 (316 modules - 227 elements)", wide)
	}
}

func TestITFWidthsRejects(t *testing.T) {
	for _, in := range []string{"", "123", "12a4", "1 23"} {
		if _, err := ITFWidths(in); err == nil {
			t.Errorf("ITFWidths(%q): no error", in)
		}
	}
}

func TestSlipPDFDecodes(t *testing.T) {
	pdf := renderUncompressed(t, func(b *bytes.Buffer) error { return RenderSlipPDF(b, sampleSlip()) })
	pages := pageRects(t, pdf)
	if len(pages) != 1 {
		t.Fatalf("%d pages with drawings, want 1", len(pages))
	}
	codes := barcodesOf(pages[0])
	if len(codes) != 1 {
		t.Fatalf("%d barcodes drawn, want 1", len(codes))
	}
	if len(codes[0]) != 114 { // 227 elements: 114 bars, 113 spaces
		t.Errorf("%d bars, want 114", len(codes[0]))
	}
	got, err := decodeITF(barWidths(codes[0]))
	if err != nil || got != vectorBarcode {
		t.Fatalf("bars decode to %q (%v), want %s", got, err, vectorBarcode)
	}
	if z := zxingITF(t, rasterBars(codes[0])); z != vectorBarcode {
		t.Fatalf("zxing reads the bars as %q, want %s", z, vectorBarcode)
	}
	// Physical size: 405 modules of 0.254 mm = 102.87 mm.
	first, last := codes[0][0], codes[0][len(codes[0])-1]
	if l := (last.x + last.w - first.x) / ptPerMM; math.Abs(l-102.87) > 0.05 {
		t.Errorf("barcode is %.2f mm long, want 102.87", l)
	}
	qrs := qrCodesOf(pages[0])
	if len(qrs) != 1 {
		t.Fatalf("%d QR codes drawn, want 1", len(qrs))
	}
	if got := zxingQR(t, qrs[0]); got != vectorBRCode {
		t.Fatalf("QR code reads %q, want %q", got, vectorBRCode)
	}
	// The typed line, value and due date are printed as text.
	for _, want := range []string{vectorLine, "(R$ 1.500,75)", "(10/03/2026)", "CPF 529.982.247-25", "CNPJ 09.089.356/0001-18",
		"multa de 2%", "juros de 0,033% ao dia", "Desconto de R$ 50,00 para pagamento at\xe9 05/03/2026", "Mensalidade de mar\xe7o"} {
		if !bytes.Contains(pdf, []byte(want)) {
			t.Errorf("PDF does not show %q", want)
		}
	}
}

func TestCarnetPDFDecodes(t *testing.T) {
	c := sampleCarnet(t, 5)
	pdf := renderUncompressed(t, func(b *bytes.Buffer) error { return RenderCarnetPDF(b, c) })
	pages := pageRects(t, pdf)
	// The cover draws no filled rectangle; 5 parcels make 2 pages (3 + 2).
	if len(pages) != 2 {
		t.Fatalf("%d pages with barcodes, want 2", len(pages))
	}
	var gotCodes, gotQRs []string
	for _, p := range pages {
		for _, bars := range barcodesOf(p) {
			d, err := decodeITF(barWidths(bars))
			if err != nil {
				t.Fatal(err)
			}
			gotCodes = append(gotCodes, d)
		}
		for _, img := range qrCodesOf(p) {
			gotQRs = append(gotQRs, zxingQR(t, img))
		}
	}
	if len(gotCodes) != 5 || len(gotQRs) != 5 {
		t.Fatalf("%d barcodes and %d QR codes, want 5 each", len(gotCodes), len(gotQRs))
	}
	for i, p := range c.Parcels {
		if gotCodes[i] != p.Barcode {
			t.Errorf("parcel %d: barcode reads %s, want %s", i+1, gotCodes[i], p.Barcode)
		}
		if gotQRs[i] != p.PixQRCode {
			t.Errorf("parcel %d: QR code reads %s, want %s", i+1, gotQRs[i], p.PixQRCode)
		}
	}
	if n := bytes.Count(pdf, []byte("/Type /Page\n")); n != 3 {
		t.Errorf("%d pages, want 3 (cover + 2)", n)
	}
}

func TestQRMatrixReadsBack(t *testing.T) {
	m, err := QRMatrix(vectorBRCode)
	if err != nil {
		t.Fatal(err)
	}
	// Version sizes are 17 + 4v modules.
	if (len(m)-17)%4 != 0 || len(m[0]) != len(m) {
		t.Fatalf("matrix %dx%d is not a QR code size", len(m), len(m[0]))
	}
	img := image.NewGray(image.Rect(0, 0, (len(m)+8)*4, (len(m)+8)*4))
	for i := range img.Pix {
		img.Pix[i] = 0xff
	}
	for y, row := range m {
		for x, dark := range row {
			if dark {
				for dy := 0; dy < 4; dy++ {
					for dx := 0; dx < 4; dx++ {
						img.SetGray((x+4)*4+dx, (y+4)*4+dy, color.Gray{})
					}
				}
			}
		}
	}
	if got := zxingQR(t, img); got != vectorBRCode {
		t.Fatalf("read %q", got)
	}
}

var reSVGRect = regexp.MustCompile(`<rect x="(\d+)" y="(\d+)" width="(\d+)" height="(\d+)"/>`)

// svgRects reads the rectangles of the n-th <svg class="cls"> of page.
func svgRects(t *testing.T, page, cls string, n int) []rect {
	t.Helper()
	parts := strings.Split(page, `<svg class="`+cls+`"`)
	if len(parts) <= n+1 {
		t.Fatalf("page has %d %s images, want more than %d", len(parts)-1, cls, n)
	}
	body := parts[n+1][:strings.Index(parts[n+1], "</svg>")]
	var rs []rect
	for _, m := range reSVGRect.FindAllStringSubmatch(body, -1) {
		var v [4]float64
		for i := range v {
			v[i], _ = strconv.ParseFloat(m[i+1], 64)
		}
		// Flip to the PDF convention (y up, negative height) used by the helpers.
		rs = append(rs, rect{v[0], -v[1], v[2], -v[3]})
	}
	return rs
}

func TestSlipHTMLDecodes(t *testing.T) {
	var b bytes.Buffer
	if err := RenderSlipHTML(&b, sampleSlip()); err != nil {
		t.Fatal(err)
	}
	page := b.String()
	writeSample(t, "slip.html", b.Bytes())
	bars := svgRects(t, page, "barcode", 0)
	sort.Slice(bars, func(i, j int) bool { return bars[i].x < bars[j].x })
	if got, err := decodeITF(barWidths(bars)); err != nil || got != vectorBarcode {
		t.Fatalf("HTML bars decode to %q (%v)", got, err)
	}
	mods := svgRects(t, page, "qrcode", 0)
	qrs := qrCodesOf(mods)
	if len(qrs) != 1 {
		t.Fatalf("%d QR codes", len(qrs))
	}
	if got := zxingQR(t, qrs[0]); got != vectorBRCode {
		t.Fatalf("HTML QR code reads %q", got)
	}
	for _, want := range []string{vectorLine, "R$ 1.500,75", "10/03/2026", "José da Conceição Araújo", "Mensalidade de março",
		`width="102.87mm"`, "@page { size: A4"} {
		if !strings.Contains(page, want) {
			t.Errorf("HTML does not show %q", want)
		}
	}
}

func TestHTMLEscapesUserText(t *testing.T) {
	s := sampleSlip()
	s.Payer.Name = `<script>alert("x")</script>`
	s.Messages = []string{`<img src=x onerror=alert(1)>`}
	var b bytes.Buffer
	if err := RenderSlipHTML(&b, s); err != nil {
		t.Fatal(err)
	}
	if strings.Contains(b.String(), "<script>alert") || strings.Contains(b.String(), "<img src=x") {
		t.Fatal("user text reached the page unescaped")
	}
}

func TestCarnetHTML(t *testing.T) {
	c := sampleCarnet(t, 3)
	var b bytes.Buffer
	if err := RenderCarnetHTML(&b, c); err != nil {
		t.Fatal(err)
	}
	page := b.String()
	writeSample(t, "carnet.html", b.Bytes())
	for i, p := range c.Parcels {
		bars := svgRects(t, page, "barcode", i)
		sort.Slice(bars, func(i, j int) bool { return bars[i].x < bars[j].x })
		if got, err := decodeITF(barWidths(bars)); err != nil || got != p.Barcode {
			t.Errorf("parcel %d: bars decode to %q (%v), want %s", i+1, got, err, p.Barcode)
		}
	}
	if !strings.Contains(page, "Carnê nº 8800123") || !strings.Contains(page, "R$ 1.050,06") {
		t.Error("cover lacks the carnet number or the total R$ 1.050,06")
	}
}
