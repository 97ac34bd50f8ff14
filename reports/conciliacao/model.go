// Package conciliacao is the reconciliation of a run after it issued its
// charges: what was asked, what came in, what is open, overdue, cancelled
// or refunded, per charge and in totals by due month, by age of the debt
// and by split recipient, tallied from the rows and checked to the cent.
// It reads the status ledger (pipeline/status) and the run's results, and
// writes conciliacao.xlsx, .csv, .html and .json.
package conciliacao

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"sort"
	"strconv"
	"time"

	"remessa/pipeline/results"
	"remessa/pipeline/status"
	"remessa/rules"
)

// Line is one charge (a parcel, a slip, a cobv) as the reconciliation
// sees it. A paid line compares what came in with what the charge owed on
// the paid day by its own terms (Owed = Expected − Discount +
// FineInterest): Paid = Owed − Short + Over.
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
	DaysLate     int    `json:"days_late,omitempty"`                 // paid after the due date, or overdue for
	Owed         int64  `json:"owed_cents,omitempty"`                // paid lines: what the terms asked on the paid day
	Discount     int64  `json:"discount_cents"`                      // discount (and abatimento) granted by the terms
	Abatimento   int64  `json:"abatimento_cents,omitempty"`          // of Discount: a cobv's abatimento
	FineInterest int64  `json:"fine_interest_cents"`                 // fine and interest charged by the terms
	Short        int64  `json:"short_cents"`                         // paid below what was owed: still to receive
	Over         int64  `json:"over_cents"`                          // paid above what was owed
	Refunded     int64  `json:"refunded_cents"`                      // given back
	Open         int64  `json:"open_cents"`                          // still to receive (open or overdue)
	Bucket       string `json:"aging_bucket,omitempty"`              // for unpaid lines
	ShortBucket  string `json:"short_bucket,omitempty"`              // for lines paid short: the age of what is missing
	FineToday    int64  `json:"fine_interest_today_cents,omitempty"` // overdue lines: fine and interest the terms ask today
	NoTerms      bool   `json:"no_terms,omitempty"`                  // the run's request (its terms) was not found
	row          int
	terms        *Terms
}

// Amounts are one group's totals, in cents (counts of charges). Always
// Expected = Received + Refunded + Open + Overdue + Cancelled −
// FineInterest + Discount + Short − Over.
type Amounts struct {
	Charges      int   `json:"charges"`
	Expected     int64 `json:"expected_cents"`
	Received     int64 `json:"received_cents"` // paid + settled − refunded
	Open         int64 `json:"open_cents"`     // not yet due
	Overdue      int64 `json:"overdue_cents"`
	Cancelled    int64 `json:"cancelled_cents"`
	Refunded     int64 `json:"refunded_cents"`
	FineInterest int64 `json:"fine_interest_cents"` // by the terms
	Discount     int64 `json:"discount_cents"`      // by the terms
	Short        int64 `json:"short_cents"`         // paid short ("pago a menor")
	Over         int64 `json:"over_cents"`          // paid over ("pago a maior")
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
	RunID      string             `json:"run_id"`
	JobName    string             `json:"job_name"`
	Kind       results.Kind       `json:"kind"`
	Service    string             `json:"service"`
	AsOf       string             `json:"as_of"`     // the day the ages are counted from (YYYY-MM-DD)
	SyncedAt   string             `json:"synced_at"` // the ledger's last sync
	Lines      []Line             `json:"lines"`
	Totals     Amounts            `json:"totals"`
	ByMonth    map[string]Amounts `json:"by_due_month"`
	Aging      map[string]Amounts `json:"aging"`       // unpaid lines by bucket
	ShortAging map[string]int64   `json:"short_aging"` // what was paid short, by the age of its due date
	WhoOwes    []Debtor           `json:"who_owes"`
	Split      []Recipient        `json:"split,omitempty"`
	Notes      []string           `json:"notes,omitempty"`
	Reconcile  Check              `json:"check"`

	streamedLines int      // lines written by WriteRun
	streamedDiffs []string // lines whose classification the streamed check recomputed differently
	streamedDiffN int
}

// Check says whether the totals close with the lines, the months and the
// aging, to the cent, and whether every paid line's classification is
// what its terms and paid date give.
type Check struct {
	OK       bool     `json:"ok"`
	Problems []string `json:"problems,omitempty"`
}

// Build reconciles the ledger's charges of a run as of today, in memory
// (the lines kept in the result), with each row's terms (by row index;
// rows without terms are classified against their face value and noted).
// FromRun reads the terms from the run's journal; WriteRun does the same
// for a run of any size without holding its lines.
func Build(res *results.Results, charges []status.Charge, terms map[int]*Terms, syncedAt string, today time.Time) *Reconciliation {
	r := newReconciliation(&res.Run, syncedAt, today)
	a := newAccumulator(today)
	for i := range charges {
		l := line(&charges[i], terms[charges[i].RowIndex], today)
		a.add(&l)
		r.Lines = append(r.Lines, l)
	}
	a.close(r)
	r.Split = split(res, charges)
	r.Reconcile = r.Check()
	return r
}

func newReconciliation(run *results.RunInfo, syncedAt string, today time.Time) *Reconciliation {
	return &Reconciliation{RunID: run.ID, JobName: run.JobName, Kind: run.Kind, Service: run.Service,
		AsOf: rules.FormatISODate(today), SyncedAt: syncedAt, ByMonth: map[string]Amounts{}, Aging: map[string]Amounts{},
		ShortAging: map[string]int64{}}
}

// accumulator sums lines as they stream by, checks each paid line's
// classification again, and gathers who owes.
type accumulator struct {
	today   time.Time
	totals  Amounts
	months  map[string]Amounts
	aging   map[string]Amounts
	short   map[string]int64
	lines   int
	noTerms int
	diffs   []string
	diffN   int
	owes    debtors
}

func newAccumulator(today time.Time) *accumulator {
	return &accumulator{today: today, months: map[string]Amounts{}, aging: map[string]Amounts{}, short: map[string]int64{}}
}

// maxDiffs is how many differing lines a check names.
const maxDiffs = 20

func (a *accumulator) add(l *Line) {
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
	if l.ShortBucket != "" {
		a.short[l.ShortBucket] += l.Short
	}
	if l.NoTerms {
		a.noTerms++
	}
	if d := verify(l, l.terms); d != "" {
		a.diffN++
		if len(a.diffs) < maxDiffs {
			a.diffs = append(a.diffs, d)
		}
	}
	a.owes.add(l)
}

func (a *accumulator) close(r *Reconciliation) {
	r.Totals, r.ByMonth, r.Aging, r.ShortAging = a.totals, a.months, a.aging, a.short
	r.streamedDiffs, r.streamedDiffN = a.diffs, a.diffN
	r.WhoOwes = a.owes.close()
	if a.noTerms > 0 {
		r.Notes = append(r.Notes, fmt.Sprintf("%d cobranças sem as condições da emissão (o journal.db da execução não as tem): a diferença entre o pago e o emitido aparece como pago a menor ou a maior", a.noTerms))
	}
}

// line classifies one charge of the ledger with its row's terms (nil when
// unknown) as of today.
func line(c *status.Charge, t *Terms, today time.Time) Line {
	t = WithRebate(c, t)
	l := Line{SourceRow: c.SourceRow, Key: c.RowKey, Payer: c.Payer, Parcel: c.Parcel, Due: c.Due, Expected: c.ValueCents,
		State: c.State, Status: c.Status, Method: c.Method, Refunded: c.RefundCents, row: c.RowIndex, terms: t}
	l.Charge = c.Txid
	if c.ChargeID != 0 {
		l.Charge = strconv.FormatInt(c.ChargeID, 10)
	}
	due, _ := rules.ParseISODate(c.Due)
	switch {
	case c.State == status.StatePaid, c.State == status.StateRefunded:
		l.Paid = c.PaidCents
		l.PaidOn = paidDay(c.PaidAt)
		paidOn, err := rules.ParseISODate(l.PaidOn)
		var disc, fi int64
		if t == nil || err != nil || due.IsZero() {
			l.NoTerms = true
		} else if disc, fi, err = t.owedOn(c.ValueCents, c.Parcel, due, paidOn); err != nil {
			l.NoTerms, disc, fi = true, 0, 0
		}
		pc := rules.ClassifyPayment(c.ValueCents, disc, fi, l.Paid)
		l.Owed, l.Discount, l.FineInterest, l.Short, l.Over = pc.Owed, pc.Discount, pc.FineInterest, pc.Short, pc.Over
		if pc.Discount > 0 && t != nil && t.Cobv {
			l.Abatimento = min(t.abatimentoOf(c.ValueCents, due, paidOn), pc.Discount)
		}
		if err == nil && !due.IsZero() && paidOn.After(due) {
			l.DaysLate = rules.DaysBetween(due, paidOn)
		}
		if l.Short > 0 {
			l.ShortBucket = BucketNotDue
			if !due.IsZero() && today.After(due) {
				l.ShortBucket = bucket(rules.DaysBetween(due, today), "overdue")
			}
		}
	case c.State == status.StateSettled:
		// paid outside the bank: at the value, no fine, interest or discount
		l.Paid = c.PaidCents
		l.PaidOn = paidDay(c.PaidAt)
		pc := rules.ClassifyPayment(c.ValueCents, 0, 0, l.Paid)
		l.Owed, l.Short, l.Over = pc.Owed, pc.Short, pc.Over
	case c.State == status.StateCancelled && !status.ServiceSaysOverdue(c.Status):
	default:
		// unpaid (a link the service says expired is unpaid too)
		l.State = status.StateOpen
		l.Open = c.ValueCents
		// overdue by the dates, or by the service's word when it is
		// further along than the dates say (its clock may be ahead of ours)
		days := 0
		if !due.IsZero() {
			days = rules.DaysBetween(due, today)
		}
		if days > 0 || status.ServiceSaysOverdue(c.Status) {
			l.State = "overdue"
			l.DaysLate = max(days, 1)
			if t != nil && !due.IsZero() {
				if _, fi, err := t.owedOn(c.ValueCents, c.Parcel, due, today); err == nil {
					l.FineToday = fi
				}
			}
		}
		l.Bucket = bucket(l.DaysLate, l.State)
	}
	return l
}

// verify recomputes a paid line's classification from its terms and paid
// date, apart from line: what the rules say was owed on the paid day, and
// so what was short or over. It returns "" when the line agrees, else what
// differs.
func verify(l *Line, t *Terms) string {
	if l.State != status.StatePaid && l.State != status.StateRefunded && l.State != status.StateSettled {
		if l.Discount != 0 || l.FineInterest != 0 || l.Short != 0 || l.Over != 0 {
			return fmt.Sprintf("%s: não paga, mas com desconto, multa e juros ou diferença de pagamento", lineName(l))
		}
		return ""
	}
	owed, disc, fi := l.Expected, int64(0), int64(0)
	due, errD := rules.ParseISODate(l.Due)
	paidOn, errP := rules.ParseISODate(l.PaidOn)
	if l.State != status.StateSettled && t != nil && errD == nil && errP == nil {
		if t.Cobv {
			c, err := rules.CobvAmountDue(l.Expected, t.Pix, due, paidOn, t.Validade)
			if err == nil || errors.Is(err, rules.ErrNotPayable) {
				owed, disc, fi = c.Final, c.Abatimento+c.Desconto, c.Multa+c.Juros
			}
		} else {
			st := t.Slip
			if t.Carnet {
				st.ConditionalDiscount = parcelDiscount(t.Slip.ConditionalDiscount, l.Parcel)
			}
			c, err := rules.SlipAmountDue(l.Expected, st, due, paidOn)
			if err == nil || errors.Is(err, rules.ErrNotPayable) {
				owed, disc, fi = c.Total, c.Discount, c.Fine+c.Interest
			}
		}
	}
	if l.Paid < owed && disc > 0 { // short inside the window: the discount was not earned
		owed, disc = owed+disc, 0
	}
	short, over := max(owed-l.Paid, 0), max(l.Paid-owed, 0)
	if l.Discount == disc && l.FineInterest == fi && l.Short == short && l.Over == over && l.Owed == owed {
		return ""
	}
	brl := rules.FormatBRL
	return fmt.Sprintf("%s: paga %s em %s; a linha diz desconto %s, multa e juros %s, pago a menor %s, a maior %s; pelas condições da cobrança: desconto %s, multa e juros %s, pago a menor %s, a maior %s",
		lineName(l), brl(l.Paid), rules.FormatDate("pt", l.PaidOn), brl(l.Discount), brl(l.FineInterest), brl(l.Short), brl(l.Over), brl(disc), brl(fi), brl(short), brl(over))
}

// lineName names a line for people: "linha 5 (2027-001), parcela 2".
func lineName(l *Line) string {
	s := fmt.Sprintf("linha %d (%s)", l.SourceRow, l.Key)
	if l.Parcel > 0 {
		s += fmt.Sprintf(", parcela %d", l.Parcel)
	}
	return s
}

// WithRebate is t with the cobv's abatimento as changed after issuance
// (an abatimento action, a remessa's 04/05: status.Charge.RebateSet), a
// fixed value, or none when it was removed; t itself otherwise.
func WithRebate(c *status.Charge, t *Terms) *Terms {
	if !c.RebateSet || t == nil || !t.Cobv {
		return t
	}
	n := *t
	n.Pix.Abatimento = nil
	if c.RebateCents > 0 {
		n.Pix.Abatimento = &rules.CobvRule{Modalidade: 1, ValorPerc: c.RebateCents}
	}
	return &n
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
func (a *Amounts) add(l *Line) {
	a.Charges++
	a.Expected += l.Expected
	a.FineInterest += l.FineInterest
	a.Discount += l.Discount
	a.Short += l.Short
	a.Over += l.Over
	switch l.State {
	case status.StatePaid, status.StateSettled, status.StateRefunded:
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
	for i := range lines {
		l := &lines[i]
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

// Check tallies the totals again from the lines, checks the months, the
// aging and who owes add up to them, that for every group expected =
// received + refunded + not yet due + overdue + cancelled − fine and
// interest + discount + paid short − paid over, and recomputes each paid
// line's classification from its terms and paid date (for a streamed
// reconciliation, as each line was written), naming the lines that
// differ.
func (r *Reconciliation) Check() Check {
	var probs []string
	lines, months, aging := tally(r.Lines)
	diffs, diffN := r.streamedDiffs, r.streamedDiffN
	if r.Lines == nil {
		// streamed: the lines were summed once as they were written; the
		// months, the aging and the identity below check those sums
		lines, months, aging = r.Totals, r.ByMonth, r.Aging
	} else {
		diffs, diffN = nil, 0
		for i := range r.Lines {
			if d := verify(&r.Lines[i], r.Lines[i].terms); d != "" {
				diffN++
				if len(diffs) < maxDiffs {
					diffs = append(diffs, d)
				}
			}
		}
	}
	if diffN > 0 {
		probs = append(probs, fmt.Sprintf("%d cobrança(s) pagas classificadas diferente do que as condições da cobrança dão na data do pagamento", diffN))
		probs = append(probs, diffs...)
		if diffN > len(diffs) {
			probs = append(probs, fmt.Sprintf("e mais %d", diffN-len(diffs)))
		}
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
	var short int64
	for _, c := range r.ShortAging {
		short += c
	}
	if short != r.Totals.Short {
		probs = append(probs, fmt.Sprintf("as faixas do pago a menor (%s) diferem do total pago a menor (%s)", rules.FormatBRL(short), rules.FormatBRL(r.Totals.Short)))
	}
	var owesFace, owesShort int64
	for _, d := range r.WhoOwes {
		owesFace += d.Face
		owesShort += d.Short
	}
	if owesFace != r.Totals.Overdue || owesShort != r.Totals.Short {
		probs = append(probs, fmt.Sprintf("quem deve (%s vencidos, %s pagos a menor) difere dos totais (%s, %s)", rules.FormatBRL(owesFace), rules.FormatBRL(owesShort), rules.FormatBRL(r.Totals.Overdue), rules.FormatBRL(r.Totals.Short)))
	}
	groups := map[string]Amounts{"totais": r.Totals}
	for m, a := range r.ByMonth {
		groups["mês "+rules.FormatMonth("pt", m)] = a
	}
	for _, name := range sortedKeys(groups) {
		a := groups[name]
		if a.Expected != a.Received+a.Refunded+a.Open+a.Overdue+a.Cancelled-a.FineInterest+a.Discount+a.Short-a.Over {
			probs = append(probs, fmt.Sprintf("%s: o emitido (%s) não fecha com recebido + devolvido + a vencer + vencido + cancelado − multa e juros + desconto + pago a menor − pago a maior", name, rules.FormatBRL(a.Expected)))
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
	a.Short += b.Short
	a.Over += b.Over
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

// FromRun reconciles the run in dir as of today from its results, its
// status ledger (run `remessa status` first to bring the ledger up to
// date) and the terms its journal kept, in memory.
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
	tr, err := openTerms(ctx, dir)
	if err != nil {
		return nil, err
	}
	defer tr.close()
	terms := map[int]*Terms{}
	for i := range cs {
		t, err := tr.of(cs[i].RowIndex)
		if err != nil {
			return nil, err
		}
		terms[cs[i].RowIndex] = t
	}
	return Build(res, cs, terms, l.Meta(ctx, "last_sync"), today), nil
}
