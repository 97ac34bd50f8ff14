package charges

import (
	"bytes"
	"encoding/base64"
	"fmt"
	"image/png"
	"strings"
	"testing"

	"github.com/boombuler/barcode/qr"
	"github.com/makiuchi-d/gozxing"
	zxqr "github.com/makiuchi-d/gozxing/qrcode"
)

func TestQRMatchesBoombuler(t *testing.T) {
	contents := []string{
		"00020101021226800014br.gov.bcb.pix2558qrpix.example.com/v2/cobv/0a1b2c3d4e5f60718293a4b5c6d7e8f95204000053039865802BR5917LOJA EXEMPLO LTDA6008CURITIBA62070503***63041D11",
		"hello",
		strings.Repeat("x", 200),
		strings.Repeat("Z9", 160),
		"",
	}
	for v := 1; v <= 600; v += 37 {
		contents = append(contents, strings.Repeat("a", v))
	}
	masks := map[int]bool{}
	for _, content := range contents {
		code, err := qr.Encode(content, qr.M, qr.Unicode)
		if err != nil {
			t.Fatal(err)
		}
		size := code.Bounds().Dx()
		dark := func(x, y int) bool { r, _, _, _ := code.At(x, y).RGBA(); return r == 0 }
		// Format bits, LSB first at the coordinates of the top-left copy.
		coords := [15][2]int{{8, 0}, {8, 1}, {8, 2}, {8, 3}, {8, 4}, {8, 5}, {8, 7}, {8, 8}, {7, 8}, {5, 8}, {4, 8}, {3, 8}, {2, 8}, {1, 8}, {0, 8}}
		format := 0
		for i, c := range coords {
			if dark(c[0], c[1]) {
				format |= 1 << i
			}
		}
		format ^= 0x5412
		if level := format >> 13; level != 0 {
			t.Fatalf("%q: boombuler level bits %b, want M (00)", content, level)
		}
		mask := format >> 10 & 7
		masks[mask] = true
		mine, msize, err := qrMatrix([]byte(content), mask)
		if err != nil {
			t.Fatal(err)
		}
		if msize != size {
			t.Fatalf("%q: size %d, boombuler %d", content, msize, size)
		}
		for y := 0; y < size; y++ {
			for x := 0; x < size; x++ {
				if mine[y*size+x] != dark(x, y) {
					t.Fatalf("%q (len %d, mask %d): module (%d,%d) differs", content, len(content), mask, x, y)
				}
			}
		}
	}
	for i := 0; len(masks) < 8 && i < 150; i++ {
		content := fmt.Sprintf("mask probe %d %s", i, strings.Repeat("q", i%90))
		code, _ := qr.Encode(content, qr.M, qr.Unicode)
		dark := func(x, y int) bool { r, _, _, _ := code.At(x, y).RGBA(); return r == 0 }
		coords := [15][2]int{{8, 0}, {8, 1}, {8, 2}, {8, 3}, {8, 4}, {8, 5}, {8, 7}, {8, 8}, {7, 8}, {5, 8}, {4, 8}, {3, 8}, {2, 8}, {1, 8}, {0, 8}}
		format := 0
		for i, c := range coords {
			if dark(c[0], c[1]) {
				format |= 1 << i
			}
		}
		mask := (format ^ 0x5412) >> 10 & 7
		if masks[mask] {
			continue
		}
		masks[mask] = true
		mine, size, err := qrMatrix([]byte(content), mask)
		if err != nil {
			t.Fatal(err)
		}
		for y := 0; y < size; y++ {
			for x := 0; x < size; x++ {
				if mine[y*size+x] != dark(x, y) {
					t.Fatalf("%q (mask %d): module (%d,%d) differs", content, mask, x, y)
				}
			}
		}
	}
	if len(masks) < 7 {
		t.Fatalf("masks covered: %v, want at least 7 of 8", masks)
	}
	_ = fmt.Sprint
}

// TestQRImageDecodes reads qrcode_image back with an independent decoder
// (ZXing's Go port) and gets the BR Code.
func TestQRImageDecodes(t *testing.T) {
	for _, content := range []string{
		"00020101021226800014br.gov.bcb.pix2558127.0.0.1:45678/v2/cobv/0a1b2c3d4e5f60718293a4b5c6d7e8f95204000053039865802BR5917LOJA EXEMPLO LTDA6009SAO PAULO62070503***63041D11",
		strings.Repeat("Z", 300),
	} {
		uri, err := qrImage(content)
		if err != nil {
			t.Fatal(err)
		}
		raw, err := base64.StdEncoding.DecodeString(strings.TrimPrefix(uri, "data:image/png;base64,"))
		if err != nil {
			t.Fatal(err)
		}
		img, err := png.Decode(bytes.NewReader(raw))
		if err != nil {
			t.Fatal(err)
		}
		bmp, err := gozxing.NewBinaryBitmapFromImage(img)
		if err != nil {
			t.Fatal(err)
		}
		res, err := zxqr.NewQRCodeReader().Decode(bmp, nil)
		if err != nil {
			t.Fatalf("decode: %v", err)
		}
		if res.GetText() != content {
			t.Fatalf("decoded %q, want %q", res.GetText(), content)
		}
	}
}

func BenchmarkQRImage(b *testing.B) {
	s := "00020101021226800014br.gov.bcb.pix2558127.0.0.1:45678/v2/cobv/0a1b2c3d4e5f60718293a4b5c6d7e8f95204000053039865802BR5917LOJA EXEMPLO LTDA6009SAO PAULO62070503***63041D11"
	for i := 0; i < b.N; i++ {
		if _, err := qrImage(s); err != nil {
			b.Fatal(err)
		}
	}
}
