package charges

import (
	"bytes"
	"compress/zlib"
	"crypto/sha256"
	"encoding/base64"
	"encoding/binary"
	"encoding/hex"
	"fmt"
	"hash/crc32"
	"net/url"
	"strings"
	"sync"
	"time"
	"unsafe"

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

// qrModule is the size in pixels of one QR module in qrcode_image (the
// row builder in qrImage assumes 4: one module per nibble).
const qrModule = 4

var pngPool = sync.Pool{New: func() any { return new(bytes.Buffer) }}

// qrImage renders content as a QR code (level M) PNG data URI: black
// modules of qrModule pixels on white with a 4-module quiet zone, 1 bit per
// pixel.
func qrImage(content string) (string, error) {
	sc := qrScratches.Get().(*qrScratch)
	defer qrScratches.Put(sc)
	if rows, n, ok := qrRowsIn(sc, []byte(content)); ok {
		return qrPNG(n, func(my int, row []byte) {
			// Byte j of the row holds image modules 2j and 2j+1, symbol
			// modules 2(j-2) and 2(j-2)+1 past the 4-module quiet zone.
			r := rows[my]
			for j := quietBytes; r != 0; j, r = j+1, r>>2 {
				row[j] = qrPair[r&3]
			}
		})
	}
	var n int
	var dark func(x, y int) bool
	if mx, size, err := qrMatrix([]byte(content), -1); err == nil {
		n = size
		dark = func(x, y int) bool { return mx[y*size+x] }
	} else {
		code, err := qr.Encode(content, qr.M, qr.Auto)
		if err != nil {
			return "", fmt.Errorf("charges: QR code: %w", err)
		}
		n = code.Bounds().Dx()
		dark = func(x, y int) bool { r, _, _, _ := code.At(x, y).RGBA(); return r == 0 }
	}
	return qrPNG(n, func(my int, row []byte) {
		for mx := 0; mx < n; mx++ {
			if !dark(mx, my) {
				continue
			}
			// qrModule is 4: a module is a nibble, high for even columns.
			c := mx + qrQuiet
			if c%2 == 0 {
				row[c/2] &^= 0xF0
			} else {
				row[c/2] &^= 0x0F
			}
		}
	})
}

// qrQuiet is the quiet zone around the symbol, in modules; quietBytes the
// bytes of an image row it takes on the left (2 modules a byte).
const (
	qrQuiet    = 4
	quietBytes = qrQuiet / 2
)

// qrPair is the image byte of two modules (bit 0: the left one dark, bit
// 1: the right one), 1 = white.
var qrPair = [4]byte{0xFF, 0x0F, 0xF0, 0x00}

// qrPNG renders a symbol of n modules as qrImage's PNG data URI; draw
// darkens the modules of symbol row my in row, an image row that starts
// all white (1 byte per 2 modules, quiet zone included).
func qrPNG(n int, draw func(my int, row []byte)) (string, error) {
	size := (n + 2*qrQuiet) * qrModule
	rowBytes := (size + 7) / 8
	// Raw image: per row a filter byte then 1-bit gray pixels (1 = white).
	// The first row of each module row uses filter 0 (None), the rows that
	// repeat it filter 2 (Up) with all-zero bytes, which compress to
	// almost nothing.
	rb := pngPool.Get().(*bytes.Buffer)
	defer pngPool.Put(rb)
	rb.Reset()
	rb.Grow(size * (rowBytes + 1))
	raw := rb.AvailableBuffer()[:size*(rowBytes+1)]
	for y := 0; y < size; y++ {
		line := raw[y*(rowBytes+1) : (y+1)*(rowBytes+1)]
		if y%qrModule != 0 {
			line[0] = 2
			clear(line[1:])
			continue
		}
		line[0] = 0
		row := line[1:]
		for i := range row {
			row[i] = 0xFF
		}
		my := y/qrModule - qrQuiet
		if my < 0 || my >= n {
			continue
		}
		draw(my, row)
	}
	buf := pngPool.Get().(*bytes.Buffer)
	buf.Reset()
	defer pngPool.Put(buf)
	buf.WriteString("\x89PNG\r\n\x1a\n")
	var ihdr [13]byte
	binary.BigEndian.PutUint32(ihdr[0:], uint32(size))
	binary.BigEndian.PutUint32(ihdr[4:], uint32(size))
	ihdr[8], ihdr[9] = 1, 0 // bit depth 1, grayscale
	pngChunk(buf, "IHDR", ihdr[:])
	zbuf := pngPool.Get().(*bytes.Buffer)
	zbuf.Reset()
	defer pngPool.Put(zbuf)
	zbuf.Grow(len(raw) / 4)
	if z, ok := qrZlib(zbuf.AvailableBuffer(), raw, rowBytes+1); ok {
		pngChunk(buf, "IDAT", z)
	} else if err := flatePNG(buf, zbuf, raw); err != nil {
		return "", err
	}
	pngChunk(buf, "IEND", nil)
	const prefix = "data:image/png;base64,"
	out := make([]byte, len(prefix)+base64.StdEncoding.EncodedLen(buf.Len()))
	copy(out, prefix)
	base64.StdEncoding.Encode(out[len(prefix):], buf.Bytes())
	return unsafe.String(unsafe.SliceData(out), len(out)), nil
}

// flatePNG writes raw's IDAT chunk compressed by compress/flate at
// BestSpeed (what qrZlib does not take).
func flatePNG(buf, zbuf *bytes.Buffer, raw []byte) error {
	var zw *zlib.Writer
	select {
	case zw = <-zlibWriters:
		zw.Reset(zbuf)
	default:
		zw, _ = zlib.NewWriterLevel(zbuf, zlib.BestSpeed)
	}
	_, _ = zw.Write(raw)
	if err := zw.Close(); err != nil {
		return fmt.Errorf("charges: QR PNG: %w", err)
	}
	select {
	case zlibWriters <- zw:
	default:
	}
	pngChunk(buf, "IDAT", zbuf.Bytes())
	return nil
}

// zlibWriters keeps a few BestSpeed writers (some 400 KB each) for qrPNG:
// unlike a sync.Pool, a garbage collection does not empty it.
var zlibWriters = make(chan *zlib.Writer, 8)

// pngChunk writes one PNG chunk: length, type, data, CRC of type+data.
func pngChunk(w *bytes.Buffer, typ string, data []byte) {
	var n [4]byte
	binary.BigEndian.PutUint32(n[:], uint32(len(data)))
	w.Write(n[:])
	w.WriteString(typ)
	w.Write(data)
	c := crc32.NewIEEE()
	c.Write([]byte(typ))
	c.Write(data)
	binary.BigEndian.PutUint32(n[:], c.Sum32())
	w.Write(n[:])
}
