package pix

import (
	"context"
	"errors"
	"runtime/debug"
	"time"

	"remessa/sandbox/store"
)

// Kinds of background work.
const (
	taskLote   = 1 // finish a batch
	taskRefund = 2 // settle a refund (id = e2eid, sub = devolução id)
	taskSend   = 3 // settle a send (id = idEnvio)
)

type task struct {
	kind    int
	account string
	id      string
	sub     string
}

// Start starts the background worker and queues every batch item, refund
// and send persisted as processing (so work survives a restart). Calling
// Start twice is a no-op.
func (m *Module) Start() {
	m.qmu.Lock()
	if m.started {
		m.qmu.Unlock()
		return
	}
	m.started = true
	ctx, cancel := context.WithCancel(context.Background())
	m.stop = cancel
	m.done = make(chan struct{})
	m.qmu.Unlock()

	m.resume(ctx)
	go m.run(ctx)
}

// resume queues every batch, refund and send the store holds as
// processing (at start, and every rescanEvery while idle: work another
// instance over the same database left behind, or a task that failed).
func (m *Module) resume(ctx context.Context) {
	var pending []task
	r := m.rd(ctx)
	for _, acc := range m.accountIDs() {
		ids, err := r.ids(store.Query{Kind: storeLote, Account: acc, Where: []store.Cond{store.Eq(store.ColS1, "1")}})
		if err != nil {
			m.log.Error().Err(err).Msg("pix: scan pending batches")
			return
		}
		for _, id := range ids {
			pending = append(pending, task{kind: taskLote, account: acc, id: id})
		}
		ids, err = r.ids(store.Query{Kind: storePix, Account: acc, Where: []store.Cond{store.Eq(store.ColS2, "1")}})
		if err != nil {
			m.log.Error().Err(err).Msg("pix: scan pending refunds")
			return
		}
		for _, e2e := range ids {
			p, err := r.pix(acc, e2e)
			if err != nil || p == nil {
				continue
			}
			for _, d := range p.Body.Devolucoes {
				if d.Status == RefundProcessando {
					pending = append(pending, task{kind: taskRefund, account: acc, id: e2e, sub: d.ID})
				}
			}
		}
		ids, err = r.ids(store.Query{Kind: storeEnvio, Account: acc, Where: []store.Cond{store.Eq(store.ColS2, "1")}})
		if err != nil {
			m.log.Error().Err(err).Msg("pix: scan pending sends")
			return
		}
		for _, id := range ids {
			pending = append(pending, task{kind: taskSend, account: acc, id: id})
		}
	}
	for _, t := range pending {
		m.enqueue(t)
	}
}

// rescanEvery is how often an idle worker looks for work left as
// processing in the store.
const rescanEvery = 2 * time.Second

// Close stops the worker after the task in hand; unfinished work stays
// persisted as processing and is resumed by the next Start.
func (m *Module) Close() error {
	m.qmu.Lock()
	if !m.started {
		m.qmu.Unlock()
		return nil
	}
	m.started = false
	stop, done := m.stop, m.done
	m.qmu.Unlock()
	stop()
	<-done
	m.qmu.Lock()
	m.idle.Broadcast()
	m.qmu.Unlock()
	return nil
}

func (m *Module) enqueue(t task) {
	m.qmu.Lock()
	if !m.queued[t] {
		m.queued[t] = true
		m.queue = append(m.queue, t)
	}
	m.qmu.Unlock()
	select {
	case m.kick <- struct{}{}:
	default:
	}
}

// WaitIdle blocks until the worker has nothing queued or in hand (or ctx
// ends, or the worker is stopped). Tests and benchmarks use it.
func (m *Module) WaitIdle(ctx context.Context) error {
	stopWatch := context.AfterFunc(ctx, func() {
		m.qmu.Lock()
		m.idle.Broadcast()
		m.qmu.Unlock()
	})
	defer stopWatch()
	m.qmu.Lock()
	defer m.qmu.Unlock()
	for (len(m.queue) > 0 || m.busy > 0) && m.started {
		if ctx.Err() != nil {
			return ctx.Err()
		}
		m.idle.Wait()
	}
	return ctx.Err()
}

func (m *Module) run(ctx context.Context) {
	defer close(m.done)
	for {
		m.qmu.Lock()
		if len(m.queue) == 0 {
			m.idle.Broadcast()
			m.qmu.Unlock()
			select {
			case <-ctx.Done():
				return
			case <-m.kick:
				continue
			case <-time.After(rescanEvery):
				m.resume(ctx)
				continue
			}
		}
		t := m.queue[0]
		m.queue = m.queue[1:]
		delete(m.queued, t)
		m.busy++
		m.qmu.Unlock()

		if m.delay > 0 {
			timer := time.NewTimer(m.delay)
			select {
			case <-ctx.Done():
				timer.Stop()
				m.finishTask()
				return
			case <-timer.C:
			}
		}
		err := m.process(ctx, t)
		if errors.Is(err, errTaskPanicked) {
			// A bug, not a passing failure: retrying would panic again.
			// The work stays persisted as processing; a restart retries it.
			m.finishTask()
			continue
		}
		if err != nil {
			m.log.Error().Err(err).Int("task", t.kind).Str("id", t.id).Msg("pix: background task failed; will retry")
			m.finishTask()
			select {
			case <-ctx.Done():
				return
			case <-time.After(100 * time.Millisecond):
			}
			m.enqueue(t)
			continue
		}
		m.finishTask()
	}
}

// errTaskPanicked reports a task that panicked (already logged).
var errTaskPanicked = errors.New("pix: background task panicked")

// process runs one task; a panic is logged with its stack and returned as
// errTaskPanicked, so a bug in one task cannot take the whole sandbox down.
func (m *Module) process(ctx context.Context, t task) (err error) {
	defer func() {
		if v := recover(); v != nil {
			m.log.Error().Interface("panic", v).Bytes("stack", debug.Stack()).Int("task", t.kind).Str("id", t.id).
				Msg("pix: background task panicked; left as processing until the next start")
			err = errTaskPanicked
		}
	}()
	switch t.kind {
	case taskLote:
		return m.processLote(ctx, t.account, t.id)
	case taskRefund:
		return m.processRefund(ctx, t.account, t.id, t.sub)
	case taskSend:
		return m.processSend(ctx, t.account, t.id)
	}
	return nil
}

func (m *Module) finishTask() {
	m.qmu.Lock()
	m.busy--
	if len(m.queue) == 0 && m.busy == 0 {
		m.idle.Broadcast()
	}
	m.qmu.Unlock()
}
