package run

import (
	"encoding/json"
	"fmt"
	"io"
	"sync"
	"time"

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
	last                  time.Time
	stopTick              chan struct{}
	wg                    sync.WaitGroup
}

func newProgress(o Options, m Meta) *progress {
	p := &progress{w: o.Progress, term: o.Terminal && !o.LogJSON, json: o.LogJSON, quiet: o.Quiet, m: m, started: time.Now(), stopTick: make(chan struct{})}
	if p.w == nil {
		p.w, p.quiet = io.Discard, true
	}
	if !p.quiet {
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
	t := time.NewTicker(every)
	defer t.Stop()
	for {
		select {
		case <-p.stopTick:
			return
		case <-t.C:
			p.mu.Lock()
			if p.total > 0 {
				p.status()
			}
			p.mu.Unlock()
		}
	}
}

func (p *progress) close() {
	select {
	case <-p.stopTick:
	default:
		close(p.stopTick)
	}
	p.wg.Wait()
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
	case journal.RowDenied:
		p.denied++
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
	defer p.mu.Unlock()
	if p.quiet {
		return
	}
	p.line(s)
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
