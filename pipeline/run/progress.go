package run

import (
	"encoding/json"
	"fmt"
	"io"
	"sync"
	"time"

	"remessa/internal/metrics"
	"remessa/pipeline/journal"
	"remessa/pipeline/results"
	"remessa/rules"
)

// progress shows how a run goes: a redrawn status line on a terminal
// (rows, batches, rate, ETA), plain lines every few seconds otherwise,
// JSON lines with LogJSON, nothing but the summary with Quiet.
type progress struct {
	mu                    sync.Mutex
	w                     io.Writer
	term, json, quiet     bool
	m                     Meta
	total, done, base     int
	issued, denied, ambig int
	adopt                 int
	nbatch, bdone         int
	started               time.Time
	stopTick              chan struct{}
	wg                    sync.WaitGroup

	// Options.Observe: called outside mu, one call at a time (obsMu), so
	// the snapshots arrive in order
	observe   func(Snapshot)
	obsMu     sync.Mutex
	phaseMsg  string
	final     bool // the Finished snapshot was sent
	finalRes  *results.Results
	finalStop bool
}

// Snapshot is how a run stands: the same counters as the terminal progress.
type Snapshot struct {
	RunID                     string
	Kind                      results.Kind
	Phase                     string // last phase message, Portuguese
	Total, Done               int    // rows to send (accepted rows) and rows with a final answer
	Issued, Denied, Ambiguous int
	Batches, BatchesDone      int
	Rate                      float64       // rows per second since this process started the run
	ETA                       time.Duration // 0 when unknown
	Finished                  bool          // the run or resume returned (complete or stopped)
	Stopped                   bool          // finished with a StopError (resume later)
	At                        time.Time
}

// observeEvery is how often Options.Observe is called while a run goes.
const observeEvery = 500 * time.Millisecond

func newProgress(o Options, m Meta) *progress {
	p := &progress{w: o.Progress, term: o.Terminal && !o.LogJSON, json: o.LogJSON, quiet: o.Quiet, m: m, started: time.Now(), stopTick: make(chan struct{}),
		observe: o.Observe}
	if p.w == nil {
		p.w, p.quiet = io.Discard, true
	}
	if !p.quiet || p.observe != nil {
		p.wg.Add(1)
		go p.tick()
	}
	return p
}

func (p *progress) tick() {
	defer p.wg.Done()
	every := 2 * time.Second
	if p.term {
		every = 200 * time.Millisecond
	}
	// with an observer the ticker runs at least every observeEvery; the
	// status line is still written every `every` (each nth tick)
	interval, nth := every, 1
	if p.observe != nil && interval > observeEvery {
		interval = observeEvery
		nth = int(every / observeEvery)
	}
	t := time.NewTicker(interval)
	defer t.Stop()
	for n := 1; ; n++ {
		select {
		case <-p.stopTick:
			return
		case <-t.C:
			if !p.quiet && n%nth == 0 {
				p.mu.Lock()
				if p.total > 0 {
					p.status()
				}
				p.mu.Unlock()
			}
			p.notify(false)
		}
	}
}

// notify calls the observer (if any) with the current snapshot; final
// sends the Finished one (once; nothing is sent after it).
func (p *progress) notify(final bool) {
	if p.observe == nil {
		return
	}
	p.obsMu.Lock()
	defer p.obsMu.Unlock()
	p.mu.Lock()
	if p.final {
		p.mu.Unlock()
		return
	}
	p.final = final
	s := p.snapshot()
	p.mu.Unlock()
	p.observe(s)
}

// snapshot copies the counters (caller holds mu).
func (p *progress) snapshot() Snapshot {
	now := time.Now()
	s := Snapshot{RunID: p.m.RunID, Kind: p.m.Kind, Phase: p.phaseMsg, Total: p.total, Done: p.done,
		Issued: p.issued, Denied: p.denied, Ambiguous: p.ambig, Batches: p.nbatch, BatchesDone: p.bdone,
		Finished: p.final, Stopped: p.final && p.finalStop, At: now}
	if el := now.Sub(p.started).Seconds(); el > 0 {
		s.Rate = float64(p.done-p.base) / el
	}
	if s.Rate > 0 && p.total > p.done {
		s.ETA = time.Duration(float64(p.total-p.done) / s.Rate * float64(time.Second))
	}
	if r := p.finalRes; p.final && r != nil {
		// the run's own tally (rows finished by earlier processes included)
		t := r.Totals
		s.Issued, s.Denied, s.Ambiguous = t.Issued.Rows, t.Denied.Rows, t.Ambiguous.Rows
		s.Total = max(s.Total, t.In.Rows-t.Refused.Rows)
		s.Done = max(s.Done, t.Issued.Rows+t.Denied.Rows+t.Ambiguous.Rows)
		s.ETA = 0
	}
	return s
}

// close stops the ticker and sends the observer its Finished snapshot if
// finish did not (a run that returned an error).
func (p *progress) close() {
	select {
	case <-p.stopTick:
	default:
		close(p.stopTick)
	}
	p.wg.Wait()
	p.notify(true)
}

func (p *progress) start(total, done int) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.total, p.done, p.base, p.started = total, done, done, time.Now()
}

func (p *progress) batches(n int) {
	p.mu.Lock()
	p.nbatch = n
	p.mu.Unlock()
}

func (p *progress) batchDone() {
	p.mu.Lock()
	p.bdone++
	p.mu.Unlock()
}

func (p *progress) row(state string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	switch state {
	case journal.RowIssued:
		p.issued++
		metrics.RowsFinished(string(p.m.Kind), "issued", 1)
	case journal.RowDenied:
		p.denied++
		metrics.RowsFinished(string(p.m.Kind), "denied", 1)
	case journal.RowAmbiguous:
		p.ambig++
	default:
		return
	}
	p.done++
}

func (p *progress) ambiguous() {}

func (p *progress) adopted() {
	p.mu.Lock()
	p.adopt++
	p.mu.Unlock()
}

// status writes the current state (caller holds mu).
func (p *progress) status() {
	if p.quiet {
		return
	}
	el := time.Since(p.started).Seconds()
	rate := 0.0
	if el > 0 {
		rate = float64(p.done-p.base) / el
	}
	eta := "?"
	if rate > 0 {
		eta = (time.Duration(float64(p.total-p.done)/rate) * time.Second).Round(time.Second).String()
	}
	if p.json {
		b, _ := json.Marshal(map[string]any{"level": "info", "run": p.m.RunID, "rows": p.total, "done": p.done, "issued": p.issued,
			"denied": p.denied, "ambiguous": p.ambig, "batches": p.nbatch, "batches_done": p.bdone, "rate": rate, "eta": eta, "time": time.Now().UTC().Format(time.RFC3339)})
		fmt.Fprintln(p.w, string(b))
		return
	}
	what := "linhas"
	if p.m.Kind == results.Carnets {
		what = "carnês"
	}
	s := fmt.Sprintf("%s %d/%d (emitidos %d, negados %d, incertos %d)", what, p.done, p.total, p.issued, p.denied, p.ambig)
	if p.nbatch > 0 {
		s += fmt.Sprintf(" · lotes %d/%d", p.bdone, p.nbatch)
	}
	s += fmt.Sprintf(" · %.1f/s · faltam %s", rate, eta)
	if p.term {
		fmt.Fprintf(p.w, "\r\033[K%s", s)
	} else {
		fmt.Fprintln(p.w, time.Now().Format("15:04:05"), s)
	}
}

// phase reports a step of the run.
func (p *progress) phase(s string) {
	p.mu.Lock()
	p.phaseMsg = s
	if !p.quiet {
		p.line(s)
	}
	p.mu.Unlock()
	p.notify(false)
}

// say reports something the user must see even with Quiet.
func (p *progress) say(s string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.line(s)
}

func (p *progress) line(s string) {
	if p.w == io.Discard {
		return
	}
	if p.json {
		b, _ := json.Marshal(map[string]any{"level": "info", "run": p.m.RunID, "message": s, "time": time.Now().UTC().Format(time.RFC3339)})
		fmt.Fprintln(p.w, string(b))
		return
	}
	if p.term {
		fmt.Fprint(p.w, "\r\033[K")
	}
	fmt.Fprintln(p.w, s)
}

func (p *progress) finish(r *results.Results, stop *StopError) {
	p.mu.Lock()
	p.finalRes, p.finalStop = r, stop != nil
	p.mu.Unlock()
	p.close()
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.w == io.Discard {
		return
	}
	if p.term && !p.quiet {
		fmt.Fprint(p.w, "\r\033[K")
	}
	t := r.Totals
	if p.json {
		b, _ := json.Marshal(map[string]any{"level": "info", "run": r.Run.ID, "complete": r.Run.Complete, "totals": t, "stopped": stop != nil})
		fmt.Fprintln(p.w, string(b))
		return
	}
	fmt.Fprintf(p.w, "Execução %s: %d linha(s) — emitidas %d (%s), recusadas %d, negadas %d, incertas %d, pendentes %d.\n",
		r.Run.ID, t.In.Rows, t.Issued.Rows, rules.FormatBRL(t.Issued.AmountCents), t.Refused.Rows, t.Denied.Rows, t.Ambiguous.Rows, t.Pending.Rows)
	if ok, why := t.Reconciles(); !ok {
		fmt.Fprintln(p.w, "ATENÇÃO: os totais não fecham:", why)
	}
}
