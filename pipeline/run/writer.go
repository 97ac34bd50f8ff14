package run

import (
	"context"
	"sync"

	"remessa/pipeline/journal"
)

// writer group-commits journal changes: many workers' intents and
// outcomes go into one SQLite transaction. do waits for the commit (an
// intent must be durable before its call is sent); async does not (an
// outcome lost to a crash leaves its row "sending", which resume resolves
// by looking the custom_id up — the same as a crash just before the write).
type writer struct {
	j    *journal.Journal
	ch   chan wop
	wg   sync.WaitGroup
	mu   sync.Mutex
	err  error
	once sync.Once
}

type wop struct {
	fn   func(*journal.Tx) error
	done chan error // nil for async
}

func newWriter(j *journal.Journal) *writer {
	w := &writer{j: j, ch: make(chan wop, 1024)}
	w.wg.Add(1)
	go w.run()
	return w
}

func (w *writer) run() {
	defer w.wg.Done()
	ops := make([]wop, 0, 256)
	for op := range w.ch {
		ops = append(ops[:0], op)
	drain:
		for len(ops) < 256 {
			select {
			case o, ok := <-w.ch:
				if !ok {
					break drain
				}
				ops = append(ops, o)
			default:
				break drain
			}
		}
		errs := make([]error, len(ops))
		err := w.j.Tx(context.Background(), func(tx *journal.Tx) error {
			for i, o := range ops {
				errs[i] = o.fn(tx)
				if errs[i] != nil && o.done == nil {
					return errs[i]
				}
			}
			return nil
		})
		if err != nil {
			// retry one by one so one bad op does not sink the others
			for i, o := range ops {
				errs[i] = w.j.Tx(context.Background(), o.fn)
			}
		}
		for i, o := range ops {
			if o.done != nil {
				o.done <- errs[i]
			} else if errs[i] != nil {
				w.mu.Lock()
				if w.err == nil {
					w.err = errs[i]
				}
				w.mu.Unlock()
			}
		}
	}
}

// do applies fn in a (shared) transaction and waits for its commit.
func (w *writer) do(fn func(*journal.Tx) error) error {
	done := make(chan error, 1)
	w.ch <- wop{fn: fn, done: done}
	return <-done
}

// async applies fn in a later (shared) transaction.
func (w *writer) async(fn func(*journal.Tx) error) { w.ch <- wop{fn: fn} }

// close flushes everything and returns the first async error.
func (w *writer) close() error {
	w.once.Do(func() { close(w.ch) })
	w.wg.Wait()
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.err
}
