package pix

import (
	"context"
	"sync"

	"remessa/sandbox/store"
)

// A new batch's PUT looks up which of its txids already have a charge
// before the write lock (precheckCharges, on a reader), not inside it:
// a thousand index seeks less in the section every writer waits for. The
// answer stays exact: charges are never deleted, so one found stays, and
// one created since the look-up is in the module's log of committed
// charges (createdLog, appended by the commits' hooks, which run under
// the write lock) or among the documents an earlier call of the same
// group commit wrote (Tx.Wrote): those txids are looked up again inside
// the transaction (existingCharges). Off on a shared store (PostgreSQL:
// another instance's charges are in no log of this one).

// maxCreatedLog bounds the charges remembered by createdLog: a look-up
// older than that many charges is done again inside the transaction.
const maxCreatedLog = 1 << 16

// createdLog is the module's log of committed charges (account, txid),
// in commit order.
type createdLog struct {
	mu      sync.Mutex
	n       uint64 // charges logged so far
	ring    []createdEntry
	dropped uint64 // the log holds the charges numbered dropped+1..n
}

type createdEntry struct{ account, txid string }

// mark is the position of the log a look-up starts from.
func (l *createdLog) mark() uint64 {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.n
}

// add logs the charges txids of account (a commit's hook).
func (l *createdLog) add(account string, txids []string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.ring == nil {
		l.ring = make([]createdEntry, maxCreatedLog)
	}
	for _, t := range txids {
		l.ring[l.n%maxCreatedLog] = createdEntry{account, t}
		l.n++
	}
	if l.n-l.dropped > maxCreatedLog {
		l.dropped = l.n - maxCreatedLog
	}
}

// since calls fn for each charge of account logged after mark; false
// when the log no longer holds them all.
func (l *createdLog) since(mark uint64, account string, fn func(txid string)) bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	if mark < l.dropped {
		return false
	}
	for i := mark; i < l.n; i++ {
		if e := l.ring[i%maxCreatedLog]; e.account == account {
			fn(e.txid)
		}
	}
	return true
}

// precheck is what precheckCharges found before the write lock.
type precheck struct {
	mark     uint64
	existing map[string]*charge
}

// precheckCharges looks up before the write lock the charges of txids
// (nil on a shared store: existingCharges then reads them all in the
// transaction).
func (m *Module) precheckCharges(ctx context.Context, account string, txids []string) (*precheck, error) {
	if m.st.Shared() {
		return nil, nil
	}
	p := &precheck{mark: m.created.mark()} // before the reader's snapshot
	var err error
	if p.existing, err = m.charges.GetMany(ctx, account, txids); err != nil {
		return nil, err
	}
	if m.afterPrecheck != nil {
		m.afterPrecheck()
	}
	return p, nil
}

// existingCharges returns, as tx sees them, the charges of txids that
// exist: p's answer, but for the txids whose charge may have been
// created since (logged after p's mark, or written earlier in tx's
// group), read in tx; all of them read in tx without p.
func (m *Module) existingCharges(tx *store.Tx, account string, txids []string, p *precheck) (map[string]*charge, error) {
	if p == nil {
		return m.charges.TxGetMany(tx, account, txids)
	}
	want := make(map[string]bool, len(txids))
	var again []string
	for _, t := range txids {
		if tx.Wrote(m.charges.Kind(), account, t) {
			again = append(again, t)
			continue
		}
		want[t] = true
	}
	whole := m.created.since(p.mark, account, func(t string) {
		if want[t] {
			delete(want, t)
			again = append(again, t)
		}
	})
	if !whole {
		return m.charges.TxGetMany(tx, account, txids)
	}
	out := make(map[string]*charge, len(p.existing))
	for t := range want {
		if c := p.existing[t]; c != nil {
			out[t] = c
		}
	}
	if len(again) > 0 {
		fresh, err := m.charges.TxGetMany(tx, account, again)
		if err != nil {
			return nil, err
		}
		for t, c := range fresh {
			out[t] = c
		}
	}
	return out, nil
}
