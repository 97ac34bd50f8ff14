// Package formats turns input files (XLSX, CSV, YAML) into a stream of
// rows with their source position, matches headers to fields, parses
// Brazilian values (amounts, percentages, dates, CPF/CNPJ/CEP) exactly, and
// writes fill-in templates. It knows nothing of what the rows mean.
package formats

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"remessa/formats/cnab"
)

// CellKind says how a value was stored in the file.
type CellKind int

// Cell kinds.
const (
	KindEmpty   CellKind = iota // no value
	KindText                    // a string (CSV fields are always text)
	KindNumber                  // a numeric cell; Value is a plain decimal ("1234.56")
	KindDate                    // a numeric cell with a date format; Value is "YYYY-MM-DD", Raw the serial
	KindBool                    // TRUE/FALSE; Value is "true" or "false"
	KindFormula                 // a formula; Value is its cached result
	KindError                   // an error value such as #N/A; Value is the error text
	KindPercent                 // a numeric cell with a percent format; Value is "2%", Raw "0.02"
)

var kindNames = [...]string{"empty", "text", "number", "date", "bool", "formula-cached", "error", "percent"}

func (k CellKind) String() string {
	if int(k) < len(kindNames) {
		return kindNames[k]
	}
	return fmt.Sprintf("CellKind(%d)", int(k))
}

// Cell is one value of a row.
type Cell struct {
	Value  string   // the value to use, trimmed; dates and percentages converted (see Kind)
	Column string   // column letter ("C"); for YAML, the key
	Header string   // the header of the column, as written in the file
	Raw    string   // the value as stored in the file
	Kind   CellKind // how it was stored
}

// Row is one data row with its source position.
type Row struct {
	Number int    // row number as the spreadsheet shows it (a header at the top is row 1); CSV: physical line where the record starts; YAML: line of the item
	Cells  []Cell // in column order, one per header
}

// Get returns the cell at column index i (as in Mapping.ByField), or an
// empty cell if i is out of range.
func (r Row) Get(i int) Cell {
	if i < 0 || i >= len(r.Cells) {
		return Cell{}
	}
	return r.Cells[i]
}

// Source describes what is being read.
type Source struct {
	File      string
	Sheet     string   // XLSX only
	Format    string   // "xlsx", "csv", "yaml"
	Headers   []string // as written in the file
	Columns   []string // column letters (YAML: the keys), parallel to Headers
	Encoding  string   // "utf-8", "utf-8-bom", "windows-1252"
	Delimiter string   // CSV only
	HeaderRow int      // row number of the header
	Sheets    []string // XLSX: every sheet of the workbook
	Date1904  bool     // XLSX: the workbook uses the 1904 date system
	Warnings  []Warning
	// CNAB only: the layout table read, and what the file header says.
	Layout     string // "febraban240-remessa", "bradesco400-remessa" ...
	Bank       string // bank code of the header
	CompanyDoc string // the company's CNPJ/CPF in the header, when the layout has it
	NSA        int64  // the file's sequence number (0 when the layout has none)
	Account    string // the account the header names (cnab.Header.Account)
}

// Reader streams the data rows of a file.
type Reader interface {
	// Source describes the file; its Warnings grow as rows are read.
	Source() Source
	// Next returns the next data row, or io.EOF at the end. A file with a
	// header but no data row gives an *Error with Code CodeNoData instead
	// of the first io.EOF. A row-level problem (a ragged CSV row, a nested
	// YAML value; see IsRowLevel) is an *Error and the reader stays usable:
	// call Next again to go on. Any other error is final.
	Next() (Row, error)
	Close() error
}

// CellsReader is a Reader that can write a row's cells into a slice the
// caller provides, for callers that keep rows in buffers of their own
// (one copy fewer than Next and copying). NextCells uses dst when
// cap(dst) is at least the number of cells, and otherwise behaves like
// Next; the returned Row's Cells is then dst[:n].
type CellsReader interface {
	Reader
	NextCells(dst []Cell) (Row, error)
}

// Limits applied when Options leaves them at zero.
const (
	DefaultMaxRows       = 1_048_576 // Excel's own sheet limit
	DefaultMaxBytes      = 512 << 20 // file size
	DefaultMaxUnzipBytes = 1 << 30   // XLSX: total uncompressed size read
	DefaultMaxYAMLBytes  = 16 << 20  // YAML is loaded whole
	DefaultMaxCellBytes  = 256 << 10 // one cell's text (Excel itself holds 32,767 characters)
	DefaultMaxLineBytes  = 1 << 20   // CSV: a physical line or a record; XLSX: an XML tag or text run
)

// Options tune Open. Zero values mean the defaults above; a negative limit
// means no limit.
type Options struct {
	Sheet         string // XLSX sheet name; "" = the first sheet
	MaxRows       int    // data rows
	MaxBytes      int64  // file size
	MaxUnzipBytes int64  // XLSX uncompressed bytes (zip-bomb guard)
	Delimiter     rune   // CSV; 0 = sniff (";", ",", tab, or a "sep=" line)
	MaxCellBytes  int    // one cell's text, checked while reading
	MaxLineBytes  int    // CSV line or record, XLSX XML token, checked while reading
	// ReuseCells lets Next reuse the Cells slice of the previous row (faster;
	// the caller must copy a Row it keeps beyond the next call).
	ReuseCells bool
	// Format forces a format instead of the extension and the content:
	// "cnab240" or "cnab400" (a CNAB remessa is otherwise recognised by
	// its first line: 240 or 400 characters, a header record).
	Format string
	// CNAB says what a CNAB remessa must be (bank, company).
	CNAB CNABOptions
	// CNABMovements reads a CNAB remessa's action movements (02, 04, 05,
	// 06, 31: CNABActionMovements) instead of its entries (01): the rows
	// pipeline/movements carries out. Without it those titles are set
	// aside, counted in one warning a code (cnab_movimento_acao).
	CNABMovements bool
}

func (o Options) maxRows() int {
	if o.MaxRows == 0 {
		return DefaultMaxRows
	}
	return o.MaxRows
}

func (o Options) maxCell() int { return capOr(o.MaxCellBytes, DefaultMaxCellBytes) }
func (o Options) maxLine() int { return capOr(o.MaxLineBytes, DefaultMaxLineBytes) }

// capOr is v, def when v is zero, or 0 (no cap) when v is negative.
func capOr(v, def int) int {
	switch {
	case v == 0:
		return def
	case v < 0:
		return 0
	}
	return v
}

func (o Options) maxBytes(def int64) int64 {
	if o.MaxBytes == 0 {
		return def
	}
	return o.MaxBytes
}

// ErrUnsupported reports an extension Open does not know and could not sniff.
var ErrUnsupported = errors.New("formats: unsupported file format")

// Open opens an input by extension: .xlsx/.xlsm, .csv/.txt, .yaml/.yml.
// Other extensions are sniffed from the content (a zip is XLSX, an OLE file
// is refused as encrypted or old XLS, a document starting like YAML is YAML,
// anything else CSV). Errors are *Error in Portuguese.
func Open(path string, opt Options) (Reader, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, openErr(path, err)
	}
	st, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, openErr(path, err)
	}
	if st.IsDir() {
		f.Close()
		return nil, &Error{File: path, Code: CodeOpen, Message: "é uma pasta, não um arquivo", MessageEN: "is a directory, not a file"}
	}
	head := make([]byte, sniffHead)
	n, _ := io.ReadFull(f, head)
	head = head[:n]
	if _, err := f.Seek(0, io.SeekStart); err != nil {
		f.Close()
		return nil, openErr(path, err)
	}
	format := formatOf(path, head)
	switch {
	case opt.Format == cnab.Format240 || opt.Format == cnab.Format400:
		opt.CNAB.Format = opt.Format
		format = "cnab"
	case opt.Format != "":
		f.Close()
		return nil, &Error{File: path, Code: CodeUnknownFormat, Err: ErrUnsupported,
			Message:   fmt.Sprintf("formato %q desconhecido; use cnab240 ou cnab400, ou deixe em branco", opt.Format),
			MessageEN: fmt.Sprintf("unknown format %q; use cnab240 or cnab400, or leave it out", opt.Format)}
	case format != "xlsx" && format != "yaml" && cnab.Detect(head) != "":
		format = "cnab"
	}
	if bytes.HasPrefix(head, oleMagic) {
		f.Close()
		return nil, oleError(path)
	}
	if format != "xlsx" && format != "cnab" {
		if pt, en := foreignContent(head); pt != "" {
			f.Close()
			return nil, notASpreadsheet(path, pt, en)
		}
	}
	switch format {
	case "xlsx":
		f.Close()
		return openXLSX(path, st.Size(), opt)
	case "yaml":
		defer f.Close()
		return openYAML(path, f, st.Size(), opt)
	case "cnab":
		r, err := openCNAB(path, f, st.Size(), opt)
		if err != nil {
			f.Close()
		}
		return r, err
	case "csv":
		r, err := openCSV(path, f, st.Size(), opt)
		if err != nil {
			f.Close()
		}
		return r, err
	}
	f.Close()
	return nil, &Error{File: path, Code: CodeUnknownFormat, Err: ErrUnsupported,
		Message:   "formato não reconhecido; use .xlsx, .csv ou .yaml",
		MessageEN: "unrecognised format; use .xlsx, .csv or .yaml"}
}

var (
	oleMagic = []byte{0xD0, 0xCF, 0x11, 0xE0, 0xA1, 0xB1, 0x1A, 0xE1}
	zipMagic = []byte("PK\x03\x04")
)

func formatOf(path string, head []byte) string {
	switch strings.ToLower(filepath.Ext(path)) {
	case ".xlsx", ".xlsm":
		return "xlsx"
	case ".csv", ".txt", ".tsv":
		return "csv"
	case ".rem":
		return "cnab"
	case ".yaml", ".yml":
		return "yaml"
	}
	if bytes.HasPrefix(head, zipMagic) {
		return "xlsx"
	}
	t := bytes.TrimLeft(bytes.TrimPrefix(head, []byte("\xEF\xBB\xBF")), " \t\r\n")
	if bytes.HasPrefix(t, []byte("- ")) || bytes.HasPrefix(t, []byte("---")) || bytes.HasPrefix(t, []byte("rows:")) || bytes.HasPrefix(t, []byte("#")) {
		return "yaml"
	}
	if len(t) == 0 || bytes.IndexByte(head, 0) < 0 {
		return "csv"
	}
	return ""
}

func openErr(path string, err error) *Error {
	msg := "não foi possível abrir o arquivo"
	en := "cannot open the file"
	if errors.Is(err, os.ErrNotExist) {
		msg, en = "arquivo não encontrado", "file not found"
	} else if errors.Is(err, os.ErrPermission) {
		msg, en = "sem permissão para ler o arquivo", "permission denied"
	}
	return &Error{File: path, Code: CodeOpen, Message: msg, MessageEN: en, Err: err}
}

// oleError explains an OLE compound file: Excel writes password-protected
// workbooks (even .xlsx) and old .xls workbooks in this container.
func oleError(path string) *Error {
	encrypted := false
	if f, err := os.Open(path); err == nil {
		buf := make([]byte, 1<<16)
		n, _ := io.ReadFull(f, buf)
		f.Close()
		encrypted = bytes.Contains(buf[:n], utf16le("EncryptionInfo")) || bytes.Contains(buf[:n], utf16le("EncryptedPackage"))
	}
	if encrypted || strings.EqualFold(filepath.Ext(path), ".xlsx") {
		return &Error{File: path, Code: CodeEncrypted,
			Message:   "a planilha está protegida por senha (criptografada); abra no Excel, remova a senha (Arquivo > Informações > Proteger pasta de trabalho) e salve de novo",
			MessageEN: "the workbook is password-protected (encrypted); open it in Excel, remove the password and save it again"}
	}
	return &Error{File: path, Code: CodeOldXLS,
		Message:   "formato antigo do Excel 97-2003 (.xls) não é aceito; salve como .xlsx ou .csv",
		MessageEN: "old Excel 97-2003 (.xls) format is not supported; save as .xlsx or .csv"}
}

func utf16le(s string) []byte {
	b := make([]byte, 0, 2*len(s))
	for i := 0; i < len(s); i++ {
		b = append(b, s[i], 0)
	}
	return b
}

// ColumnLetter returns the spreadsheet letter of a 0-based column index
// (0 -> "A", 26 -> "AA").
func ColumnLetter(i int) string {
	var b []byte
	for i++; i > 0; i = (i - 1) / 26 {
		b = append(b, byte('A'+(i-1)%26))
	}
	for l, r := 0, len(b)-1; l < r; l, r = l+1, r-1 {
		b[l], b[r] = b[r], b[l]
	}
	return string(b)
}

// ReadAll reads every remaining row of r. Row-level errors are collected
// (the reading goes on); a final error stops it.
func ReadAll(r Reader) (rows []Row, rowErrs []*Error, err error) {
	for {
		row, err := r.Next()
		if err == io.EOF {
			return rows, rowErrs, nil
		}
		if err != nil {
			var e *Error
			if errors.As(err, &e) && e.Row > 0 && e.rowLevel() {
				rowErrs = append(rowErrs, e)
				continue
			}
			return rows, rowErrs, err
		}
		rows = append(rows, row)
	}
}

// IsRowLevel reports whether err is a problem confined to one row, after
// which Next can be called again.
func IsRowLevel(err error) bool {
	var e *Error
	return errors.As(err, &e) && e.rowLevel()
}

func (e *Error) rowLevel() bool { return e.title || isRowLevel(e.Code) }

func isRowLevel(code string) bool {
	return code == CodeRagged || code == CodeNestedValue
}
