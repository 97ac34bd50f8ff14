package formats

import (
	"fmt"
	"strings"
)

// Error codes carried by Error.Code and Warning.Code. They are stable and
// meant for programs; the messages are for people.
const (
	CodeOpen           = "open"            // the file cannot be opened or read
	CodeEmpty          = "empty_file"      // no header row
	CodeNoData         = "no_data"         // a header but no data rows
	CodeTooLarge       = "too_large"       // MaxBytes or the unzip limit exceeded
	CodeTooManyRows    = "too_many_rows"   // MaxRows exceeded
	CodeCorrupt        = "corrupt"         // not a valid file of its format
	CodeEncrypted      = "encrypted"       // password-protected workbook
	CodeOldXLS         = "old_xls"         // Excel 97-2003 binary workbook
	CodeUnknownFormat  = "unknown_format"  // extension and content not recognised
	CodeSheetNotFound  = "sheet_not_found" // Options.Sheet is not in the workbook
	CodeRagged         = "ragged_row"      // a CSV row with a different number of fields
	CodeBadQuote       = "bad_quote"       // CSV quoting error
	CodeBadStructure   = "bad_structure"   // YAML that is not a list of mappings
	CodeNestedValue    = "nested_value"    // YAML value that is a list or mapping
	CodeMissingColumns = "missing_columns" // required fields without a column
	CodeUnknownColumn  = "unknown_column"  // an override names a header that does not exist
	CodeAmbiguous      = "ambiguous_column"
	CodeBadMoney       = "bad_money"
	CodeBadPercent     = "bad_percent"
	CodeBadDate        = "bad_date"
	CodeBadSerial      = "bad_serial"

	WarnEncoding        = "encoding_cp1252"
	WarnDuplicateHeader = "duplicate_header"
	WarnBlankHeader     = "blank_header"
	WarnDataNoHeader    = "data_without_header"
	WarnFormulaNoValue  = "formula_without_value"
	WarnCellError       = "cell_error"
)

// Error is a problem found in an input file or value, with its position when
// known. Message is Portuguese, MessageEN English; Error() gives the
// Portuguese text prefixed by the position.
type Error struct {
	File, Sheet string
	Row         int    // row number as the spreadsheet shows it; 0 if unknown
	Column      string // column letter ("C"), or the key for YAML
	Header      string
	Value       string
	Code        string
	Message     string
	MessageEN   string
	Err         error // underlying cause, if any
}

// Error returns the position and the Portuguese message.
func (e *Error) Error() string { return e.where("pt") + e.Message }

// ErrorEN returns the position and the English message.
func (e *Error) ErrorEN() string { return e.where("en") + e.MessageEN }

// Localized returns the message in lang ("en" for English, anything else
// Portuguese), prefixed by the position.
func (e *Error) Localized(lang string) string {
	if lang == "en" {
		return e.ErrorEN()
	}
	return e.Error()
}

// Unwrap returns the underlying cause.
func (e *Error) Unwrap() error { return e.Err }

func (e *Error) where(lang string) string {
	return position(lang, e.File, e.Sheet, e.Row, e.Column, e.Header)
}

func position(lang, file, sheet string, row int, col, header string) string {
	var parts []string
	if file != "" {
		parts = append(parts, file)
	}
	sheetW, rowW, colW := "aba", "linha", "coluna"
	if lang == "en" {
		sheetW, rowW, colW = "sheet", "row", "column"
	}
	if sheet != "" {
		parts = append(parts, sheetW+" "+sheet)
	}
	if row > 0 {
		parts = append(parts, fmt.Sprintf("%s %d", rowW, row))
	}
	if col != "" || header != "" {
		s := colW
		if col != "" {
			s += " " + col
		}
		if header != "" && header != col {
			s += " (" + header + ")"
		}
		parts = append(parts, s)
	}
	if len(parts) == 0 {
		return ""
	}
	return strings.Join(parts, ", ") + ": "
}

// Warning is something the reader noticed and worked around; the data is
// still usable but a person should know (for example a Windows-1252 file,
// or a blank header cell).
type Warning struct {
	Row       int
	Column    string
	Header    string
	Value     string
	Code      string
	Message   string
	MessageEN string
}

// String returns the Portuguese warning with its position.
func (w Warning) String() string {
	return position("pt", "", "", w.Row, w.Column, w.Header) + w.Message
}

// ValueError is returned by the value parsers (ParseMoney, ParseDate ...):
// it says which value was wrong and why, in Portuguese and English. Callers
// that know the position wrap it in an *Error with At.
type ValueError struct {
	Code      string
	Value     string
	Message   string
	MessageEN string
}

func (e *ValueError) Error() string { return e.Message }

func valueErr(code, value, pt, en string) *ValueError {
	return &ValueError{Code: code, Value: value,
		Message:   fmt.Sprintf("%q: %s", value, pt),
		MessageEN: fmt.Sprintf("%q: %s", value, en)}
}

// At places a value error (or any error) at a cell, returning an *Error
// that carries the source position and the value.
func At(src Source, row int, c Cell, err error) *Error {
	e := &Error{File: src.File, Sheet: src.Sheet, Row: row, Column: c.Column, Header: c.Header, Value: c.Value, Err: err}
	if ve, ok := err.(*ValueError); ok {
		e.Code, e.Message, e.MessageEN = ve.Code, ve.Message, ve.MessageEN
	} else if err != nil {
		e.Message, e.MessageEN = err.Error(), err.Error()
	}
	return e
}
