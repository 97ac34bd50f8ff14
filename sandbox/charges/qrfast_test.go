package charges

import (
	"bytes"
	"compress/zlib"
	"encoding/base64"
	"encoding/binary"
	"fmt"
	"image"
	"image/png"
	"math/rand/v2"
	"strings"
	"sync"
	"testing"

	"github.com/boombuler/barcode/qr"
)

// refImages holds refQRImage's answer by content: TestQRImageSameImage
// and TestQRImageSmaller draw the same contents, and boombuler's encoder
// under -race took a third of this package's time drawing them twice.
var refImages sync.Map

// refQRImage is qrImage as it was before the packed path, drawn from
// boombuler's symbol (module by module, the straightforward way): the
// bytes qrcode_image has always had.
func refQRImage(t testing.TB, content string) string {
	if uri, ok := refImages.Load(content); ok {
		return uri.(string)
	}
	uri := drawRefQRImage(t, content)
	refImages.Store(content, uri)
	return uri
}

func drawRefQRImage(t testing.TB, content string) string {
	code, err := qr.Encode(content, qr.M, qr.Unicode)
	if err != nil {
		t.Fatal(err)
	}
	n := code.Bounds().Dx()
	const quiet = 4
	size := (n + 2*quiet) * 4
	rowBytes := (size + 7) / 8
	raw := make([]byte, size*(rowBytes+1))
	for y := 0; y < size; y++ {
		line := raw[y*(rowBytes+1) : (y+1)*(rowBytes+1)]
		if y%4 != 0 {
			line[0] = 2
			continue
		}
		row := line[1:]
		for i := range row {
			row[i] = 0xFF // the padding bits of a row too
		}
		for x := 0; x < size; x++ {
			mx, my := x/4-quiet, y/4-quiet
			dark := false
			if mx >= 0 && my >= 0 && mx < n && my < n {
				r, _, _, _ := code.At(mx, my).RGBA()
				dark = r == 0
			}
			if dark {
				row[x/8] &^= 0x80 >> (x % 8)
			}
		}
	}
	var buf, z bytes.Buffer
	buf.WriteString("\x89PNG\r\n\x1a\n")
	var ihdr [13]byte
	binary.BigEndian.PutUint32(ihdr[0:], uint32(size))
	binary.BigEndian.PutUint32(ihdr[4:], uint32(size))
	ihdr[8] = 1
	pngChunk(&buf, "IHDR", ihdr[:])
	zw, _ := zlib.NewWriterLevel(&z, zlib.BestSpeed)
	_, _ = zw.Write(raw)
	_ = zw.Close()
	pngChunk(&buf, "IDAT", z.Bytes())
	pngChunk(&buf, "IEND", nil)
	return "data:image/png;base64," + base64.StdEncoding.EncodeToString(buf.Bytes())
}

// qrBRCodes is how many BR Codes qrTestContents starts with for the tests
// that draw them with boombuler too: 16 of each
// host, each of the merchant name's six lengths about 13 times
// (boombuler's encoder, the reference, takes 50 ms a symbol under -race;
// 200 codes took a third of this package's time and covered no case more).
const qrBRCodes = 80

// qrTestContents are brCodes slips' dynamic BR Codes (hosts, accounts, ids and
// merchant names of every length) and plain strings of 1 to 400 bytes
// (every version up to 20, the 16-bit count from version 10 and the
// unpacked path above 64 modules).
func qrTestContents(t testing.TB, brCodes int) []string {
	rng := rand.New(rand.NewPCG(13, 1000))
	var out []string
	hosts := []string{"http://127.0.0.1:8080", "http://localhost:45678", "https://sandbox.example.com.br", "http://[::1]:9", "https://a-very-long-host-name-for-a-sandbox.internal.example.org:65535"}
	for i := 0; i < brCodes; i++ {
		name := strings.Repeat("Loja Ç", rng.IntN(6)) + fmt.Sprint(rng.IntN(1000))
		br, err := buildBRCode(pixLocation(hosts[i%len(hosts)], fmt.Sprintf("acc%d", rng.IntN(1e6)), 1000000+rng.Int64N(1e9)), name)
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, br)
	}
	for n := 1; n <= 400; n += 1 + n/20 {
		b := make([]byte, n)
		for i := range b {
			b[i] = byte(32 + rng.IntN(95))
		}
		out = append(out, string(b))
	}
	return out
}

// TestQRImageSameImage: qrImage draws the reference's image, pixel by
// pixel, at the reference's size. The bytes differ since qrZlib writes the
// PNG data (the reference compresses it with compress/flate): what a client
// gets is the same image, not the same file.
func TestQRImageSameImage(t *testing.T) {
	for _, c := range qrTestContents(t, qrBRCodes) {
		got, err := qrImage(c)
		if err != nil {
			t.Fatal(err)
		}
		gi, want := decodeQRImage(t, got), decodeQRImage(t, refQRImage(t, c))
		if gi.Bounds() != want.Bounds() {
			t.Fatalf("%q (len %d): image %v, reference %v", c, len(c), gi.Bounds(), want.Bounds())
		}
		// the same pixels when both decode to the same gray rows (the
		// usual case); else, or to say where they differ, pixel by pixel
		if g, ok := gi.(*image.Gray); ok {
			if w, ok := want.(*image.Gray); ok && g.Stride == w.Stride && bytes.Equal(g.Pix, w.Pix) {
				continue
			}
		}
		b := want.Bounds()
		for y := b.Min.Y; y < b.Max.Y; y++ {
			for x := b.Min.X; x < b.Max.X; x++ {
				if gi.At(x, y) != want.At(x, y) {
					t.Fatalf("%q (len %d): pixel (%d,%d) is %v, reference %v", c, len(c), x, y, gi.At(x, y), want.At(x, y))
				}
			}
		}
	}
}

// decodeQRImage decodes a qrcode_image data URI with image/png.
func decodeQRImage(t testing.TB, uri string) image.Image {
	const prefix = "data:image/png;base64,"
	if !strings.HasPrefix(uri, prefix) {
		t.Fatalf("image %.40q has no %s prefix", uri, prefix)
	}
	raw, err := base64.StdEncoding.DecodeString(uri[len(prefix):])
	if err != nil {
		t.Fatal(err)
	}
	img, err := png.Decode(bytes.NewReader(raw))
	if err != nil {
		t.Fatalf("not a PNG: %v", err)
	}
	return img
}

// TestQRRowsMatchMatrix: the packed path draws qrMatrix's symbol.
func TestQRRowsMatchMatrix(t *testing.T) {
	packed := 0
	for _, c := range qrTestContents(t, 200) { // no boombuler here: more are cheap
		rows, n, ok := qrRows([]byte(c))
		if !ok {
			continue
		}
		packed++
		mx, size, err := qrMatrix([]byte(c), -1)
		if err != nil || size != n {
			t.Fatalf("%q: qrMatrix size %d err %v, qrRows %d", c, size, err, n)
		}
		for y := 0; y < n; y++ {
			if rows[y]>>n != 0 {
				t.Fatalf("%q: row %d has bits past the symbol: %x", c, y, rows[y])
			}
			for x := 0; x < n; x++ {
				if mx[y*n+x] != (rows[y]>>x&1 == 1) {
					t.Fatalf("%q: module (%d,%d) differs", c, x, y)
				}
			}
		}
	}
	if packed < 200 {
		t.Fatalf("only %d contents took the packed path", packed)
	}
}

func TestTranspose64(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	var m, orig [64]uint64
	for i := range m {
		m[i] = rng.Uint64()
	}
	orig = m
	transpose64(&m)
	for y := 0; y < 64; y++ {
		for x := 0; x < 64; x++ {
			if orig[y]>>x&1 != m[x]>>y&1 {
				t.Fatalf("bit (%d,%d) not transposed", x, y)
			}
		}
	}
}

// TestQRMemo: a document read back gets qrImage's image, the second
// read from the memo, and the memo stays bounded.
func TestQRMemo(t *testing.T) {
	contents := qrTestContents(t, qrBRCodes)[:qrBRCodes]
	for _, c := range contents {
		want, err := qrImage(c)
		if err != nil {
			t.Fatal(err)
		}
		for range 2 {
			ch := &Charge{ID: 1, Payment: &Payment{Billet: &Billet{BRCode: c}}}
			raw, err := marshalChargeDoc(ch)
			if err != nil {
				t.Fatal(err)
			}
			got, err := decodeCharge("", "", raw)
			if err != nil {
				t.Fatal(err)
			}
			if got.Payment.Billet.QRImage != want {
				t.Fatalf("%q: decoded image differs from qrImage", c)
			}
		}
	}
	for i := 0; i < 3*qrMemoMax; i++ {
		if _, err := qrMemo.image(fmt.Sprintf("memo test %d", i)); err != nil {
			t.Fatal(err)
		}
	}
	if n := qrMemo.len(); n > 2*qrMemoMax {
		t.Fatalf("memo holds %d images, more than 2×%d", n, qrMemoMax)
	}
}
