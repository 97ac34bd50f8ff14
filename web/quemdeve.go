package web

import (
	"strconv"
	"strings"

	"remessa/reports/conciliacao"
)

// The "Quem deve" block of a run's page (templates/quemdeve.html): the
// payers with charges overdue or paid short, from the run's last
// reconciliation (conciliacao.json, conciliacao.WhoOwes's rows), the
// largest amount first.

// owesOnPage is how many payers the run's page lists; the reconciliation's
// workbook and conciliacao-quem-deve.csv list them all. The first
// owesUnfolded are shown, the others behind "ver todos", so the run's
// page stays short.
const (
	owesOnPage   = 50
	owesUnfolded = 10
)

// owesRow is one payer who owes, as the page shows it.
type owesRow struct {
	conciliacao.Debtor
	ParcelText string
}

// owesView fills the block's part of the situation from the
// reconciliation's who-owes rows.
func (v *situationView) owes(ds []conciliacao.Debtor) {
	v.OwesCount = len(ds)
	for i := range ds {
		v.OwesTotal += ds[i].Total
		if i < owesOnPage {
			ps := make([]string, len(ds[i].Parcels))
			for j, p := range ds[i].Parcels {
				ps[j] = strconv.Itoa(p)
			}
			v.Owes = append(v.Owes, owesRow{ds[i], strings.Join(ps, ", ")})
		}
	}
	v.OwesMore = len(ds) - len(v.Owes)
	v.OwesFirst, v.OwesFolded = v.Owes, nil
	if len(v.Owes) > owesUnfolded {
		v.OwesFirst, v.OwesFolded = v.Owes[:owesUnfolded], v.Owes[owesUnfolded:]
	}
	v.OwesShown = len(v.Owes)
}

// owesDict holds the block's texts; init copies it into dict.
var owesDict = map[string][2]string{
	"owes.title":       {"Quem deve", "Who owes"},
	"owes.summary":     {"%d pagador(es) devem %s (vencido, multa e juros de hoje e pago a menor).", "%d payer(s) owe %s (overdue, today's fine and interest, and paid short)."},
	"owes.short_total": {"pago a menor (a cobrar):", "paid short (to chase):"},
	"owes.over_total":  {"pago a maior:", "paid over:"},
	"owes.payer":       {"Pagador", "Payer"},
	"owes.contact":     {"Contato", "Contact"},
	"owes.overdue":     {"Vencidas", "Overdue"},
	"owes.parcels":     {"parcelas", "parcels"},
	"owes.face":        {"Valor vencido", "Overdue value"},
	"owes.fine":        {"Multa e juros hoje", "Fine and interest today"},
	"owes.short":       {"Pago a menor", "Paid short"},
	"owes.total":       {"Total devido", "Total owed"},
	"owes.days":        {"Dias de atraso", "Days late"},
	"owes.more":        {"e mais %d pagador(es): veja conciliacao.xlsx (aba Quem deve) ou conciliacao-quem-deve.csv.", "and %d more payer(s): see conciliacao.xlsx (Who owes sheet) or conciliacao-quem-deve.csv."},
	"owes.see_all":     {"ver todos os %d", "see all %d"},
	"owes.nobody":      {"Ninguém deve: nada vencido nem pago a menor.", "Nobody owes: nothing overdue or paid short."},
}

func init() {
	for k, v := range owesDict {
		dict[k] = v
	}
}
