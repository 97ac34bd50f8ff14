package conciliacao

import (
	"bufio"
	"bytes"
	"context"
	"crypto/rand"
	"encoding/csv"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"html/template"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"time"

	"github.com/xuri/excelize/v2"

	"remessa/pipeline/results"
	"remessa/pipeline/status"
	"remessa/reports"
	"remessa/rules"
)

// Files are the names the reconciliation is written under.
var Files = []string{"conciliacao.xlsx", "conciliacao.csv", "conciliacao.html", "conciliacao.json", "conciliacao-quem-deve.csv"}

// Write writes the four reconciliation files of r (built in memory, with
// its lines) into dir, in lang (pt or en), and returns their paths.
func Write(dir string, r *Reconciliation, lang string) ([]string, error) {
	s, err := openSinks(dir, r, lang)
	if err != nil {
		return nil, err
	}
	for i := range r.Lines {
		if err := s.line(&r.Lines[i]); err != nil {
			s.abort()
			return nil, err
		}
	}
	return s.finish(r)
}

// WriteRun reconciles the run in dir as of today from its status ledger
// and results.json and writes the four files, streaming: each charge is
// read from the ledger, summed and written to the CSV, the workbook's
// Cobranças sheet and the JSON as it comes, so memory does not grow with
// the run. The result has the totals and no lines.
func WriteRun(ctx context.Context, dir string, today time.Time, lang string) ([]string, *Reconciliation, error) {
	l, err := status.OpenLedger(dir)
	if err != nil {
		return nil, nil, err
	}
	defer l.Close()
	paid, err := l.KeysIn(ctx, status.StatePaid, status.StateSettled)
	if err != nil {
		return nil, nil, err
	}
	sp := newSplitter(paid)
	var head results.RunInfo
	if _, err := reports.EachRow(filepath.Join(dir, "results.json"), func(h *results.Results) error { head = h.Run; return nil },
		func(row *results.Row) error { sp.row(row); return nil }); err != nil {
		return nil, nil, err
	}
	r := newReconciliation(&head, l.Meta(ctx, "last_sync"), today)
	r.Split = sp.recipients()
	s, err := openSinks(dir, r, lang)
	if err != nil {
		return nil, nil, err
	}
	if err := stream(ctx, dir, l, r, today, s.line); err != nil {
		s.abort()
		return nil, nil, err
	}
	r.Reconcile = r.Check()
	files, err := s.finish(r)
	return files, r, err
}

// sinks write the reconciliation's files as lines stream by: the CSV and
// the JSON to temporary files, the workbook's line sheet through
// excelize's stream writer; finish adds the summaries and renames them
// into place.
type sinks struct {
	dir, lang string
	tmp       []string // temporary paths, parallel to Files
	csvF      *os.File
	csvB      *bufio.Writer
	csvW      *csv.Writer
	jsonF     *os.File
	jsonB     *bufio.Writer
	jsonN     int
	x         *excelize.File
	sw        *excelize.StreamWriter
	xrow      int
	money     int
}

func openSinks(dir string, r *Reconciliation, lang string) (*sinks, error) {
	if lang != "en" {
		lang = "pt"
	}
	s := &sinks{dir: dir, lang: lang}
	// temporary names of this writer only: two writers of one run at
	// once (the desk's inbox job and its sync) each rename a whole file
	var rnd [6]byte
	rand.Read(rnd[:])
	for _, f := range Files {
		s.tmp = append(s.tmp, filepath.Join(dir, f+"."+hex.EncodeToString(rnd[:])+".tmp"))
	}
	var err error
	if s.csvF, err = os.Create(s.tmp[1]); err != nil {
		return nil, err
	}
	s.csvB = bufio.NewWriterSize(s.csvF, 1<<16)
	s.csvB.WriteString("\uFEFF")
	s.csvW = csv.NewWriter(s.csvB)
	s.csvW.Comma, s.csvW.UseCRLF = ';', true
	if err := s.csvW.Write(lineHeaders(lang)); err != nil {
		s.abort()
		return nil, err
	}
	if s.jsonF, err = os.Create(s.tmp[3]); err != nil {
		s.abort()
		return nil, err
	}
	s.jsonB = bufio.NewWriterSize(s.jsonF, 1<<16)
	head, _ := json.Marshal(struct {
		RunID    string       `json:"run_id"`
		JobName  string       `json:"job_name"`
		Kind     results.Kind `json:"kind"`
		Service  string       `json:"service"`
		AsOf     string       `json:"as_of"`
		SyncedAt string       `json:"synced_at"`
	}{r.RunID, r.JobName, r.Kind, r.Service, r.AsOf, r.SyncedAt})
	s.jsonB.Write(head[:len(head)-1])
	s.jsonB.WriteString(`,"lines":[`)
	s.x = excelize.NewFile()
	moneyFmt := "#,##0.00"
	s.money, _ = s.x.NewStyle(&excelize.Style{CustomNumFmt: &moneyFmt})
	bold, _ := s.x.NewStyle(&excelize.Style{Font: &excelize.Font{Bold: true}})
	// the sheets in their final order (Totais, Quem deve, Linhas) from the
	// start: moving a sheet or choosing the active one afterwards makes
	// excelize read every sheet back, the streamed lines included (most
	// of the writer's time on a run of a few hundred charges)
	ls := tr(lang, "lines")
	s.x.SetSheetName("Sheet1", tr(lang, "totals"))
	for _, name := range []string{tr(lang, "who_owes"), ls} {
		if _, err = s.x.NewSheet(name); err != nil {
			s.abort()
			return nil, err
		}
	}
	if s.sw, err = s.x.NewStreamWriter(ls); err != nil {
		s.abort()
		return nil, err
	}
	s.sw.SetPanes(&excelize.Panes{Freeze: true, YSplit: 1, TopLeftCell: "A2", ActivePane: "bottomLeft"})
	hdr := make([]any, 0, 18)
	for _, h := range lineHeaders(lang) {
		hdr = append(hdr, excelize.Cell{StyleID: bold, Value: h})
	}
	s.xrow = 1
	if err := s.sw.SetRow("A1", hdr); err != nil {
		s.abort()
		return nil, err
	}
	return s, nil
}

// line writes one charge to the CSV, the JSON and the workbook.
func (s *sinks) line(l *Line) error {
	lang := s.lang
	parcel := ""
	if l.Parcel > 0 {
		parcel = strconv.Itoa(l.Parcel)
	}
	bucket := ""
	if l.Bucket != "" {
		bucket = tr(lang, l.Bucket)
	}
	shortBucket := ""
	if l.ShortBucket != "" {
		shortBucket = tr(lang, l.ShortBucket)
	}
	if err := s.csvW.Write([]string{strconv.Itoa(l.SourceRow), defuse(l.Key), defuse(l.Payer), parcel, l.Charge, rules.FormatDate(lang, l.Due),
		csvMoney(lang, l.Expected), stateText(lang, l.State), l.Status, csvMoney(lang, l.Paid), rules.FormatDate(lang, l.PaidOn),
		methodText(lang, l.Method), strconv.Itoa(l.DaysLate), csvMoney(lang, l.Owed), csvMoney(lang, l.Discount), csvMoney(lang, l.FineInterest),
		csvMoney(lang, l.Short), csvMoney(lang, l.Over), csvMoney(lang, l.Refunded), csvMoney(lang, l.Open), bucket, shortBucket,
		csvMoney(lang, l.FineToday)}); err != nil {
		return err
	}
	b, err := json.Marshal(l)
	if err != nil {
		return err
	}
	if s.jsonN > 0 {
		s.jsonB.WriteByte(',')
	}
	s.jsonN++
	s.jsonB.Write(b)
	var p any
	if l.Parcel > 0 {
		p = l.Parcel
	}
	m := func(c int64) excelize.Cell { return excelize.Cell{StyleID: s.money, Value: reais(c)} }
	s.xrow++
	cell, _ := excelize.CoordinatesToCellName(1, s.xrow)
	return s.sw.SetRow(cell, []any{l.SourceRow, l.Key, l.Payer, p, l.Charge, rules.FormatDate(lang, l.Due), m(l.Expected), stateText(lang, l.State), l.Status,
		m(l.Paid), rules.FormatDate(lang, l.PaidOn), methodText(lang, l.Method), l.DaysLate, m(l.Owed), m(l.Discount), m(l.FineInterest),
		m(l.Short), m(l.Over), m(l.Refunded), m(l.Open), bucket, shortBucket, m(l.FineToday)})
}

// finish writes the summaries (the JSON's tail, the workbook's Totais
// sheet, the HTML) and renames every file into place.
func (s *sinks) finish(r *Reconciliation) ([]string, error) {
	fail := func(err error) ([]string, error) { s.abort(); return nil, err }
	s.csvW.Flush()
	if err := s.csvW.Error(); err != nil {
		return fail(err)
	}
	if err := s.csvB.Flush(); err != nil {
		return fail(err)
	}
	tail, err := json.Marshal(struct {
		Totals     Amounts            `json:"totals"`
		ByMonth    map[string]Amounts `json:"by_due_month"`
		Aging      map[string]Amounts `json:"aging"`
		ShortAging map[string]int64   `json:"short_aging"`
		Split      []Recipient        `json:"split,omitempty"`
		Notes      []string           `json:"notes,omitempty"`
		Reconcile  Check              `json:"check"`
	}{r.Totals, r.ByMonth, r.Aging, r.ShortAging, r.Split, r.Notes, r.Reconcile})
	if err != nil {
		return fail(err)
	}
	// who owes one payer at a time (a big run's list would be one large
	// buffer marshalled whole)
	s.jsonB.WriteString(`],"who_owes":[`)
	for i := range r.WhoOwes {
		b, err := json.Marshal(&r.WhoOwes[i])
		if err != nil {
			return fail(err)
		}
		if i > 0 {
			s.jsonB.WriteByte(',')
		}
		s.jsonB.Write(b)
	}
	s.jsonB.WriteString("],")
	s.jsonB.Write(tail[1:])
	s.jsonB.WriteByte('\n')
	if err := s.jsonB.Flush(); err != nil {
		return fail(err)
	}
	if err := s.sw.Flush(); err != nil {
		return fail(err)
	}
	// the lines are written: what streaming them left behind goes before
	// the workbook's summaries are built and the whole workbook is zipped
	runtime.GC()
	if err := summarySheet(s.x, r, s.lang, s.money); err != nil {
		return fail(err)
	}
	if err := whoOwesSheet(s.x, r, s.lang, s.money); err != nil {
		return fail(err)
	}
	if err := writeWhoOwesCSV(s.tmp[4], r.WhoOwes, s.lang); err != nil {
		return fail(err)
	}
	xf, err := os.Create(s.tmp[0])
	if err != nil {
		return fail(err)
	}
	if err := s.x.Write(xf); err != nil {
		xf.Close()
		return fail(err)
	}
	if err := xf.Close(); err != nil {
		return fail(err)
	}
	var hb bytes.Buffer
	if err := writeHTML(&hb, r, s.lang); err != nil {
		return fail(err)
	}
	if err := os.WriteFile(s.tmp[2], hb.Bytes(), 0o644); err != nil {
		return fail(err)
	}
	for _, f := range []*os.File{s.csvF, s.jsonF} {
		if err := f.Close(); err != nil {
			return fail(err)
		}
	}
	s.x.Close()
	var out []string
	for i, f := range Files {
		p := filepath.Join(s.dir, f)
		if err := os.Rename(s.tmp[i], p); err != nil {
			return out, err
		}
		out = append(out, p)
	}
	return out, nil
}

// abort removes what was written.
func (s *sinks) abort() {
	for _, f := range []*os.File{s.csvF, s.jsonF} {
		if f != nil {
			f.Close()
		}
	}
	if s.x != nil {
		s.x.Close()
	}
	for _, t := range s.tmp {
		os.Remove(t)
	}
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
	"fine_interest": {"Multa e juros pelas condições", "Fine and interest by the terms"},
	"discount":      {"Desconto pelas condições", "Discount by the terms"},
	"short":         {"Pago a menor", "Paid short"},
	"over":          {"Pago a maior", "Paid over"},
	"owed":          {"Devido na data do pagamento", "Owed on the paid date"},
	"short_bucket":  {"Faixa do pago a menor", "Paid-short bucket"},
	"fine_today":    {"Multa e juros hoje", "Fine and interest today"},
	"short_aging":   {"Pago a menor por atraso (a cobrar)", "Paid short by age (to chase)"},
	"who_owes":      {"Quem deve", "Who owes"},
	"who_owes_csv":  {"e mais %d pagadores: veja conciliacao-quem-deve.csv", "and %d more payers: see conciliacao-quem-deve.csv"},
	"who_owes_more": {"e mais %d pagadores: veja a planilha (aba Quem deve) ou conciliacao-quem-deve.csv", "and %d more payers: see the workbook (Who owes sheet) or conciliacao-quem-deve.csv"},
	"nobody_owes":   {"Ninguém deve: nada vencido nem pago a menor.", "Nobody owes: nothing overdue or paid short."},
	"email":         {"E-mail", "E-mail"},
	"phone":         {"Telefone", "Phone"},
	"overdue_n":     {"Cobranças vencidas", "Overdue charges"},
	"parcels":       {"Parcelas", "Parcels"},
	"face":          {"Valor vencido", "Overdue value"},
	"total_owed":    {"Total devido", "Total owed"},
	"oldest_due":    {"Vencimento mais antigo", "Oldest due date"},
	"notes":         {"Observações", "Notes"},
	"identity":      {"Emitido = recebido + devolvido + a vencer + vencido + cancelado − multa e juros + desconto + pago a menor − pago a maior", "Issued = received + refunded + not yet due + overdue + cancelled − fine and interest + discount + paid short − paid over"},
	"brt":           {"horário de Brasília", "São Paulo time"},
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

// defuse keeps text a spreadsheet would take for a formula as text.
func defuse(s string) string {
	if s != "" && strings.ContainsRune("=+-@\t\r", rune(s[0])) {
		return "'" + s
	}
	return s
}

func lineHeaders(lang string) []string {
	keys := []string{"row", "key", "payer", "parcel", "charge", "due", "expected", "state", "status_code", "paid", "paid_on", "method",
		"days_late", "owed", "discount", "fine_interest", "short", "over", "refunded", "to_receive", "bucket", "short_bucket", "fine_today"}
	out := make([]string, len(keys))
	for i, k := range keys {
		out[i] = tr(lang, k)
	}
	return out
}

func amountHeaders(lang, first string) []string {
	h := []string{first}
	for _, k := range []string{"charges", "expected", "received", "open", "overdue", "cancelled", "refunded", "fine_interest", "discount", "short", "over"} {
		h = append(h, tr(lang, k))
	}
	return h
}

func amountCells(a Amounts) []any {
	return []any{a.Charges, reais(a.Expected), reais(a.Received), reais(a.Open), reais(a.Overdue), reais(a.Cancelled), reais(a.Refunded), reais(a.FineInterest), reais(a.Discount),
		reais(a.Short), reais(a.Over)}
}

func reais(c int64) float64 { return float64(c) / 100 }

// summarySheet fills the Totais sheet (totals, months, aging, split and
// the check), in front of the lines. Money is a number in R$.
func summarySheet(f *excelize.File, r *Reconciliation, lang string, money int) error {
	sum := tr(lang, "totals") // the first sheet, made by openSinks
	bold, _ := f.NewStyle(&excelize.Style{Font: &excelize.Font{Bold: true}})
	row := 1
	put := func(cells []any, style int) {
		cell, _ := excelize.CoordinatesToCellName(1, row)
		f.SetSheetRow(sum, cell, &cells)
		if style != 0 {
			end, _ := excelize.CoordinatesToCellName(len(cells), row)
			f.SetCellStyle(sum, cell, end, style)
		}
		row++
	}
	check := tr(lang, "ok")
	if !r.Reconcile.OK {
		check = tr(lang, "not_ok") + ": " + strings.Join(r.Reconcile.Problems, "; ")
	}
	put([]any{tr(lang, "title") + " — " + r.JobName + " (" + r.RunID + ")"}, bold)
	put([]any{tr(lang, "as_of"), rules.FormatDate(lang, r.AsOf), tr(lang, "synced"), syncedText(lang, r.SyncedAt)}, 0)
	put([]any{check}, bold)
	put([]any{tr(lang, "identity")}, 0)
	for _, n := range r.Notes {
		put([]any{n}, 0)
	}
	row++
	put(toAny(amountHeaders(lang, "")), bold)
	first := row
	put(append([]any{tr(lang, "totals")}, amountCells(r.Totals)...), 0)
	row++
	put(toAny(amountHeaders(lang, tr(lang, "month"))), bold)
	for _, m := range sortedKeys(r.ByMonth) {
		put(append([]any{rules.FormatMonth(lang, m)}, amountCells(r.ByMonth[m])...), 0)
	}
	row++
	put(toAny(amountHeaders(lang, tr(lang, "bucket"))), bold)
	for _, k := range Buckets {
		if a, ok := r.Aging[k]; ok {
			put(append([]any{tr(lang, k)}, amountCells(a)...), 0)
		}
	}
	if r.Totals.Short > 0 {
		row++
		put([]any{tr(lang, "short_aging"), tr(lang, "short")}, bold)
		for _, k := range Buckets {
			if c, ok := r.ShortAging[k]; ok {
				put([]any{tr(lang, k), reais(c)}, 0)
			}
		}
	}
	if len(r.Split) > 0 {
		row++
		put([]any{tr(lang, "recipient"), tr(lang, "expected"), tr(lang, "received")}, bold)
		for _, sp := range r.Split {
			name := sp.Recipient
			if sp.Own {
				name = tr(lang, "own")
			}
			put([]any{name, reais(sp.Expected), reais(sp.Received)}, 0)
		}
	}
	end, _ := excelize.CoordinatesToCellName(12, row)
	start, _ := excelize.CoordinatesToCellName(3, first)
	f.SetCellStyle(sum, start, end, money)
	f.SetColWidth(sum, "A", "A", 26)
	return f.SetColWidth(sum, "B", "L", 15)
}

// syncedText is when the ledger was last synced, in São Paulo time.
func syncedText(lang, ts string) string {
	if ts == "" {
		return ""
	}
	return rules.FormatTime(lang, ts) + " (" + tr(lang, "brt") + ")"
}

func whoOwesHeaders(lang string) []string {
	keys := []string{"row", "key", "payer", "email", "phone", "overdue_n", "parcels", "face", "fine_today", "short", "total_owed", "days_late", "oldest_due"}
	out := make([]string, len(keys))
	for i, k := range keys {
		out[i] = tr(lang, k)
	}
	return out
}

func parcelList(ps []int) string {
	var b strings.Builder
	for i, p := range ps {
		if i > 0 {
			b.WriteString(", ")
		}
		b.WriteString(strconv.Itoa(p))
	}
	return b.String()
}

// sheetOwes is how many payers the workbook's Quem deve sheet lists (a
// sheet of every debtor of a 100,000-charge run costs the writer tens of
// megabytes); conciliacao-quem-deve.csv and the JSON list them all.
const sheetOwes = 10_000

// whoOwesSheet fills the Quem deve sheet after the totals: every payer who
// owes, the largest amount first.
func whoOwesSheet(f *excelize.File, r *Reconciliation, lang string, money int) error {
	name := tr(lang, "who_owes") // made by openSinks
	sw, err := f.NewStreamWriter(name)
	if err != nil {
		return err
	}
	bold, _ := f.NewStyle(&excelize.Style{Font: &excelize.Font{Bold: true}})
	var hdr []any
	for _, h := range whoOwesHeaders(lang) {
		hdr = append(hdr, excelize.Cell{StyleID: bold, Value: h})
	}
	sw.SetPanes(&excelize.Panes{Freeze: true, YSplit: 1, TopLeftCell: "A2", ActivePane: "bottomLeft"})
	if err := sw.SetRow("A1", hdr); err != nil {
		return err
	}
	m := func(c int64) excelize.Cell { return excelize.Cell{StyleID: money, Value: reais(c)} }
	for i, d := range r.WhoOwes {
		cell, _ := excelize.CoordinatesToCellName(1, i+2)
		if i == sheetOwes {
			// the workbook keeps the largest debts; the CSV and the JSON have all
			return errors.Join(sw.SetRow(cell, []any{fmt.Sprintf(tr(lang, "who_owes_csv"), len(r.WhoOwes)-sheetOwes)}), sw.Flush())
		}
		if err := sw.SetRow(cell, []any{d.SourceRow, d.Key, d.Payer, d.Email, d.Phone, d.Overdue, parcelList(d.Parcels), m(d.Face), m(d.FineInterest),
			m(d.Short), m(d.Total), d.DaysLate, rules.FormatDate(lang, d.OldestDue)}); err != nil {
			return err
		}
	}
	return sw.Flush()
}

// writeWhoOwesCSV writes who owes as its own CSV (the lines' CSV has one
// row per charge).
func writeWhoOwesCSV(path string, ds []Debtor, lang string) error {
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	b := bufio.NewWriter(f)
	b.WriteString("\uFEFF")
	w := csv.NewWriter(b)
	w.Comma, w.UseCRLF = ';', true
	w.Write(whoOwesHeaders(lang))
	for _, d := range ds {
		w.Write([]string{strconv.Itoa(d.SourceRow), defuse(d.Key), defuse(d.Payer), defuse(d.Email), defuse(d.Phone), strconv.Itoa(d.Overdue),
			parcelList(d.Parcels), csvMoney(lang, d.Face), csvMoney(lang, d.FineInterest), csvMoney(lang, d.Short), csvMoney(lang, d.Total),
			strconv.Itoa(d.DaysLate), rules.FormatDate(lang, d.OldestDue)})
	}
	w.Flush()
	if err := w.Error(); err != nil {
		f.Close()
		return err
	}
	if err := b.Flush(); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

func toAny(ss []string) []any {
	out := make([]any, len(ss))
	for i, s := range ss {
		out[i] = s
	}
	return out
}

var page = template.Must(template.New("c").Funcs(template.FuncMap{"brl": rules.FormatBRL}).Parse(`<!doctype html>
<html lang="{{.Lang}}"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<title>{{.T "title"}} — {{.R.JobName}}</title>
<style>
body{font-family:system-ui,-apple-system,"Segoe UI",Roboto,Arial,sans-serif;color:#1c2430;margin:2rem auto;max-width:1100px;padding:0 1rem}
h1{font-size:1.5rem}h2{font-size:1.1rem;margin-top:2rem;border-bottom:1px solid #dde3ea;padding-bottom:.3rem}
.scroll{overflow-x:auto}
table{border-collapse:collapse;width:100%;font-size:.9rem}th,td{padding:.35rem .5rem;border-bottom:1px solid #e6ebf0;text-align:left}
th{background:#eef2f6}table.totals{width:auto;min-width:50%}table.totals th{background:none;font-weight:400}td.n,th.n{text-align:right;font-variant-numeric:tabular-nums;white-space:nowrap}
.ok{background:#e6f4ee;color:#0b6e4f;padding:.6rem 1rem;border-radius:6px;font-weight:700}
.bad{background:#fdecea;color:#b42318;padding:.6rem 1rem;border-radius:6px;font-weight:700}
.bad ul{margin:.4rem 0 0;padding-left:1.2rem;font-weight:400}
.muted{color:#5b6675}.small{font-size:.85rem}.chart svg{width:100%;height:auto}.legend span{display:inline-block;width:.8rem;height:.8rem;margin:0 .3rem 0 1rem;vertical-align:middle}
.late{color:#b42318}.calm{color:#2f6690}td.owes{font-weight:700}
@media (max-width:640px){table.cards thead{display:none}table.cards,table.cards tbody,table.cards tr,table.cards td{display:block}
table.cards tr{border-bottom:1px solid #dde3ea;padding:.3rem 0}table.cards td{border:0;display:flex;justify-content:space-between;gap:.75rem;padding:.15rem .5rem;text-align:right;white-space:normal}
table.cards td::before{content:attr(data-label);font-weight:600;color:#5b6675;text-align:left}}
@media print{body{margin:0}.scroll{overflow:visible}}
</style></head><body>
<h1>{{.T "title"}} — {{.R.JobName}}</h1>
<p class="muted">{{.R.RunID}} · {{.T "as_of"}} {{.AsOf}}{{if .Synced}} · {{.T "synced"}} {{.Synced}}{{end}}</p>
{{if .R.Reconcile.OK}}<p class="ok">{{.T "ok"}}</p>{{else}}<div class="bad">{{.T "not_ok"}}<ul>{{range .R.Reconcile.Problems}}<li>{{.}}</li>{{end}}</ul></div>{{end}}
<p class="muted small">{{.T "identity"}}</p>
{{if .R.Notes}}<ul class="muted small">{{range .R.Notes}}<li>{{.}}</li>{{end}}</ul>{{end}}
<h2>{{.T "totals"}}</h2>
<table class="totals">{{with .R.Totals}}<tr><th>{{$.T "charges"}}</th><td class="n">{{.Charges}}</td></tr>
<tr><th>{{$.T "expected"}}</th><td class="n">{{brl .Expected}}</td></tr>
<tr><th>{{$.T "received"}}</th><td class="n">{{brl .Received}}</td></tr>
<tr><th>{{$.T "open"}}</th><td class="n{{if .Open}} calm{{end}}">{{brl .Open}}</td></tr>
<tr><th>{{$.T "overdue"}}</th><td class="n{{if .Overdue}} late{{end}}">{{brl .Overdue}}</td></tr>
<tr><th>{{$.T "cancelled"}}</th><td class="n">{{brl .Cancelled}}</td></tr>
<tr><th>{{$.T "refunded"}}</th><td class="n">{{brl .Refunded}}</td></tr>
<tr><th>{{$.T "fine_interest"}}</th><td class="n">{{brl .FineInterest}}</td></tr>
<tr><th>{{$.T "discount"}}</th><td class="n">{{brl .Discount}}</td></tr>
<tr><th>{{$.T "short"}}</th><td class="n{{if .Short}} late{{end}}">{{brl .Short}}</td></tr>
<tr><th>{{$.T "over"}}</th><td class="n">{{brl .Over}}</td></tr>{{end}}</table>
<h2 id="quem-deve">{{.T "who_owes"}}</h2>
{{if .Owes}}<div class="scroll"><table class="cards"><thead><tr><th>{{.T "payer"}}</th><th class="n">{{.T "overdue_n"}}</th><th class="n">{{.T "face"}}</th><th class="n">{{.T "fine_today"}}</th><th class="n">{{.T "short"}}</th><th class="n">{{.T "total_owed"}}</th><th class="n">{{.T "days_late"}}</th></tr></thead><tbody>
{{range .Owes}}<tr><td data-label="{{$.T "payer"}}"><span><b>{{.Payer}}</b> <span class="muted">{{.Key}}</span>{{if or .Email .Phone}}<br><span class="small">{{.Email}}{{if and .Email .Phone}} · {{end}}{{.Phone}}</span>{{end}}</span></td><td class="n" data-label="{{$.T "overdue_n"}}"><span>{{.Overdue}}{{if .Parcels}} <span class="muted small">({{.ParcelText}})</span>{{end}}</span></td><td class="n" data-label="{{$.T "face"}}">{{brl .Face}}</td><td class="n" data-label="{{$.T "fine_today"}}">{{brl .FineInterest}}</td><td class="n" data-label="{{$.T "short"}}">{{brl .Short}}</td><td class="n owes late" data-label="{{$.T "total_owed"}}">{{brl .Total}}</td><td class="n" data-label="{{$.T "days_late"}}">{{.DaysLate}}</td></tr>{{end}}</tbody></table></div>
{{if .MoreOwes}}<p class="muted small">{{.MoreOwesText}}</p>{{end}}{{else}}<p class="muted">{{.T "nobody_owes"}}</p>{{end}}
<h2>{{.T "chart_month"}}</h2>
<div class="chart"><svg viewBox="0 0 1000 {{.MonthH}}" role="img" aria-label="{{.T "chart_month"}}">
{{range $i, $b := .Months}}<g transform="translate(0,{{$.Y $i}})"><text x="0" y="16" font-size="14">{{$b.Label}}</text>
<rect x="110" y="2" width="{{$b.RecvW}}" height="18" fill="#0b6e4f"/><rect x="{{$.X $b.RecvW}}" y="2" width="{{$b.OpenW}}" height="18" fill="#7fa7c9"/><rect x="{{$.X2 $b.RecvW $b.OpenW}}" y="2" width="{{$b.LateW}}" height="18" fill="#b42318"/>
<text x="{{$.X3 $b.RecvW $b.OpenW $b.LateW}}" y="16" font-size="13">{{$b.RecvText}} / {{$b.UnpaidText}}</text></g>{{end}}
</svg><p class="legend"><span style="background:#0b6e4f"></span>{{.T "received"}}<span style="background:#7fa7c9"></span>{{.T "open"}}<span style="background:#b42318"></span>{{.T "overdue"}}</p></div>
<div class="scroll"><table><tr><th>{{.T "month"}}</th><th class="n">{{.T "charges"}}</th><th class="n">{{.T "expected"}}</th><th class="n">{{.T "received"}}</th><th class="n">{{.T "open"}}</th><th class="n">{{.T "overdue"}}</th><th class="n">{{.T "cancelled"}}</th><th class="n">{{.T "short"}}</th></tr>
{{range .MonthRows}}<tr><td>{{.Label}}</td><td class="n">{{.A.Charges}}</td><td class="n">{{brl .A.Expected}}</td><td class="n">{{brl .A.Received}}</td><td class="n{{if .A.Open}} calm{{end}}">{{brl .A.Open}}</td><td class="n{{if .A.Overdue}} late{{end}}">{{brl .A.Overdue}}</td><td class="n">{{brl .A.Cancelled}}</td><td class="n">{{brl .A.Short}}</td></tr>{{end}}</table></div>
<h2>{{.T "chart_aging"}}</h2>
<div class="chart"><svg viewBox="0 0 1000 {{.AgingH}}" role="img" aria-label="{{.T "chart_aging"}}">
{{range $i, $b := .Aging}}<g transform="translate(0,{{$.Y $i}})"><text x="0" y="16" font-size="14">{{$b.Label}}</text>
<rect x="220" y="2" width="{{$b.UnpaidW}}" height="18" fill="{{$b.Fill}}"/><text x="{{$.X4 $b.UnpaidW}}" y="16" font-size="13">{{$b.UnpaidText}}</text></g>{{end}}
</svg></div>
{{if .R.Totals.Short}}<h2>{{.T "short_aging"}}</h2>
<div class="scroll"><table><tr><th>{{.T "bucket"}}</th><th class="n">{{.T "short"}}</th></tr>
{{range .ShortRows}}<tr><td>{{.Label}}</td><td class="n">{{brl .Cents}}</td></tr>{{end}}</table></div>{{end}}
{{if .R.Split}}<h2>{{.T "split"}}</h2>
<div class="scroll"><table><tr><th>{{.T "recipient"}}</th><th class="n">{{.T "expected"}}</th><th class="n">{{.T "received"}}</th></tr>
{{range .R.Split}}<tr><td>{{if .Own}}{{$.T "own"}}{{else}}{{.Recipient}}{{end}}</td><td class="n">{{brl .Expected}}</td><td class="n">{{brl .Received}}</td></tr>{{end}}</table></div>{{end}}
</body></html>
`))

// bar is one bar of a chart.
type bar struct {
	Label                string
	RecvW, OpenW, LateW  int
	UnpaidW              int
	Fill                 string
	RecvText, UnpaidText string
}

type shortRow struct {
	Label string
	Cents int64
}

// owesRow is a debtor as the page shows it.
type owesRow struct {
	Debtor
	ParcelText string
}

// htmlOwes is how many payers the page lists (the workbook and the CSV
// list them all).
const htmlOwes = 100

type monthRow struct {
	Label string
	A     Amounts
}

type htmlData struct {
	R            *Reconciliation
	Lang         string
	AsOf, Synced string
	Owes         []owesRow
	MoreOwes     int
	MoreOwesText string
	Months       []bar
	Aging        []bar
	MonthRows    []monthRow
	ShortRows    []shortRow
	MonthH       int
	AgingH       int
}

func (d htmlData) T(k string) string { return tr(d.Lang, k) }
func (htmlData) Y(i int) int         { return i*26 + 4 }
func (htmlData) X(w int) int         { return 110 + w }
func (htmlData) X2(a, b int) int     { return 110 + a + b }
func (htmlData) X3(a, b, c int) int  { return 116 + a + b + c }
func (htmlData) X4(w int) int        { return 226 + w }

func writeHTML(b *bytes.Buffer, r *Reconciliation, lang string) error {
	d := htmlData{R: r, Lang: lang, AsOf: rules.FormatDate(lang, r.AsOf), Synced: syncedText(lang, r.SyncedAt)}
	for i := range r.WhoOwes {
		if i == htmlOwes {
			d.MoreOwes = len(r.WhoOwes) - htmlOwes
			d.MoreOwesText = fmt.Sprintf(tr(lang, "who_owes_more"), d.MoreOwes)
			break
		}
		d.Owes = append(d.Owes, owesRow{r.WhoOwes[i], parcelList(r.WhoOwes[i].Parcels)})
	}
	var max int64 = 1
	for _, m := range sortedKeys(r.ByMonth) {
		a := r.ByMonth[m]
		if t := a.Received + a.Open + a.Overdue; t > max {
			max = t
		}
	}
	for _, m := range sortedKeys(r.ByMonth) {
		a := r.ByMonth[m]
		d.Months = append(d.Months, bar{Label: rules.FormatMonth(lang, m), RecvW: int(a.Received * 600 / max), OpenW: int(a.Open * 600 / max),
			LateW: int(a.Overdue * 600 / max), RecvText: rules.FormatBRL(a.Received), UnpaidText: rules.FormatBRL(a.Open + a.Overdue)})
		d.MonthRows = append(d.MonthRows, monthRow{rules.FormatMonth(lang, m), a})
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
		fill := "#b42318"
		if k == BucketNotDue {
			fill = "#7fa7c9"
		}
		d.Aging = append(d.Aging, bar{Label: tr(lang, k), UnpaidW: int(u * 560 / amax), Fill: fill, UnpaidText: rules.FormatBRL(u)})
		if c, ok := r.ShortAging[k]; ok {
			d.ShortRows = append(d.ShortRows, shortRow{tr(lang, k), c})
		}
	}
	d.MonthH, d.AgingH = len(d.Months)*26+8, len(d.Aging)*26+8
	return page.Execute(b, d)
}
