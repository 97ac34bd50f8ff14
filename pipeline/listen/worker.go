package listen

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"sort"
	"strconv"
	"strings"
	"time"

	"remessa/api"
	"remessa/internal/crashpoint"
	"remessa/internal/metrics"
	"remessa/pipeline/status"
)

// Source names the listener's events in the ledgers.
const (
	SourceNotification = "notificacao"
	SourcePix          = "webhook-pix"
)

// Drained is what one Drain did.
type Drained struct {
	Applied int // items applied
	Orphans int // items of no known run
	Refused int // items the service denied (a token it does not know, a Pix it does not confirm)
	Failed  int // items left for a retry
	Changed int // charges changed in the ledgers
	// Runs are the run folders whose ledgers changed, each once.
	Runs []string
}

type pending struct {
	id       int64
	kind     string
	scope    string
	key      string
	body     string
	path     string
	gen      int64
	attempts int
}

// Drain applies every inbox item due now, once each, and returns what it
// did. An item that cannot be applied (service unreachable, ledger busy)
// stays pending with a later retry time.
func (l *Listener) Drain(ctx context.Context) (Drained, error) {
	l.workMu.Lock()
	defer l.workMu.Unlock()
	var d Drained
	now := l.opts.now()
	rows, err := l.db.QueryContext(ctx, `SELECT id, kind, scope, key, body, path, gen, attempts FROM inbox
		WHERE state = ? AND (next_at = '' OR next_at <= ?) ORDER BY id`, StatePending, stamp(now))
	if err != nil {
		return d, err
	}
	var todo []pending
	for rows.Next() {
		var p pending
		if err := rows.Scan(&p.id, &p.kind, &p.scope, &p.key, &p.body, &p.path, &p.gen, &p.attempts); err != nil {
			rows.Close()
			return d, err
		}
		todo = append(todo, p)
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return d, err
	}
	dr := &drain{down: map[string]error{}}
	changedRun := map[string]bool{}
	// outcomes are recorded a batch at a time (one commit for many items,
	// not one each, so a long drain leaves the disk to the deliveries
	// arriving meanwhile); a crash before a batch's commit leaves its
	// items pending, and applying them again changes nothing more
	var fin []finished
	flushed := time.Now()
	flush := func() error {
		err := l.finishAll(context.WithoutCancel(ctx), fin)
		fin, flushed = fin[:0], time.Now()
		return err
	}
	defer func() { flush() }() // an early return records what was done
	for _, p := range todo {
		if ctx.Err() != nil {
			return d, ctx.Err()
		}
		crashpoint.At("listen-aplicar") // kill -9 tests: kept, not applied
		var out outcome
		var err error
		switch p.kind {
		case KindNotification:
			out, err = l.applyNotification(ctx, p, dr)
		case KindPix:
			out, err = l.applyPix(ctx, p, dr)
		default:
			err = fmt.Errorf("tipo desconhecido %q", p.kind)
		}
		if ctx.Err() != nil {
			return d, ctx.Err()
		}
		if fin = append(fin, finished{p, out, err}); len(fin) >= finishBatch || time.Since(flushed) > finishEvery {
			if err := flush(); err != nil {
				return d, err
			}
		}
		where := ""
		if p.scope != "" {
			where = " (" + p.scope + ")"
		}
		switch {
		case err != nil:
			metrics.NotificationApplied(sourceOf(p.kind), "failed")
			d.Failed++
			l.logf("listen: %s %s%s: %v (nova tentativa mais tarde)", p.kind, p.key, where, err)
		case out.refused:
			metrics.NotificationApplied(sourceOf(p.kind), "refused")
			d.Refused++
			l.logf("listen: %s %s%s: recusado, nada mudou (%s)", p.kind, p.key, where, out.why)
		case len(out.runs) == 0:
			metrics.NotificationApplied(sourceOf(p.kind), "unknown")
			d.Orphans++
			l.logf("listen: %s %s%s: órfão (%s)", p.kind, p.key, where, out.why)
		default:
			metrics.NotificationApplied(sourceOf(p.kind), "applied")
			d.Applied++
			d.Changed += out.changed
			for _, n := range out.changedRuns {
				if !changedRun[n] {
					changedRun[n] = true
					d.Runs = append(d.Runs, n)
				}
			}
			l.logf("listen: %s %s%s aplicado em %s: %d cobrança(s) mudaram", p.kind, p.key, where, strings.Join(out.runs, ", "), out.changed)
		}
	}
	return d, flush()
}

// drain is what one Drain learnt on the way: whether it scanned the runs
// folder again, and the services that did not answer (not called again
// until the next Drain).
type drain struct {
	rescanned bool
	down      map[string]error
	// cands are the candidates of each path and scope, listed once per
	// Drain (again after a rescan)
	cands     map[[2]string][]string
	candsScan bool // rescanned when cands were listed
}

// candidates are the runs to ask about p's token (Listener.candidates),
// listed once per Drain for each path and scope.
func (dr *drain) candidates(ctx context.Context, l *Listener, p pending) ([]string, error) {
	if dr.cands == nil || dr.candsScan != dr.rescanned {
		dr.cands, dr.candsScan = map[[2]string][]string{}, dr.rescanned
	}
	k := [2]string{p.path, p.scope}
	if c, ok := dr.cands[k]; ok {
		return c, nil
	}
	c, err := l.candidates(ctx, p.path, p.scope)
	if err == nil {
		dr.cands[k] = c
	}
	return c, err
}

// outcome is what applying an item did.
type outcome struct {
	runs        []string // the runs it was applied to (none: orphan)
	changedRuns []string // those of them whose ledgers changed
	changed     int
	refused     bool   // the service denies it
	why         string // orphan or refused: why
}

// finishBatch and finishEvery bound a batch of outcomes: its items, and
// how long its first waits.
const (
	finishBatch = 128
	finishEvery = 250 * time.Millisecond
)

// finished is an item's outcome to record.
type finished struct {
	p   pending
	out outcome
	err error
}

// finishAll records outcomes in one transaction.
func (l *Listener) finishAll(ctx context.Context, fs []finished) error {
	if len(fs) == 0 {
		return nil
	}
	tx, err := l.db.BeginTx(ctx, nil)
	if err != nil {
		return err
	}
	defer tx.Rollback()
	for _, f := range fs {
		if err := l.finish(ctx, tx, f.p, f.out, f.err); err != nil {
			return err
		}
	}
	return tx.Commit()
}

// finish records an item's outcome, unless it was delivered again while
// it was being applied (its generation moved on: it is applied again).
func (l *Listener) finish(ctx context.Context, tx *sql.Tx, p pending, out outcome, applyErr error) error {
	now := l.opts.now()
	var err error
	switch {
	case applyErr != nil:
		wait := l.opts.RetryMin << min(p.attempts, 20)
		if wait > l.opts.RetryMax || wait <= 0 {
			wait = l.opts.RetryMax
		}
		_, err = tx.ExecContext(ctx, `UPDATE inbox SET attempts = attempts + 1, next_at = ?, last_error = ? WHERE id = ? AND gen = ?`,
			stamp(now.Add(wait)), applyErr.Error(), p.id, p.gen)
	case out.refused:
		_, err = tx.ExecContext(ctx, `UPDATE inbox SET state = ?, last_error = ?, attempts = attempts + 1 WHERE id = ? AND gen = ?`,
			StateRefused, out.why, p.id, p.gen)
	case len(out.runs) == 0:
		_, err = tx.ExecContext(ctx, `UPDATE inbox SET state = ?, last_error = ?, attempts = attempts + 1 WHERE id = ? AND gen = ?`,
			StateOrphan, out.why, p.id, p.gen)
	default:
		_, err = tx.ExecContext(ctx, `UPDATE inbox SET state = ?, applied_at = ?, runs = ?, changed = changed + ?, last_error = ?, attempts = attempts + 1 WHERE id = ? AND gen = ?`,
			StateApplied, stamp(now), strings.Join(out.runs, ","), out.changed, out.why, p.id, p.gen)
	}
	return err
}

// rescan scans the runs folder again (once per Drain) and puts the
// orphans back in the queue when a run appeared or changed.
func (l *Listener) rescan(ctx context.Context, done *bool) error {
	if *done {
		return nil
	}
	*done = true
	_, err := l.Rescan(ctx)
	return err
}

// Rescan brings the index of the runs folder up to date (only the
// results.json files new or changed since are read) and, when a run
// appeared or changed, puts the orphans back in the queue. It returns
// how many run folders were new or changed.
func (l *Listener) Rescan(ctx context.Context) (int, error) {
	n, err := l.scan(ctx)
	if err != nil {
		return n, err
	}
	if n > 0 {
		_, err = l.db.ExecContext(ctx, `UPDATE inbox SET state = ?, next_at = '' WHERE state = ?`, StatePending, StateOrphan)
	}
	return n, err
}

// applyNotification reads a token's changes from the service of a run
// and applies them, charge by charge, to the runs the charges belong to.
func (l *Listener) applyNotification(ctx context.Context, p pending, dr *drain) (outcome, error) {
	changes, err := l.readToken(ctx, p, dr)
	if err != nil || changes == nil {
		if errors.Is(err, errUnknownToken) {
			// in a scope only the scope's service is asked: a token it
			// does not know is not of this account (a forgery, or a
			// mistaken URL), never to be tried again
			return outcome{why: err.Error(), refused: p.scope != "" && !errors.Is(err, errNoRun)}, nil
		}
		return outcome{}, err
	}
	// per charge, in the order of the changes: the last status, and the
	// payment of the last change that carried one
	type acc struct {
		status  string
		value   *int64
		paidAt  string
		carnet  bool
		present bool
	}
	sort.SliceStable(changes, func(i, j int) bool { return changes[i].ID < changes[j].ID })
	byCharge := map[int64]*acc{}
	var order []int64
	for _, ch := range changes {
		id := ch.Identifiers.ChargeID
		if id == 0 {
			continue // the carnet's own status
		}
		a := byCharge[id]
		if a == nil {
			a = &acc{}
			byCharge[id] = a
			order = append(order, id)
		}
		a.status, a.present = ch.Status.Current, true
		a.carnet = a.carnet || ch.Identifiers.CarnetID != 0
		if ch.Value != nil {
			a.value, a.paidAt = ch.Value, ch.CreatedAt
		}
	}
	perRun := map[string][]int64{}
	var runs []string
	var unknown []string
	for _, id := range order {
		name, err := l.runOfID(ctx, idCharge, strconv.FormatInt(id, 10), p.scope, &dr.rescanned)
		if err != nil {
			return outcome{}, err
		}
		if name == "" {
			unknown = append(unknown, strconv.FormatInt(id, 10))
			continue
		}
		if perRun[name] == nil {
			runs = append(runs, name)
		}
		perRun[name] = append(perRun[name], id)
	}
	out := outcome{}
	if len(unknown) > 0 {
		out.why = "cobranças de nenhuma execução: " + strings.Join(unknown, ", ")
	}
	if len(order) == 0 {
		out.why = "o token não traz mudança de cobrança"
	}
	for _, name := range runs {
		rl, err := l.ledger(ctx, name)
		if err != nil {
			return outcome{}, err
		}
		var obs []status.Observation
		for _, id := range perRun[name] {
			a := byCharge[id]
			key := status.KeyOfCharge(id)
			sum := map[string]any{"id": id, "status": a.status, "total": rl.values[key]}
			if a.value != nil {
				method := "banking_billet"
				if a.carnet {
					method = "carnet"
				}
				sum["payment"] = map[string]any{"payment_method": method, "paid_at": a.paidAt, "paid_value": *a.value}
			}
			var cs api.ChargeSummary
			b, _ := json.Marshal(sum)
			if err := json.Unmarshal(b, &cs); err != nil {
				return outcome{}, err
			}
			obs = append(obs, status.ChargeObservation(&cs))
		}
		n, err := rl.l.Apply(ctx, obs, l.seenAt(ctx, name, rl), SourceNotification)
		if err != nil {
			return outcome{}, err
		}
		out.runs = append(out.runs, name)
		out.changed += n
		if n > 0 {
			out.changedRuns = append(out.changedRuns, name)
		}
	}
	return out, nil
}

var (
	errUnknownToken = errors.New("token desconhecido dos serviços das execuções")
	errNoRun        = errors.New("nenhuma execução")
)

// readToken calls GET /v1/notification/:token on the services of the
// runs until one knows the token.
func (l *Listener) readToken(ctx context.Context, p pending, dr *drain) ([]api.NotificationChange, error) {
	names, err := dr.candidates(ctx, l, p)
	if err != nil {
		return nil, err
	}
	if len(names) == 0 && !dr.rescanned {
		// no run yet: look again (once a Drain) before calling it an orphan
		if err := l.rescan(ctx, &dr.rescanned); err != nil {
			return nil, err
		}
		if names, err = dr.candidates(ctx, l, p); err != nil {
			return nil, err
		}
	}
	if len(names) == 0 {
		if p.scope != "" {
			return nil, fmt.Errorf("%w: %w de %s", errUnknownToken, errNoRun, p.scope)
		}
		return nil, fmt.Errorf("%w (%w em %s)", errUnknownToken, errNoRun, l.dir)
	}
	var errs []error
	for _, n := range names {
		svc, key, err := l.service(ctx, n)
		if err == nil && dr.down[key] != nil {
			err = dr.down[key]
		}
		if err != nil {
			if key != "" {
				dr.down[key] = err
			}
			errs = append(errs, fmt.Errorf("serviço da execução %s: %w", n, err))
			continue
		}
		changes, err := svc.Client.GetNotification(ctx, p.key)
		var ae *api.Error
		if errors.As(err, &ae) && unknownToken(ae) {
			continue
		}
		if err != nil {
			err = fmt.Errorf("GET /v1/notification: %w", err)
			if ae == nil || ae.Status >= 500 || ae.Status == http.StatusTooManyRequests {
				dr.down[key] = err
			}
			errs = append(errs, err)
			continue
		}
		if changes == nil {
			changes = []api.NotificationChange{}
		}
		return changes, nil
	}
	if len(errs) > 0 {
		return nil, errors.Join(errs...)
	}
	return nil, errUnknownToken
}

// unknownToken reports whether the service's refusal says it does not
// know the token: 404, or 400 property_does_not_exists (3500010, what the
// charges API answers for an unknown id), or another refusal of the
// request itself (not of the credentials, the rate or the service).
func unknownToken(e *api.Error) bool {
	switch e.Status {
	case http.StatusUnauthorized, http.StatusForbidden, http.StatusRequestTimeout, http.StatusTooManyRequests:
		return false
	}
	return e.Status >= 400 && e.Status < 500
}

// runOfID finds an id's run in scope, scanning the runs folder again
// (once per Drain) when it is unknown. The run of an id in another scope
// is none.
func (l *Listener) runOfID(ctx context.Context, kind, id, scope string, rescanned *bool) (string, error) {
	name, err := l.runOf(ctx, kind, id)
	if err == nil && name == "" && !*rescanned {
		if err := l.rescan(ctx, rescanned); err != nil {
			return "", err
		}
		name, err = l.runOf(ctx, kind, id)
	}
	if err != nil || name == "" {
		return "", err
	}
	sc, err := l.scopeOf(ctx, name)
	if err != nil || sc != scope {
		return "", err
	}
	return name, nil
}

// applyPix applies one Pix of a webhook to the cobv of its txid, as the
// service has it: the webhook only names the cobv and the endToEndId;
// the cobv is read back (GET /v2/cobv/:txid) and applied only when the
// service lists that Pix among its payments. A Pix the service does not
// confirm is refused and changes nothing.
func (l *Listener) applyPix(ctx context.Context, p pending, dr *drain) (outcome, error) {
	var px api.PixRecebido
	if err := json.Unmarshal([]byte(p.body), &px); err != nil {
		return outcome{why: "Pix ilegível: " + err.Error(), refused: true}, nil
	}
	name, err := l.runOfID(ctx, idTxid, px.Txid, p.scope, &dr.rescanned)
	if err != nil {
		return outcome{}, err
	}
	if name == "" {
		return outcome{why: "txid " + px.Txid + " de nenhuma execução"}, nil
	}
	svc, key, err := l.service(ctx, name)
	if err == nil && dr.down[key] != nil {
		err = dr.down[key]
	}
	if err != nil {
		if key != "" {
			dr.down[key] = err
		}
		return outcome{}, fmt.Errorf("serviço da execução %s: %w", name, err)
	}
	cob, err := svc.Client.GetCobV(ctx, px.Txid)
	var ae *api.Error
	if errors.As(err, &ae) && unknownToken(ae) {
		return outcome{why: fmt.Sprintf("o serviço não conhece a cobrança %s (%d)", px.Txid, ae.Status), refused: true}, nil
	}
	if err != nil {
		err = fmt.Errorf("GET /v2/cobv/%s: %w", px.Txid, err)
		if ae == nil || ae.Status >= 500 || ae.Status == http.StatusTooManyRequests {
			dr.down[key] = err
		}
		return outcome{}, err
	}
	confirmed := false
	for _, q := range cob.Pix {
		confirmed = confirmed || q.EndToEndID == px.EndToEndID
	}
	if !confirmed {
		return outcome{why: fmt.Sprintf("o serviço não confirma o Pix %s na cobrança %s", px.EndToEndID, px.Txid), refused: true}, nil
	}
	rl, err := l.ledger(ctx, name)
	if err != nil {
		return outcome{}, err
	}
	n, err := rl.l.Apply(ctx, []status.Observation{status.CobvObservation(px.Txid, cob.Status, cob.Pix)}, l.seenAt(ctx, name, rl), SourcePix)
	if err != nil {
		return outcome{}, err
	}
	out := outcome{runs: []string{name}, changed: n}
	if n > 0 {
		out.changedRuns = []string{name}
	}
	return out, nil
}

// Work applies the inbox until ctx is done: at once, after each delivery,
// and every second for the retries that come due. Every 30 s it scans the
// runs folder again, so the orphans of a run that appeared since are
// applied.
func (l *Listener) Work(ctx context.Context) error {
	t := time.NewTicker(time.Second)
	defer t.Stop()
	for i := 0; ; i++ {
		if i > 0 && i%30 == 0 {
			r := false
			if err := l.rescan(ctx, &r); err != nil && ctx.Err() == nil {
				l.logf("listen: %v", err)
			}
		}
		if _, err := l.Drain(ctx); err != nil {
			if ctx.Err() != nil {
				return nil
			}
			l.logf("listen: %v", err)
		}
		select {
		case <-ctx.Done():
			return nil
		case <-l.kick:
		case <-t.C:
		}
	}
}
