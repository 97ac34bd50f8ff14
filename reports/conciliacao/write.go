package conciliacao

import (
	"bufio"
	"bytes"
	"encoding/csv"
	"encoding/json"
	"fmt"
	"html/template"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/xuri/excelize/v2"

	"remessa/rules"
)

// Files are the names the reconciliation is written under.
var Files = []string{"conciliacao.xlsx", "conciliacao.csv", "conciliacao.html", "conciliacao.json"}

// Write writes the four reconciliation files into dir (lang pt or en),
// each through a temporary file renamed into place, and returns their paths.
func Write(dir string, r *Reconciliation, lang string) ([]string, error) {
	if lang != "en" {
		lang = "pt"
	}
	writers := []func(*bytes.Buffer) error{
		func(b *bytes.Buffer) error { return writeXLSX(b, r, lang) },
		func(b *bytes.Buffer) error { return writeCSV(b, r, lang) },
		func(b *bytes.Buffer) error { return writeHTML(b, r, lang) },
		func(b *bytes.Buffer) error {
			e := json.NewEncoder(b)
			e.SetIndent("", "  ")
			return e.Encode(r)
		},
	}
	var out []string
	for i, w := range writers {
		var b bytes.Buffer
		if err := w(&b); err != nil {
			return out, fmt.Errorf("%s: %w", Files[i], err)
		}
		p := filepath.Join(dir, Files[i])
		if err := writeAtomic(p, b.Bytes()); err != nil {
			return out, err
		}
		out = append(out, p)
	}
	return out, nil
}

func writeAtomic(path string, b []byte) error {
	tmp := path + ".tmp"
	if err := os.WriteFile(tmp, b, 0o644); err != nil {
		return err
	}
	return os.Rename(tmp, path)
}

// label is one text in Portuguese and English.
var labels = map[string][2]string{
	"title":         {"Conciliação da remessa", "Batch reconciliation"},
	"as_of":         {"Posição em", "As of"},
	"synced":        {"Situação obtida do serviço em", "Status fetched from the service at"},
	"totals":        {"Totais", "Totals"},
	"by_month":      {"Por mês de vencimento", "By due month"},
	"aging":         {"Em aberto por atraso", "Unpaid by age"},
	"split":         {"Repasses por favorecido", "Split by recipient"},
	"lines":         {"Cobranças", "Charges"},
	"ok":            {"Totais conferem ao centavo", "Totals reconcile to the cent"},
	"not_ok":        {"Totais NÃO conferem", "Totals do NOT reconcile"},
	"month":         {"Mês", "Month"},
	"charges":       {"Cobranças", "Charges"},
	"expected":      {"Emitido", "Issued"},
	"received":      {"Recebido", "Received"},
	"open":          {"A vencer", "Not yet due"},
	"overdue":       {"Vencido", "Overdue"},
	"cancelled":     {"Cancelado", "Cancelled"},
	"refunded":      {"Devolvido", "Refunded"},
	"fine_interest": {"Multa e juros", "Fine and interest"},
	"discount":      {"Desconto", "Discount"},
	"bucket":        {"Faixa", "Bucket"},
	"recipient":     {"Favorecido", "Recipient"},
	"own":           {"conta emissora", "issuing account"},
	"row":           {"Linha", "Row"},
	"key":           {"Código", "Key"},
	"payer":         {"Pagador", "Payer"},
	"parcel":        {"Parcela", "Parcel"},
	"charge":        {"Cobrança", "Charge"},
	"due":           {"Vencimento", "Due date"},
	"state":         {"Situação", "State"},
	"status_code":   {"Código da situação", "Status code"},
	"paid":          {"Pago", "Paid"},
	"paid_on":       {"Pago em", "Paid on"},
	"method":        {"Forma", "Method"},
	"days_late":     {"Dias de atraso", "Days late"},
	"to_receive":    {"A receber", "To receive"},
	"chart_month":   {"Recebido e em aberto por mês de vencimento", "Received and unpaid by due month"},
	"chart_aging":   {"Em aberto por atraso", "Unpaid by age"},
	// states
	"st_open": {"a vencer", "not yet due"}, "st_overdue": {"vencida", "overdue"}, "st_paid": {"paga", "paid"},
	"st_settled": {"paga por fora", "settled by hand"}, "st_cancelled": {"cancelada", "cancelled"}, "st_refunded": {"devolvida", "refunded"},
	// methods
	"m_boleto": {"boleto", "slip"}, "m_pix": {"Pix", "Pix"}, "m_card": {"cartão", "card"}, "m_manual": {"por fora (baixa manual)", "outside the bank (settled)"},
	// buckets
	BucketNotDue: {"a vencer", "not yet due"}, Bucket30: {"vencido 1–30 dias", "overdue 1–30 days"}, Bucket60: {"vencido 31–60 dias", "overdue 31–60 days"},
	Bucket90: {"vencido 61–90 dias", "overdue 61–90 days"}, BucketOver90: {"vencido mais de 90 dias", "overdue over 90 days"},
}

func tr(lang, key string) string {
	l, ok := labels[key]
	if !ok {
		return key
	}
	if lang == "en" {
		return l[1]
	}
	return l[0]
}

func stateText(lang, s string) string {
	if s == "" {
		return ""
	}
	return tr(lang, "st_"+s)
}

func methodText(lang, m string) string {
	if m == "" {
		return ""
	}
	return tr(lang, "m_"+m)
}

// money for CSV: decimal comma (pt) or point (en), no thousands separator.
func csvMoney(lang string, c int64) string {
	s := rules.FormatPixAmount(c)
	if lang == "pt" {
		s = strings.Replace(s, ".", ",", 1)
	}
	return s
}

func csvDate(lang, iso string) string {
	if lang == "pt" && len(iso) == 10 {
		return iso[8:10] + "/" + iso[5:7] + "/" + iso[0:4]
	}
	return iso
}

// defuse keeps text a spreadsheet would take for a formula as text.
func defuse(s string) string {
	if s != "" && strings.ContainsRune("=+-@\t\r", rune(s[0])) {
		return "'" + s
	}
	return s
}

func lineHeaders(lang string) []string {
	keys := []string{"row", "key", "payer", "parcel", "charge", "due", "expected", "state", "status_code", "paid", "paid_on", "method",
		"days_late", "fine_interest", "discount", "refunded", "to_receive", "bucket"}
	out := make([]string, len(keys))
	for i, k := range keys {
		out[i] = tr(lang, k)
	}
	return out
}

// writeCSV writes one line per charge (the sheet programs read), UTF-8
// with BOM and ";" as Excel in Portuguese opens it.
func writeCSV(b *bytes.Buffer, r *Reconciliation, lang string) error {
	b.WriteString("\uFEFF")
	w := csv.NewWriter(b)
	w.Comma = ';'
	w.UseCRLF = true
	if err := w.Write(lineHeaders(lang)); err != nil {
		return err
	}
	for _, l := range r.Lines {
		parcel := ""
		if l.Parcel > 0 {
			parcel = strconv.Itoa(l.Parcel)
		}
		bucket := ""
		if l.Bucket != "" {
			bucket = tr(lang, l.Bucket)
		}
		if err := w.Write([]string{strconv.Itoa(l.SourceRow), defuse(l.Key), defuse(l.Payer), parcel, l.Charge, csvDate(lang, l.Due),
			csvMoney(lang, l.Expected), stateText(lang, l.State), l.Status, csvMoney(lang, l.Paid), csvDate(lang, l.PaidOn),
			methodText(lang, l.Method), strconv.Itoa(l.DaysLate), csvMoney(lang, l.FineInterest), csvMoney(lang, l.Discount),
			csvMoney(lang, l.Refunded), csvMoney(lang, l.Open), bucket}); err != nil {
			return err
		}
	}
	w.Flush()
	return w.Error()
}

func amountHeaders(lang, first string) []string {
	h := []string{first}
	for _, k := range []string{"charges", "expected", "received", "open", "overdue", "cancelled", "refunded", "fine_interest", "discount"} {
		h = append(h, tr(lang, k))
	}
	return h
}

func amountCells(a Amounts) []any {
	return []any{a.Charges, reais(a.Expected), reais(a.Received), reais(a.Open), reais(a.Overdue), reais(a.Cancelled), reais(a.Refunded), reais(a.FineInterest), reais(a.Discount)}
}

func reais(c int64) float64 { return float64(c) / 100 }

// writeXLSX writes the workbook: Resumo (totals, months, aging, split and
// the check), Cobranças (one row per charge). Money is a number in R$.
func writeXLSX(b *bytes.Buffer, r *Reconciliation, lang string) error {
	f := excelize.NewFile()
	defer f.Close()
	sum := tr(lang, "totals")
	f.SetSheetName("Sheet1", sum)
	moneyFmt := "#,##0.00"
	money, _ := f.NewStyle(&excelize.Style{CustomNumFmt: &moneyFmt})
	bold, _ := f.NewStyle(&excelize.Style{Font: &excelize.Font{Bold: true}})
	row := 1
	put := func(sheet string, cells []any, style int) {
		cell, _ := excelize.CoordinatesToCellName(1, row)
		f.SetSheetRow(sheet, cell, &cells)
		if style != 0 {
			end, _ := excelize.CoordinatesToCellName(len(cells), row)
			f.SetCellStyle(sheet, cell, end, style)
		}
		row++
	}
	check := tr(lang, "ok")
	if !r.Reconcile.OK {
		check = tr(lang, "not_ok") + ": " + strings.Join(r.Reconcile.Problems, "; ")
	}
	put(sum, []any{tr(lang, "title") + " — " + r.JobName + " (" + r.RunID + ")"}, bold)
	put(sum, []any{tr(lang, "as_of"), r.AsOf, tr(lang, "synced"), r.SyncedAt}, 0)
	put(sum, []any{check}, bold)
	row++
	put(sum, toAny(amountHeaders(lang, "")), bold)
	first := row
	put(sum, append([]any{tr(lang, "totals")}, amountCells(r.Totals)...), 0)
	row++
	put(sum, toAny(amountHeaders(lang, tr(lang, "month"))), bold)
	for _, m := range sortedKeys(r.ByMonth) {
		put(sum, append([]any{m}, amountCells(r.ByMonth[m])...), 0)
	}
	row++
	put(sum, toAny(amountHeaders(lang, tr(lang, "bucket"))), bold)
	for _, k := range Buckets {
		if a, ok := r.Aging[k]; ok {
			put(sum, append([]any{tr(lang, k)}, amountCells(a)...), 0)
		}
	}
	if len(r.Split) > 0 {
		row++
		put(sum, []any{tr(lang, "recipient"), tr(lang, "expected"), tr(lang, "received")}, bold)
		for _, s := range r.Split {
			name := s.Recipient
			if s.Own {
				name = tr(lang, "own")
			}
			put(sum, []any{name, reais(s.Expected), reais(s.Received)}, 0)
		}
	}
	end, _ := excelize.CoordinatesToCellName(10, row)
	start, _ := excelize.CoordinatesToCellName(3, first)
	f.SetCellStyle(sum, start, end, money)
	f.SetColWidth(sum, "A", "A", 26)
	f.SetColWidth(sum, "B", "J", 15)

	ls := tr(lang, "lines")
	f.NewSheet(ls)
	row = 1
	put(ls, toAny(lineHeaders(lang)), bold)
	for _, l := range r.Lines {
		var parcel any
		if l.Parcel > 0 {
			parcel = l.Parcel
		}
		bucket := ""
		if l.Bucket != "" {
			bucket = tr(lang, l.Bucket)
		}
		put(ls, []any{l.SourceRow, l.Key, l.Payer, parcel, l.Charge, l.Due, reais(l.Expected), stateText(lang, l.State), l.Status,
			reais(l.Paid), l.PaidOn, methodText(lang, l.Method), l.DaysLate, reais(l.FineInterest), reais(l.Discount), reais(l.Refunded),
			reais(l.Open), bucket}, 0)
	}
	for _, col := range []string{"G", "J", "N", "O", "P", "Q"} {
		f.SetCellStyle(ls, col+"2", fmt.Sprintf("%s%d", col, row), money)
	}
	f.SetPanes(ls, &excelize.Panes{Freeze: true, Split: false, XSplit: 0, YSplit: 1, TopLeftCell: "A2", ActivePane: "bottomLeft"})
	w := bufio.NewWriter(b)
	if err := f.Write(w); err != nil {
		return err
	}
	return w.Flush()
}

func toAny(ss []string) []any {
	out := make([]any, len(ss))
	for i, s := range ss {
		out[i] = s
	}
	return out
}

// bar is one bar pair of a chart.
type bar struct {
	Label                string
	Received, Unpaid     int64
	RecvW, UnpaidW       int
	RecvText, UnpaidText string
}

var page = template.Must(template.New("c").Funcs(template.FuncMap{"brl": rules.FormatBRL}).Parse(`<!doctype html>
<html lang="{{.Lang}}"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<title>{{.T "title"}} — {{.R.JobName}}</title>
<style>
body{font-family:system-ui,-apple-system,"Segoe UI",Roboto,Arial,sans-serif;color:#1c2430;margin:2rem auto;max-width:1100px;padding:0 1rem}
h1{font-size:1.5rem}h2{font-size:1.1rem;margin-top:2rem;border-bottom:1px solid #dde3ea;padding-bottom:.3rem}
table{border-collapse:collapse;width:100%;font-size:.9rem}th,td{padding:.35rem .5rem;border-bottom:1px solid #e6ebf0;text-align:left}
th{background:#eef2f6}td.n,th.n{text-align:right;font-variant-numeric:tabular-nums;white-space:nowrap}
.ok{background:#e6f4ee;color:#0b6e4f;padding:.6rem 1rem;border-radius:6px;font-weight:700}
.bad{background:#fdecea;color:#b42318;padding:.6rem 1rem;border-radius:6px;font-weight:700}
.muted{color:#5b6675}.chart svg{width:100%;height:auto}.legend span{display:inline-block;width:.8rem;height:.8rem;margin:0 .3rem 0 1rem;vertical-align:middle}
@media print{body{margin:0}}
</style></head><body>
<h1>{{.T "title"}} — {{.R.JobName}}</h1>
<p class="muted">{{.R.RunID}} · {{.T "as_of"}} {{.R.AsOf}} · {{.T "synced"}} {{.R.SyncedAt}}</p>
{{if .R.Reconcile.OK}}<p class="ok">{{.T "ok"}}</p>{{else}}<p class="bad">{{.T "not_ok"}}: {{range .R.Reconcile.Problems}}{{.}}; {{end}}</p>{{end}}
<h2>{{.T "totals"}}</h2>
<table><tr><th class="n">{{.T "charges"}}</th><th class="n">{{.T "expected"}}</th><th class="n">{{.T "received"}}</th><th class="n">{{.T "open"}}</th><th class="n">{{.T "overdue"}}</th><th class="n">{{.T "cancelled"}}</th><th class="n">{{.T "refunded"}}</th><th class="n">{{.T "fine_interest"}}</th><th class="n">{{.T "discount"}}</th></tr>
{{with .R.Totals}}<tr><td class="n">{{.Charges}}</td><td class="n">{{brl .Expected}}</td><td class="n">{{brl .Received}}</td><td class="n">{{brl .Open}}</td><td class="n">{{brl .Overdue}}</td><td class="n">{{brl .Cancelled}}</td><td class="n">{{brl .Refunded}}</td><td class="n">{{brl .FineInterest}}</td><td class="n">{{brl .Discount}}</td></tr>{{end}}</table>
<h2>{{.T "chart_month"}}</h2>
<div class="chart"><svg viewBox="0 0 1000 {{.MonthH}}" role="img" aria-label="{{.T "chart_month"}}">
{{range $i, $b := .Months}}<g transform="translate(0,{{$.Y $i}})"><text x="0" y="16" font-size="14">{{$b.Label}}</text>
<rect x="110" y="2" width="{{$b.RecvW}}" height="18" fill="#0b6e4f"/><rect x="{{$.X $b.RecvW}}" y="2" width="{{$b.UnpaidW}}" height="18" fill="#e0a526"/>
<text x="{{$.X2 $b.RecvW $b.UnpaidW}}" y="16" font-size="13">{{$b.RecvText}} / {{$b.UnpaidText}}</text></g>{{end}}
</svg><p class="legend"><span style="background:#0b6e4f"></span>{{.T "received"}}<span style="background:#e0a526"></span>{{.T "to_receive"}}</p></div>
<table><tr><th>{{.T "month"}}</th><th class="n">{{.T "charges"}}</th><th class="n">{{.T "expected"}}</th><th class="n">{{.T "received"}}</th><th class="n">{{.T "open"}}</th><th class="n">{{.T "overdue"}}</th><th class="n">{{.T "cancelled"}}</th></tr>
{{range .MonthRows}}<tr><td>{{.Label}}</td><td class="n">{{.A.Charges}}</td><td class="n">{{brl .A.Expected}}</td><td class="n">{{brl .A.Received}}</td><td class="n">{{brl .A.Open}}</td><td class="n">{{brl .A.Overdue}}</td><td class="n">{{brl .A.Cancelled}}</td></tr>{{end}}</table>
<h2>{{.T "chart_aging"}}</h2>
<div class="chart"><svg viewBox="0 0 1000 {{.AgingH}}" role="img" aria-label="{{.T "chart_aging"}}">
{{range $i, $b := .Aging}}<g transform="translate(0,{{$.Y $i}})"><text x="0" y="16" font-size="14">{{$b.Label}}</text>
<rect x="220" y="2" width="{{$b.UnpaidW}}" height="18" fill="#b42318"/><text x="{{$.X3 $b.UnpaidW}}" y="16" font-size="13">{{$b.UnpaidText}}</text></g>{{end}}
</svg></div>
{{if .R.Split}}<h2>{{.T "split"}}</h2>
<table><tr><th>{{.T "recipient"}}</th><th class="n">{{.T "expected"}}</th><th class="n">{{.T "received"}}</th></tr>
{{range .R.Split}}<tr><td>{{if .Own}}{{$.T "own"}}{{else}}{{.Recipient}}{{end}}</td><td class="n">{{brl .Expected}}</td><td class="n">{{brl .Received}}</td></tr>{{end}}</table>{{end}}
</body></html>
`))

type monthRow struct {
	Label string
	A     Amounts
}

type htmlData struct {
	R         *Reconciliation
	Lang      string
	Months    []bar
	Aging     []bar
	MonthRows []monthRow
	MonthH    int
	AgingH    int
}

func (d htmlData) T(k string) string { return tr(d.Lang, k) }
func (htmlData) Y(i int) int         { return i*26 + 4 }
func (htmlData) X(w int) int         { return 110 + w }
func (htmlData) X2(a, b int) int     { return 116 + a + b }
func (htmlData) X3(w int) int        { return 226 + w }

func writeHTML(b *bytes.Buffer, r *Reconciliation, lang string) error {
	d := htmlData{R: r, Lang: lang}
	var max int64 = 1
	for _, m := range sortedKeys(r.ByMonth) {
		a := r.ByMonth[m]
		if t := a.Received + a.Open + a.Overdue; t > max {
			max = t
		}
	}
	for _, m := range sortedKeys(r.ByMonth) {
		a := r.ByMonth[m]
		unpaid := a.Open + a.Overdue
		d.Months = append(d.Months, bar{Label: m, Received: a.Received, Unpaid: unpaid, RecvW: int(a.Received * 600 / max),
			UnpaidW: int(unpaid * 600 / max), RecvText: rules.FormatBRL(a.Received), UnpaidText: rules.FormatBRL(unpaid)})
		d.MonthRows = append(d.MonthRows, monthRow{m, a})
	}
	var amax int64 = 1
	for _, a := range r.Aging {
		if t := a.Open + a.Overdue; t > amax {
			amax = t
		}
	}
	for _, k := range Buckets {
		a := r.Aging[k]
		u := a.Open + a.Overdue
		d.Aging = append(d.Aging, bar{Label: tr(lang, k), Unpaid: u, UnpaidW: int(u * 560 / amax), UnpaidText: rules.FormatBRL(u)})
	}
	d.MonthH, d.AgingH = len(d.Months)*26+8, len(d.Aging)*26+8
	return page.Execute(b, d)
}
