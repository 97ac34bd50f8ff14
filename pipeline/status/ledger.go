// Package status follows a run's charges after it issued them: `remessa
// status RUN_DIR` brings every charge up to date from the service, with as
// few calls as the service's listings allow, and keeps what it saw in a
// ledger beside the run's journal (situacao.db): the current state of each
// charge and one event per observed change, with when it was seen, the
// paid value and date, and how it was paid. The reconciliation reports
// read the ledger.
package status

import (
	"context"
	"database/sql"
	"fmt"
	"path/filepath"
	"strings"
	"time"

	_ "modernc.org/sqlite" // the pure-Go SQLite driver

	"remessa/api"
	"remessa/pipeline/results"

	"remessa/internal/migrate"
	"remessa/internal/sqlitedb"
)

// FileName is the ledger's file in a run folder.
const FileName = "situacao.db"

// States of a charge in the ledger, the same for both APIs.
const (
	StateOpen      = "open"      // waiting for payment (overdue is open with a past due date)
	StatePaid      = "paid"      // paid through the bank (slip, Pix, card)
	StateSettled   = "settled"   // paid outside the bank, marked by hand
	StateCancelled = "cancelled" // cancelled or removed before payment
	StateRefunded  = "refunded"  // paid, then given back in full
)

// Methods of payment.
const (
	MethodBoleto = "boleto"
	MethodPix    = "pix"
	MethodCard   = "card"
	MethodManual = "manual"
)

// Charge is one charge of a run as the ledger knows it: a carnet parcel,
// a slip or a cobv.
type Charge struct {
	Key         string // "charge:<id>" or "cobv:<txid>"
	RowIndex    int    // the input row (0-based data row)
	SourceRow   int    // the row as the sheet shows it
	RowKey      string // the row's key column
	Payer       string
	Parcel      int // carnets: 1-based parcel; 0 otherwise
	CarnetID    int64
	ChargeID    int64
	Txid        string
	Due         string // YYYY-MM-DD
	ValueCents  int64  // what was asked
	Status      string // the service's own word (waiting, paid, ATIVA, CONCLUIDA, …)
	State       string // StateOpen, …
	PaidCents   int64  // what came in (0 when not paid)
	PaidAt      string // RFC 3339 or YYYY-MM-DD as the service gave it
	Method      string
	RefundCents int64 // given back (Pix devoluções, card refunds)
	UpdatedAt   string
	// RebateSet says the cobv's abatimento was changed after issuance (an
	// abatimento action, a remessa's 04/05): RebateCents is then the
	// abatimento now, a fixed value (0: none). Unset, the abatimento is
	// the one the charge was issued with (its terms in the run's journal).
	RebateSet   bool
	RebateCents int64
}

// LedgerSchema is situacao.db's tables, step by step (internal/migrate);
// step 1 is what the binary of 8e335f2 made, frozen.
var LedgerSchema = migrate.Schema{Name: FileName, Table: "situacao_schema_version", Dialect: migrate.SQLite, Steps: []migrate.Step{
	{Name: "cobranças, eventos e meta (8e335f2)", SQL: strings.Join(ledgerV1, ";\n")},
	{Name: "abatimento de cada cobv alterado depois de emitida, e nos eventos", SQL: strings.Join(ledgerV2, ";\n")},
}}

// ledgerV2 is step 2: a cobv's abatimento changed after issuance.
// charges.rebate_cents is the abatimento now (NULL: as issued); an event
// of a change has rebate_cents (the new one, 0 removed) and rebate_before
// (the one it replaced, NULL when unknown); other events have both NULL.
var ledgerV2 = []string{
	`ALTER TABLE charges ADD COLUMN rebate_cents INTEGER`,
	`ALTER TABLE events ADD COLUMN rebate_cents INTEGER`,
	`ALTER TABLE events ADD COLUMN rebate_before INTEGER`,
}

var ledgerV1 = []string{
	`CREATE TABLE IF NOT EXISTS charges (
		key TEXT PRIMARY KEY,
		row_index INTEGER NOT NULL,
		source_row INTEGER NOT NULL,
		row_key TEXT NOT NULL,
		payer TEXT NOT NULL,
		parcel INTEGER NOT NULL DEFAULT 0,
		carnet_id INTEGER NOT NULL DEFAULT 0,
		charge_id INTEGER NOT NULL DEFAULT 0,
		txid TEXT NOT NULL DEFAULT '',
		due TEXT NOT NULL,
		value_cents INTEGER NOT NULL,
		status TEXT NOT NULL,
		state TEXT NOT NULL,
		paid_cents INTEGER NOT NULL DEFAULT 0,
		paid_at TEXT NOT NULL DEFAULT '',
		method TEXT NOT NULL DEFAULT '',
		refund_cents INTEGER NOT NULL DEFAULT 0,
		updated_at TEXT NOT NULL
	)`,
	`CREATE INDEX IF NOT EXISTS charges_order ON charges(row_index, parcel)`,
	`CREATE INDEX IF NOT EXISTS charges_charge ON charges(charge_id) WHERE charge_id <> 0`,
	`CREATE INDEX IF NOT EXISTS charges_txid ON charges(txid) WHERE txid <> ''`,
	`CREATE TABLE IF NOT EXISTS events (
		id INTEGER PRIMARY KEY,
		key TEXT NOT NULL,
		status TEXT NOT NULL,
		state TEXT NOT NULL,
		paid_cents INTEGER NOT NULL,
		paid_at TEXT NOT NULL,
		method TEXT NOT NULL,
		refund_cents INTEGER NOT NULL,
		seen_at TEXT NOT NULL,
		source TEXT NOT NULL
	)`,
	`CREATE TABLE IF NOT EXISTS meta (k TEXT PRIMARY KEY, v TEXT NOT NULL)`,
}

// Ledger is a run's situacao.db.
type Ledger struct {
	db   *sql.DB
	path string
}

// OpenLedger opens (creating) the ledger of the run in dir.
func OpenLedger(dir string) (*Ledger, error) {
	path := filepath.Join(dir, FileName)
	db, err := sqlitedb.Open(path, &LedgerSchema)
	if err != nil {
		return nil, fmt.Errorf("situação %w", err)
	}
	return &Ledger{db: db, path: path}, nil
}

// Close closes the ledger.
func (l *Ledger) Close() error { return l.db.Close() }

// Meta reads a value of the ledger's meta table ("" when absent).
func (l *Ledger) Meta(ctx context.Context, k string) string {
	var v string
	l.db.QueryRowContext(ctx, `SELECT v FROM meta WHERE k = ?`, k).Scan(&v)
	return v
}

func (l *Ledger) setMeta(ctx context.Context, tx *sql.Tx, k, v string) error {
	_, err := tx.ExecContext(ctx, `INSERT INTO meta (k, v) VALUES (?, ?) ON CONFLICT(k) DO UPDATE SET v = excluded.v`, k, v)
	return err
}

// seed adds the run's charges from its results (once; a charge already
// in the ledger keeps what was seen of it). The keys the ledger holds are
// read first, so a later sync (every charge already there) writes
// nothing.
func (l *Ledger) seed(ctx context.Context, r *results.Results, now time.Time) (int, error) {
	tx, err := l.db.BeginTx(ctx, nil)
	if err != nil {
		return 0, err
	}
	defer tx.Rollback()
	have, err := ledgerKeys(ctx, tx)
	if err != nil {
		return 0, err
	}
	var ins *sql.Stmt
	defer func() {
		if ins != nil {
			ins.Close()
		}
	}()
	n := 0
	at := now.UTC().Format(time.RFC3339)
	add := func(row *results.Row, key string, parcel int, chargeID int64, txid, due string, value int64, status string) error {
		if have[key] {
			return nil
		}
		if ins == nil {
			if ins, err = tx.PrepareContext(ctx, `INSERT INTO charges (key, row_index, source_row, row_key, payer, parcel, carnet_id, charge_id, txid, due, value_cents, status, state, updated_at)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT(key) DO NOTHING`); err != nil {
				return err
			}
		}
		res, err := ins.ExecContext(ctx, key, row.Index, row.SourceRow, row.Key, row.PayerName, parcel, row.CarnetID, chargeID, txid, due, value, status, StateOpen, at)
		if err != nil {
			return err
		}
		have[key] = true
		if k, _ := res.RowsAffected(); k > 0 {
			n++
		}
		return nil
	}
	for i := range r.Rows {
		row := &r.Rows[i]
		if row.Outcome != results.Issued {
			continue
		}
		switch {
		case len(row.Parcels) > 0:
			for _, p := range row.Parcels {
				if err := add(row, chargeKey(p.ChargeID), p.Number, p.ChargeID, "", p.DueDate, p.ValueCents, firstOf(p.Status, "waiting")); err != nil {
					return 0, err
				}
			}
		case row.Txid != "":
			if err := add(row, cobvKey(row.Txid), 0, 0, row.Txid, row.DueDate, row.AmountCents, "ATIVA"); err != nil {
				return 0, err
			}
		case len(row.ChargeIDs) > 0:
			if err := add(row, chargeKey(row.ChargeIDs[0]), 0, row.ChargeIDs[0], "", row.DueDate, row.AmountCents, "waiting"); err != nil {
				return 0, err
			}
		}
	}
	return n, tx.Commit()
}

// ledgerKeys is the set of the ledger's charge keys.
func ledgerKeys(ctx context.Context, tx *sql.Tx) (map[string]bool, error) {
	rows, err := tx.QueryContext(ctx, `SELECT key FROM charges`)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	have := map[string]bool{}
	for rows.Next() {
		var k string
		if err := rows.Scan(&k); err != nil {
			return nil, err
		}
		have[k] = true
	}
	return have, rows.Err()
}

func chargeKey(id int64) string  { return fmt.Sprintf("charge:%d", id) }
func cobvKey(txid string) string { return "cobv:" + txid }

func firstOf(a, b string) string {
	if a != "" {
		return a
	}
	return b
}

// Observation is what the service said of one charge.
type Observation struct {
	Key         string
	Status      string
	State       string
	PaidCents   int64
	PaidAt      string
	Method      string
	RefundCents int64
	// Due, with State empty, is a new due date and nothing else (a
	// change_due_date action): the charge keeps its state and an event
	// records the change.
	Due string
	// Rebate, with State empty, is a cobv's new abatimento and nothing
	// else (an abatimento action): the charge keeps its state and an event
	// records the change.
	Rebate *Rebate `json:",omitempty"`
}

// Rebate is a change of a cobv's abatimento: Cents the new one, a fixed
// value (0: removed), Before the one it replaced (-1 when unknown).
type Rebate struct {
	Before, Cents int64
}

// RebateEvent is one recorded change of a cobv's abatimento.
type RebateEvent struct {
	ID     int64
	Key    string
	Rebate Rebate
	SeenAt string
}

// applier records observations in one transaction: the current state of
// the charges they name is read with one query per batch of keys (a
// listing's page names up to 1,000), and the statements are prepared once.
type applier struct {
	tx       *sql.Tx
	cur      map[string]*Observation // the charges the observations name that the ledger holds, as they stand
	upd, ins *sql.Stmt
	seenAt   string
	source   string
}

// keysPerQuery is how many keys one read of the current states binds (SQLite
// allows 32,766 variables).
const keysPerQuery = 500

func newApplier(ctx context.Context, tx *sql.Tx, obs []Observation, seenAt, source string) (*applier, error) {
	a := &applier{tx: tx, cur: make(map[string]*Observation, len(obs)), seenAt: seenAt, source: source}
	keys := make([]any, 0, min(len(obs), keysPerQuery))
	seen := make(map[string]bool, len(obs))
	read := func() error {
		if len(keys) == 0 {
			return nil
		}
		rows, err := tx.QueryContext(ctx, `SELECT key, status, state, paid_cents, paid_at, method, refund_cents FROM charges WHERE key IN (?`+strings.Repeat(", ?", len(keys)-1)+`)`, keys...)
		if err != nil {
			return err
		}
		defer rows.Close()
		for rows.Next() {
			var c Observation
			if err := rows.Scan(&c.Key, &c.Status, &c.State, &c.PaidCents, &c.PaidAt, &c.Method, &c.RefundCents); err != nil {
				return err
			}
			a.cur[c.Key] = &c
		}
		keys = keys[:0]
		return rows.Err()
	}
	for _, o := range obs {
		if seen[o.Key] {
			continue
		}
		seen[o.Key] = true
		if keys = append(keys, o.Key); len(keys) == keysPerQuery {
			if err := read(); err != nil {
				return nil, err
			}
		}
	}
	return a, read()
}

func (a *applier) close() {
	for _, st := range []*sql.Stmt{a.upd, a.ins} {
		if st != nil {
			st.Close()
		}
	}
	a.upd, a.ins = nil, nil
}

// apply records an observation: the charge's current state, and an event
// when anything changed. It reports whether something changed. An
// observation never moves a charge back from a final state to an earlier
// one (an old answer arriving late changes nothing).
func (a *applier) apply(ctx context.Context, o Observation) (bool, error) {
	cur, ok := a.cur[o.Key]
	if !ok {
		return false, nil // not a charge of this run
	}
	if o.State == "" && o.Rebate != nil {
		return applyRebate(ctx, a.tx, o, *cur, a.seenAt, a.source)
	}
	if o.State == "" && o.Due != "" {
		return applyDue(ctx, a.tx, o, *cur, a.seenAt, a.source)
	}
	if rank(o.State) < rank(cur.State) || (o.State == cur.State && o.RefundCents < cur.RefundCents) {
		return false, nil
	}
	if o.Status == cur.Status && o.State == cur.State && o.PaidCents == cur.PaidCents && o.PaidAt == cur.PaidAt && o.Method == cur.Method && o.RefundCents == cur.RefundCents {
		return false, nil
	}
	var err error
	if a.upd == nil {
		if a.upd, err = a.tx.PrepareContext(ctx, `UPDATE charges SET status = ?, state = ?, paid_cents = ?, paid_at = ?, method = ?, refund_cents = ?, updated_at = ? WHERE key = ?`); err != nil {
			return false, err
		}
		if a.ins, err = a.tx.PrepareContext(ctx, `INSERT INTO events (key, status, state, paid_cents, paid_at, method, refund_cents, seen_at, source) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)`); err != nil {
			return false, err
		}
	}
	if _, err := a.upd.ExecContext(ctx, o.Status, o.State, o.PaidCents, o.PaidAt, o.Method, o.RefundCents, a.seenAt, o.Key); err != nil {
		return false, err
	}
	if _, err = a.ins.ExecContext(ctx, o.Key, o.Status, o.State, o.PaidCents, o.PaidAt, o.Method, o.RefundCents, a.seenAt, a.source); err != nil {
		return false, err
	}
	*cur = Observation{Key: o.Key, Status: o.Status, State: o.State, PaidCents: o.PaidCents, PaidAt: o.PaidAt, Method: o.Method, RefundCents: o.RefundCents}
	return true, nil
}

// applyDue records a new due date of a charge that keeps its state.
func applyDue(ctx context.Context, tx *sql.Tx, o, cur Observation, seenAt, source string) (bool, error) {
	res, err := tx.ExecContext(ctx, `UPDATE charges SET due = ?, updated_at = ? WHERE key = ? AND due <> ?`, o.Due, seenAt, o.Key, o.Due)
	if err != nil {
		return false, err
	}
	if n, _ := res.RowsAffected(); n == 0 {
		return false, nil
	}
	_, err = tx.ExecContext(ctx, `INSERT INTO events (key, status, state, paid_cents, paid_at, method, refund_cents, seen_at, source) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)`,
		o.Key, cur.Status, cur.State, cur.PaidCents, cur.PaidAt, cur.Method, cur.RefundCents, seenAt, source)
	return err == nil, err
}

// applyRebate records a new abatimento of a charge that keeps its state
// (none when it already has that abatimento).
func applyRebate(ctx context.Context, tx *sql.Tx, o, cur Observation, seenAt, source string) (bool, error) {
	res, err := tx.ExecContext(ctx, `UPDATE charges SET rebate_cents = ?, updated_at = ? WHERE key = ? AND (rebate_cents IS NULL OR rebate_cents <> ?)`,
		o.Rebate.Cents, seenAt, o.Key, o.Rebate.Cents)
	if err != nil {
		return false, err
	}
	if n, _ := res.RowsAffected(); n == 0 {
		return false, nil
	}
	var before any
	if o.Rebate.Before >= 0 {
		before = o.Rebate.Before
	}
	_, err = tx.ExecContext(ctx, `INSERT INTO events (key, status, state, paid_cents, paid_at, method, refund_cents, seen_at, source, rebate_cents, rebate_before)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
		o.Key, cur.Status, cur.State, cur.PaidCents, cur.PaidAt, cur.Method, cur.RefundCents, seenAt, source, o.Rebate.Cents, before)
	return err == nil, err
}

// RebateEvents returns the recorded changes of abatimento by charge key,
// each charge's in the order they were seen.
func (l *Ledger) RebateEvents(ctx context.Context) (map[string][]RebateEvent, error) {
	rows, err := l.db.QueryContext(ctx, `SELECT id, key, rebate_cents, coalesce(rebate_before, -1), seen_at FROM events WHERE rebate_cents IS NOT NULL ORDER BY id`)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	out := map[string][]RebateEvent{}
	for rows.Next() {
		var e RebateEvent
		if err := rows.Scan(&e.ID, &e.Key, &e.Rebate.Cents, &e.Rebate.Before, &e.SeenAt); err != nil {
			return nil, err
		}
		out[e.Key] = append(out[e.Key], e)
	}
	return out, rows.Err()
}

// rank orders states: a charge goes open → paid/settled/cancelled →
// refunded, never back.
func rank(state string) int {
	switch state {
	case StateOpen:
		return 0
	case StatePaid, StateSettled, StateCancelled:
		return 1
	case StateRefunded:
		return 2
	}
	return -1
}

// Charges returns every charge of the ledger in row and parcel order.
func (l *Ledger) Charges(ctx context.Context) ([]Charge, error) {
	var out []Charge
	err := l.EachCharge(ctx, func(c *Charge) error { out = append(out, *c); return nil })
	return out, err
}

// EachCharge calls fn with every charge in row and parcel order, one at a
// time (the Charge is reused: copy what you keep), so a run of any size
// is read in constant memory.
func (l *Ledger) EachCharge(ctx context.Context, fn func(*Charge) error) error {
	rows, err := l.db.QueryContext(ctx, `SELECT key, row_index, source_row, row_key, payer, parcel, carnet_id, charge_id, txid, due, value_cents,
		status, state, paid_cents, paid_at, method, refund_cents, updated_at, coalesce(rebate_cents, -1) FROM charges ORDER BY row_index, parcel`)
	if err != nil {
		return err
	}
	defer rows.Close()
	var c Charge
	for rows.Next() {
		if err := rows.Scan(&c.Key, &c.RowIndex, &c.SourceRow, &c.RowKey, &c.Payer, &c.Parcel, &c.CarnetID, &c.ChargeID, &c.Txid, &c.Due,
			&c.ValueCents, &c.Status, &c.State, &c.PaidCents, &c.PaidAt, &c.Method, &c.RefundCents, &c.UpdatedAt, &c.RebateCents); err != nil {
			return err
		}
		c.RebateSet = c.RebateCents >= 0
		if !c.RebateSet {
			c.RebateCents = 0
		}
		if err := fn(&c); err != nil {
			return err
		}
	}
	return rows.Err()
}

// KeysIn returns the keys of the ledger's charges in any of states (one
// column read, not every charge's).
func (l *Ledger) KeysIn(ctx context.Context, states ...string) (map[string]bool, error) {
	out := map[string]bool{}
	if len(states) == 0 {
		return out, nil
	}
	args := make([]any, len(states))
	for i, st := range states {
		args[i] = st
	}
	rows, err := l.db.QueryContext(ctx, `SELECT key FROM charges WHERE state IN (?`+strings.Repeat(", ?", len(states)-1)+`)`, args...)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	for rows.Next() {
		var k string
		if err := rows.Scan(&k); err != nil {
			return nil, err
		}
		out[k] = true
	}
	return out, rows.Err()
}

// Count returns how many charges the ledger holds.
func (l *Ledger) Count(ctx context.Context) (int, error) {
	var n int
	err := l.db.QueryRowContext(ctx, `SELECT count(*) FROM charges`).Scan(&n)
	return n, err
}

// Events returns how many changes the ledger has recorded.
func (l *Ledger) Events(ctx context.Context) (int, error) {
	var n int
	err := l.db.QueryRowContext(ctx, `SELECT count(*) FROM events`).Scan(&n)
	return n, err
}

// Apply records observations from any source (a listing, a notification,
// a webhook) in one transaction and returns how many charges changed.
// Observations of charges that are not the run's are ignored, and an
// observation never moves a charge back to an earlier state, so the same
// notification delivered twice, or an older one arriving after a newer,
// changes nothing.
func (l *Ledger) Apply(ctx context.Context, obs []Observation, seenAt time.Time, source string) (int, error) {
	tx, err := l.db.BeginTx(ctx, nil)
	if err != nil {
		return 0, err
	}
	defer tx.Rollback()
	a, err := newApplier(ctx, tx, obs, seenAt.UTC().Format(time.RFC3339Nano), source)
	if err != nil {
		return 0, err
	}
	defer a.close()
	n := 0
	for _, o := range obs {
		ch, err := a.apply(ctx, o)
		if err != nil {
			return 0, err
		}
		if ch {
			n++
		}
	}
	a.close()
	return n, tx.Commit()
}

// Seed adds the run's charges from its results to the ledger (those
// already there keep what was seen of them).
func (l *Ledger) Seed(ctx context.Context, r *results.Results, now time.Time) (int, error) {
	return l.seed(ctx, r, now)
}

// ChargeObservation reads a charge as the charges API gives it (a
// listing item, or GET /v1/charge/:id's fields in the same shape).
func ChargeObservation(c *api.ChargeSummary) Observation { return chargeObservation(c) }

// CobvObservation reads a cobv (or a Pix received for a txid).
func CobvObservation(txid, status string, pix []api.PixRecebido) Observation {
	return pixObservation(txid, status, pix)
}

// KeyOfCharge and KeyOfCobv are the ledger keys of a charge and a cobv.
func KeyOfCharge(id int64) string  { return chargeKey(id) }
func KeyOfCobv(txid string) string { return cobvKey(txid) }
