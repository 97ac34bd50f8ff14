package remind

import (
	"fmt"
	"strings"
	"time"

	"remessa/pipeline"
	"remessa/pipeline/status"
	"remessa/reports/conciliacao"
	"remessa/rules"
)

// owedToday is what the payer of c owes today by the row's terms: until
// the due date its value (less a discount still granted), after it the
// value with the fine and interest (carnets and slips, rules.SlipAmountDue)
// or the multa and juros (cobv, rules.CobvAmountDue) — what the service
// would charge a payment made today. Without known terms, the value.
func owedToday(c *status.Charge, ri rowInfo, today time.Time) int64 {
	if ri.terms == nil {
		return c.ValueCents
	}
	due, err := rules.ParseISODate(c.Due)
	if err != nil {
		return c.ValueCents
	}
	// a cobv's abatimento as changed after issuance (an abatimento action)
	v, err := conciliacao.WithRebate(c, ri.terms).AmountDue(c.ValueCents, c.Parcel, due, today)
	if err != nil {
		return c.ValueCents
	}
	return v
}

// fieldsOf fills the message fields of one reminder.
func fieldsOf(d *Decision, ri rowInfo, dc docs, owed int64) pipeline.ReminderFields {
	c := &d.Charge
	f := pipeline.ReminderFields{Nome: c.Payer, Valor: rules.FormatBRL(owed), ValorOriginal: rules.FormatBRL(c.ValueCents),
		Vencimento: brDate(c.Due), Parcela: c.Parcel, PixCopiaECola: dc.pix, LinhaDigitavel: dc.typedLine, Link: dc.link, PDF: dc.pdf,
		Chave: c.RowKey}
	if d.DaysLate > 0 {
		f.Vencida, f.DiasAtraso = true, d.DaysLate
	}
	switch {
	case c.Parcel > 0:
		f.Descricao = fmt.Sprintf("a parcela %d do carnê", c.Parcel)
	case c.Txid != "":
		f.Descricao = "a cobrança Pix"
	default:
		f.Descricao = "o boleto"
	}
	return f
}

func brDate(iso string) string {
	if len(iso) != 10 {
		return iso
	}
	return iso[8:10] + "/" + iso[5:7] + "/" + iso[0:4]
}

// render runs a message template on f.
func render(text string, f pipeline.ReminderFields) (string, error) {
	return pipeline.RenderReminder(text, f)
}

// maskEmail shows an address the way logs and reports may: "ma***@example.com".
func maskEmail(e string) string {
	at := strings.LastIndexByte(e, '@')
	if at < 0 {
		return "***"
	}
	local := e[:at]
	if len(local) > 2 {
		local = local[:2]
	}
	return local + "***" + e[at:]
}
