package formats

import (
	"bytes"
	"fmt"
	"strconv"
	"strings"
)

// Quoting limits of QuoteHeaders: an unusable sheet's message quotes a few
// short headers, not a binary file's "header" of garbage.
const (
	MaxQuotedHeaders   = 10
	MaxQuotedHeaderLen = 40 // characters
)

// QuoteHeaders lists headers for a message, in Portuguese and English:
// the first MaxQuotedHeaders non-blank ones, quoted (control and invalid
// bytes escaped), each cut at MaxQuotedHeaderLen characters with "…",
// then "e mais N" / "and N more". None gives "(nenhum)" / "(none)".
func QuoteHeaders(headers []string) (pt, en string) {
	hs := nonEmpty(headers)
	if len(hs) == 0 {
		return "(nenhum)", "(none)"
	}
	n := min(len(hs), MaxQuotedHeaders)
	q := make([]string, n)
	for i, h := range hs[:n] {
		k := 0
		for j := range h { // by characters; an invalid byte counts as one
			if k == MaxQuotedHeaderLen {
				h = h[:j] + "…"
				break
			}
			k++
		}
		q[i] = strconv.Quote(h) // control characters and invalid bytes escaped
	}
	pt, en = strings.Join(q, ", "), strings.Join(q, ", ")
	if more := len(hs) - n; more > 0 {
		pt += fmt.Sprintf(" e mais %d", more)
		en += fmt.Sprintf(" and %d more", more)
	}
	return pt, en
}

// sniffHead is how much of a file Open looks at to tell its format.
const sniffHead = 1024

// foreignContent says what a file is when its first bytes show it is not
// a text spreadsheet (CSV, YAML) at all: a PDF, an image, an archive,
// UTF-16 text, or binary data (more than 1 in 20 control bytes, NUL
// included). The empty strings mean it may be text.
func foreignContent(head []byte) (pt, en string) {
	switch {
	case bytes.HasPrefix(head, []byte("%PDF-")):
		return "um PDF", "a PDF"
	case bytes.HasPrefix(head, []byte("\x89PNG\r\n\x1a\n")), bytes.HasPrefix(head, []byte("\xFF\xD8\xFF")),
		bytes.HasPrefix(head, []byte("GIF87a")), bytes.HasPrefix(head, []byte("GIF89a")),
		len(head) >= 12 && bytes.HasPrefix(head, []byte("RIFF")) && string(head[8:12]) == "WEBP":
		return "uma imagem", "an image"
	case bytes.HasPrefix(head, zipMagic):
		return "um arquivo compactado (zip: talvez uma planilha .xlsx ou .ods, ou um documento, com a extensão errada)",
			"a zip archive (perhaps an .xlsx or .ods workbook, or a document, with the wrong extension)"
	case bytes.HasPrefix(head, []byte("\x1f\x8b")), bytes.HasPrefix(head, []byte("7z\xBC\xAF\x27\x1C")), bytes.HasPrefix(head, []byte("Rar!\x1a\x07")):
		return "um arquivo compactado", "a compressed archive"
	case bytes.HasPrefix(head, []byte("\xFF\xFE")), bytes.HasPrefix(head, []byte("\xFE\xFF")):
		return "texto em UTF-16 (o \"Texto Unicode\" do Excel)", "UTF-16 text (Excel's \"Unicode Text\")"
	}
	ctrl, nul := 0, false
	for _, b := range head {
		if b < 0x20 && b != '\t' && b != '\n' && b != '\r' && b != '\f' || b == 0x7f {
			ctrl++
			nul = nul || b == 0
		}
	}
	// More than 1 in 20: random bytes have 1 in 9, text next to none (a
	// stray NUL in a cell is the validation's to report, at the cell).
	if len(head) > 0 && ctrl*20 > len(head) {
		if nul {
			return "um arquivo binário (tem bytes nulos)", "a binary file (it has NUL bytes)"
		}
		return "um arquivo binário", "a binary file"
	}
	return "", ""
}

// notASpreadsheet is the error for a file whose content is foreignContent.
func notASpreadsheet(path, pt, en string) *Error {
	return &Error{File: path, Code: CodeUnknownFormat, Err: ErrUnsupported,
		Message:   "o arquivo não parece uma planilha: é " + pt + "; salve a planilha como .xlsx ou como CSV UTF-8",
		MessageEN: "the file does not look like a spreadsheet: it is " + en + "; save the sheet as .xlsx or as CSV UTF-8"}
}
