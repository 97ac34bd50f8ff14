package store

import (
	"context"
	"database/sql"
	"fmt"
	"time"
)

// Group commit: Tx calls queue; the first becomes the leader and runs the
// queued calls (its own first) in one database transaction, each in a
// savepoint taken at its first write (but the first, and Final writes:
// see runGroup), then commits once; it hands the lead to the next waiter
// if more arrived meanwhile.

// maxGroup bounds the calls committed together.
const maxGroup = 64

type txCall struct {
	ctx   context.Context
	fn    func(tx *Tx) error
	err   error
	panic any
	done  chan struct{} // closed when the call is finished
	lead  chan struct{} // closed when the call must lead the next group
}

func (s *Store) group(ctx context.Context, fn func(tx *Tx) error) error {
	c := &txCall{ctx: ctx, fn: fn, done: make(chan struct{}), lead: make(chan struct{})}
	s.gmu.Lock()
	s.queue = append(s.queue, c)
	leader := !s.leading
	if leader {
		s.leading = true
	}
	s.gmu.Unlock()
	if !leader {
		select {
		case <-c.done:
		case <-c.lead:
		}
	}
	select {
	case <-c.done:
	default:
		// Lead: run what is queued (this call first), then hand over.
		s.gmu.Lock()
		n := min(len(s.queue), maxGroup)
		batch := append([]*txCall(nil), s.queue[:n]...)
		s.queue = s.queue[n:]
		s.gmu.Unlock()
		s.runGroup(batch)
		s.gmu.Lock()
		if len(s.queue) > 0 {
			close(s.queue[0].lead)
		} else {
			s.leading = false
		}
		s.gmu.Unlock()
		<-c.done
	}
	if c.panic != nil {
		panic(c.panic)
	}
	return c.err
}

// runGroup runs the calls in one database transaction. A call's
// savepoint is taken at its first write (Tx.beforeWrite), and only when
// an earlier call of the transaction succeeded: until then there is
// nothing in the transaction to keep, so a call that fails after writing
// rolls the whole transaction back and the next call starts a new one (a
// batch's thousands of rows are not copied to a statement journal for a
// rollback that never comes). A call that fails before writing needs no
// rollback at all. A call that declared Final writes without a savepoint
// of its own: if it fails all the same after writing, the whole
// transaction is rolled back, the calls committed in it fail with its
// error, and the next call starts a new one.
func (s *Store) runGroup(batch []*txCall) {
	s.mu.Lock()
	defer s.mu.Unlock()
	finish := func(err error) {
		for _, c := range batch {
			if c.err == nil && c.panic == nil {
				c.err = err
			}
			close(c.done)
		}
	}
	var sqlTx *sql.Tx
	defer func() {
		if sqlTx != nil {
			_ = sqlTx.Rollback()
		}
	}()
	now := time.Now().UnixMilli()
	var written map[docKey]bool
	var bound map[string]*sql.Stmt
	var hooks []func()
	var members []*txCall // the calls that succeeded in the open transaction
	for _, c := range batch {
		if sqlTx == nil {
			var err error
			if sqlTx, err = s.be.begin(batch[0].ctx, s.w); err != nil {
				sqlTx = nil
				finish(fmt.Errorf("store: begin transaction: %w", err))
				return
			}
			written, bound = map[docKey]bool{}, map[string]*sql.Stmt{}
		}
		tx := &Tx{ctx: c.ctx, tx: sqlTx, s: s, now: now, written: written, bound: bound, guard: len(members) > 0}
		c.panic, c.err = runFn(c.fn, tx)
		failed := c.err != nil || c.panic != nil
		switch {
		case tx.sp:
			if failed {
				if _, err := sqlTx.ExecContext(c.ctx, "ROLLBACK TO SAVEPOINT g"); err != nil {
					finish(fmt.Errorf("store: roll back to savepoint: %w", err))
					return
				}
			}
			if _, err := sqlTx.ExecContext(c.ctx, "RELEASE SAVEPOINT g"); err != nil {
				finish(fmt.Errorf("store: release savepoint: %w", err))
				return
			}
		case failed && tx.wrote:
			// Its writes are in no savepoint: the transaction goes whole.
			err := sqlTx.Rollback()
			sqlTx = nil
			if err != nil {
				finish(fmt.Errorf("store: roll back: %w", err))
				return
			}
			cause := c.err
			if c.panic != nil {
				cause = fmt.Errorf("panic: %v", c.panic)
			}
			for _, m := range members {
				m.err = fmt.Errorf("store: rolled back with a call of the same transaction that failed after writing: %w", cause)
			}
			members, hooks = nil, nil
		}
		if !failed {
			hooks = append(hooks, tx.onCommit...)
			members = append(members, c)
		}
	}
	if len(members) == 0 {
		finish(nil) // nothing to commit (rolled back, or nothing written)
		return
	}
	err := sqlTx.Commit()
	sqlTx = nil
	if err != nil {
		finish(fmt.Errorf("store: commit: %w", err))
		return
	}
	s.committed()
	for _, h := range hooks {
		h()
	}
	finish(nil)
}

// runFn runs fn, turning a panic into a value re-raised in the caller's
// goroutine.
func runFn(fn func(tx *Tx) error, tx *Tx) (p any, err error) {
	defer func() {
		if v := recover(); v != nil {
			p = v
		}
	}()
	return nil, fn(tx)
}
