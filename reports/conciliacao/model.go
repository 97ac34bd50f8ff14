// Package conciliacao is the reconciliation of a run after it issued its
// charges: what was asked, what came in, what is open, overdue, cancelled
// or refunded, per charge and in totals by due month, by age of the debt
// and by split recipient, tallied from the rows and checked to the cent.
// It reads the status ledger (pipeline/status) and the run's results, and
// writes conciliacao.xlsx, .csv, .html and .json.
package conciliacao

import (
	"context"
	"fmt"
	"path/filepath"
	"sort"
	"time"

	"remessa/pipeline/results"
	"remessa/pipeline/status"
	"remessa/rules"
)

// Line is one charge (a parcel, a slip, a cobv) as the reconciliation
// sees it.
type Line struct {
	SourceRow    int    `json:"source_row"`
	Key          string `json:"key"`
	Payer        string `json:"payer"`
	Parcel       int    `json:"parcel,omitempty"`
	Charge       string `json:"charge"` // charge id or txid
	Due          string `json:"due_date"`
	Expected     int64  `json:"expected_cents"`
	State        string `json:"state"`  // open, overdue, paid, settled, cancelled, refunded
	Status       string `json:"status"` // the service's own word
	Paid         int64  `json:"paid_cents"`
	PaidOn       string `json:"paid_on,omitempty"` // YYYY-MM-DD (São Paulo)
	Method       string `json:"method,omitempty"`
	DaysLate     int    `json:"days_late,omitempty"`    // paid after the due date, or overdue for
	FineInterest int64  `json:"fine_interest_cents"`    // paid above the value
	Discount     int64  `json:"discount_cents"`         // paid below the value (discount or rebate taken)
	Refunded     int64  `json:"refunded_cents"`         // given back
	Open         int64  `json:"open_cents"`             // still to receive (open or overdue)
	Bucket       string `json:"aging_bucket,omitempty"` // for unpaid lines
}

// Amounts are one group's totals, in cents (counts of charges).
type Amounts struct {
	Charges      int   `json:"charges"`
	Expected     int64 `json:"expected_cents"`
	Received     int64 `json:"received_cents"` // paid + settled − refunded
	Open         int64 `json:"open_cents"`     // not yet due
	Overdue      int64 `json:"overdue_cents"`
	Cancelled    int64 `json:"cancelled_cents"`
	Refunded     int64 `json:"refunded_cents"`
	FineInterest int64 `json:"fine_interest_cents"`
	Discount     int64 `json:"discount_cents"`
}

// Aging buckets of unpaid charges.
const (
	BucketNotDue = "a_vencer"
	Bucket30     = "vencido_1_30"
	Bucket60     = "vencido_31_60"
	Bucket90     = "vencido_61_90"
	BucketOver90 = "vencido_mais_90"
)

// Buckets lists the aging buckets in order.
var Buckets = []string{BucketNotDue, Bucket30, Bucket60, Bucket90, BucketOver90}

// Recipient is what one split recipient received.
type Recipient struct {
	Recipient string `json:"recipient"`
	Own       bool   `json:"own,omitempty"`
	Expected  int64  `json:"expected_cents"`
	Received  int64  `json:"received_cents"`
}

// Reconciliation is the whole report.
type Reconciliation struct {
	RunID     string             `json:"run_id"`
	JobName   string             `json:"job_name"`
	Kind      results.Kind       `json:"kind"`
	Service   string             `json:"service"`
	AsOf      string             `json:"as_of"`     // the day the ages are counted from (YYYY-MM-DD)
	SyncedAt  string             `json:"synced_at"` // the ledger's last sync
	Lines     []Line             `json:"lines"`
	Totals    Amounts            `json:"totals"`
	ByMonth   map[string]Amounts `json:"by_due_month"`
	Aging     map[string]Amounts `json:"aging"` // unpaid lines by bucket
	Split     []Recipient        `json:"split,omitempty"`
	Reconcile Check              `json:"check"`

	streamedLines int // lines written by WriteRun
}

// Check says whether the totals close with the lines, the months and the
// aging, to the cent.
type Check struct {
	OK       bool     `json:"ok"`
	Problems []string `json:"problems,omitempty"`
}

// Build reconciles the ledger's charges of a run as of today, in memory
// (the lines kept in the result). WriteRun does the same for a run of any
// size without holding its lines.
func Build(res *results.Results, charges []status.Charge, syncedAt string, today time.Time) *Reconciliation {
	r := newReconciliation(&res.Run, syncedAt, today)
	a := newAccumulator()
	for _, c := range charges {
		l := line(c, today)
		a.add(l)
		r.Lines = append(r.Lines, l)
	}
	a.close(r)
	r.Split = split(res, charges)
	r.Reconcile = r.Check()
	return r
}

func newReconciliation(run *results.RunInfo, syncedAt string, today time.Time) *Reconciliation {
	return &Reconciliation{RunID: run.ID, JobName: run.JobName, Kind: run.Kind, Service: run.Service,
		AsOf: rules.FormatISODate(today), SyncedAt: syncedAt, ByMonth: map[string]Amounts{}, Aging: map[string]Amounts{}}
}

// accumulator sums lines as they stream by.
type accumulator struct {
	totals Amounts
	months map[string]Amounts
	aging  map[string]Amounts
	lines  int
}

func newAccumulator() *accumulator {
	return &accumulator{months: map[string]Amounts{}, aging: map[string]Amounts{}}
}

func (a *accumulator) add(l Line) {
	a.lines++
	a.totals.add(l)
	m := a.months[monthOf(l.Due)]
	m.add(l)
	a.months[monthOf(l.Due)] = m
	if l.Bucket != "" {
		b := a.aging[l.Bucket]
		b.add(l)
		a.aging[l.Bucket] = b
	}
}

func (a *accumulator) close(r *Reconciliation) {
	r.Totals, r.ByMonth, r.Aging = a.totals, a.months, a.aging
}

func line(c status.Charge, today time.Time) Line {
	l := Line{SourceRow: c.SourceRow, Key: c.RowKey, Payer: c.Payer, Parcel: c.Parcel, Due: c.Due, Expected: c.ValueCents,
		State: c.State, Status: c.Status, Method: c.Method, Refunded: c.RefundCents}
	l.Charge = c.Txid
	if c.ChargeID != 0 {
		l.Charge = fmt.Sprint(c.ChargeID)
	}
	due, _ := rules.ParseISODate(c.Due)
	switch c.State {
	case status.StatePaid, status.StateSettled, status.StateRefunded:
		l.Paid = c.PaidCents
		l.PaidOn = paidDay(c.PaidAt)
		if c.State != status.StateSettled && l.Paid > c.ValueCents {
			l.FineInterest = l.Paid - c.ValueCents
		}
		if l.Paid < c.ValueCents && c.State != status.StateSettled {
			l.Discount = c.ValueCents - l.Paid
		}
		if p, err := rules.ParseISODate(l.PaidOn); err == nil && !due.IsZero() && p.After(due) {
			l.DaysLate = int(p.Sub(due).Hours() / 24)
		}
	case status.StateCancelled:
	default:
		l.Open = c.ValueCents
		if !due.IsZero() && due.Before(today) {
			l.State = "overdue"
			l.DaysLate = int(today.Sub(due).Hours() / 24)
		}
		l.Bucket = bucket(l.DaysLate, l.State)
	}
	return l
}

// paidDay is the São Paulo date of a payment time (RFC 3339) or date.
func paidDay(s string) string {
	if t, err := time.Parse(time.RFC3339Nano, s); err == nil {
		return rules.FormatISODate(rules.Today(t))
	}
	if len(s) >= 10 {
		return s[:10]
	}
	return s
}

func bucket(days int, state string) string {
	switch {
	case state != "overdue":
		return BucketNotDue
	case days <= 30:
		return Bucket30
	case days <= 60:
		return Bucket60
	case days <= 90:
		return Bucket90
	}
	return BucketOver90
}

// add counts a line into a group.
func (a *Amounts) add(l Line) {
	a.Charges++
	a.Expected += l.Expected
	a.FineInterest += l.FineInterest
	a.Discount += l.Discount
	switch l.State {
	case status.StatePaid, status.StateSettled:
		a.Received += l.Paid - l.Refunded
		a.Refunded += l.Refunded
	case status.StateRefunded:
		a.Received += l.Paid - l.Refunded
		a.Refunded += l.Refunded
	case status.StateCancelled:
		a.Cancelled += l.Expected
	case "overdue":
		a.Overdue += l.Open
	default:
		a.Open += l.Open
	}
}

func tally(lines []Line) (Amounts, map[string]Amounts, map[string]Amounts) {
	var tot Amounts
	months, aging := map[string]Amounts{}, map[string]Amounts{}
	for _, l := range lines {
		tot.add(l)
		m := months[monthOf(l.Due)]
		m.add(l)
		months[monthOf(l.Due)] = m
		if l.Bucket != "" {
			a := aging[l.Bucket]
			a.add(l)
			aging[l.Bucket] = a
		}
	}
	return tot, months, aging
}

func monthOf(date string) string {
	if len(date) >= 7 {
		return date[:7]
	}
	return date
}

// Check tallies the totals again from the lines, and checks the months
// and the aging add up to them: expected = received + open + overdue +
// cancelled + refunded − fine and interest + discount, for every group.
func (r *Reconciliation) Check() Check {
	var probs []string
	lines, months, aging := tally(r.Lines)
	if r.Lines == nil {
		// streamed: the lines were summed once as they were written; the
		// months, the aging and the identity below check those sums
		lines, months, aging = r.Totals, r.ByMonth, r.Aging
	}
	if lines != r.Totals {
		probs = append(probs, fmt.Sprintf("os totais (%s recebidos) não são a soma das linhas (%s)", rules.FormatBRL(r.Totals.Received), rules.FormatBRL(lines.Received)))
	}
	if r.Lines == nil && r.streamedLines != r.Totals.Charges {
		probs = append(probs, fmt.Sprintf("%d linhas escritas, %d cobranças nos totais", r.streamedLines, r.Totals.Charges))
	}
	var sum Amounts
	for _, m := range r.ByMonth {
		sum.plus(m)
	}
	if sum != r.Totals {
		probs = append(probs, fmt.Sprintf("a soma dos meses (%s recebidos) difere dos totais (%s)", rules.FormatBRL(sum.Received), rules.FormatBRL(r.Totals.Received)))
	}
	var unpaid Amounts
	for _, a := range r.Aging {
		unpaid.plus(a)
	}
	if unpaid.Open != r.Totals.Open || unpaid.Overdue != r.Totals.Overdue {
		probs = append(probs, fmt.Sprintf("as faixas de atraso (%s em aberto) diferem dos totais (%s)", rules.FormatBRL(unpaid.Open+unpaid.Overdue), rules.FormatBRL(r.Totals.Open+r.Totals.Overdue)))
	}
	groups := map[string]Amounts{"totais": r.Totals}
	for m, a := range r.ByMonth {
		groups["mês "+m] = a
	}
	for _, name := range sortedKeys(groups) {
		a := groups[name]
		if a.Expected != a.Received+a.Refunded+a.Open+a.Overdue+a.Cancelled-a.FineInterest+a.Discount {
			probs = append(probs, fmt.Sprintf("%s: o emitido (%s) não fecha com recebido + devolvido + a vencer + vencido + cancelado − multa e juros + desconto", name, rules.FormatBRL(a.Expected)))
		}
	}
	if len(months) != len(r.ByMonth) || len(aging) != len(r.Aging) {
		probs = append(probs, "os meses ou as faixas de atraso não são os das linhas")
	}
	return Check{OK: len(probs) == 0, Problems: probs}
}

func (a *Amounts) plus(b Amounts) {
	a.Charges += b.Charges
	a.Expected += b.Expected
	a.Received += b.Received
	a.Open += b.Open
	a.Overdue += b.Overdue
	a.Cancelled += b.Cancelled
	a.Refunded += b.Refunded
	a.FineInterest += b.FineInterest
	a.Discount += b.Discount
}

// split sums, per recipient, the shares of the charges issued (expected)
// and of those paid (received): a paid charge's shares went to their
// recipients as issued.
func split(res *results.Results, charges []status.Charge) []Recipient {
	paid := map[string]bool{}
	for _, c := range charges {
		if c.State == status.StatePaid || c.State == status.StateSettled {
			paid[c.Key] = true
		}
	}
	sp := newSplitter(paid)
	for i := range res.Rows {
		sp.row(&res.Rows[i])
	}
	return sp.recipients()
}

// splitter sums split shares row by row.
type splitter struct {
	paid map[string]bool // ledger keys of paid or settled charges
	by   map[string]*Recipient
}

func newSplitter(paid map[string]bool) *splitter {
	return &splitter{paid: paid, by: map[string]*Recipient{}}
}

func (s *splitter) add(sh results.Share, received bool) {
	r := s.by[sh.Recipient]
	if r == nil {
		r = &Recipient{Recipient: sh.Recipient, Own: sh.Own}
		s.by[sh.Recipient] = r
	}
	r.Expected += sh.AmountCents
	if received {
		r.Received += sh.AmountCents
	}
}

func (s *splitter) row(row *results.Row) {
	if row.Outcome != results.Issued {
		return
	}
	if len(row.Parcels) > 0 {
		for _, p := range row.Parcels {
			for _, sh := range p.Split {
				s.add(sh, s.paid[status.KeyOfCharge(p.ChargeID)])
			}
		}
		return
	}
	key := status.KeyOfCobv(row.Txid)
	if len(row.ChargeIDs) > 0 {
		key = status.KeyOfCharge(row.ChargeIDs[0])
	}
	for _, sh := range row.Split {
		s.add(sh, s.paid[key])
	}
}

func (s *splitter) recipients() []Recipient {
	out := make([]Recipient, 0, len(s.by))
	for _, r := range s.by {
		out = append(out, *r)
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].Own != out[j].Own {
			return out[i].Own
		}
		return out[i].Recipient < out[j].Recipient
	})
	return out
}

func sortedKeys[V any](m map[string]V) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// FromRun reconciles the run in dir as of today from its results and its
// status ledger (run `remessa status` first to bring the ledger up to date).
func FromRun(ctx context.Context, dir string, today time.Time) (*Reconciliation, error) {
	res, err := results.Load(filepath.Join(dir, "results.json"))
	if err != nil {
		return nil, err
	}
	l, err := status.OpenLedger(dir)
	if err != nil {
		return nil, err
	}
	defer l.Close()
	cs, err := l.Charges(ctx)
	if err != nil {
		return nil, err
	}
	return Build(res, cs, l.Meta(ctx, "last_sync"), today), nil
}
