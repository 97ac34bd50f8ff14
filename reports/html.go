package reports

import (
	"fmt"
	"html/template"
	"io"
	"strconv"
	"time"
	"unicode/utf8"

	"remessa/pipeline/results"
)

// maxHTMLProblems caps the problems table of the HTML page; the XLSX and CSV
// reports always list every problem.
const maxHTMLProblems = 10000

// chart geometry (SVG user units)
const (
	chartW       = 760
	barH         = 26
	barGap       = 10
	barLabelW    = 210
	monthChartH  = 260
	monthChartPB = 60 // space for month labels under the bars (turned when many)
	monthChartPT = 22 // space for value labels above the bars
)

// hbar is one horizontal bar of a chart.
type hbar struct {
	Label, Value, Class, Key string
	Rows                     int
	Cents                    int64
	Y, W, TextY              int
}

// vbar is one vertical bar of the due-month chart.
type vbar struct {
	Month, Label, Value string
	ShowValue, Rotate   bool
	Cents               int64
	X, Y, W, H, CX, VY  int
	LabelY              int
}

type htmlProblem struct {
	SourceRow                           int
	Key, Payer, Document, Outcome       string
	OutcomeCode                         string
	Cents                               int64
	Code, Place, Value, Message, Action string
}

type htmlTally struct {
	Key, Code, Label string
	Rows             int
	Cents            int64
}

type htmlSplit struct {
	Recipient, Label, Month, MonthLabel string
	Own                                 bool
	Cents                               int64
}

type htmlData struct {
	Lang, Title       string
	ServiceKey        string
	Service           string
	Complete          bool
	Fields            [][2]string
	Tallies           []htmlTally
	Totals            results.Totals
	Reconciles        bool
	Reconciliation    string
	OutcomeBars       []hbar
	OutcomeChartH     int
	MonthBars         []vbar
	MonthAxisY        int
	MonthChartH       int
	SplitLines        []htmlSplit
	SplitBars         []hbar
	SplitChartH       int
	Problems          []htmlProblem
	ProblemsTotal     int
	ProblemsHidden    int
	Generated         string
	ChartW, BarLabelW int
	TrackW            int
}

// WriteHTML writes the HTML report to w: one self-contained page (inline CSS
// and SVG, no scripts, no network) with the summary, charts and problems.
// Numbers the tests check are also in data-* attributes (cents, rows).
func WriteHTML(w io.Writer, r *results.Results, opt Options) error {
	opt, err := opt.normalize()
	if err != nil {
		return err
	}
	_, _, err = runPass(memorySource(r), []sink{&htmlSink{w: w, opt: opt}}, newDigest(opt.Lang))
	return err
}

// htmlSink renders the page once the totals are known; the problems come
// from the digest of the pass.
type htmlSink struct {
	w    io.Writer
	path string // when writing a file
	opt  Options
}

func (s *htmlSink) start(*results.Results) error { return nil }
func (s *htmlSink) row(*results.Row) error       { return nil }
func (s *htmlSink) abort()                       {}

func (s *htmlSink) finish(r *results.Results, dg *digest) ([]string, error) {
	if s.path == "" {
		return nil, renderHTML(s.w, r, dg, s.opt)
	}
	if err := writeAtomic(s.path, func(w io.Writer) error { return renderHTML(w, r, dg, s.opt) }); err != nil {
		return nil, err
	}
	return []string{s.path}, nil
}

func renderHTML(w io.Writer, r *results.Results, dg *digest, opt Options) error {
	lang := opt.Lang
	d := htmlData{Lang: lang, ChartW: chartW, BarLabelW: barLabelW, TrackW: chartW - barLabelW - 190, Totals: r.Totals, Complete: r.Run.Complete}
	d.Title = tr(lang, "title")
	if r.Run.JobName != "" {
		d.Title += " — " + r.Run.JobName
	}
	d.ServiceKey = serviceKey(r.Run.Service)
	d.Service = tr(lang, d.ServiceKey)
	for _, f := range runFields(lang, r.Run, true) {
		if f[1] == "" {
			f[1] = "—"
		}
		d.Fields = append(d.Fields, [2]string{tr(lang, f[0]), f[1]})
	}
	codes := []string{"in", "issued", "refused", "denied", "ambiguous", "pending"}
	for i, t := range tallies(r.Totals) {
		d.Tallies = append(d.Tallies, htmlTally{Key: t.key, Code: codes[i], Label: tr(lang, t.key), Rows: t.t.Rows, Cents: t.t.AmountCents})
	}
	d.Reconciles, d.Reconciliation = reconciliation(lang, r.Totals, dg)

	// outcomes chart: one bar per outcome, length by rows
	maxRows := 1
	for _, t := range d.Tallies[1:] {
		maxRows = max(maxRows, t.Rows)
	}
	for i, t := range d.Tallies[1:] {
		y := i * (barH + barGap)
		d.OutcomeBars = append(d.OutcomeBars, hbar{
			Label: t.Label, Class: t.Code, Key: t.Code, Rows: t.Rows, Cents: t.Cents,
			Value: rowsText(lang, t.Rows) + " · " + formatMoney(lang, t.Cents),
			Y:     y, TextY: y + barH/2 + 5, W: scale(int64(t.Rows), int64(maxRows), chartW-barLabelW-190),
		})
	}
	d.OutcomeChartH = len(d.OutcomeBars)*(barH+barGap) - barGap

	// due-month chart
	months := sortedMonths(r.Totals.IssuedByDueMonth)
	if len(months) > 0 {
		var maxC int64 = 1
		for _, m := range months {
			maxC = max(maxC, r.Totals.IssuedByDueMonth[m])
		}
		slot := (chartW - 60) / len(months)
		bw := max(4, min(70, slot*7/10))
		plotH := monthChartH - monthChartPB - monthChartPT
		axis := monthChartPT + plotH
		// narrow slots: month labels turn, value labels go (the table has
		// them) unless the widest one fits its slot
		widest := 0
		for _, m := range months {
			widest = max(widest, smallTextW(shortMoney(lang, r.Totals.IssuedByDueMonth[m])))
		}
		rotate, showValue := smallTextW(formatMonth(lang, months[0])) > slot-6, widest <= slot-6
		for i, m := range months {
			c := r.Totals.IssuedByDueMonth[m]
			h := scale(c, maxC, plotH)
			x := 50 + i*slot + (slot-bw)/2
			d.MonthBars = append(d.MonthBars, vbar{
				Month: m, Label: formatMonth(lang, m), Value: shortMoney(lang, c), Cents: c, ShowValue: showValue, Rotate: rotate,
				X: x, W: bw, Y: axis - h, H: h, CX: x + bw/2, VY: axis - h - 6, LabelY: axis + 18,
			})
		}
		d.MonthAxisY = axis
		d.MonthChartH = monthChartH
	}

	// split shares: table per recipient and month, chart per recipient
	lines := splitLines(r.Totals, dg.own)
	totals := map[string]int64{}
	var order []string
	own := map[string]bool{}
	for _, s := range lines {
		d.SplitLines = append(d.SplitLines, htmlSplit{Recipient: s.Recipient, Label: recipientLabel(lang, r.Run.Account, s), Month: s.Month, MonthLabel: formatMonth(lang, s.Month), Own: s.Own, Cents: s.Cents})
		if _, seen := totals[s.Recipient]; !seen {
			order = append(order, s.Recipient)
		}
		totals[s.Recipient] += s.Cents
		own[s.Recipient] = s.Own
	}
	var maxS int64 = 1
	for _, c := range totals {
		maxS = max(maxS, c)
	}
	for i, rc := range order {
		y := i * (barH + barGap)
		label := rc
		if own[rc] {
			label = tr(lang, "own_account")
		}
		d.SplitBars = append(d.SplitBars, hbar{
			Label: shortID(label), Key: rc, Class: map[bool]string{true: "own", false: "recipient"}[own[rc]], Cents: totals[rc],
			Value: formatMoney(lang, totals[rc]), Y: y, TextY: y + barH/2 + 5,
			W: scale(totals[rc], maxS, chartW-barLabelW-150),
		})
	}
	d.SplitChartH = max(0, len(d.SplitBars)*(barH+barGap)-barGap)

	// problems
	d.Problems, d.ProblemsTotal = dg.problems, dg.problemsTotal
	d.ProblemsHidden = d.ProblemsTotal - len(d.Problems)
	d.Generated = formatTimestamp(lang, opt.Now().UTC().Format(time.RFC3339))
	return htmlTemplate.Execute(w, d)
}

// smallTextW is a generous estimate of the width in pixels of s in the
// charts' small (11px) text: 7px a character, digits being the widest.
func smallTextW(s string) int { return 7 * utf8.RuneCountInString(s) }

func scale(v, maxV int64, width int) int {
	if v <= 0 || maxV <= 0 {
		return 0
	}
	w := int(v * int64(width) / maxV)
	return max(w, 2)
}

func rowsText(lang string, n int) string {
	unit := " linhas"
	if lang == "en" {
		unit = " rows"
	}
	if n == 1 || n == -1 {
		unit = unit[:len(unit)-1]
	}
	return strconv.Itoa(n) + unit
}

// shortMoney is a compact amount for chart labels: "R$ 12,3 mil",
// "R$ 1,2 mi" (pt) or "R$ 12.3k", "R$ 1.2M" (en), exact below a thousand.
func shortMoney(lang string, cents int64) string {
	reais := cents / 100
	unitK, unitM, dec := " mil", " mi", ","
	if lang == "en" {
		unitK, unitM, dec = "k", "M", "."
	}
	one := func(v int64, div int64, unit string) string {
		whole := v / div
		tenth := (v % div) * 10 / div
		return fmt.Sprintf("R$ %d%s%d%s", whole, dec, tenth, unit)
	}
	switch {
	case reais >= 1_000_000 || reais <= -1_000_000:
		return one(reais, 1_000_000, unitM)
	case reais >= 1000 || reais <= -1000:
		return one(reais, 1000, unitK)
	}
	return formatMoney(lang, cents)
}

// shortID shortens a long recipient id (a 32-hex payee_code) for a chart
// label; the table next to the chart shows it in full.
func shortID(s string) string {
	if len(s) > 26 {
		return s[:10] + "…" + s[len(s)-8:]
	}
	return s
}

// formatDocument formats a CPF (11 digits) or CNPJ (14) for reading;
// anything else is shown as it is.
func formatDocument(s string) string {
	switch len(s) {
	case 11:
		return s[0:3] + "." + s[3:6] + "." + s[6:9] + "-" + s[9:11]
	case 14:
		return s[0:2] + "." + s[2:5] + "." + s[5:8] + "/" + s[8:12] + "-" + s[12:14]
	}
	return s
}

var htmlTemplate = template.Must(template.New("report").Funcs(template.FuncMap{
	"t":     func(lang, key string) string { return tr(lang, key) },
	"money": formatMoney,
	"month": formatMonth,
	"add":   func(a, b int) int { return a + b },
}).Parse(htmlSource))

const htmlSource = `<!DOCTYPE html>
<html lang="{{if eq .Lang "en"}}en{{else}}pt-BR{{end}}">
<head>
<meta charset="utf-8"/>
<meta name="viewport" content="width=device-width, initial-scale=1"/>
<title>{{.Title}}</title>
<style>
:root { --ink:#1d1d1f; --muted:#5f6368; --line:#d6dbe3; --issued:#2e7d32; --refused:#ef6c00; --denied:#c62828; --ambiguous:#6a1b9a; --pending:#1565c0; }
* { box-sizing: border-box; }
body { font-family: "DejaVu Sans", "Liberation Sans", Arial, Helvetica, sans-serif; color: var(--ink); margin: 0 auto; max-width: 1200px; padding: 24px 32px; font-size: 14px; line-height: 1.4; }
h1 { font-size: 24px; margin: 0 0 12px; }
h2 { font-size: 18px; margin: 28px 0 10px; border-bottom: 2px solid var(--line); padding-bottom: 4px; }
.banner { font-weight: bold; font-size: 20px; letter-spacing: .5px; text-align: center; padding: 10px; border-radius: 4px; margin-bottom: 14px; -webkit-print-color-adjust: exact; print-color-adjust: exact; }
.banner.service_production { background: #c00000; color: #fff; }
.banner.service_sandbox { background: #ffc000; color: #000; }
.banner.service_embedded { background: #2f75b5; color: #fff; }
.banner.service_unknown { background: #7f7f7f; color: #fff; }
.warning { border: 2px solid var(--denied); color: var(--denied); padding: 8px 12px; font-weight: bold; margin-bottom: 12px; }
dl.identity { display: grid; grid-template-columns: 220px 1fr; gap: 3px 16px; margin: 0; }
dl.identity dt { color: var(--muted); }
dl.identity dd { margin: 0; font-family: "DejaVu Sans Mono", "Liberation Mono", monospace; font-size: 13px; word-break: break-all; }
table { border-collapse: collapse; width: 100%; margin: 6px 0; }
th, td { border-bottom: 1px solid var(--line); padding: 5px 8px; text-align: left; vertical-align: top; }
th { background: #eef2f8; font-weight: bold; -webkit-print-color-adjust: exact; print-color-adjust: exact; }
td.num, th.num { text-align: right; white-space: nowrap; font-variant-numeric: tabular-nums; }
tr.in td { font-weight: bold; border-bottom: 2px solid var(--ink); }
table.totals, table.months, table.split { width: auto; min-width: 560px; }
table.split td.code { font-family: "DejaVu Sans Mono", "Liberation Mono", monospace; font-size: 12.5px; }
.nowrap { white-space: nowrap; }
.check { display: inline-block; margin-top: 8px; padding: 6px 12px; border-radius: 4px; font-weight: bold; -webkit-print-color-adjust: exact; print-color-adjust: exact; }
.check.ok { background: #e6f4ea; color: #1e7b34; }
.check.bad { background: #fde7e9; color: #c00000; }
svg { display: block; max-width: 100%; height: auto; margin: 8px 0; }
svg + table { margin-top: 16px; }
svg text { font-family: "DejaVu Sans", "Liberation Sans", Arial, sans-serif; font-size: 13px; fill: var(--ink); }
svg text.small { font-size: 11px; fill: var(--muted); }
rect.issued { fill: var(--issued); } rect.refused { fill: var(--refused); } rect.denied { fill: var(--denied); }
rect.ambiguous { fill: var(--ambiguous); } rect.pending { fill: var(--pending); } rect.month { fill: #2f75b5; }
rect.own { fill: #7f7f7f; } rect.recipient { fill: #00897b; } rect.track { fill: #f1f3f6; }
table.problems td { font-size: 12.5px; }
table.problems td.code { font-family: "DejaVu Sans Mono", "Liberation Mono", monospace; white-space: nowrap; }
.outcome-refused { color: var(--refused); } .outcome-denied { color: var(--denied); } .outcome-ambiguous { color: var(--ambiguous); } .outcome-pending { color: var(--pending); }
.muted, footer { color: var(--muted); }
footer { margin-top: 28px; font-size: 12px; }
@media (max-width: 640px) {
  /* a phone (the desk shows the report in a frame): the run's facts one
     under the other, the tables as wide as the screen */
  body { padding: 12px 14px; }
  dl.identity { grid-template-columns: 1fr; gap: 0; }
  dl.identity dd { margin-bottom: 6px; }
  table.totals, table.months, table.split { width: 100%; min-width: 0; }
  /* the problems: one block per row, each cell with its column's name */
  table.problems thead { display: none; }
  table.problems, table.problems tbody, table.problems tr, table.problems td { display: block; }
  table.problems tr { border-bottom: 2px solid var(--line); padding: 4px 0; }
  table.problems td { border: 0; padding: 2px 0; text-align: left; white-space: normal; overflow-wrap: anywhere; }
  table.problems td::before { content: attr(data-label) ": "; color: var(--muted); }
}
@media print {
  body { max-width: none; padding: 0; font-size: 11px; }
  h2 { break-after: avoid; }
  tr, svg, dl, table.totals, table.months, table.split, .check { break-inside: avoid; }
  thead { display: table-header-group; }
  @page { size: A4 landscape; margin: 12mm; }
}
</style>
</head>
<body>
<header>
<h1>{{.Title}}</h1>
<div class="banner {{.ServiceKey}}" data-service="{{.ServiceKey}}">{{.Service}}</div>
{{if not .Complete}}<div class="warning">{{t .Lang "incomplete"}}</div>{{end}}
</header>

<section id="run">
<h2>{{t .Lang "identity"}}</h2>
<dl class="identity">
{{range .Fields}}<dt>{{index . 0}}</dt><dd>{{index . 1}}</dd>
{{end}}</dl>
</section>

<section id="totals">
<h2>{{t .Lang "totals"}}</h2>
<table class="totals" data-total-in="{{.Totals.In.AmountCents}}" data-rows-in="{{.Totals.In.Rows}}" data-total-issued="{{.Totals.Issued.AmountCents}}" data-rows-issued="{{.Totals.Issued.Rows}}" data-total-refused="{{.Totals.Refused.AmountCents}}" data-rows-refused="{{.Totals.Refused.Rows}}" data-total-denied="{{.Totals.Denied.AmountCents}}" data-rows-denied="{{.Totals.Denied.Rows}}" data-total-ambiguous="{{.Totals.Ambiguous.AmountCents}}" data-rows-ambiguous="{{.Totals.Ambiguous.Rows}}" data-total-pending="{{.Totals.Pending.AmountCents}}" data-rows-pending="{{.Totals.Pending.Rows}}">
<thead><tr><th>{{t .Lang "outcome"}}</th><th class="num">{{t .Lang "count"}}</th><th class="num">{{t .Lang "amount"}}</th></tr></thead>
<tbody>
{{range .Tallies}}<tr class="{{.Code}}" data-outcome="{{.Code}}" data-rows="{{.Rows}}" data-cents="{{.Cents}}"><td>{{.Label}}</td><td class="num">{{.Rows}}</td><td class="num">{{money $.Lang .Cents}}</td></tr>
{{end}}</tbody>
</table>
<div class="check {{if .Reconciles}}ok{{else}}bad{{end}}" data-reconciles="{{.Reconciles}}">{{if .Reconciles}}✔ {{else}}✘ {{end}}{{.Reconciliation}}</div>

<h2>{{t .Lang "outcomes_chart"}}</h2>
<svg xmlns="http://www.w3.org/2000/svg" width="{{.ChartW}}" height="{{.OutcomeChartH}}" viewBox="0 0 {{.ChartW}} {{.OutcomeChartH}}" role="img" aria-label="{{t .Lang "outcomes_chart"}}">
{{range .OutcomeBars}}<g data-outcome="{{.Key}}" data-rows="{{.Rows}}" data-cents="{{.Cents}}">
<text x="0" y="{{.TextY}}">{{.Label}}</text>
<rect class="track" x="{{$.BarLabelW}}" y="{{.Y}}" width="{{$.TrackW}}" height="26"/>
<rect class="{{.Class}}" x="{{$.BarLabelW}}" y="{{.Y}}" width="{{.W}}" height="26"/>
<text x="{{add $.BarLabelW (add .W 8)}}" y="{{.TextY}}">{{.Value}}</text>
</g>
{{end}}</svg>
</section>
{{if .MonthBars}}
<section id="months">
<h2>{{t .Lang "by_month"}}</h2>
<svg xmlns="http://www.w3.org/2000/svg" width="{{.ChartW}}" height="{{.MonthChartH}}" viewBox="0 0 {{.ChartW}} {{.MonthChartH}}" role="img" aria-label="{{t .Lang "by_month"}}">
<line x1="0" y1="{{.MonthAxisY}}" x2="{{.ChartW}}" y2="{{.MonthAxisY}}" stroke="#999" stroke-width="1"/>
{{range .MonthBars}}<g data-month="{{.Month}}" data-cents="{{.Cents}}">
<rect class="month" x="{{.X}}" y="{{.Y}}" width="{{.W}}" height="{{.H}}"/>
{{if .ShowValue}}<text class="small" x="{{.CX}}" y="{{.VY}}" text-anchor="middle">{{.Value}}</text>
{{end}}{{if .Rotate}}<text class="small" x="{{.CX}}" y="{{.LabelY}}" text-anchor="end" transform="rotate(-45 {{.CX}} {{.LabelY}})">{{.Label}}</text>{{else}}<text class="small" x="{{.CX}}" y="{{.LabelY}}" text-anchor="middle">{{.Label}}</text>{{end}}
</g>
{{end}}</svg>
<table class="months">
<thead><tr><th>{{t .Lang "month"}}</th><th class="num">{{t .Lang "amount"}}</th></tr></thead>
<tbody>
{{range .MonthBars}}<tr data-month="{{.Month}}" data-cents="{{.Cents}}"><td>{{.Label}}</td><td class="num">{{money $.Lang .Cents}}</td></tr>
{{end}}</tbody>
</table>
</section>
{{end}}{{if .SplitLines}}
<section id="split">
<h2>{{t .Lang "split"}}</h2>
<svg xmlns="http://www.w3.org/2000/svg" width="{{.ChartW}}" height="{{.SplitChartH}}" viewBox="0 0 {{.ChartW}} {{.SplitChartH}}" role="img" aria-label="{{t .Lang "split"}}">
{{range .SplitBars}}<g data-recipient="{{.Key}}" data-cents="{{.Cents}}">
<text x="0" y="{{.TextY}}">{{.Label}}</text>
<rect class="{{.Class}}" x="{{$.BarLabelW}}" y="{{.Y}}" width="{{.W}}" height="26"/>
<text x="{{add $.BarLabelW (add .W 8)}}" y="{{.TextY}}">{{.Value}}</text>
</g>
{{end}}</svg>
<table class="split">
<thead><tr><th>{{t .Lang "recipient"}}</th><th>{{t .Lang "month"}}</th><th class="num">{{t .Lang "amount"}}</th></tr></thead>
<tbody>
{{range .SplitLines}}<tr data-recipient="{{.Recipient}}" data-month="{{.Month}}" data-cents="{{.Cents}}"><td class="code">{{.Label}}</td><td>{{.MonthLabel}}</td><td class="num">{{money $.Lang .Cents}}</td></tr>
{{end}}</tbody>
</table>
</section>
{{end}}
<section id="problems">
<h2>{{t .Lang "problems"}} ({{.ProblemsTotal}})</h2>
{{if .Problems}}<table class="problems" data-problems="{{.ProblemsTotal}}">
<thead><tr><th class="num">{{t .Lang "col_source_row"}}</th><th>{{t .Lang "col_key"}}</th><th>{{t .Lang "col_payer"}}</th><th>{{t .Lang "col_outcome"}}</th><th class="num">{{t .Lang "col_amount"}}</th><th>{{t .Lang "col_code"}}</th><th>{{t .Lang "col_place"}}</th><th>{{t .Lang "col_message"}}</th><th>{{t .Lang "col_action"}}</th></tr></thead>
<tbody>
{{range .Problems}}<tr data-source-row="{{.SourceRow}}" data-outcome="{{.OutcomeCode}}" data-cents="{{.Cents}}" data-code="{{.Code}}"><td class="num" data-label="{{t $.Lang "col_source_row"}}">{{.SourceRow}}</td><td class="nowrap" data-label="{{t $.Lang "col_key"}}">{{.Key}}</td><td data-label="{{t $.Lang "col_payer"}}">{{.Payer}}<br/><span class="muted nowrap">{{.Document}}</span></td><td class="outcome-{{.OutcomeCode}}" data-label="{{t $.Lang "col_outcome"}}">{{.Outcome}}</td><td class="num" data-label="{{t $.Lang "col_amount"}}">{{money $.Lang .Cents}}</td><td class="code" data-label="{{t $.Lang "col_code"}}">{{.Code}}</td><td data-label="{{t $.Lang "col_place"}}">{{.Place}}{{if .Value}}<br/><span class="muted nowrap">{{.Value}}</span>{{end}}</td><td data-label="{{t $.Lang "col_message"}}">{{.Message}}</td><td data-label="{{t $.Lang "col_action"}}">{{.Action}}</td></tr>
{{end}}</tbody>
</table>
{{if .ProblemsHidden}}<p class="muted">+{{.ProblemsHidden}} {{t .Lang "more_problems"}}</p>{{end}}
{{else}}<p data-problems="0">{{t .Lang "no_problems"}}</p>{{end}}
</section>
<footer>{{t .Lang "generated_at"}} {{.Generated}} · remessa</footer>
</body>
</html>
`
