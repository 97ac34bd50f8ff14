package retorno

import (
	"fmt"
	"strings"

	"remessa/rules"
)

// eventOrder is the order a Result's counts are told in.
var eventOrder = []string{EventEntrada, EventRejeicao, EventVencimento, EventLiquidacao, EventManual, EventBaixa, EventEstorno}

// Lines is the Result's counts for people: one line per kind of event,
// with its occurrence code, count, the titles' value and what was paid.
func (r *Result) Lines(lang string) []string {
	var out []string
	for _, ev := range eventOrder {
		t, ok := r.ByEvent[ev]
		if !ok {
			continue
		}
		code := Code(r.Layout, ev)
		if code == "" {
			code = "--"
		}
		s := fmt.Sprintf("%s %-32s %7d  %18s", code, eventText(ev, lang), t.Count, rules.FormatBRL(t.Cents))
		if t.Paid > 0 {
			paid := "pago"
			if lang == "en" {
				paid = "paid"
			}
			s += fmt.Sprintf("  %s %s", paid, rules.FormatBRL(t.Paid))
		}
		out = append(out, s)
	}
	return out
}

// Text is the Result for the terminal.
func (r *Result) Text(lang string) string {
	var b strings.Builder
	en := lang == "en"
	for _, w := range r.Warnings {
		fmt.Fprintf(&b, "Aviso: %s\n", w)
	}
	if r.Empty {
		if en {
			b.WriteString("Nothing new since the last retorno: no file written (no NSA taken).\n")
		} else {
			b.WriteString("Nada de novo desde o último retorno: nenhum arquivo escrito (nenhum NSA usado).\n")
		}
		return b.String()
	}
	if en {
		fmt.Fprintf(&b, "Retorno NSA %d (%s) written to %s: %d occurrence(s), %s.\n", r.NSA, r.Layout, r.Path, r.Titles, rules.FormatBRL(r.Cents))
	} else {
		fmt.Fprintf(&b, "Retorno NSA %d (%s) escrito em %s: %d ocorrência(s), %s.\n", r.NSA, r.Layout, r.Path, r.Titles, rules.FormatBRL(r.Cents))
	}
	for _, l := range r.Lines(lang) {
		b.WriteString("  " + l + "\n")
	}
	if r.NotInFile > 0 {
		if en {
			fmt.Fprintf(&b, "%d event(s) the %s layout has no occurrence for (marked --): listed here, not in the file.\n", r.NotInFile, r.Layout)
		} else {
			fmt.Fprintf(&b, "%d evento(s) sem ocorrência no leiaute %s (marcados --): listados aqui, fora do arquivo.\n", r.NotInFile, r.Layout)
		}
	}
	for _, e := range r.Rejections {
		fmt.Fprintf(&b, "  03 linha %d (%s) motivos %s: %s\n", e.SourceRow, e.SeuNumero, firstOf(strings.Join(e.Motivos, " "), "--"), e.Text)
	}
	if r.Check.OK {
		if en {
			b.WriteString("Totals check: the trailers' counts and sums match the records.\n")
		} else {
			b.WriteString("Totais conferem: as quantidades e somas dos trailers são as dos registros.\n")
		}
	} else {
		if en {
			b.WriteString("Totals DO NOT check:\n")
		} else {
			b.WriteString("Totais NÃO conferem:\n")
		}
		for _, p := range r.Check.Problems {
			b.WriteString("  " + p + "\n")
		}
	}
	return b.String()
}
