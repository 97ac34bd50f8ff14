package charges

import (
	"bytes"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"fmt"
	"image"
	"image/color"
	"image/png"
	"net/url"
	"strings"
	"sync"
	"time"

	"github.com/boombuler/barcode/qr"

	"remessa/rules"
)

// slipCodes are the printed codes of one slip.
type slipCodes struct {
	Barcode   string // 44 digits
	TypedLine string // formatted
}

// freeField is the 25-digit "campo livre" of a charge's slip: the charge id
// zero-padded. It is deterministic, so a due-date change keeps it.
func freeField(chargeID int64) string {
	return fmt.Sprintf("%025d", chargeID)
}

// buildSlipCodes makes the barcode and typed line of a slip (bank 364).
func buildSlipCodes(chargeID int64, due time.Time, cents int64) (slipCodes, error) {
	bc, err := rules.BuildBarcode(rules.BankEfi, due, cents, freeField(chargeID))
	if err != nil {
		return slipCodes{}, fmt.Errorf("charges: barcode of charge %d: %w", chargeID, err)
	}
	tl, err := rules.TypedLine(bc)
	if err != nil {
		return slipCodes{}, fmt.Errorf("charges: typed line of charge %d: %w", chargeID, err)
	}
	return slipCodes{Barcode: bc, TypedLine: tl}, nil
}

// pixLocation is the location (26-25) of a slip's dynamic BR Code:
// "{host}/v2/cobv/{32 hex}" where the hex part is derived from the account
// and the charge id.
func pixLocation(baseURL, account string, chargeID int64) string {
	host := baseURL
	if u, err := url.Parse(baseURL); err == nil && u.Host != "" {
		host = u.Host
	}
	sum := sha256.Sum256([]byte(fmt.Sprintf("remessa-cobv/%s/%d", account, chargeID)))
	loc := host + "/v2/cobv/" + hex.EncodeToString(sum[:16])
	if len(loc) > 77 {
		// Keep within the 77-character limit of 26-25 by shortening the id.
		loc = loc[:77]
	}
	return loc
}

// buildBRCode makes the dynamic BR Code of a slip.
func buildBRCode(location, merchant string) (string, error) {
	name := strings.TrimSpace(merchant)
	if name == "" {
		name = "EFI SANDBOX"
	}
	name = asciiUpper(name, 25)
	b := rules.BRCode{Dynamic: true, URL: location, MerchantName: name, MerchantCity: "SAO PAULO"}
	return b.Encode()
}

// asciiUpper keeps letters, digits and spaces (accents dropped) and cuts
// at max characters.
func asciiUpper(s string, max int) string {
	var b strings.Builder
	for _, r := range s {
		switch {
		case r >= 'a' && r <= 'z', r >= 'A' && r <= 'Z', r >= '0' && r <= '9', r == ' ', r == '.', r == '-':
			b.WriteRune(r)
		default:
			if a, ok := accentless[r]; ok {
				b.WriteRune(a)
			}
		}
		if b.Len() >= max {
			break
		}
	}
	out := strings.TrimSpace(b.String())
	if len(out) > max {
		out = out[:max]
	}
	if out == "" {
		out = "EFI SANDBOX"
	}
	return out
}

var accentless = map[rune]rune{
	'á': 'a', 'à': 'a', 'â': 'a', 'ã': 'a', 'ä': 'a', 'é': 'e', 'ê': 'e', 'è': 'e', 'í': 'i', 'ó': 'o', 'ô': 'o', 'õ': 'o',
	'ú': 'u', 'ü': 'u', 'ç': 'c', 'Á': 'A', 'À': 'A', 'Â': 'A', 'Ã': 'A', 'É': 'E', 'Ê': 'E', 'Í': 'I', 'Ó': 'O',
	'Ô': 'O', 'Õ': 'O', 'Ú': 'U', 'Ç': 'C',
}

// qrModule is the size in pixels of one QR module in qrcode_image.
const qrModule = 4

var qrPalette = color.Palette{color.Gray{Y: 255}, color.Gray{Y: 0}}

var pngPool = sync.Pool{New: func() any { return new(bytes.Buffer) }}

var pngEncoder = png.Encoder{CompressionLevel: png.BestSpeed, BufferPool: &encoderPool{}}

type encoderPool struct{ p sync.Pool }

func (e *encoderPool) Get() *png.EncoderBuffer {
	b, _ := e.p.Get().(*png.EncoderBuffer)
	return b
}
func (e *encoderPool) Put(b *png.EncoderBuffer) { e.p.Put(b) }

// qrImage renders content as a QR code (level M) PNG data URI: black
// modules of qrModule pixels on white with a 4-module quiet zone, 1 bit per
// pixel.
func qrImage(content string) (string, error) {
	code, err := qr.Encode(content, qr.M, qr.Auto)
	if err != nil {
		return "", fmt.Errorf("charges: QR code: %w", err)
	}
	n := code.Bounds().Dx()
	const quiet = 4
	size := (n + 2*quiet) * qrModule
	img := image.NewPaletted(image.Rect(0, 0, size, size), qrPalette)
	for y := 0; y < n; y++ {
		for x := 0; x < n; x++ {
			r, _, _, _ := code.At(x, y).RGBA()
			if r != 0 {
				continue
			}
			px, py := (x+quiet)*qrModule, (y+quiet)*qrModule
			for dy := 0; dy < qrModule; dy++ {
				row := img.Pix[(py+dy)*img.Stride+px : (py+dy)*img.Stride+px+qrModule]
				for i := range row {
					row[i] = 1
				}
			}
		}
	}
	buf := pngPool.Get().(*bytes.Buffer)
	buf.Reset()
	defer pngPool.Put(buf)
	if err := pngEncoder.Encode(buf, img); err != nil {
		return "", fmt.Errorf("charges: QR PNG: %w", err)
	}
	return "data:image/png;base64," + base64.StdEncoding.EncodeToString(buf.Bytes()), nil
}
