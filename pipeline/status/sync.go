package status

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"
	"time"

	"remessa/api"
	"remessa/pipeline/results"
	"remessa/pipeline/run"
	"remessa/rules"
)

// Options tune a sync.
type Options struct {
	// Run carries how the service is reached, as `remessa resume` takes it:
	// BaseURL/PixBaseURL (a `remessa sandbox` serving the run's data),
	// Embedded (a running embedded sandbox), Getenv and Timeout.
	Run run.Options
	// Now is this machine's clock (default time.Now): the fallback only,
	// when no answer of the service carried a Date. Everything that
	// reasons about the service's charges takes the service's own time
	// (api.ServiceClock).
	Now func() time.Time
	// Full lists everything again instead of only what may have changed
	// since the last sync.
	Full bool
	// PageSize is how many items a list call asks for (0: the most the
	// APIs give, 1,000). A test lists several pages of a small run with a
	// small one.
	PageSize int
}

func (o Options) pageSize() int {
	if o.PageSize > 0 {
		return o.PageSize
	}
	return listing
}

func (o Options) now() time.Time {
	if o.Now != nil {
		return o.Now()
	}
	return time.Now()
}

// Tally is a count of charges and their amount.
type Tally struct {
	Count int   `json:"count"`
	Cents int64 `json:"amount_cents"`
}

// Summary is how a run's charges stand after a sync.
type Summary struct {
	RunID    string       `json:"run_id"`
	Kind     results.Kind `json:"kind"`
	SyncedAt string       `json:"synced_at"` // the service's time of this sync (RFC 3339, UTC)
	// LocalAt is this machine's time at that moment, Clock where SyncedAt
	// came from (ClockService: the Date of the service's answers;
	// ClockLocal: none carried one) and SkewSeconds how far the service's
	// clock is ahead of this machine's (negative: behind).
	LocalAt     string `json:"local_at"`
	Clock       string `json:"clock"`
	SkewSeconds int64  `json:"skew_seconds"`
	Calls       int    `json:"calls"`   // requests this sync made
	Changed     int    `json:"changed"` // charges whose state changed
	Charges     int    `json:"charges"`
	Issued      Tally  `json:"issued"`   // every charge, at its value
	Received    Tally  `json:"received"` // paid or settled, at what came in (less refunds)
	Open        Tally  `json:"open"`     // not paid, due date today or later
	Overdue     Tally  `json:"overdue"`  // not paid, due date past
	Settled     Tally  `json:"settled"`  // of Received: paid outside the bank
	Cancel      Tally  `json:"cancelled"`
	Refunded    Tally  `json:"refunded"`
	// Rebate counts the cobv whose abatimento was changed after issuance
	// (an abatimento action, a remessa's 04/05), at their abatimento now
	// (0 when removed).
	Rebate Tally `json:"rebate_changed"`
}

// Summarize counts charges as of today (São Paulo).
func Summarize(cs []Charge, today time.Time) Summary {
	var s Summary
	day := rules.FormatISODate(today)
	for _, c := range cs {
		if c.RebateSet {
			s.Rebate.add(c.RebateCents)
		}
		s.count(chargeGroup{State: c.State, Status: c.Status, Past: c.Due < day, N: 1, Value: c.ValueCents, Paid: c.PaidCents, Refund: c.RefundCents})
	}
	return s
}

// chargeGroup is N charges alike for a Summary (their state, the
// service's word, and whether their due date is past) and their sums.
type chargeGroup struct {
	State, Status       string
	Past                bool
	N                   int
	Value, Paid, Refund int64
}

// count adds a group of charges to the summary's tallies (all but Rebate).
func (s *Summary) count(g chargeGroup) {
	s.Charges += g.N
	s.Issued.addN(g.N, g.Value)
	switch g.State {
	case StatePaid, StateSettled:
		s.Received.addN(g.N, g.Paid-g.Refund)
		if g.State == StateSettled {
			s.Settled.addN(g.N, g.Paid)
		}
	case StateRefunded:
		s.Refunded.addN(g.N, g.Refund)
	case StateCancelled:
		if !ServiceSaysOverdue(g.Status) {
			s.Cancel.addN(g.N, g.Value)
			break
		}
		s.Overdue.addN(g.N, g.Value) // a payment link the service says expired: unpaid
	default:
		if g.Past || ServiceSaysOverdue(g.Status) {
			s.Overdue.addN(g.N, g.Value)
		} else {
			s.Open.addN(g.N, g.Value)
		}
	}
}

// Summarize counts the ledger's charges as of today (São Paulo), as
// Summarize counts them from Charges, with the sums made by SQLite (one
// row per group of charges alike instead of one per charge).
func (l *Ledger) Summarize(ctx context.Context, today time.Time) (Summary, error) {
	var s Summary
	rows, err := l.db.QueryContext(ctx, `SELECT state, status, due < ?, count(*), sum(value_cents), sum(paid_cents), sum(refund_cents),
		count(CASE WHEN rebate_cents >= 0 THEN 1 END), coalesce(sum(CASE WHEN rebate_cents >= 0 THEN rebate_cents END), 0)
		FROM charges GROUP BY 1, 2, 3`, rules.FormatISODate(today))
	if err != nil {
		return s, err
	}
	defer rows.Close()
	for rows.Next() {
		var g chargeGroup
		var rebates int
		var rebateCents int64
		if err := rows.Scan(&g.State, &g.Status, &g.Past, &g.N, &g.Value, &g.Paid, &g.Refund, &rebates, &rebateCents); err != nil {
			return s, err
		}
		s.count(g)
		s.Rebate.addN(rebates, rebateCents)
	}
	return s, rows.Err()
}

func (t *Tally) addN(n int, c int64) { t.Count += n; t.Cents += c }

func (t *Tally) add(c int64) { t.Count++; t.Cents += c }

// ServiceSaysOverdue reports whether the service's own word for an unpaid
// charge says it is past due (`unpaid`: a slip the day after its due date;
// `expired`: a payment link past its date). When the service's word is
// further along than the dates say (its clock ahead of the day we count
// from), the service wins: the charge is overdue.
func ServiceSaysOverdue(status string) bool { return status == "unpaid" || status == "expired" }

// listing is how many items a list call asks for (the most the APIs give).
const listing = 1000

// Sync brings every charge of the run in dir up to date from the service
// and records each change in the ledger. The first sync lists every
// charge the run created (one call per 1,000 charges); a later one asks
// only for what may have changed since the last: payments since then,
// charges that went overdue since then, cancellations and manual
// settlements (and for Pix, the Pix received since then and the refunds).
func Sync(ctx context.Context, dir string, o Options) (*Summary, error) {
	if _, err := run.ReadMeta(ctx, dir); err != nil {
		return nil, err
	}
	res, err := results.Load(filepath.Join(dir, "results.json"))
	if err != nil {
		return nil, &run.UsageError{Msg: fmt.Sprintf("a execução em %s ainda não tem results.json: termine-a com \"remessa resume %s\"", dir, dir), Err: err}
	}
	l, err := OpenLedger(dir)
	if err != nil {
		return nil, err
	}
	defer l.Close()
	svc, m, err := run.Connect(ctx, dir, o.Run)
	if err != nil {
		return nil, fmt.Errorf("situação: conectar ao serviço: %w", err)
	}
	defer svc.Close()
	clk, err := serviceClock(ctx, svc.Client, res.Run.Kind, o)
	if err != nil {
		return nil, fmt.Errorf("situação: conectar ao serviço: %w", err)
	}
	now := clk.Service
	if _, err := l.seed(ctx, res, now); err != nil {
		return nil, err
	}
	s := &syncer{l: l, cl: svc.Client, m: m, now: now, at: now, seenAt: stamp(now), skew: clk.Service.Sub(clk.Local), page: o.pageSize()}
	var last time.Time
	if prev, ok := l.LastClock(ctx); ok && !o.Full {
		last = prev.Service
	}
	if err := s.run(ctx, res.Run.Kind, last); err != nil {
		return nil, err
	}
	tx, err := l.db.BeginTx(ctx, nil)
	if err != nil {
		return nil, err
	}
	defer tx.Rollback()
	if err := l.setClock(ctx, tx, clk); err != nil {
		return nil, err
	}
	if err := tx.Commit(); err != nil {
		return nil, err
	}
	sum, err := l.Summarize(ctx, rules.Today(now))
	if err != nil {
		return nil, err
	}
	sum.RunID, sum.Kind, sum.SyncedAt, sum.Calls, sum.Changed = m.RunID, res.Run.Kind, s.seenAt, s.calls, s.changed
	sum.LocalAt, sum.Clock, sum.SkewSeconds = stamp(clk.Local), clk.Source, int64(s.skew/time.Second)
	return &sum, nil
}

// serviceClock learns the service's time from the client (a token call
// when no answer has told it yet: the first listing needs one anyway).
// This machine's clock (o.Now) stands in only when no answer carried a
// Date.
func serviceClock(ctx context.Context, cl *api.Client, kind results.Kind, o Options) (SyncClock, error) {
	which := api.V1
	if kind == results.Cobv {
		which = api.Pix
	}
	if _, err := cl.ServiceNow(ctx, which); err != nil {
		return SyncClock{}, err
	}
	r := cl.Clock().Reading()
	if !r.Known {
		now := o.now()
		return SyncClock{Service: now, Local: now, Source: ClockLocal}, nil
	}
	return SyncClock{Service: cl.Clock().Now(), Local: cl.Clock().Local(), Source: ClockService}, nil
}

// Today is the service's day (São Paulo) of the sync: the day a
// reconciliation written right after it counts ages from.
func (s *Summary) Today() time.Time {
	t, err := time.Parse(time.RFC3339Nano, s.SyncedAt)
	if err != nil {
		return rules.Today(time.Now())
	}
	return rules.Today(t)
}

// ClockReading is the sync's clocks as an api.ClockReading (for
// ClockNote).
func (s *Summary) ClockReading() api.ClockReading { return s.SyncClock().Reading() }

// SyncClock is the sync's clocks: the service's time then, this
// machine's, and where the first came from.
func (s *Summary) SyncClock() SyncClock {
	svc, _ := time.Parse(time.RFC3339Nano, s.SyncedAt)
	local, _ := time.Parse(time.RFC3339Nano, s.LocalAt)
	return SyncClock{Service: svc, Local: local, Source: s.Clock}
}

type syncer struct {
	l       *Ledger
	cl      *api.Client
	m       run.Meta
	now     time.Time
	seenAt  string
	at      time.Time
	skew    time.Duration // the service's clock ahead of this machine's
	calls   int
	changed int
	page    int // items a list call asks for
}

// lookback widens an incremental sync's windows backwards from the last
// sync: a day for time zones and clocks, and the days a bank takes to
// report a slip paid on a weekend or a holiday (the service dates the
// payment on the day it was made, which may be before the last sync).
const lookback = 5 * 24 * time.Hour

// pixLookback is the same for Pix (instant: the service records a Pix
// when it is made).
const pixLookback = 5 * time.Minute

// run lists what changed since last (the service's time of the last
// sync; zero: everything the run created). Every window is in the
// service's time: the run's start (this machine's clock when it began)
// moved by the clocks' difference when the service is behind, and the
// service's now.
func (s *syncer) run(ctx context.Context, kind results.Kind, last time.Time) error {
	start, _ := time.Parse(time.RFC3339, s.m.StartedAt)
	if start.IsZero() {
		start = s.now.AddDate(0, 0, -1)
	}
	if s.skew < 0 {
		start = start.Add(s.skew) // the service dated the run's charges earlier than this machine
	}
	// up to the service's now, or the last sync's time when the service's
	// clock is now behind it (an older ledger kept this machine's time,
	// or the service's clock was set back): the windows never invert, and
	// what changed since then is asked from the earlier of the two
	upTo := s.now
	if last.After(upTo) {
		upTo, last = last, s.now
	}
	if start.After(upTo) {
		start = upTo
	}
	// creation window: the run's days, widened by a day on each side for
	// clocks and time zones
	from, to := rules.Today(start).AddDate(0, 0, -1), rules.Today(upTo).AddDate(0, 0, 1)
	switch kind {
	case results.Cobv:
		return s.pix(ctx, start.Add(-24*time.Hour), upTo.Add(24*time.Hour), last)
	default:
		ct := "billet"
		if kind == results.Carnets {
			ct = "carnet"
		}
		return s.charges(ctx, ct, from, to, last)
	}
}

func (s *syncer) charges(ctx context.Context, chargeType string, from, to, last time.Time) error {
	day := rules.FormatISODate
	if last.IsZero() {
		return s.listCharges(ctx, api.ChargeListQuery{ChargeType: chargeType, BeginDate: day(from), EndDate: day(to)}, "listagem")
	}
	since := rules.Today(last.Add(-lookback))
	if since.Before(from) {
		since = from
	}
	for _, q := range []api.ChargeListQuery{
		{ChargeType: chargeType, DateOf: "payment", BeginDate: day(since), EndDate: day(to)},
		{ChargeType: chargeType, DateOf: "expired", BeginDate: day(since), EndDate: day(to)},
		{ChargeType: chargeType, Status: "canceled", BeginDate: day(from), EndDate: day(to)},
		{ChargeType: chargeType, Status: "settled", BeginDate: day(from), EndDate: day(to)},
		{ChargeType: chargeType, Status: "refunded", BeginDate: day(from), EndDate: day(to)},
	} {
		if err := s.listCharges(ctx, q, "listagem"); err != nil {
			return err
		}
	}
	return nil
}

func (s *syncer) listCharges(ctx context.Context, q api.ChargeListQuery, source string) error {
	q.Limit = s.page
	for page := 1; ; page++ {
		q.Page = page
		list, err := s.cl.ListCharges(ctx, q)
		s.calls++
		if err != nil {
			return fmt.Errorf("situação: GET /v1/charges: %w", err)
		}
		obs := make([]Observation, 0, len(list.Data))
		for i := range list.Data {
			obs = append(obs, chargeObservation(&list.Data[i]))
		}
		if err := s.apply(ctx, obs, source); err != nil {
			return err
		}
		total := list.Params.Pagination.Total
		if len(list.Data) < s.page || (total > 0 && page*s.page >= total) {
			return nil
		}
	}
}

// chargeObservation reads a charge of the listing.
func chargeObservation(c *api.ChargeSummary) Observation {
	o := Observation{Key: chargeKey(c.ID), Status: c.Status, State: chargeState(c.Status)}
	if p := c.Payment; p != nil && (o.State == StatePaid || o.State == StateRefunded) {
		o.PaidCents, o.PaidAt = p.PaidValue, p.PaidAt
		if o.PaidCents == 0 {
			o.PaidCents = c.Total
		}
		switch {
		case strings.Contains(p.PaymentMethod, "card"):
			o.Method = MethodCard
		case strings.Contains(p.PaymentMethod, "pix"):
			o.Method = MethodPix
		default:
			o.Method = MethodBoleto
		}
	}
	switch o.State {
	case StateSettled:
		o.Method, o.PaidCents = MethodManual, c.Total
		if c.Payment != nil && c.Payment.PaidAt != "" {
			o.PaidAt = c.Payment.PaidAt
		}
	case StateRefunded:
		o.RefundCents = o.PaidCents
	}
	return o
}

// chargeState maps the charges API's statuses.
func chargeState(status string) string {
	switch status {
	case "paid", "contested":
		return StatePaid
	case "settled":
		return StateSettled
	case "canceled", "expired":
		return StateCancelled
	case "refunded":
		return StateRefunded
	}
	return StateOpen // new, waiting, unpaid, link, identified, approved
}

func (s *syncer) pix(ctx context.Context, from, to, last time.Time) error {
	if last.IsZero() {
		return s.listCobv(ctx, api.ListCobVParams{ListCobParams: api.ListCobParams{ListParams: api.ListParams{Inicio: from, Fim: to}}})
	}
	// Pix received since the last sync, refunds over the run's whole life,
	// and the charges removed
	since := last.Add(-pixLookback)
	if since.Before(from) {
		since = from
	}
	if err := s.listPix(ctx, api.ListPixParams{ListParams: api.ListParams{Inicio: since, Fim: to}}, false); err != nil {
		return err
	}
	yes := true
	if err := s.listPix(ctx, api.ListPixParams{ListParams: api.ListParams{Inicio: from, Fim: to}, DevolucaoPresente: &yes}, true); err != nil {
		return err
	}
	return s.listCobv(ctx, api.ListCobVParams{ListCobParams: api.ListCobParams{ListParams: api.ListParams{Inicio: from, Fim: to}, Status: "REMOVIDA_PELO_USUARIO_RECEBEDOR"}})
}

func (s *syncer) listCobv(ctx context.Context, p api.ListCobVParams) error {
	p.ItensPorPagina = s.page
	for page := 0; ; page++ {
		p.PaginaAtual = page
		list, err := s.cl.ListCobV(ctx, p)
		s.calls++
		if err != nil {
			return fmt.Errorf("situação: GET /v2/cobv: %w", err)
		}
		obs := make([]Observation, 0, len(list.Cobs))
		for i := range list.Cobs {
			obs = append(obs, cobvObservation(&list.Cobs[i]))
		}
		if err := s.apply(ctx, obs, "listagem"); err != nil {
			return err
		}
		if page+1 >= list.Parametros.Paginacao.QuantidadeDePaginas {
			return nil
		}
	}
}

// listPix applies received Pix (only those with a refund when refunds).
func (s *syncer) listPix(ctx context.Context, p api.ListPixParams, refunds bool) error {
	p.ItensPorPagina = s.page
	byTxid := map[string][]api.PixRecebido{}
	for page := 0; ; page++ {
		p.PaginaAtual = page
		list, err := s.cl.ListPix(ctx, p)
		s.calls++
		if err != nil {
			return fmt.Errorf("situação: GET /v2/pix: %w", err)
		}
		for _, px := range list.Pix {
			if px.Txid != "" && (!refunds || len(px.Devolucoes) > 0) {
				byTxid[px.Txid] = append(byTxid[px.Txid], px)
			}
		}
		if page+1 >= list.Parametros.Paginacao.QuantidadeDePaginas {
			break
		}
	}
	obs := make([]Observation, 0, len(byTxid))
	for txid, pix := range byTxid {
		obs = append(obs, pixObservation(txid, "CONCLUIDA", pix))
	}
	return s.apply(ctx, obs, "pix")
}

// cobvObservation reads a cobv of the listing.
func cobvObservation(c *api.Cob) Observation {
	return pixObservation(c.Txid, c.Status, c.Pix)
}

func pixObservation(txid, status string, pix []api.PixRecebido) Observation {
	o := Observation{Key: cobvKey(txid), Status: status, State: StateOpen}
	switch {
	case strings.HasPrefix(status, "REMOVIDA"):
		o.State = StateCancelled
	case status == "CONCLUIDA" || len(pix) > 0:
		o.State, o.Method = StatePaid, MethodPix
		for _, px := range pix {
			v, _ := rules.ParsePixAmount(px.Valor)
			o.PaidCents += v
			if o.PaidAt == "" || px.Horario < o.PaidAt {
				o.PaidAt = px.Horario
			}
			for _, d := range px.Devolucoes {
				if d.Status == "DEVOLVIDO" {
					r, _ := rules.ParsePixAmount(d.Valor)
					o.RefundCents += r
				}
			}
		}
		if o.PaidCents > 0 && o.RefundCents >= o.PaidCents {
			o.State = StateRefunded
		}
	}
	return o
}

// apply records a page of observations in one transaction.
func (s *syncer) apply(ctx context.Context, obs []Observation, source string) error {
	if len(obs) == 0 {
		return nil
	}
	n, err := s.l.Apply(ctx, obs, s.at, source)
	s.changed += n
	return err
}

// Estimate says, before a sync, how many calls it will make at least
// (each listing answers up to 1,000 charges, so a listing of many
// payments takes more pages) and whether it is the first.
func Estimate(ctx context.Context, dir string, full bool) (calls int, first bool, err error) {
	res, err := results.Load(filepath.Join(dir, "results.json"))
	if err != nil {
		return 0, false, &run.UsageError{Msg: fmt.Sprintf("a execução em %s ainda não tem results.json", dir), Err: err}
	}
	charges := 0
	for i := range res.Rows {
		r := &res.Rows[i]
		if r.Outcome != results.Issued {
			continue
		}
		if len(r.Parcels) > 0 {
			charges += len(r.Parcels)
		} else {
			charges++
		}
	}
	first = full
	if !first {
		l, err := OpenLedger(dir)
		if err != nil {
			return 0, false, err
		}
		_, synced := l.LastClock(ctx)
		first = !synced
		l.Close()
	}
	switch {
	case first:
		return max(1, (charges+listing-1)/listing), true, nil
	case res.Run.Kind == results.Cobv:
		return 3, false, nil
	}
	return 5, false, nil
}
