// Package outbox delivers the sandbox's outgoing HTTP calls — the charges
// API's status-change notifications (form field notification=<token>) and
// the Pix webhooks (JSON {"pix":[...]}) — from a persistent queue.
//
// A module writes a delivery with Enqueue inside the store transaction that
// changes the state, so the change and its notification are committed
// together or not at all. RunDue posts every delivery that is due by the
// sandbox clock, found through an index on its next attempt's time (a row
// of KindDue beside each pending delivery, written in the same
// transactions), so a run reads the deliveries due, not every pending one;
// a 2xx answer marks it delivered (it is never sent again),
// anything else (non-2xx, 429, network error, timeout) schedules a retry
// after 5, 10, 20, 40, 80, 160, 320, 640, 1280 and 52560 minutes
// (real-service.md §1.2), after which it is marked failed. Pending
// deliveries live in the store, so a restart loses none: the next RunDue
// reads them back. The background loop (Run) calls RunDue every second and
// right after an Enqueue; tests call RunDue themselves after moving a fake
// clock.
//
// Delivery is at least once: a crash after the receiver answered 2xx but
// before the delivery is marked may send it once more after the restart.
// Instances sharing a database (PostgreSQL) claim each delivery in a write
// transaction before posting it (a lease of the post's timeout plus 30 s),
// so one instance posts it; a claim left by a dead instance expires.
//
// A delivery queued with EnqueueFor carries a key (the charges module uses
// the notification token); Retarget, in the transaction that changes the
// owner's URL, moves the key's pending deliveries to the new URL (same
// retry schedule) or, for no URL, gives them up as canceled. RunDue
// re-reads each delivery before posting it and when recording the
// outcome, so once the change is committed no new post goes to the old
// URL; only a post already under way may still reach it.
package outbox

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"net/http"
	"net/url"
	"sort"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/rs/zerolog"

	"remessa/sandbox/clock"
	"remessa/sandbox/store"
)

// Store kinds and the id sequence of the outbox.
const (
	KindPending = "outbox"      // deliveries still to be sent
	KindDone    = "outbox_done" // delivered or given up
	// KindDue holds an index row (no document) per pending delivery, under
	// account "" and the delivery's id: N its next attempt's time (Unix
	// nanoseconds), S1 its key (the pending document's account), S2 its
	// URL, I2 its attempts. RunDue asks it for N up to now.
	KindDue = "outbox_due"
	seqName = "outbox"
)

// sweepEvery is how often (real time) RunDue looks for pending deliveries
// without their index row: a database of a remessa before the index, or a
// delivery an older instance sharing the database queued. The first RunDue
// of an Outbox always looks.
const sweepEvery = 10 * time.Minute

// Delivery states.
const (
	StatePending   = "pending"
	StateDelivered = "delivered"
	StateFailed    = "failed"   // retries exhausted
	StateCanceled  = "canceled" // its owner's URL was removed before delivery (Retarget to "")
)

// DefaultBackoff is the wait before each retry, per real-service.md §1.2.
var DefaultBackoff = []time.Duration{
	5 * time.Minute, 10 * time.Minute, 20 * time.Minute, 40 * time.Minute, 80 * time.Minute,
	160 * time.Minute, 320 * time.Minute, 640 * time.Minute, 1280 * time.Minute, 52560 * time.Minute,
}

// Delivery is one outgoing POST.
type Delivery struct {
	ID          int64      `json:"id"`
	Key         string     `json:"key,omitempty"` // owner, for Retarget ("" for none); the pending row's account
	URL         string     `json:"url"`
	ContentType string     `json:"content_type"`
	Body        []byte     `json:"body"`
	State       string     `json:"state"`
	CreatedAt   time.Time  `json:"created_at"`
	Attempts    int        `json:"attempts"`
	NextAt      time.Time  `json:"next_at"`
	LastAt      *time.Time `json:"last_attempt_at,omitempty"`
	LastStatus  int        `json:"last_status,omitempty"`
	LastError   string     `json:"last_error,omitempty"`
	DoneAt      *time.Time `json:"done_at,omitempty"`

	// A lease on a shared store (PostgreSQL): the instance posting it and
	// until when (real time), so no other instance posts it meanwhile.
	LeaseBy    string     `json:"lease_by,omitempty"`
	LeaseUntil *time.Time `json:"lease_until,omitempty"`
}

func docID(id int64) string { return fmt.Sprintf("%012d", id) }

// Options tune an Outbox; the zero value is the real service's behaviour.
type Options struct {
	// Client posts the deliveries; default: 60 s timeout (the real
	// service's), redirects not followed (a 3xx is a failure).
	Client *http.Client
	// Backoff is the wait before retry n (1-based) after attempt n failed;
	// its length is the number of retries. Default DefaultBackoff.
	Backoff []time.Duration
	// Speedup divides every backoff wait (60 turns minutes into seconds);
	// 0 or 1 keeps them.
	Speedup int
	// Poll is the period of the background loop (real time); default 1 s.
	Poll time.Duration
	// Parallel is how many receivers (distinct URLs) RunDue posts to at
	// once; default 4. Deliveries to one URL always go in queue order.
	Parallel int
	Logger   zerolog.Logger
}

// Outbox is the persistent delivery queue. It implements the sandbox's
// Notifier, Module (control routes) and Runner (background loop).
type Outbox struct {
	st   *store.Store
	clk  clock.Clock
	opt  Options
	run  chan struct{} // one RunDue at a time: nothing is posted twice concurrently
	kick chan struct{}
	sent atomic.Int64
	id   string // this instance, for leases on a shared store

	swept time.Time // the last sweep (real time); only RunDue, under run, reads and sets it
}

// New returns an outbox on st, timed by clk.
func New(st *store.Store, clk clock.Clock, opt Options) *Outbox {
	if clk == nil {
		clk = clock.Real{}
	}
	if opt.Client == nil {
		opt.Client = &http.Client{
			Timeout:       60 * time.Second,
			CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
		}
	}
	if opt.Backoff == nil {
		opt.Backoff = DefaultBackoff
	}
	if opt.Speedup < 1 {
		opt.Speedup = 1
	}
	if opt.Poll <= 0 {
		opt.Poll = time.Second
	}
	if opt.Parallel < 1 {
		opt.Parallel = 4
	}
	var id [8]byte
	_, _ = rand.Read(id[:])
	return &Outbox{st: st, clk: clk, opt: opt, kick: make(chan struct{}, 1), run: make(chan struct{}, 1), id: hex.EncodeToString(id[:])}
}

// Enqueue writes a delivery of body to target in the caller's transaction;
// it is first tried as soon as the transaction has committed.
func (o *Outbox) Enqueue(ctx context.Context, tx *store.Tx, target string, body []byte, contentType string) error {
	return o.EnqueueFor(ctx, tx, "", target, body, contentType)
}

// EnqueueFor is Enqueue for the owner key ("" = none): Retarget(key, ...)
// later moves the delivery while it is pending.
func (o *Outbox) EnqueueFor(ctx context.Context, tx *store.Tx, key, target string, body []byte, contentType string) error {
	if err := checkURL(target); err != nil {
		return err
	}
	if contentType == "" {
		return fmt.Errorf("outbox: delivery to %s has no content type", redact(target))
	}
	id, err := tx.NextSeq(seqName)
	if err != nil {
		return err
	}
	now := o.clk.Now().UTC()
	d := Delivery{ID: id, Key: key, URL: target, ContentType: contentType, Body: body, State: StatePending, CreatedAt: now, NextAt: now}
	if err := record(tx, d); err != nil {
		return err
	}
	select {
	case o.kick <- struct{}{}:
	default:
	}
	return nil
}

func checkURL(target string) error {
	u, err := url.Parse(target)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return fmt.Errorf("outbox: delivery URL %q is not an absolute http(s) URL", redact(target))
	}
	return nil
}

// Retarget sends the pending deliveries queued with EnqueueFor under key to
// target from their next attempt on, keeping their attempts and retry
// schedule; target "" moves them to the done deliveries as canceled. Call
// it in the transaction that changes the owner's URL, so both commit
// together. It returns how many deliveries it changed.
func (o *Outbox) Retarget(ctx context.Context, tx *store.Tx, key, target string) (int, error) {
	if key == "" {
		return 0, errors.New("outbox: retarget without a key")
	}
	if target != "" {
		if err := checkURL(target); err != nil {
			return 0, err
		}
	}
	var ds []Delivery
	err := tx.EachIn(KindPending, key, func(id string, raw []byte) error {
		var d Delivery
		if err := json.Unmarshal(raw, &d); err != nil {
			return fmt.Errorf("outbox: decode delivery %s: %w", id, err)
		}
		if d.URL != target {
			ds = append(ds, d)
		}
		return nil
	})
	if err != nil {
		return 0, err
	}
	now := o.clk.Now().UTC()
	for _, d := range ds {
		if target == "" {
			d.State = StateCanceled // keeps the URL it was failing at
			d.DoneAt = &now
		} else {
			d.URL = target
		}
		if err := record(tx, d); err != nil {
			return 0, err
		}
		o.opt.Logger.Info().Int64("delivery", d.ID).Str("url", redact(target)).Str("state", d.State).Msg("outbox: delivery retargeted")
	}
	return len(ds), nil
}

// record stores d: a pending delivery in place with its index row, a
// finished one moved to the done deliveries (its index row removed).
func record(tx *store.Tx, d Delivery) error {
	if d.State == StatePending {
		if err := tx.Put(KindPending, d.Key, docID(d.ID), d); err != nil {
			return err
		}
		return tx.PutIndex(KindDue, "", docID(d.ID), dueRow(d))
	}
	if err := tx.Delete(KindPending, d.Key, docID(d.ID)); err != nil {
		return err
	}
	if err := tx.DeleteIndex(KindDue, "", docID(d.ID)); err != nil {
		return err
	}
	return tx.Put(KindDone, "", docID(d.ID), d)
}

// dueRow is the index row of a pending delivery.
func dueRow(d Delivery) store.Index {
	return store.Index{N: d.NextAt.UnixNano(), S1: d.Key, S2: d.URL, I2: int64(d.Attempts)}
}

// due lists the pending deliveries whose time has come by now, from their
// index rows (ID, Key, URL, Attempts and NextAt set; attempt reads the
// rest), in queue order.
func (o *Outbox) due(ctx context.Context, now time.Time) ([]Delivery, error) {
	var out []Delivery
	q := store.Query{Kind: KindDue, Where: []store.Cond{store.Between(store.ColN, math.MinInt64, now.UnixNano())}}
	err := o.st.Find(ctx, q, func(id string, ix store.Index) error {
		n, err := strconv.ParseInt(id, 10, 64)
		if err != nil {
			return fmt.Errorf("outbox: index row %q: %w", id, err)
		}
		out = append(out, Delivery{ID: n, Key: ix.S1, URL: ix.S2, Attempts: int(ix.I2), NextAt: time.Unix(0, ix.N).UTC(), State: StatePending})
		return nil
	})
	sort.Slice(out, func(i, j int) bool { return out[i].ID < out[j].ID })
	return out, err
}

// sweep writes the index row of each pending delivery that has none and
// removes the rows whose delivery is no longer pending. It reads every
// pending delivery (decoding only those without a row), so RunDue calls it
// once at first and then every sweepEvery.
func (o *Outbox) sweep(ctx context.Context) error {
	rows := map[string]store.Index{}
	if err := o.st.Find(ctx, store.Query{Kind: KindDue}, func(id string, ix store.Index) error {
		rows[id] = ix
		return nil
	}); err != nil {
		return fmt.Errorf("outbox: sweep: %w", err)
	}
	type ref struct{ key, id string }
	var missing []ref
	err := o.st.Each(ctx, KindPending, func(account, id string, _ []byte) error {
		if ix, ok := rows[id]; ok {
			delete(rows, id)
			if ix.S1 == account {
				return nil
			}
		}
		missing = append(missing, ref{account, id}) // no row, or one naming another key: written again
		return nil
	})
	if err != nil {
		return fmt.Errorf("outbox: sweep: %w", err)
	}
	if len(missing) == 0 && len(rows) == 0 {
		return nil
	}
	// Read again in the write transaction: a delivery recorded meanwhile
	// (another instance on a shared store) is indexed as it is now.
	err = o.st.Tx(ctx, func(tx *store.Tx) error {
		for _, m := range missing {
			var d Delivery
			found, err := tx.Get(KindPending, m.key, m.id, &d)
			if err != nil {
				// a document that does not decode cannot be posted; the
				// others are indexed all the same
				o.opt.Logger.Error().Err(err).Str("delivery", m.id).Msg("outbox: sweep")
				continue
			}
			if found {
				if err := tx.PutIndex(KindDue, "", m.id, dueRow(d)); err != nil {
					return err
				}
			}
		}
		for id, ix := range rows {
			var d Delivery
			found, err := tx.Get(KindPending, ix.S1, id, &d)
			if err != nil || found {
				continue // a row left for a delivery that still decodes or not: the next sweep sees it again
			}
			if err := tx.DeleteIndex(KindDue, "", id); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("outbox: sweep: %w", err)
	}
	o.opt.Logger.Info().Int("indexed", len(missing)).Int("orphans", len(rows)).Msg("outbox: pending deliveries indexed")
	return nil
}

// Pending returns the deliveries not yet delivered nor given up, oldest
// first.
func (o *Outbox) Pending(ctx context.Context) ([]Delivery, error) { return o.list(ctx, KindPending) }

// Done returns the delivered and failed deliveries, oldest first.
func (o *Outbox) Done(ctx context.Context) ([]Delivery, error) { return o.list(ctx, KindDone) }

func (o *Outbox) list(ctx context.Context, kind string) ([]Delivery, error) {
	var out []Delivery
	err := o.st.Each(ctx, kind, func(_, id string, raw []byte) error {
		var d Delivery
		if err := json.Unmarshal(raw, &d); err != nil {
			return fmt.Errorf("outbox: decode delivery %s: %w", id, err)
		}
		out = append(out, d)
		return nil
	})
	sort.Slice(out, func(i, j int) bool { return out[i].ID < out[j].ID })
	return out, err
}

// RunDue posts every pending delivery whose time has come by the sandbox
// clock and records the outcome; it returns how many were delivered (2xx).
// Calls are serialised. The error is the first store failure, if any;
// failed posts are not errors, they are retried later.
//
// When ctx ends (waiting for another run, or during a post) RunDue returns
// what it delivered so far and ctx's error; an interrupted post is not
// counted as an attempt. After a failed post to a URL, the other due
// deliveries to that URL wait for the next run, so a receiver that hangs
// costs one timeout per run, not one per delivery.
func (o *Outbox) RunDue(ctx context.Context) (int, error) {
	select {
	case o.run <- struct{}{}:
	case <-ctx.Done():
		return 0, ctx.Err()
	}
	defer func() { <-o.run }()
	if o.swept.IsZero() || time.Since(o.swept) >= sweepEvery {
		if err := o.sweep(ctx); err != nil {
			return 0, err
		}
		o.swept = time.Now()
	}
	now := o.clk.Now()
	pending, err := o.due(ctx, now)
	if err != nil {
		return 0, err
	}
	// Deliveries to one URL go one after the other, in the order they were
	// queued; different URLs are served in parallel.
	var urls []string
	due := map[string][]Delivery{}
	for _, d := range pending {
		if _, seen := due[d.URL]; !seen {
			urls = append(urls, d.URL)
		}
		due[d.URL] = append(due[d.URL], d)
	}
	var (
		wg        sync.WaitGroup
		sem       = make(chan struct{}, o.opt.Parallel)
		delivered atomic.Int64
		errMu     sync.Mutex
		firstErr  error
	)
	for _, u := range urls {
		wg.Add(1)
		sem <- struct{}{}
		go func(ds []Delivery) {
			defer func() { <-sem; wg.Done() }()
			for _, d := range ds {
				ok, skipped, err := o.attempt(ctx, d)
				if skipped && err == nil {
					continue // retargeted or given up since listed
				}
				if ok {
					delivered.Add(1)
				}
				if err != nil {
					errMu.Lock()
					if firstErr == nil {
						firstErr = err
					}
					errMu.Unlock()
				}
				if !ok || ctx.Err() != nil {
					return // the receiver is failing: the rest waits for the next run
				}
			}
		}(due[u])
	}
	wg.Wait()
	if firstErr == nil && ctx.Err() != nil {
		firstErr = ctx.Err()
	}
	return int(delivered.Load()), firstErr
}

// attempt posts d once and stores the outcome. It first reads d (RunDue
// lists only its index row) and skips it when a Retarget moved it to
// another URL or gave it up since RunDue listed it; a Retarget during the
// post sends the next retry to the new URL.
func (o *Outbox) attempt(ctx context.Context, d Delivery) (ok, skipped bool, err error) {
	if o.st.Shared() {
		// Several instances run their outboxes over one database: the
		// delivery is claimed first, in a write transaction (writers are
		// serialised across instances), so exactly one of them posts it.
		claimed := false
		err := o.st.Tx(ctx, func(tx *store.Tx) error {
			var cur Delivery
			found, err := tx.Get(KindPending, d.Key, docID(d.ID), &cur)
			if err != nil || !found || cur.URL != d.URL || cur.Attempts != d.Attempts {
				return err // delivered, retargeted or attempted elsewhere since listed
			}
			now := time.Now()
			if cur.LeaseUntil != nil && cur.LeaseBy != o.id && now.Before(*cur.LeaseUntil) {
				return nil // another instance is posting it
			}
			d = cur
			until := now.Add(o.leaseFor())
			cur.LeaseBy, cur.LeaseUntil = o.id, &until
			claimed = true
			return tx.Put(KindPending, cur.Key, docID(cur.ID), cur) // the index row stays: time, URL and attempts unchanged
		})
		if err != nil {
			return false, true, fmt.Errorf("outbox: claim delivery %d: %w", d.ID, err)
		}
		if !claimed {
			return false, true, nil
		}
	} else {
		var cur Delivery
		found, err := o.st.Get(ctx, KindPending, d.Key, docID(d.ID), &cur)
		if err != nil {
			return false, true, fmt.Errorf("outbox: reread delivery %d: %w", d.ID, err)
		}
		if !found || cur.URL != d.URL {
			return false, true, nil
		}
		d = cur
	}
	d.LeaseBy, d.LeaseUntil = "", nil
	status, perr := o.post(ctx, d)
	if perr != nil && ctx.Err() != nil {
		return false, false, nil // shutting down: not the receiver's fault, try again after the restart
	}
	at := o.clk.Now().UTC()
	d.Attempts++
	d.LastAt = &at
	d.LastStatus = status
	d.LastError = ""
	ok = perr == nil && status >= 200 && status < 300
	log := o.opt.Logger.With().Int64("delivery", d.ID).Str("url", redact(d.URL)).Int("attempt", d.Attempts).Logger()
	switch {
	case ok:
		d.State = StateDelivered
		d.DoneAt = &at
		log.Debug().Int("status", status).Msg("outbox: delivered")
	case perr != nil:
		d.LastError = perr.Error()
	default:
		d.LastError = fmt.Sprintf("HTTP %d", status)
	}
	if !ok {
		if d.Attempts > len(o.opt.Backoff) {
			d.State = StateFailed
			d.DoneAt = &at
			log.Warn().Str("error", d.LastError).Msg("outbox: giving up after the last retry")
		} else {
			d.NextAt = at.Add(o.opt.Backoff[d.Attempts-1] / time.Duration(o.opt.Speedup))
			log.Info().Str("error", d.LastError).Time("next_at", d.NextAt).Msg("outbox: delivery failed, will retry")
		}
	}
	err = o.st.Tx(context.WithoutCancel(ctx), func(tx *store.Tx) error {
		var now Delivery
		found, err := tx.Get(KindPending, d.Key, docID(d.ID), &now)
		if err != nil || !found {
			return err // given up by a Retarget during the post: recorded there
		}
		if d.State == StatePending {
			d.URL = now.URL // retargeted during the post: the retry goes to the new URL
		}
		return record(tx, d)
	})
	if err != nil {
		return ok, false, fmt.Errorf("outbox: record attempt %d of delivery %d: %w", d.Attempts, d.ID, err)
	}
	if ok {
		o.sent.Add(1)
	}
	return ok, false, nil
}

// leaseFor is how long a claimed delivery is this instance's: the post's
// timeout and a margin (an instance killed mid-post leaves it to the
// others after that).
func (o *Outbox) leaseFor() time.Duration {
	t := o.opt.Client.Timeout
	if t <= 0 {
		t = 60 * time.Second
	}
	return t + 30*time.Second
}

func (o *Outbox) post(ctx context.Context, d Delivery) (int, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, d.URL, bytes.NewReader(d.Body))
	if err != nil {
		return 0, fmt.Errorf("build request: %w", err)
	}
	req.Header.Set("Content-Type", d.ContentType)
	req.Header.Set("User-Agent", "remessa-sandbox-outbox")
	resp, err := o.opt.Client.Do(req)
	if err != nil {
		var ue *url.Error
		if errors.As(err, &ue) {
			err = ue.Err // the URL is in the delivery already; keep the cause
		}
		return 0, err
	}
	_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 1<<16))
	resp.Body.Close()
	return resp.StatusCode, nil
}

// Delivered is how many deliveries this process has delivered.
func (o *Outbox) Delivered() int64 { return o.sent.Load() }

// Run delivers in the background until ctx is cancelled: every Poll and
// right after each Enqueue.
func (o *Outbox) Run(ctx context.Context) {
	t := time.NewTicker(o.opt.Poll)
	defer t.Stop()
	for {
		if _, err := o.RunDue(ctx); err != nil && ctx.Err() == nil {
			o.opt.Logger.Error().Err(err).Msg("outbox: run")
		}
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		case <-o.kick:
			// Let the enqueuing transaction commit first.
			select {
			case <-ctx.Done():
				return
			case <-time.After(20 * time.Millisecond):
			}
		}
	}
}

// redact drops the user info and query of a URL for logs and errors.
func redact(s string) string {
	u, err := url.Parse(s)
	if err != nil {
		return "(URL inválida)"
	}
	u.User = nil
	if u.RawQuery != "" {
		u.RawQuery = "…"
	}
	return u.String()
}
