package remind

import (
	"context"
	"database/sql"
	"fmt"
	"path/filepath"

	"remessa/internal/sqlitedb"
)

// States of a send.
const (
	StateSending   = "sending"   // journaled, not yet known to be sent: a crash left it so
	StateSent      = "sent"      // the service accepted the resend / the SMTP server the message
	StateUncertain = "uncertain" // the answer was lost: it may have gone out; never sent again
	StateFailed    = "failed"    // refused for good (an address the server refused, a 4xx)
	StateSkipped   = "skipped"   // decided not to send (superseded by a later step, no e-mail, ...)
)

// Send is one entry of a charge's reminder history.
type Send struct {
	ID          int64  `json:"id"`
	ChargeKey   string `json:"charge_key"`
	Offset      int    `json:"offset"`
	Channel     string `json:"channel"`
	State       string `json:"state"`
	RowKey      string `json:"row_key"`
	Parcel      int    `json:"parcel,omitempty"`
	Email       string `json:"email"`
	AmountCents int64  `json:"amount_cents"`
	Due         string `json:"due"`
	Detail      string `json:"detail,omitempty"`
	PassID      int64  `json:"pass_id"`
	IntendedAt  string `json:"intended_at"`
	FinishedAt  string `json:"finished_at,omitempty"`
}

// Journal is a run's lembretes.db.
type Journal struct {
	db *sql.DB
}

// OpenJournal opens (creating) the reminder journal of the run in dir.
func OpenJournal(dir string) (*Journal, error) {
	db, err := sqlitedb.Open(filepath.Join(dir, FileName), &Schema)
	if err != nil {
		return nil, fmt.Errorf("lembretes: %w", err)
	}
	return &Journal{db: db}, nil
}

// Close closes the journal.
func (j *Journal) Close() error { return j.db.Close() }

// stepKey names one step of one charge.
type stepKey struct {
	charge  string
	offset  int
	channel string
}

// journaled reads every (charge, step) already in the journal, whatever
// its state: none is sent again.
func (j *Journal) journaled(ctx context.Context) (map[stepKey]struct{}, error) {
	rows, err := j.db.QueryContext(ctx, `SELECT charge_key, offset_days, channel FROM sends`)
	if err != nil {
		return nil, fmt.Errorf("lembretes: ler envios: %w", err)
	}
	defer rows.Close()
	out := map[stepKey]struct{}{}
	for rows.Next() {
		var k stepKey
		if err := rows.Scan(&k.charge, &k.offset, &k.channel); err != nil {
			return nil, fmt.Errorf("lembretes: ler envios: %w", err)
		}
		out[k] = struct{}{}
	}
	return out, rows.Err()
}

// recoverSending turns what a crashed pass left "sending" into
// "uncertain": it may have gone out, so it is reported, never repeated.
func (j *Journal) recoverSending(ctx context.Context, at string) (int, error) {
	res, err := j.db.ExecContext(ctx, `UPDATE sends SET state = ?, finished_at = ?, detail = ? WHERE state = ?`,
		StateUncertain, at, "incerto: a passada anterior parou entre o registro e a resposta; não foi enviado de novo", StateSending)
	if err != nil {
		return 0, fmt.Errorf("lembretes: recuperar envios: %w", err)
	}
	n, _ := res.RowsAffected()
	return int(n), nil
}

func (j *Journal) startPass(ctx context.Context, started, serviceNow string) (int64, error) {
	res, err := j.db.ExecContext(ctx, `INSERT INTO passes (started_at, service_now) VALUES (?, ?)`, started, serviceNow)
	if err != nil {
		return 0, fmt.Errorf("lembretes: registrar passada: %w", err)
	}
	return res.LastInsertId()
}

func (j *Journal) endPass(ctx context.Context, id int64, r *Report, at string) error {
	_, err := j.db.ExecContext(ctx, `UPDATE passes SET finished_at = ?, sent = ?, skipped = ?, uncertain = ?, failed = ?, note = ? WHERE id = ?`,
		at, r.Sent, r.Skipped, r.Uncertain, r.Failed, r.Note, id)
	return err
}

// intend journals s (committed, fsynced) before it is sent; false when
// the step was journaled already.
func (j *Journal) intend(ctx context.Context, s *Send) (bool, error) {
	res, err := j.db.ExecContext(ctx, `INSERT INTO sends (charge_key, offset_days, channel, state, row_key, parcel, email, amount_cents, due, detail, pass_id, intended_at, finished_at)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT (charge_key, offset_days, channel) DO NOTHING`,
		s.ChargeKey, s.Offset, s.Channel, s.State, s.RowKey, s.Parcel, s.Email, s.AmountCents, s.Due, s.Detail, s.PassID, s.IntendedAt, s.FinishedAt)
	if err != nil {
		return false, fmt.Errorf("lembretes: registrar envio: %w", err)
	}
	n, _ := res.RowsAffected()
	if n == 0 {
		return false, nil
	}
	s.ID, _ = res.LastInsertId()
	return true, nil
}

// finish records what became of a journaled send.
func (j *Journal) finish(ctx context.Context, id int64, state, detail, at string) error {
	_, err := j.db.ExecContext(ctx, `UPDATE sends SET state = ?, detail = ?, finished_at = ? WHERE id = ?`, state, detail, at, id)
	if err != nil {
		return fmt.Errorf("lembretes: registrar resultado: %w", err)
	}
	return nil
}

// forget removes a send known not to have gone out, so a later pass sends it.
func (j *Journal) forget(ctx context.Context, id int64) error {
	_, err := j.db.ExecContext(ctx, `DELETE FROM sends WHERE id = ? AND state = ?`, id, StateSending)
	return err
}

// History lists the journal's sends in the order they were decided:
// every charge's history ("" rowKey) or one row's.
func (j *Journal) History(ctx context.Context, rowKey string) ([]Send, error) {
	q := `SELECT id, charge_key, offset_days, channel, state, row_key, parcel, email, amount_cents, due, detail, pass_id, intended_at, finished_at FROM sends`
	var args []any
	if rowKey != "" {
		q += ` WHERE row_key = ?`
		args = append(args, rowKey)
	}
	rows, err := j.db.QueryContext(ctx, q+` ORDER BY id`, args...)
	if err != nil {
		return nil, fmt.Errorf("lembretes: histórico: %w", err)
	}
	defer rows.Close()
	var out []Send
	for rows.Next() {
		var s Send
		if err := rows.Scan(&s.ID, &s.ChargeKey, &s.Offset, &s.Channel, &s.State, &s.RowKey, &s.Parcel, &s.Email, &s.AmountCents, &s.Due, &s.Detail, &s.PassID, &s.IntendedAt, &s.FinishedAt); err != nil {
			return nil, fmt.Errorf("lembretes: histórico: %w", err)
		}
		out = append(out, s)
	}
	return out, rows.Err()
}

// ReadHistory is History of the run in dir, without creating the journal
// when the run never had a reminder (nil then).
func ReadHistory(ctx context.Context, dir string) ([]Send, error) {
	if !exists(filepath.Join(dir, FileName)) {
		return nil, nil
	}
	j, err := OpenJournal(dir)
	if err != nil {
		return nil, err
	}
	defer j.Close()
	return j.History(ctx, "")
}
