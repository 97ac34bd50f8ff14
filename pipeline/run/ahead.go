package run

import (
	"context"

	"remessa/pipeline/journal"
)

// Intents journaled ahead (carnets and slips). A POST is sent only once
// its intent is durable: journaled when its worker was free, the intent
// put a commit of the journal's writer (a millisecond or more, behind
// whatever the writer was committing) into every round trip of every
// worker. The run journals instead the intents of the next rows, at most
// two per worker, while the workers' calls are in flight, many in one
// transaction: a worker whose call is answered sends its next row at
// once, after the route's limiter.
//
// An intent journaled and not sent (the run stops first) is withdrawn,
// its row back to pending, in one transaction (journal.Tx.Withdraw); a
// process killed in between leaves the row sending and its call intended,
// which resume resolves by looking the row's custom_id up, as after a
// kill just before a send. Nothing is sent without its intent journaled
// before.

// intent is a POST's call journaled as intended ahead of its send.
type intent struct {
	seq   int64
	route string
	slot  chan struct{} // ahead.slots, one of which the intent holds
}

// ahead journals the intents of the rows to post, at most cap(slots) of
// them not sent at a time: two per worker. While a worker's worth of
// intents (one round) is journaled and not sent, it waits for more slots
// to free and more rows, up to half a round, to journal them in one
// transaction: the intents are a round ahead of their sends, and each
// transaction is a commit of the journal (one per row or two before:
// BenchmarkCarnets2000Latency journaled 2,000 rows' intents in 1,391
// transactions, besides the outcomes').
type ahead struct {
	e       *executor
	workers int
	slots   chan struct{} // one held for each intent journaled and not sent
}

func newAhead(e *executor, workers int) *ahead {
	return &ahead{e: e, workers: workers, slots: make(chan struct{}, 2*workers)}
}

// canWait reports whether a batch of b rows (their slots held, not yet
// journaled) may wait for more: below half a round, with a whole round
// journaled and not sent besides.
func (a *ahead) canWait(b int) bool {
	return b < a.workers/2 && len(a.slots)-b >= a.workers && !a.e.stopping()
}

// run takes the rows of in and hands each to submit: a pending row with
// its intent journaled (r.ahead), any other as it comes (postRow resolves
// it first). It returns when in is closed and every row is handed on.
func (a *ahead) run(ctx context.Context, in <-chan *jrow, submit func(*jrow)) {
	route, _, _ := a.e.postRoute()
	var batch []*jrow
	for r := range in {
		if r.state != journal.RowPending || a.e.stopping() {
			submit(r)
			continue
		}
		a.slots <- struct{}{}
		batch = append(batch[:0], r)
		// the rows already there, while slots are free, or while the
		// batch can wait for them: one transaction
	more:
		for {
			select {
			case a.slots <- struct{}{}:
			default:
				if !a.canWait(len(batch)) {
					break more
				}
				a.slots <- struct{}{} // a worker sends one of the round
			}
			var x *jrow
			var ok bool
			select {
			case x, ok = <-in:
			default:
				if !a.canWait(len(batch) + 1) {
					<-a.slots
					break more
				}
				x, ok = <-in
			}
			if ok && x.state == journal.RowPending {
				batch = append(batch, x)
				continue
			}
			<-a.slots
			if ok {
				submit(x)
				continue
			}
			break more
		}
		a.journal(ctx, route, batch)
		for _, r := range batch {
			if r.ahead == nil {
				<-a.slots // not journaled: postRow journals its intent itself
			}
			submit(r)
		}
	}
}

// journal journals the intents of rows, each counted against the route's
// daily quota first, in one transaction. A row whose intent is not
// journaled (the run stops, the quota is reached, the journal fails)
// keeps r.ahead nil: postRow journals it itself, and stops the run at
// the quota.
func (a *ahead) journal(ctx context.Context, route string, rows []*jrow) {
	e := a.e
	var ok []*jrow
	for _, r := range rows {
		if e.reserve(ctx, route, false) != nil {
			break
		}
		ok = append(ok, r)
	}
	if len(ok) == 0 {
		return
	}
	seqs := make([]int64, len(ok))
	err := e.w.do(func(tx *journal.Tx) error {
		for i, r := range ok {
			var err error
			if seqs[i], err = tx.Intend(route, r.info.CustomID); err != nil {
				return err
			}
			if err := tx.SetRowAttempt(r.idx, journal.RowSending); err != nil {
				return err
			}
		}
		return nil
	})
	for i, r := range ok {
		if err != nil {
			e.unreserve(route)
			continue
		}
		r.ahead = &intent{seq: seqs[i], route: route, slot: a.slots}
	}
}

// sendAhead readies r's intent journaled ahead, if any, to be sent: the
// run goes on and the route's limiter lets it. It returns the call's seq
// (0 for none: r has no intent ahead), or withdraws the intent and
// returns why.
func (e *executor) sendAhead(ctx context.Context, r *jrow) (int64, error) {
	in := r.ahead
	if in == nil {
		return 0, nil
	}
	var err error
	if se := e.stop.Load(); se != nil {
		err = se
	} else if e.svc != nil {
		err = e.svc.limiter.Wait(ctx, in.route)
	}
	if err != nil {
		e.withdraw(r)
		return 0, err
	}
	r.ahead = nil
	<-in.slot
	return in.seq, nil
}

// withdraw takes back r's intent journaled ahead, if any, which will not
// be sent: its call leaves the journal and the row is pending again.
func (e *executor) withdraw(r *jrow) {
	in := r.ahead
	if in == nil {
		return
	}
	r.ahead = nil
	<-in.slot
	err := e.w.do(func(tx *journal.Tx) error {
		if err := tx.Withdraw(in.seq); err != nil {
			return err
		}
		return tx.SetRow(r.idx, journal.RowPending, nil)
	})
	if err != nil {
		// left sending with its call intended: resume looks it up
		e.log.Error().Err(err).Int("row", r.info.SourceRow).Msg("intent journaled ahead not withdrawn")
		r.state = journal.RowSending
		return
	}
	e.unreserve(in.route)
}
