package charges

import (
	"fmt"
	"strings"
	"testing"

	"github.com/boombuler/barcode/qr"
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
	_ = fmt.Sprint
}

func BenchmarkQRImage(b *testing.B) {
	s := "00020101021226800014br.gov.bcb.pix2558127.0.0.1:45678/v2/cobv/0a1b2c3d4e5f60718293a4b5c6d7e8f95204000053039865802BR5917LOJA EXEMPLO LTDA6009SAO PAULO62070503***63041D11"
	for i := 0; i < b.N; i++ {
		if _, err := qrImage(s); err != nil {
			b.Fatal(err)
		}
	}
}
