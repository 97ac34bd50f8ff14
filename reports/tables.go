package reports

import (
	"sort"
	"strconv"
	"strings"

	"remessa/formats"
	"remessa/pipeline/results"
)

// cellKind is how a report cell is typed in a spreadsheet.
type cellKind int

const (
	kText  cellKind = iota // a string, kept as text (CPFs, codes, ids)
	kMoney                 // cents, shown as reais
	kDate                  // "YYYY-MM-DD", a real date in XLSX
	kInt                   // a plain integer (row numbers, counts)
)

// cell is one typed value of a report table.
type cell struct {
	kind cellKind
	s    string // text or date
	n    int64  // cents or integer
}

func text(s string) cell   { return cell{kind: kText, s: s} }
func money(c int64) cell   { return cell{kind: kMoney, n: c} }
func date(d string) cell   { return cell{kind: kDate, s: d} }
func integer(n int64) cell { return cell{kind: kInt, n: n} }

// column describes one column of a table: its label key, type and width in
// XLSX character units.
type column struct {
	key   string
	kind  cellKind
	width float64
}

// table is one report table (an XLSX sheet, a CSV file) fed one input row
// at a time: emit calls yield once per line the row gives (none, one, or
// one per parcel or problem); the slice is reused between calls.
type table struct {
	file  string // CSV file name
	sheet string // label key of the XLSX sheet
	cols  []column
	emit  func(row *results.Row, yield func([]cell) error) error
}

// linesColumns are the columns of the Linhas table (one line per input row).
var linesColumns = []column{
	{"col_source_row", kInt, 8},
	{"col_key", kText, 16},
	{"col_payer", kText, 30},
	{"col_document", kText, 18},
	{"col_outcome", kText, 22},
	{"col_amount", kMoney, 14},
	{"col_due", kDate, 12},
	{"col_custom_id", kText, 16},
	{"col_carnet_id", kText, 12},
	{"col_charge_ids", kText, 16},
	{"col_txid", kText, 38},
	{"col_batch", kText, 14},
	{"col_link", kText, 40},
	{"col_pdf", kText, 40},
	{"col_cover", kText, 30},
	{"col_typed_line", kText, 56},
	{"col_barcode", kText, 46},
	{"col_pix", kText, 60},
	{"col_location", kText, 40},
	{"col_error_code", kText, 14},
	{"col_error", kText, 60},
}

// parcelsColumns are the columns of the Parcelas table (carnet jobs).
var parcelsColumns = []column{
	{"col_source_row", kInt, 8},
	{"col_key", kText, 16},
	{"col_payer", kText, 30},
	{"col_carnet_id", kText, 12},
	{"col_parcel", kInt, 8},
	{"col_charge_id", kText, 12},
	{"col_due", kDate, 12},
	{"col_amount", kMoney, 14},
	{"col_status", kText, 22},
	{"col_status_code", kText, 12},
	{"col_typed_line", kText, 56},
	{"col_barcode", kText, 46},
	{"col_pix", kText, 60},
	{"col_link", kText, 40},
	{"col_pdf", kText, 40},
	{"col_split_total", kMoney, 14},
}

// problemsColumns are the columns of the Problemas table.
var problemsColumns = []column{
	{"col_source_row", kInt, 8},
	{"col_key", kText, 16},
	{"col_payer", kText, 30},
	{"col_document", kText, 18},
	{"col_outcome", kText, 22},
	{"col_amount", kMoney, 14},
	{"col_code", kText, 16},
	{"col_field", kText, 18},
	{"col_column", kText, 8},
	{"col_header", kText, 18},
	{"col_value", kText, 20},
	{"col_message", kText, 60},
	{"col_action", kText, 70},
}

// summaryColumns are the columns of resumo.csv, a flat form of the summary.
var summaryColumns = []column{
	{"section", kText, 14},
	{"item", kText, 30},
	{"month", kText, 10},
	{"count", kInt, 10},
	{"amount", kMoney, 16},
	{"text", kText, 60},
}

func ids(v []int64) string {
	s := make([]string, len(v))
	for i, id := range v {
		s[i] = strconv.FormatInt(id, 10)
	}
	return strings.Join(s, " ")
}

func idText(id int64) string {
	if id == 0 {
		return ""
	}
	return strconv.FormatInt(id, 10)
}

// problemText returns the message and action of p in lang, with the default
// action of the row's outcome when p has none.
func problemText(lang string, o results.Outcome, p results.Problem) (msg, action string) {
	msg, action = p.Message, p.Action
	if lang == "en" {
		if p.MessageEN != "" {
			msg = p.MessageEN
		}
		if p.ActionEN != "" {
			action = p.ActionEN
		} else if p.Action != "" {
			action = ""
		}
	}
	if action == "" {
		action = tr(lang, defaultAction(o))
	}
	return msg, action
}

func defaultAction(o results.Outcome) string {
	switch o {
	case results.Refused:
		return "action_refused"
	case results.Denied:
		return "action_denied"
	case results.Ambiguous:
		return "action_ambiguous"
	}
	return "action_pending"
}

// rowProblems returns the problems of a row that did not get issued, with a
// default one when the row carries none, so every such row shows up.
func rowProblems(lang string, row *results.Row) []results.Problem {
	if row.Outcome == results.Issued {
		return nil
	}
	if len(row.Problems) > 0 {
		return row.Problems
	}
	var code, key string
	switch row.Outcome {
	case results.Refused:
		code, key = "recusada", "msg_refused"
	case results.Denied:
		code, key = "negada", "msg_denied"
	case results.Ambiguous:
		code, key = "ambigua", "msg_ambiguous"
	default:
		code, key = "pendente", "msg_pending"
	}
	return []results.Problem{{Code: code, Message: labels[key].pt, MessageEN: labels[key].en}}
}

// rowError joins a row's problem codes and messages for the Linhas table.
func rowError(lang string, row *results.Row) (codes, msgs string) {
	ps := rowProblems(lang, row)
	if len(ps) == 0 {
		return "", ""
	}
	c := make([]string, 0, len(ps))
	m := make([]string, 0, len(ps))
	for _, p := range ps {
		c = append(c, p.Code)
		msg, _ := problemText(lang, row.Outcome, p)
		if p.Column != "" || p.Header != "" {
			msg = problemPlace(lang, p) + ": " + msg
		}
		m = append(m, msg)
	}
	return strings.Join(c, "; "), strings.Join(m, "; ")
}

// problemPlace says where a problem is: "C (cpf)" or the field; a
// CNAB title's positions in lang's words ("linha 9, posições 78–85 (Data
// de vencimento do título)", formats.Place).
func problemPlace(lang string, p results.Problem) string {
	if _, _, _, ok := formats.ParsePositionColumn(p.Column); ok {
		return formats.Place(lang, 0, p.Column, p.Header)
	}
	switch {
	case p.Column != "" && p.Header != "":
		return p.Column + " (" + p.Header + ")"
	case p.Column != "":
		return p.Column
	case p.Header != "":
		return p.Header
	}
	return p.Field
}

func linesTable(lang string) table {
	buf := make([]cell, len(linesColumns))
	return table{file: FileLinesCSV, sheet: "rows", cols: linesColumns, emit: func(row *results.Row, yield func([]cell) error) error {
		{
			codes, msgs := rowError(lang, row)
			buf = append(buf[:0],
				integer(int64(row.SourceRow)),
				text(row.Key),
				text(row.PayerName),
				text(row.PayerDoc),
				text(tr(lang, outcomeKey(row.Outcome))),
				money(row.AmountCents),
				date(row.DueDate),
				text(row.CustomID),
				text(idText(row.CarnetID)),
				text(ids(row.ChargeIDs)),
				text(row.Txid),
				text(row.BatchID),
				text(row.Link),
				text(row.PDF),
				text(row.Cover),
				text(row.TypedLine),
				text(row.Barcode),
				text(row.PixCopiaECola),
				text(row.Location),
				text(codes),
				text(msgs),
			)
			return yield(buf)
		}
	}}
}

func splitSum(s []results.Share) (sum int64, any bool) {
	for _, sh := range s {
		if !sh.Own {
			sum += sh.AmountCents
			any = true
		}
	}
	return sum, any
}

func parcelsTable(lang string) table {
	buf := make([]cell, len(parcelsColumns))
	return table{file: FileParcelsCSV, sheet: "parcels", cols: parcelsColumns, emit: func(row *results.Row, yield func([]cell) error) error {
		{
			for _, p := range row.Parcels {
				split := text("")
				if sum, ok := splitSum(p.Split); ok {
					split = money(sum)
				}
				buf = append(buf[:0],
					integer(int64(row.SourceRow)),
					text(row.Key),
					text(row.PayerName),
					text(idText(row.CarnetID)),
					integer(int64(p.Number)),
					text(idText(p.ChargeID)),
					date(p.DueDate),
					money(p.ValueCents),
					text(parcelStatus(lang, p.Status)),
					text(p.Status),
					text(p.TypedLine),
					text(p.Barcode),
					text(p.PixCopiaECola),
					text(p.Link),
					text(p.PDF),
					split,
				)
				if err := yield(buf); err != nil {
					return err
				}
			}
		}
		return nil
	}}
}

// rowTables returns the tables fed row by row: Linhas, Parcelas (carnet
// jobs only) and Problemas.
func rowTables(kind results.Kind, lang string) []table {
	ts := []table{linesTable(lang)}
	if kind == results.Carnets {
		ts = append(ts, parcelsTable(lang))
	}
	return append(ts, problemsTable(lang))
}

func problemsTable(lang string) table {
	buf := make([]cell, len(problemsColumns))
	return table{file: FileProblemsCSV, sheet: "problems", cols: problemsColumns, emit: func(row *results.Row, yield func([]cell) error) error {
		{
			for _, p := range rowProblems(lang, row) {
				msg, action := problemText(lang, row.Outcome, p)
				buf = append(buf[:0],
					integer(int64(row.SourceRow)),
					text(row.Key),
					text(row.PayerName),
					text(row.PayerDoc),
					text(tr(lang, outcomeKey(row.Outcome))),
					money(row.AmountCents),
					text(p.Code),
					text(p.Field),
					text(p.Column),
					text(p.Header),
					text(p.Value),
					text(msg),
					text(action),
				)
				if err := yield(buf); err != nil {
					return err
				}
			}
		}
		return nil
	}}
}

// tallies lists the totals in display order with their label keys.
func tallies(t results.Totals) []struct {
	key string
	t   results.Tally
} {
	return []struct {
		key string
		t   results.Tally
	}{
		{"outcome_in", t.In},
		{"outcome_issued", t.Issued},
		{"outcome_refused", t.Refused},
		{"outcome_denied", t.Denied},
		{"outcome_ambig", t.Ambiguous},
		{"outcome_pending", t.Pending},
	}
}

// reconciliation returns whether the totals close and the sentence that
// says so, or that names the difference, in lang.
func reconciliation(lang string, t results.Totals, d *digest) (bool, string) {
	if ok, _ := t.Reconciles(); ok {
		if key, rows, tot, ok := rowsMatchTotals(t, d); !ok {
			return false, tr(lang, "not_reconciles") + " — " + tr(lang, key) + ": " + tr(lang, "rows_add_up") + " " +
				rowsText(lang, rows.Rows) + ", " + formatMoney(lang, rows.AmountCents) + "; " + tr(lang, "totals_say") + " " +
				rowsText(lang, tot.Rows) + ", " + formatMoney(lang, tot.AmountCents)
		}
		return true, tr(lang, "reconciles")
	}
	rows := t.In.Rows - (t.Issued.Rows + t.Refused.Rows + t.Denied.Rows + t.Ambiguous.Rows + t.Pending.Rows)
	cents := t.In.AmountCents - (t.Issued.AmountCents + t.Refused.AmountCents + t.Denied.AmountCents + t.Ambiguous.AmountCents + t.Pending.AmountCents)
	return false, tr(lang, "not_reconciles") + " — " + tr(lang, "difference") + ": " +
		rowsText(lang, rows) + ", " + formatMoney(lang, cents)
}

// rowsMatchTotals compares the totals with the rows' own tallies: false,
// with the first outcome that differs, when results.json's totals are not
// the sums of its rows.
func rowsMatchTotals(t results.Totals, d *digest) (key string, rows, totals results.Tally, ok bool) {
	got := tallies(d.rowTotals)
	for i, want := range tallies(t) {
		if got[i].t != want.t {
			return want.key, got[i].t, want.t, false
		}
	}
	return "", results.Tally{}, results.Tally{}, true
}

// runFields lists the run identity as label key and value.
func runFields(lang string, ri results.RunInfo, human bool) [][2]string {
	ts := func(s string) string {
		if human {
			return formatTimestamp(lang, s)
		}
		return s
	}
	service := ri.Service
	if human {
		service = tr(lang, serviceKey(ri.Service))
	}
	kind := string(ri.Kind)
	if human {
		kind = tr(lang, kindKey(ri.Kind))
	}
	f := [][2]string{
		{"job_name", ri.JobName},
		{"run_id", ri.ID},
		{"service", service},
		{"kind", kind},
		{"account", ri.Account},
		{"operator", ri.Operator},
		{"started_at", ts(ri.StartedAt)},
		{"finished_at", ts(ri.FinishedAt)},
		{"version", ri.RemessaVersion},
		{"job_file", ri.JobFile},
		{"job_sha256", ri.JobSHA256},
		{"input_file", ri.InputFile},
		{"input_sha256", ri.InputSHA256},
	}
	if ri.BaseURL != "" {
		f = append(f, [2]string{"base_url", ri.BaseURL})
	}
	if ri.PixBaseURL != "" {
		f = append(f, [2]string{"pix_base_url", ri.PixBaseURL})
	}
	return f
}

// sortedMonths returns the keys of m in order.
func sortedMonths(m map[string]int64) []string {
	ks := make([]string, 0, len(m))
	for k := range m {
		ks = append(ks, k)
	}
	sort.Strings(ks)
	return ks
}

// splitLine is one recipient's share in one due month.
type splitLine struct {
	Recipient string
	Own       bool
	Month     string
	Cents     int64
}

// splitLines flattens Totals.SplitByRecipient in recipient then month
// order, the issuing account's own share first. own holds the recipients
// marked Own in the rows' splits.
func splitLines(t results.Totals, own map[string]bool) []splitLine {
	if len(t.SplitByRecipient) == 0 {
		return nil
	}
	recips := make([]string, 0, len(t.SplitByRecipient))
	for k := range t.SplitByRecipient {
		recips = append(recips, k)
	}
	sort.Slice(recips, func(i, j int) bool {
		if own[recips[i]] != own[recips[j]] {
			return own[recips[i]]
		}
		return recips[i] < recips[j]
	})
	var out []splitLine
	for _, rc := range recips {
		m := t.SplitByRecipient[rc]
		for _, mo := range sortedMonths(m) {
			out = append(out, splitLine{rc, own[rc], mo, m[mo]})
		}
	}
	return out
}

func recipientLabel(lang, account string, s splitLine) string {
	if !s.Own {
		return s.Recipient
	}
	id := s.Recipient
	if id == "" {
		id = account // the run left the own share unnamed
	}
	if id == "" {
		return tr(lang, "own_account")
	}
	return id + " (" + tr(lang, "own_account") + ")"
}

// summaryRows is resumo.csv: the run identity, the totals, the
// reconciliation, amounts by due month and split shares, as flat lines.
func summaryRows(r *results.Results, d *digest, lang string) [][]cell {
	none := text("")
	var out [][]cell
	emit := func(c ...cell) { out = append(out, c) }
	sec := tr(lang, "sec_run")
	for _, f := range runFields(lang, r.Run, false) {
		emit(text(sec), text(f[0]), none, none, none, text(f[1]))
	}
	sec = tr(lang, "sec_totals")
	for _, t := range tallies(r.Totals) {
		emit(text(sec), text(tr(lang, t.key)), none, integer(int64(t.t.Rows)), money(t.t.AmountCents), none)
	}
	_, sentence := reconciliation(lang, r.Totals, d)
	emit(text(tr(lang, "sec_check")), text("reconciles"), none, none, none, text(sentence))
	sec = tr(lang, "sec_month")
	for _, m := range sortedMonths(r.Totals.IssuedByDueMonth) {
		emit(text(sec), none, text(m), none, money(r.Totals.IssuedByDueMonth[m]), none)
	}
	sec = tr(lang, "sec_split")
	for _, s := range splitLines(r.Totals, d.own) {
		t := ""
		if s.Own {
			t = tr(lang, "own_account")
		}
		emit(text(sec), text(s.Recipient), text(s.Month), none, money(s.Cents), text(t))
	}
	return out
}
