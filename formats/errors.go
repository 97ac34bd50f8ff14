package formats

import (
	"fmt"
	"strings"
)

// Error codes carried by Error.Code and Warning.Code. They are stable and
// meant for programs (Portuguese snake_case, like every problem code of
// remessa; the table of all of them is docs/codes.md); the messages are for
// people.
const (
	CodeOpen           = "erro_leitura"          // the file cannot be opened or read
	CodeEmpty          = "arquivo_vazio"         // no header row
	CodeNoData         = "sem_dados"             // a header but no data rows
	CodeTooLarge       = "arquivo_grande_demais" // MaxBytes or the unzip limit exceeded
	CodeTooManyRows    = "linhas_demais"         // MaxRows exceeded
	CodeCorrupt        = "arquivo_corrompido"    // not a valid file of its format
	CodeEncrypted      = "arquivo_protegido"     // password-protected workbook
	CodeOldXLS         = "xls_antigo"            // Excel 97-2003 binary workbook
	CodeUnknownFormat  = "formato_desconhecido"  // extension and content not recognised
	CodeSheetNotFound  = "aba_inexistente"       // Options.Sheet is not in the workbook
	CodeRagged         = "linha_irregular"       // a CSV row with a different number of fields
	CodeBadQuote       = "aspas_invalidas"       // CSV quoting error
	CodeBadStructure   = "estrutura_invalida"    // YAML that is not a list of mappings
	CodeNestedValue    = "valor_aninhado"        // YAML value that is a list or mapping
	CodeMissingColumns = "colunas_ausentes"      // required fields without a column
	CodeUnknownColumn  = "coluna_inexistente"    // an override names a header that does not exist
	CodeAmbiguous      = "coluna_ambigua"
	CodeBadMoney       = "valor_invalido"
	CodeBadPercent     = "percentual_invalido"
	CodeBadDate        = "data_invalida"
	CodeBadSerial      = "data_serial_invalida"

	WarnEncoding        = "codificacao_cp1252"
	WarnDuplicateHeader = "cabecalho_repetido"
	WarnBlankHeader     = "cabecalho_vazio"
	WarnDataNoHeader    = "dados_sem_cabecalho"
	WarnFormulaNoValue  = "formula_sem_valor"
	WarnCellError       = "celula_com_erro"
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
	title       bool  // CNAB: confined to one title, the reading goes on
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
	return Position(lang, e.File, e.Sheet, e.Row, e.Column, e.Header)
}

// Position writes where something is in an input file as people read it,
// "alunos.csv, linha 2, coluna B (Nome): ", leaving out what is empty (""
// when all is); lang "en" writes it in English.
func Position(lang, file, sheet string, row int, col, header string) string {
	var parts []string
	if file != "" {
		parts = append(parts, file)
	}
	if sheet != "" {
		sheetW := "aba"
		if lang == "en" {
			sheetW = "sheet"
		}
		parts = append(parts, sheetW+" "+sheet)
	}
	if p := Place(lang, row, col, header); p != "" {
		parts = append(parts, p)
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
	return Position("pt", "", "", w.Row, w.Column, w.Header) + w.Message
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
