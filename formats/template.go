package formats

import (
	"bufio"
	"encoding/csv"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/xuri/excelize/v2"
	"go.yaml.in/yaml/v3"

	"remessa/rules"
)

// Template column kinds.
const (
	TemplateText    = "text"    // kept as text (CPF, CNPJ, CEP, phone keep their zeros)
	TemplateMoney   = "money"   // reais, "1.234,56"
	TemplateDate    = "date"    // dd/mm/aaaa
	TemplateUF      = "uf"      // two-letter state, drop-down list
	TemplatePercent = "percent" // "2%"
	TemplateInt     = "int"     // whole number
)

// TemplateColumn describes one column of a fill-in template.
type TemplateColumn struct {
	Header      string
	Description string
	Example     string // as a person would type it: "1.234,56", "10/02/2027", "2%"
	Kind        string // TemplateText, TemplateMoney, ...
	Required    bool
	Choices     []string // allowed values (a drop-down list in XLSX)
}

// TemplateExampleFill is the fill colour of an XLSX template's example
// row, and TemplateExampleNote the note on its first cell.
const (
	TemplateExampleFill = "FCE4D6"
	TemplateExampleNote = "Linha de exemplo: apague esta linha antes de emitir. O remessa validate recusa a linha de exemplo do modelo."
)

// TemplateSheet is the name of the data sheet of an XLSX template, and
// TemplateInstructionsSheet the name of its instructions sheet.
const (
	TemplateSheet             = "Dados"
	TemplateInstructionsSheet = "Instruções"
	templateRows              = 10000 // rows prepared with formats and drop-downs
)

// WriteTemplate writes a fill-in file with the columns' headers and one
// example row, chosen by the extension of path: .xlsx (a data sheet with
// bold headers, text-formatted text columns so zeros survive, date and money
// formats, drop-down lists for Choices, and an "Instruções" sheet that
// explains every column), .csv (";" separated, UTF-8 with a BOM, as Excel
// expects) or .yaml (a list with one item, commented). What WriteTemplate
// writes, Open reads.
func WriteTemplate(path string, title string, cols []TemplateColumn, instructions []string) error {
	if len(cols) == 0 {
		return fmt.Errorf("formats: template %s: no columns", path)
	}
	switch strings.ToLower(filepath.Ext(path)) {
	case ".xlsx":
		return writeTemplateXLSX(path, title, cols, instructions)
	case ".csv":
		return writeTemplateCSV(path, cols)
	case ".yaml", ".yml":
		return writeTemplateYAML(path, title, cols, instructions)
	}
	return &Error{File: path, Code: CodeUnknownFormat, Err: ErrUnsupported,
		Message:   "extensão do modelo não suportada; use .xlsx, .csv ou .yaml",
		MessageEN: "unsupported template extension; use .xlsx, .csv or .yaml"}
}

func kindLabel(k string) (pt string) {
	switch k {
	case TemplateMoney:
		return "valor em reais (ex.: 1.234,56)"
	case TemplateDate:
		return "data dd/mm/aaaa"
	case TemplateUF:
		return "UF (sigla do estado)"
	case TemplatePercent:
		return "percentual (ex.: 2%)"
	case TemplateInt:
		return "número inteiro"
	}
	return "texto"
}

func writeTemplateXLSX(path, title string, cols []TemplateColumn, instructions []string) (err error) {
	f := excelize.NewFile()
	defer f.Close()
	must := func(e error) {
		if err == nil && e != nil {
			err = e
		}
	}
	must(f.SetSheetName("Sheet1", TemplateSheet))
	textFmt, dateFmt, moneyFmt, pctFmt := "@", "dd/mm/yyyy", "#,##0.00", "0.00%"
	style := func(s *excelize.Style) int {
		id, e := f.NewStyle(s)
		must(e)
		return id
	}
	textStyle := style(&excelize.Style{CustomNumFmt: &textFmt})
	dateStyle := style(&excelize.Style{CustomNumFmt: &dateFmt})
	moneyStyle := style(&excelize.Style{CustomNumFmt: &moneyFmt})
	pctStyle := style(&excelize.Style{CustomNumFmt: &pctFmt})
	intStyle := style(&excelize.Style{NumFmt: 1})
	// The example row is visibly an example: grey italic on an orange fill,
	// each cell keeping its column's number format.
	exFill := excelize.Fill{Type: "pattern", Pattern: 1, Color: []string{TemplateExampleFill}}
	exFont := &excelize.Font{Italic: true, Color: "7F7F7F"}
	exampleStyle := map[int]int{
		textStyle:  style(&excelize.Style{CustomNumFmt: &textFmt, Fill: exFill, Font: exFont}),
		dateStyle:  style(&excelize.Style{CustomNumFmt: &dateFmt, Fill: exFill, Font: exFont}),
		moneyStyle: style(&excelize.Style{CustomNumFmt: &moneyFmt, Fill: exFill, Font: exFont}),
		pctStyle:   style(&excelize.Style{CustomNumFmt: &pctFmt, Fill: exFill, Font: exFont}),
		intStyle:   style(&excelize.Style{NumFmt: 1, Fill: exFill, Font: exFont}),
	}
	reqHeader := style(&excelize.Style{Font: &excelize.Font{Bold: true}, CustomNumFmt: &textFmt,
		Fill: excelize.Fill{Type: "pattern", Pattern: 1, Color: []string{"FFF2CC"}}})
	optHeader := style(&excelize.Style{Font: &excelize.Font{Bold: true}, CustomNumFmt: &textFmt})
	bold := style(&excelize.Style{Font: &excelize.Font{Bold: true}})
	titleStyle := style(&excelize.Style{Font: &excelize.Font{Bold: true, Size: 14}})
	wrap := style(&excelize.Style{Alignment: &excelize.Alignment{WrapText: true, Vertical: "top"}})

	listRow := 0 // next row in the hidden "Listas" sheet
	for i, c := range cols {
		col := ColumnLetter(i)
		hdr := col + "1"
		ex := col + "2"
		w := float64(len([]rune(c.Header))) + 4
		if w < 14 {
			w = 14
		}
		must(f.SetColWidth(TemplateSheet, col, col, w))
		rangeRef := fmt.Sprintf("%s2:%s%d", col, col, templateRows+1)
		colStyle := textStyle
		switch c.Kind {
		case TemplateDate:
			colStyle = dateStyle
		case TemplateMoney:
			colStyle = moneyStyle
		case TemplatePercent:
			colStyle = pctStyle
		case TemplateInt:
			colStyle = intStyle
		}
		// The column style applies to every cell a person types later; the
		// example cell gets it explicitly.
		must(f.SetColStyle(TemplateSheet, col, colStyle))
		must(writeExample(f, ex, c))
		must(f.SetCellStyle(TemplateSheet, ex, ex, exampleStyle[colStyle]))
		must(f.SetCellStr(TemplateSheet, hdr, c.Header))
		hs := optHeader
		if c.Required {
			hs = reqHeader
		}
		must(f.SetCellStyle(TemplateSheet, hdr, hdr, hs))
		choices := c.Choices
		if c.Kind == TemplateUF && len(choices) == 0 {
			choices = UFs
		}
		if len(choices) > 0 {
			dv := excelize.NewDataValidation(!c.Required)
			dv.SetSqref(rangeRef)
			if len(strings.Join(choices, ",")) <= 250 {
				must(dv.SetDropList(choices))
			} else {
				// Long lists live in a hidden sheet.
				if listRow == 0 {
					_, e := f.NewSheet("Listas")
					must(e)
					must(f.SetSheetVisible("Listas", false))
				}
				lc := ColumnLetter(listRow)
				for j, ch := range choices {
					must(f.SetCellStr("Listas", fmt.Sprintf("%s%d", lc, j+1), ch))
				}
				dv.SetSqrefDropList(fmt.Sprintf("Listas!$%s$1:$%s$%d", lc, lc, len(choices)))
				listRow++
			}
			dv.SetError(excelize.DataValidationErrorStyleStop, c.Header, "Escolha um valor da lista.")
			must(f.AddDataValidation(TemplateSheet, dv))
		}
	}
	must(f.AddComment(TemplateSheet, excelize.Comment{Cell: "A2", Author: "remessa", Text: TemplateExampleNote, Width: 260, Height: 80}))
	must(f.SetPanes(TemplateSheet, &excelize.Panes{Freeze: true, YSplit: 1, TopLeftCell: "A2", ActivePane: "bottomLeft"}))

	// Instructions sheet.
	const ins = TemplateInstructionsSheet
	_, e := f.NewSheet(ins)
	must(e)
	row := 1
	put := func(col, v string, st int) {
		cell := fmt.Sprintf("%s%d", col, row)
		must(f.SetCellStr(ins, cell, v))
		if st > 0 {
			must(f.SetCellStyle(ins, cell, cell, st))
		}
	}
	put("A", title, titleStyle)
	row += 2
	for _, line := range instructions {
		put("A", line, 0)
		row++
	}
	lines := []string{
		"Preencha a aba \"" + TemplateSheet + "\": uma linha por pagador, a partir da linha 2. A linha 2 (em laranja) é um exemplo: apague-a ou escreva por cima dela; o remessa recusa a linha de exemplo.",
		"Não mude os cabeçalhos da linha 1. A ordem das colunas pode mudar. Colunas em amarelo são obrigatórias.",
		"Valores em reais com vírgula decimal (1.234,56); datas no formato dd/mm/aaaa; CPF, CNPJ e CEP podem ter ou não pontuação.",
	}
	for _, line := range lines {
		put("A", line, 0)
		row++
	}
	row++
	for i, h := range []string{"Coluna", "Obrigatória", "Tipo", "Descrição", "Exemplo", "Valores aceitos"} {
		put(ColumnLetter(i), h, bold)
	}
	row++
	for _, c := range cols {
		req := "não"
		if c.Required {
			req = "sim"
		}
		put("A", c.Header, 0)
		put("B", req, 0)
		put("C", kindLabel(c.Kind), 0)
		put("D", c.Description, wrap)
		put("E", c.Example, textStyle)
		choices := c.Choices
		if c.Kind == TemplateUF && len(choices) == 0 {
			choices = UFs
		}
		put("F", strings.Join(choices, ", "), wrap)
		row++
	}
	must(f.SetColWidth(ins, "A", "A", 28))
	must(f.SetColWidth(ins, "B", "C", 16))
	must(f.SetColWidth(ins, "D", "D", 60))
	must(f.SetColWidth(ins, "E", "F", 24))
	f.SetActiveSheet(0)
	if err != nil {
		return fmt.Errorf("formats: template %s: %w", path, err)
	}
	if err := f.SaveAs(path); err != nil {
		return fmt.Errorf("formats: template %s: %w", path, err)
	}
	return nil
}

// writeExample writes the example of c in the cell, typed the way a person
// filling the sheet in Excel would produce it.
func writeExample(f *excelize.File, cell string, c TemplateColumn) error {
	if c.Example == "" {
		return nil
	}
	switch c.Kind {
	case TemplateMoney:
		if cents, err := ParseMoney(c.Example); err == nil {
			return f.SetCellDefault(TemplateSheet, cell, centsDecimal(cents))
		}
	case TemplateDate:
		if d, err := ParseDate(c.Example); err == nil {
			return f.SetCellInt(TemplateSheet, cell, int64(ExcelSerial(d)))
		}
	case TemplatePercent:
		if v, err := ParsePercent(c.Example, 6); err == nil {
			s, _ := shiftNumber(strconv.FormatInt(v, 10), -8) // 10^-6 percent -> fraction
			return f.SetCellDefault(TemplateSheet, cell, s)
		}
	case TemplateInt:
		if rules.AllDigits(c.Example) {
			return f.SetCellDefault(TemplateSheet, cell, c.Example)
		}
	}
	return f.SetCellStr(TemplateSheet, cell, c.Example)
}

// centsDecimal writes cents as a plain decimal with a dot ("1234.56").
func centsDecimal(cents int64) string {
	neg := cents < 0
	if neg {
		cents = -cents
	}
	s := fmt.Sprintf("%d.%02d", cents/100, cents%100)
	if neg {
		s = "-" + s
	}
	return s
}

func writeTemplateCSV(path string, cols []TemplateColumn) error {
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	bw := bufio.NewWriter(f)
	bw.WriteString("\xEF\xBB\xBF")
	w := csv.NewWriter(bw)
	w.Comma = ';'
	w.UseCRLF = true
	hdr := make([]string, len(cols))
	ex := make([]string, len(cols))
	for i, c := range cols {
		hdr[i], ex[i] = c.Header, c.Example
	}
	w.Write(hdr)
	w.Write(ex)
	w.Flush()
	if err := w.Error(); err != nil {
		f.Close()
		return err
	}
	if err := bw.Flush(); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

func writeTemplateYAML(path, title string, cols []TemplateColumn, instructions []string) error {
	head := []string{title, ""}
	head = append(head, instructions...)
	head = append(head, "Uma lista: cada item (\"- \") é um pagador. Textos entre aspas preservam zeros à esquerda (CPF, CEP).")
	item := &yaml.Node{Kind: yaml.MappingNode}
	for _, c := range cols {
		req := "opcional"
		if c.Required {
			req = "obrigatório"
		}
		comment := fmt.Sprintf("%s (%s; %s)", c.Description, req, kindLabel(c.Kind))
		choices := c.Choices
		if c.Kind == TemplateUF && len(choices) == 0 {
			choices = UFs
		}
		if len(choices) > 0 {
			comment += "; valores: " + strings.Join(choices, ", ")
		}
		k := &yaml.Node{Kind: yaml.ScalarNode, Value: c.Header, HeadComment: comment}
		v := &yaml.Node{Kind: yaml.ScalarNode, Value: c.Example, Style: yaml.DoubleQuotedStyle}
		item.Content = append(item.Content, k, v)
	}
	item.HeadComment = "EXEMPLO: apague este item (o remessa recusa a linha de exemplo do modelo) e escreva um por pagador."
	doc := &yaml.Node{Kind: yaml.DocumentNode, HeadComment: strings.Join(head, "\n"),
		Content: []*yaml.Node{{Kind: yaml.SequenceNode, Content: []*yaml.Node{item}}}}
	out, err := yaml.Marshal(doc)
	if err != nil {
		return err
	}
	return os.WriteFile(path, out, 0o644)
}

// UFs are the 27 federative units, the default choices of a TemplateUF
// column.
var UFs = []string{"AC", "AL", "AP", "AM", "BA", "CE", "DF", "ES", "GO", "MA", "MT", "MS", "MG", "PA", "PB", "PR", "PE", "PI", "RJ", "RN", "RS", "RO", "RR", "SC", "SP", "SE", "TO"}
