package documents

import (
	"bytes"
	"encoding/base64"
	"fmt"
	"image"
	"image/color"
	"image/png"

	"github.com/boombuler/barcode/qr"
)

// QRQuietZone is the light margin around a QR code, in modules.
const QRQuietZone = 4

// QRMatrix encodes content as a QR code (error correction level M) and
// returns its modules, true for dark, without the quiet zone.
func QRMatrix(content string) ([][]bool, error) {
	if content == "" {
		return nil, fmt.Errorf("documents: QR code content is empty")
	}
	code, err := qr.Encode(content, qr.M, qr.Auto)
	if err != nil {
		return nil, fmt.Errorf("documents: encode QR code of %d characters: %w", len(content), err)
	}
	b := code.Bounds()
	m := make([][]bool, b.Dy())
	for y := range m {
		m[y] = make([]bool, b.Dx())
		for x := range m[y] {
			r, _, _, _ := code.At(b.Min.X+x, b.Min.Y+y).RGBA()
			m[y][x] = r < 0x8000
		}
	}
	return m, nil
}

// QRPNG returns content as a QR code PNG with scale pixels per module and
// the quiet zone.
func QRPNG(content string, scale int) ([]byte, error) {
	m, err := QRMatrix(content)
	if err != nil {
		return nil, err
	}
	if scale < 1 {
		scale = 1
	}
	n := (len(m) + 2*QRQuietZone) * scale
	img := image.NewGray(image.Rect(0, 0, n, n))
	for i := range img.Pix {
		img.Pix[i] = 0xff
	}
	for y, row := range m {
		for x, dark := range row {
			if !dark {
				continue
			}
			for dy := 0; dy < scale; dy++ {
				for dx := 0; dx < scale; dx++ {
					img.SetGray((x+QRQuietZone)*scale+dx, (y+QRQuietZone)*scale+dy, color.Gray{})
				}
			}
		}
	}
	var buf bytes.Buffer
	if err := png.Encode(&buf, img); err != nil {
		return nil, fmt.Errorf("documents: write QR code PNG: %w", err)
	}
	return buf.Bytes(), nil
}

// QRDataURI returns content as a "data:image/png;base64,..." QR code, the
// shape of the charges API's pix.qrcode_image.
func QRDataURI(content string) (string, error) {
	p, err := QRPNG(content, 6)
	if err != nil {
		return "", err
	}
	return "data:image/png;base64," + base64.StdEncoding.EncodeToString(p), nil
}

// qrRuns returns, row by row, the horizontal runs of dark modules as
// [x, length] pairs, so a renderer draws one rectangle per run.
func qrRuns(m [][]bool) [][][2]int {
	out := make([][][2]int, len(m))
	for y, row := range m {
		for x := 0; x < len(row); {
			if !row[x] {
				x++
				continue
			}
			start := x
			for x < len(row) && row[x] {
				x++
			}
			out[y] = append(out[y], [2]int{start, x - start})
		}
	}
	return out
}
