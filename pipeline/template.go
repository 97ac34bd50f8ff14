package pipeline

import (
	"fmt"
	"path/filepath"
	"strings"
	"time"

	"remessa/formats"
	"remessa/pipeline/results"
	"remessa/rules"
)

// ParseKind reads "carnets", "cobv" or "boletos" (also "carnes",
// "carnês", "pix", "slips").
func ParseKind(s string) (results.Kind, error) {
	switch fold(s) {
	case "carnets", "carnes", "carne":
		return results.Carnets, nil
	case "cobv", "pix":
		return results.Cobv, nil
	case "boletos", "boleto", "slips":
		return results.Boletos, nil
	}
	return "", fmt.Errorf("tipo %q desconhecido: use carnets, cobv ou boletos", s)
}

var templateKind = map[string]string{
	"key": formats.TemplateText, "text": formats.TemplateText, "document": formats.TemplateText, "email": formats.TemplateText,
	"phone": formats.TemplateText, "cep": formats.TemplateText, "uf": formats.TemplateUF, "money": formats.TemplateMoney,
	"date": formats.TemplateDate, "txid": formats.TemplateText,
}

// TemplateColumns returns the columns of a fill-in file for kind: the
// catalogue's default headers, what goes in each, and an example row that
// validates (its due date is the 10th of next month after today).
func TemplateColumns(kind results.Kind, today time.Time, lang string) []formats.TemplateColumn {
	var cols []formats.TemplateColumn
	for _, f := range TemplateFields(kind) {
		c := formats.TemplateColumn{Header: f.Label, Description: f.Doc, Example: f.Example, Kind: templateKind[f.Type]}
		if lang == "en" {
			c.Description = f.DocEN
		}
		switch f.ID {
		case FKey, FName, FDocument, FValue, FDueDate:
			c.Required = true
		case FState:
			c.Choices = strings.Fields("AC AL AP AM BA CE DF ES GO MA MT MS MG PA PB PR PE PI RJ RN RS RO RR SC SP SE TO")
		}
		if f.ID == FDueDate {
			c.Example = formats.FormatDate(dayInMonth(today, 1, 10))
		}
		cols = append(cols, c)
	}
	return cols
}

// TemplateExampleKey is the key of the templates' example row: the row
// is visibly an example, and validation refuses it (CodeTemplateExample).
const TemplateExampleKey = "EXEMPLO"

// CodeTemplateExample is the problem code of a row that is the template's
// own example payer, left in the sheet.
const CodeTemplateExample = "linha_exemplo"

// templateExample is a payer a template's example row carries: today's
// (from the catalogue) and the one templates wrote before the key was
// EXEMPLO, which sheets filled from them may still hold.
type templateExample struct{ key, name, doc string }

var templateExamples = func() []templateExample {
	key, _ := FieldByID(FKey)
	name, _ := FieldByID(FName)
	doc, _ := FieldByID(FDocument)
	now := templateExample{formats.NormalizeHeader(key.Example), formats.NormalizeHeader(name.Example), rules.CleanDocument(doc.Example)}
	return []templateExample{now, {"a001", now.name, now.doc}}
}()

// isTemplateExample reports whether a row's key, payer name and document
// are all the template's example ones (compared as headers are: case,
// accents and punctuation aside; the document by its digits). One shared
// value is not enough: a real payer may be called Maria José da Conceição.
func isTemplateExample(key, name, doc string) bool {
	if key == "" || name == "" || doc == "" {
		return false
	}
	d := rules.CleanDocument(doc) // the cheap test first: it rules out nearly every row
	var nk string                 // the key normalized, once
	for _, e := range templateExamples {
		if d != e.doc {
			continue
		}
		if nk == "" {
			nk = formats.NormalizeHeader(key)
		}
		if nk == e.key && formats.NormalizeHeader(name) == e.name {
			return true
		}
	}
	return false
}

// TemplateInstructions are the lines of the instructions sheet.
func TemplateInstructions(kind results.Kind) []string {
	what := map[results.Kind]string{
		results.Carnets: "Cada linha vira um carnê (POST /v1/carnet); o número de parcelas e a data da primeira ficam no arquivo de job ou na coluna Vencimento.",
		results.Cobv:    "Cada linha vira uma cobrança Pix com vencimento, enviada em lotes de até 1000 (PUT /v2/lotecobv/:id).",
		results.Boletos: "Cada linha vira um boleto (POST /v1/charge/one-step).",
	}[kind]
	return []string{
		what,
		"Preencha uma linha por pagador, a partir da linha 2; apague a linha de exemplo.",
		"As colunas podem estar em qualquer ordem; os nomes aceitam variações (CPF, Documento, cpf_cnpj...).",
		"CPF, CNPJ e CEP estão formatados como texto para não perder os zeros à esquerda.",
		"Valores em reais com vírgula decimal (1.234,56); datas dd/mm/aaaa.",
		"Antes de emitir, confira com: remessa validate job.yaml",
	}
}

// WriteTemplate writes a fill-in file for kind at path (.xlsx, .csv or
// .yaml, by extension).
func WriteTemplate(kind results.Kind, path string, now time.Time, lang string) error {
	title := map[results.Kind]string{results.Carnets: "Carnês", results.Cobv: "Cobranças Pix com vencimento", results.Boletos: "Boletos"}[kind]
	return formats.WriteTemplate(path, "remessa — "+title, TemplateColumns(kind, rules.Today(now), lang), TemplateInstructions(kind))
}

// StarterJob returns a job file that reads the template written at
// inputPath (relative to the job) with the kind's required settings.
func StarterJob(kind results.Kind, inputPath string) string {
	var b strings.Builder
	b.WriteString("# Gerado por remessa template. Ajuste e confira com: remessa validate <este arquivo>\n")
	b.WriteString("version: 1\n")
	fmt.Fprintf(&b, "name: %s\n", strings.TrimSuffix(filepath.Base(inputPath), filepath.Ext(inputPath)))
	b.WriteString("service: embedded\ninput:\n")
	fmt.Fprintf(&b, "  file: %s\n", inputPath)
	if strings.EqualFold(filepath.Ext(inputPath), ".xlsx") {
		fmt.Fprintf(&b, "  sheet: %s\n", formats.TemplateSheet)
	}
	b.WriteString("issue:\n")
	switch kind {
	case results.Carnets:
		b.WriteString("  carnets:\n    repeats: 12           # parcelas (2 a 12); a primeira vence na data da coluna Vencimento\n    fine: 2%\n    interest_per_day: 0,033%\n")
	case results.Cobv:
		b.WriteString("  cobv:\n    chave: ${PIX_CHAVE:financeiro@example.com}   # sua chave Pix\n    solicitacao: Pagamento {{ .Código }}\n")
	case results.Boletos:
		b.WriteString("  boletos:\n    fine: 2%\n    interest_per_day: 0,033%\n")
	}
	b.WriteString("reports:\n  formats: [xlsx, html, csv, json]\n")
	return b.String()
}

// RelativeTo returns target's path relative to the directory of jobPath
// (as a job file's input.file wants it), or target unchanged.
func RelativeTo(jobPath, target string) string {
	jd, err1 := filepath.Abs(filepath.Dir(jobPath))
	t, err2 := filepath.Abs(target)
	if err1 != nil || err2 != nil {
		return target
	}
	if r, err := filepath.Rel(jd, t); err == nil {
		return filepath.ToSlash(r)
	}
	return target
}
