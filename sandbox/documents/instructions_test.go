package documents

import (
	"bytes"
	"regexp"
	"strings"
	"testing"
)

var reTj = regexp.MustCompile(`\(((?:[^()\\]|\\.)*)\) Tj`)

// shownText joins the text strings an uncompressed PDF draws, one space
// between two drawing operations.
func shownText(pdf []byte) string {
	var parts []string
	for _, m := range reTj.FindAllSubmatch(pdf, -1) {
		s := strings.NewReplacer(`\(`, "(", `\)`, ")", `\\`, `\`).Replace(string(m[1]))
		parts = append(parts, s)
	}
	return strings.Join(parts, " ")
}

// fullSlip carries everything the instructions can hold: fine, interest,
// two discounts and 4 message lines of 100 characters.
func fullSlip() Slip {
	s := sampleSlip()
	s.Discounts = append(s.Discounts, Discount{Type: "percentage", Value: 250, Until: day("2026-03-08")})
	s.Messages = []string{
		"Linha um: mensalidade escolar de marco, sexto ano turma B, periodo integral com almoco e lanche ok!.",
		"Linha dois: nao receber apos trinta dias do vencimento; depois disso procure a secretaria da escola.",
		"Linha tres: duvidas pelo telefone (41) 3333-4444 ou pelo e-mail secretaria@escola.example.com.br ok!",
		"Linha quatro: guarde este comprovante ate o fim do ano letivo, ele pode ser pedido na rematricula!!!",
	}
	return s
}

// Every instruction line, the four 100-character message lines included,
// is printed whole on the full-page slip and on each carnet parcel (the
// compact ficha): none is cut off at the bottom of the box.
func TestInstructionsAllPrinted(t *testing.T) {
	s := fullSlip()
	for _, m := range s.Messages {
		if len(m) != 100 {
			t.Fatalf("fixture line has %d characters, want 100: %q", len(m), m)
		}
	}
	want := []string{"Após o vencimento, cobrar multa de 2%.", "Após o vencimento, cobrar juros de 0,033% ao dia.",
		"Desconto de R$ 50,00 para pagamento até 05/03/2026.", "Desconto de 2,5% para pagamento até 08/03/2026."}
	want = append(want, s.Messages...)
	tr := newPDF("", s.IssuedAt).tr
	check := func(name string, pdf []byte, copies int) {
		text := shownText(pdf)
		for _, w := range want {
			if n := strings.Count(text, tr(w)); n != copies {
				t.Errorf("%s: %q printed %d times, want %d", name, w, n, copies)
			}
		}
	}
	check("slip", renderUncompressed(t, func(b *bytes.Buffer) error { return RenderSlipPDF(b, s) }), 1)

	c := sampleCarnet(t, 3)
	for i := range c.Parcels {
		c.Parcels[i].Discounts = s.Discounts
		c.Parcels[i].DueDate = s.DueDate
		c.Parcels[i].Messages = s.Messages
	}
	// Each of the 3 parcels prints the same instructions once.
	check("carnet", renderUncompressed(t, func(b *bytes.Buffer) error { return RenderCarnetPDF(b, c) }), 3)
	writeSample(t, "slip-full.pdf", renderUncompressed(t, func(b *bytes.Buffer) error { return RenderSlipPDF(b, s) }))
	writeSample(t, "carnet-full.pdf", renderUncompressed(t, func(b *bytes.Buffer) error { return RenderCarnetPDF(b, c) }))
}
