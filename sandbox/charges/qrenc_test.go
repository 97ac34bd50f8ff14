package charges

import (
	"bytes"
	"encoding/base64"
	"fmt"
	"image/color"
	"image/png"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/boombuler/barcode/qr"
	"github.com/makiuchi-d/gozxing"
	zxqr "github.com/makiuchi-d/gozxing/qrcode"

	"remessa/rules"
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

// TestQROwnMaskMatchesBoombuler lets the encoder choose its own mask
// (qrMatrix(content, -1), as qrImage does) and compares the whole symbol
// with boombuler's over BR Codes built by rules.BRCode (a few of each mask
// and symbol size the encoder chose among 1,600 made): dynamic ones
// as the sandbox issues them (locations of every host and id length,
// merchant names of 1 to 25 characters) and static ones (every key type,
// optional information, amounts and txids of every length). The mask
// choice is what TestQRMatchesBoombuler cannot see: it hands the encoder
// boombuler's mask.
func TestQROwnMaskMatchesBoombuler(t *testing.T) {
	const nOwnMask, perMask = 1600, 4
	rng := rand.New(rand.NewPCG(14, 535))
	const alnum = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789"
	str := func(n int, set string) string {
		b := make([]byte, n)
		for i := range b {
			b[i] = set[rng.IntN(len(set))]
		}
		return string(b)
	}
	names := []string{"A", "ESCOLA", "Loja Exemplo Ltda", "Associação São João", "EFI SANDBOX", "Padaria Pão de Açúcar", "Maria José da Conceição"}
	cities := []string{"SAO PAULO", "CURITIBA", "Rio de Janeiro", "Belém", "BH", "Florianópolis"}
	hosts := []string{"127.0.0.1:45678", "localhost:8080", "qrpix.example.com", "pix.sejaefi.com.br", "qrcodes-pix.gerencianet.com.br"}
	var contents []string
	for i := 0; len(contents) < nOwnMask; i++ {
		name := names[rng.IntN(len(names))]
		if rng.IntN(2) == 0 {
			name = str(1+rng.IntN(25), alnum+"   ")
		}
		name = strings.TrimSpace(name)
		if name == "" || len(name) > 25 {
			name = "EFI SANDBOX"
		}
		b := rules.BRCode{MerchantName: name, MerchantCity: cities[rng.IntN(len(cities))]}
		if i%2 == 0 {
			// Dynamic, as the sandbox's slips and cob/cobv issue them.
			b.Dynamic = true
			switch i % 6 {
			case 0:
				b.URL = pixLocation("http://"+hosts[rng.IntN(len(hosts))], str(1+rng.IntN(12), alnum), rng.Int64N(1e9))
			case 2:
				b.URL = hosts[rng.IntN(len(hosts))] + "/v2/cob/" + str(26+rng.IntN(10), alnum)
			default:
				b.URL = hosts[rng.IntN(len(hosts))] + "/qr/v2/" + str(1+rng.IntN(36), "0123456789abcdef-")
			}
			if len(b.URL) > 77 {
				b.URL = b.URL[:77]
			}
		} else {
			switch i % 10 {
			case 1:
				b.Key = str(11, "0123456789")
			case 3:
				b.Key = str(14, "0123456789")
			case 5:
				b.Key = "+55" + str(11, "0123456789")
			case 7:
				b.Key = strings.ToLower(str(1+rng.IntN(50), alnum)) + "@example.com.br"
			default:
				b.Key = fmt.Sprintf("%s-%s-%s-%s-%s", str(8, "0123456789abcdef"), str(4, "0123456789abcdef"), str(4, "0123456789abcdef"), str(4, "0123456789abcdef"), str(12, "0123456789abcdef"))
			}
			if room := 99 - 22 - len(b.Key) - 4; rng.IntN(2) == 0 && room > 0 {
				b.Info = str(1+rng.IntN(room), alnum+" ")
			}
			if rng.IntN(4) > 0 {
				b.AmountCents = rng.Int64N([]int64{100, 10000, 1000000, 10000000000}[rng.IntN(4)]) + 1
			}
			if rng.IntN(3) > 0 {
				b.Txid = str(1+rng.IntN(25), alnum)
			}
			if rng.IntN(3) == 0 {
				b.PostalCode = str(8, "0123456789")
			}
		}
		s, err := b.Encode()
		if err != nil {
			t.Fatalf("%+v: %v", b, err)
		}
		contents = append(contents, s)
	}
	// boombuler's encoder is what takes this test's time (under -race,
	// 50 ms a symbol): it draws the symbols of up to perMask BR Codes for
	// each mask the encoder chose at each symbol size, in the order they
	// were made. Mask 2 wins for nearly nine codes in ten; drawing them
	// all only repeated it.
	minLen, maxLen, differ := 1000, 0, 0
	masks := map[int]int{} // boombuler's mask choices
	chosen, compared := map[[2]int]int{}, 0
	for _, content := range contents {
		mine, size, err := qrMatrix([]byte(content), -1)
		if err != nil {
			t.Fatal(err)
		}
		own := formatMask(func(x, y int) bool { return mine[y*size+x] })
		if chosen[[2]int{own, size}] >= perMask {
			continue
		}
		chosen[[2]int{own, size}]++
		compared++
		minLen, maxLen = min(minLen, len(content)), max(maxLen, len(content))
		code, err := qr.Encode(content, qr.M, qr.Unicode)
		if err != nil {
			t.Fatal(err)
		}
		masks[boombulerMask(code)]++
		if size != code.Bounds().Dx() {
			t.Fatalf("%q: size %d, boombuler %d", content, size, code.Bounds().Dx())
		}
		for i, m := range mine {
			if r, _, _, _ := code.At(i%size, i/size).RGBA(); m != (r == 0) {
				if differ++; differ <= 5 {
					t.Errorf("%q (len %d): own mask gives a different symbol than boombuler (module (%d,%d) differs)", content, len(content), i%size, i/size)
				}
				break
			}
		}
	}
	if differ > 0 {
		t.Errorf("%d of %d BR Codes (%d to %d bytes) differ from boombuler's symbol", differ, compared, minLen, maxLen)
	}
	if len(masks) < 7 {
		t.Errorf("boombuler chose masks %v for the %d BR Codes compared: want at least 7 of the 8", masks, compared)
	}
	t.Logf("%d of %d BR Codes compared, %d to %d bytes; boombuler's masks %v", compared, len(contents), minLen, maxLen, masks)
}

// boombulerMask reads the mask of boombuler's symbol code from its format
// bits (level M).
func boombulerMask(code interface {
	At(x, y int) color.Color
}) int {
	return formatMask(func(x, y int) bool { r, _, _, _ := code.At(x, y).RGBA(); return r == 0 })
}

// formatMask reads the mask of a level M symbol from the format bits of
// its top-left copy (dark reports a module).
func formatMask(dark func(x, y int) bool) int {
	coords := [15][2]int{{8, 0}, {8, 1}, {8, 2}, {8, 3}, {8, 4}, {8, 5}, {8, 7}, {8, 8}, {7, 8}, {5, 8}, {4, 8}, {3, 8}, {2, 8}, {1, 8}, {0, 8}}
	format := 0
	for i, c := range coords {
		if dark(c[0], c[1]) {
			format |= 1 << i
		}
	}
	return (format ^ 0x5412) >> 10 & 7
}
