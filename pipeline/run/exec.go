package run

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/rs/zerolog"

	"remessa/pipeline"
	"remessa/pipeline/journal"
	"remessa/pipeline/results"
)

// Route names as jobs (rate:, quota:) and the journal use them.
const (
	routeCarnet     = pipeline.RouteCarnet
	routeOneStep    = pipeline.RouteOneStep
	routeLotePut    = pipeline.RouteLotePut
	routeLoteGet    = pipeline.RouteLoteGet
	routeCobvList   = pipeline.RouteCobvList
	routeSplitCfg   = pipeline.RouteSplitConfig
	routeSplitLink  = pipeline.RouteSplitVinculo
	routeChargeList = "GET /v1/charges"
	routeCarnetGet  = "GET /v1/carnet/:id"
	routeChargeGet  = "GET /v1/charge/:id"
)

// jrow is a row being worked on.
type jrow struct {
	mu    sync.Mutex
	idx   int
	key   string
	state string
	info  results.Row
	req   rowReq
	cobv  json.RawMessage // a cobv batch's row: its request as journaled (req.Cobv stays nil)
	res   *results.Row    // filled result (nil until the service answered)
	tries int
	ahead *intent // its POST's intent, journaled ahead and not sent yet (ahead.go)
}

type executor struct {
	denied []int64 // identities (keyHash) of the denied rows, set by writeResults
	j      *journal.Journal
	w      *writer
	svc    *Service
	m      Meta
	opts   Options
	log    zerolog.Logger
	prog   *progress
	crash  *crasher
	// counts is how many rows the journal had in each state when this
	// process began: rows themselves are read from the journal a window
	// at a time (a batch, a page of posts, a page of results), never all
	// at once
	counts map[string]int
	quota  map[string]int
	qmu    sync.Mutex
	used   map[string]int // calls per route today
	day    string
	stop   atomic.Pointer[StopError]
	sent   atomic.Int64 // creation calls sent in this process
	window [2]time.Time // lookup window for GET /v1/charges and GET /v2/cobv
	// runStart is when the run began (not this resume): charges created
	// before it are not this run's
	runStart time.Time
	// unit limits the executor to one unit of the run's work (nil: all)
	unit *unitScope
	// finalAfter is how long the last cobv batch took from its PUT to
	// final (time.Duration), for the first poll of the next
	finalAfter atomic.Int64
}

// execute connects to the service and drives every unfinished row of the
// journal to its end (or until a stop), then writes the results.
func execute(ctx context.Context, j *journal.Journal, dir string, opts Options, warnings []string) (*Outcome, error) {
	return executeWith(ctx, j, dir, opts, warnings, (*executor).drive)
}

// executeWith is execute with drive doing the calls once connected.
func executeWith(ctx context.Context, j *journal.Journal, dir string, opts Options, warnings []string, drive func(*executor, context.Context)) (*Outcome, error) {
	unlock, err := lockRun(dir)
	if err != nil {
		return nil, err
	}
	defer unlock()
	metas, err := j.Meta(ctx)
	if err != nil {
		return nil, err
	}
	var m Meta
	if err := json.Unmarshal([]byte(metas["meta"]), &m); err != nil {
		return nil, fmt.Errorf("journal: metadados ilegíveis: %w", err)
	}
	m.relocate(dir)
	log, lc, err := newLogger(dir)
	if err != nil {
		return nil, err
	}
	defer lc.Close()
	log = log.With().Str("run", m.RunID).Logger()
	e := &executor{j: j, m: m, opts: opts, log: log, crash: newCrasher(), used: map[string]int{}}
	e.prog = newProgress(opts, m)
	defer e.prog.close()
	for _, w := range warnings {
		e.prog.say(w)
		log.Warn().Msg(w)
	}
	if n, err := j.AbandonIntended(ctx); err != nil {
		return nil, err
	} else if n > 0 {
		log.Warn().Int64("calls", n).Msg("calls of an interrupted process have an unknown outcome; their rows are looked up before anything is resent")
	}
	if err := e.load(ctx); err != nil {
		return nil, err
	}
	e.w = newWriter(j)
	defer e.w.close()
	e.setupQuota()
	start, _ := time.Parse(time.RFC3339, m.StartedAt)
	e.runStart = start
	e.window = [2]time.Time{start.Add(-24 * time.Hour), opts.now().Add(48 * time.Hour)}

	out := &Outcome{RunID: m.RunID, Dir: dir, Warnings: warnings}
	if e.unfinished() {
		svc, err := e.connect(ctx)
		if err != nil {
			e.stop.Store(&StopError{Reason: "não foi possível conectar ao serviço", Err: err})
		} else {
			defer svc.Close()
			e.svc = svc
			if m.Account == "" && svc.PayeeCode != "" {
				e.m.Account = svc.PayeeCode
				mb, _ := json.Marshal(e.m)
				j.Tx(ctx, func(tx *journal.Tx) error { return tx.SetMeta("meta", string(mb)) })
			}
			log.Info().Str("service", m.Service).Str("base_url", svc.BaseURL).Msg("run started")
			for _, w := range registerWebhooks(ctx, svc, m, opts.PixWebhookURL) {
				out.Warnings = append(out.Warnings, w)
				e.prog.say(w)
				log.Warn().Msg(w)
			}
			e.prog.phase(servicePhase(m.Service, svc.BaseURL))
			// A cancelled ctx (Ctrl-C) stops new calls; calls in flight
			// finish and are journaled, so nothing becomes ambiguous.
			callCtx := context.WithoutCancel(ctx)
			finished := make(chan struct{})
			go func() {
				select {
				case <-ctx.Done():
					e.halt(&StopError{Reason: "interrompida (sinal recebido)", Err: ctx.Err()})
				case <-finished:
				}
			}()
			drive(e, callCtx)
			close(finished)
		}
	}
	if err := e.w.close(); err != nil {
		return nil, fmt.Errorf("journal: %w", err)
	}
	log.Info().Msg("calls finished")
	out.Stop = e.stop.Load()
	if out.Stop != nil {
		log.Warn().Str("reason", out.Stop.Error()).Msg("run stopped")
	}
	res, paths, err := e.writeResults(context.WithoutCancel(ctx), dir)
	if res == nil {
		return nil, err
	}
	out.Results = res
	out.Reports = paths
	log.Info().Msg("results written")
	e.prog.finish(res, out.Stop)
	if err != nil {
		return out, fmt.Errorf("relatórios: %w", err)
	}
	return out, nil
}

// listWindow is the time window of the listings that look up what the
// run created (GET /v1/charges, GET /v2/cobv): from a day before the run
// began to two days after now, on this machine's clock and the
// service's both, since the service dates its charges by its own clock
// (a sandbox moved forward creates them in its future).
func (e *executor) listWindow() (from, to time.Time) {
	from, to = e.window[0], e.opts.now().Add(48*time.Hour)
	if to.Before(e.window[1]) {
		to = e.window[1]
	}
	if e.svc == nil || e.svc.Client == nil {
		return from, to
	}
	r := e.svc.Client.Clock().Reading()
	if !r.Known {
		return from, to
	}
	if skew := r.Skew(); skew < 0 {
		from = from.Add(skew)
	}
	if svcTo := r.Service.Add(48 * time.Hour); svcTo.After(to) {
		to = svcTo
	}
	return from, to
}

// drive makes the calls of the run, or of its unit e.unit, and records
// why it stopped when it did.
func (e *executor) drive(ctx context.Context) {
	var err error
	switch e.m.Kind {
	case results.Cobv:
		err = e.runCobv(ctx)
	default:
		err = e.runPosts(ctx)
	}
	if err != nil {
		var se *StopError
		if !errors.As(err, &se) {
			se = &StopError{Reason: "falha inesperada", Err: err}
		}
		e.stop.CompareAndSwap(nil, se)
	}
}

// unitScope is one unit of a run's work: a cobv batch (batch, 1-based;
// the split configurations it needs first), or the carnet or slip rows
// with an index in [first, end). An executor limited to one (e.unit)
// reads what it needs from the journal and nothing else of the run, so
// the units of a run can be done one at a time, in any order, by
// different processes sharing the journal (workUnits lists them).
type unitScope struct{ batch, first, end int }

// hasBatch says whether batch num is part of the unit (any batch without
// a unit).
func (u *unitScope) hasBatch(num int) bool { return u == nil || u.batch == num }

// narrow limits p to the unit's rows.
func (u *unitScope) narrow(p journal.Page) journal.Page {
	if u == nil || u.batch > 0 {
		return p
	}
	p.After = max(p.After, u.first-1)
	if p.Before <= 0 || u.end < p.Before {
		p.Before = u.end
	}
	return p
}

// postUnitRows is how many carnet or slip rows (by index) one unit holds
// (a variable: a test makes units of fewer rows, export_test.go).
var postUnitRows = 500

// workUnits lists the units of the run in j: its cobv batches, or its
// rows by postUnitRows.
func workUnits(ctx context.Context, j *journal.Journal, kind results.Kind) ([]unitScope, error) {
	var out []unitScope
	if kind == results.Cobv {
		bs, err := j.Batches(ctx)
		if err != nil {
			return nil, err
		}
		for _, b := range bs {
			out = append(out, unitScope{batch: b.Num})
		}
		return out, nil
	}
	counts, err := j.StateCounts(ctx)
	if err != nil {
		return nil, err
	}
	n := 0
	for _, c := range counts {
		n += c
	}
	for first := 0; first < n; first += postUnitRows {
		out = append(out, unitScope{first: first, end: min(first+postUnitRows, n)})
	}
	return out, nil
}

// forUnit is an executor of unit u alone, sharing e's journal, writer,
// service and progress; its stop is its own.
func (e *executor) forUnit(u *unitScope) *executor {
	return &executor{j: e.j, w: e.w, svc: e.svc, m: e.m, opts: e.opts, log: e.log, prog: e.prog, crash: e.crash, counts: e.counts,
		quota: e.quota, used: map[string]int{}, window: e.window, runStart: e.runStart, unit: u}
}

func (e *executor) connect(ctx context.Context) (*Service, error) {
	return connect(ctx, serviceConfigFor(e.m, e.opts, e.log))
}

func (e *executor) load(ctx context.Context) error {
	c, err := e.j.StateCounts(ctx)
	if err != nil {
		return err
	}
	e.counts = c
	return nil
}

// accepted is how many rows have a request (every row but the refused).
func (e *executor) accepted() int {
	n := 0
	for s, c := range e.counts {
		if s != journal.RowRefused {
			n += c
		}
	}
	return n
}

// What decodeRow decodes of a row.
const (
	decodeAll    = iota // description, request, result
	decodeCobv          // the request as raw cobv JSON (for the batch body) and its split key
	decodeResult        // the result; the description only when there is none (or the row is sending)
)

// decodeRow decodes what what asks of a journaled row: a cobv batch sends
// its rows' requests as they were journaled, and results.json needs a
// row's result only, so neither pays for decoding what it does not use.
func decodeRow(r journal.Row, what int) (*jrow, error) {
	jr := &jrow{idx: r.Index, key: r.Key, state: r.State, tries: r.Attempts}
	if r.Res != nil {
		var res results.Row
		if err := unmarshalRow(r.Res, &res); err == nil {
			withBarcodes(&res)
			jr.res = &res
		}
	}
	if what != decodeResult || jr.res == nil || jr.state == journal.RowSending {
		if err := unmarshalRow(r.Info, &jr.info); err != nil {
			return nil, fmt.Errorf("journal: linha %d: %w", r.Index, err)
		}
	}
	if r.Req == nil || what == decodeResult {
		return jr, nil
	}
	if what == decodeCobv {
		if cobv, key, ok := cobvReq(r.Req); ok {
			jr.cobv, jr.req.SplitKey = cobv, key
			return jr, nil
		}
		var req struct {
			Cobv     json.RawMessage `json:"cobv"`
			SplitKey string          `json:"split_key"`
		}
		if err := json.Unmarshal(r.Req, &req); err != nil {
			return nil, fmt.Errorf("journal: linha %d: %w", r.Index, err)
		}
		jr.cobv, jr.req.SplitKey = req.Cobv, req.SplitKey
		return jr, nil
	}
	if err := json.Unmarshal(r.Req, &jr.req); err != nil {
		return nil, fmt.Errorf("journal: linha %d: %w", r.Index, err)
	}
	return jr, nil
}

// cobvReq reads a cobv row's request as seed journals it (json.Marshal
// of a rowReq with a cobv: {"cobv":{…}} or {"cobv":{…},"split_key":"…"})
// without decoding the cobv: its bytes (a slice of b) and the split key.
// ok is false for any other shape (decodeRow decodes it then).
func cobvReq(b []byte) (cobv json.RawMessage, splitKey string, ok bool) {
	const head, key = `{"cobv":`, `,"split_key":`
	if !bytes.HasPrefix(b, []byte(head)) {
		return nil, "", false
	}
	end := objectEnd(b, len(head))
	if end < 0 {
		return nil, "", false
	}
	cobv, rest := b[len(head):end:end], b[end:]
	switch {
	case len(rest) == 1 && rest[0] == '}':
		return cobv, "", true
	case bytes.HasPrefix(rest, []byte(key)) && bytes.HasSuffix(rest, []byte(`"}`)) && rest[len(key)] == '"':
		if json.Unmarshal(rest[len(key):len(rest)-1], &splitKey) != nil {
			return nil, "", false
		}
		return cobv, splitKey, true
	}
	return nil, "", false
}

// objectEnd returns the index just after the JSON object starting at
// b[i] ('{'), minding strings and their escapes; -1 when there is none.
func objectEnd(b []byte, i int) int {
	if i >= len(b) || b[i] != '{' {
		return -1
	}
	depth, str := 0, false
	for ; i < len(b); i++ {
		c := b[i]
		if str {
			switch c {
			case '\\':
				i++
			case '"':
				str = false
			}
			continue
		}
		switch c {
		case '"':
			str = true
		case '{', '[':
			depth++
		case '}', ']':
			depth--
			if depth == 0 {
				if c != '}' {
					return -1
				}
				return i + 1
			}
		}
	}
	return -1
}

// pageRows is how many rows one read of the journal returns.
const pageRows = 256

// eachPage calls fn with the rows p selects, pageRows at a time (p.After
// moves on; p.Limit is ignored), decoded as what says, until there are no
// more or fn says stop.
func (e *executor) eachPage(ctx context.Context, p journal.Page, what int, fn func([]*jrow) (bool, error)) error {
	p.Limit = pageRows
	for {
		page, err := e.j.RowsPage(ctx, p)
		if err != nil || len(page) == 0 {
			return err
		}
		rows := make([]*jrow, len(page))
		for i, r := range page {
			if rows[i], err = decodeRow(r, what); err != nil {
				return err
			}
		}
		p.After = page[len(page)-1].Index
		if more, err := fn(rows); err != nil || !more {
			return err
		}
	}
}

// pageAhead reads aheadRows rows at a time (fewer queries than
// pageRows), and at most pagesAhead pages ahead of the one being used.
const (
	aheadRows  = 1024
	pagesAhead = 3
)

// pageAhead reads a journal's pages ahead of their use: one goroutine
// reads them in turn (journal.ReadPage), decoders (as many as the cores,
// at most two) decode them in that order, and each gives them in order,
// while at most pagesAhead more are read or decoded. A page read ahead is
// not read again.
type pageAhead struct {
	pages  chan *aheadPage // in order, to each
	stop   chan struct{}
	wg     sync.WaitGroup
	closed bool
}

type aheadPage struct {
	data *journal.PageData
	rows []*jrow
	err  error
	done chan struct{} // closed once rows or err is set
}

// readAhead starts reading the pages of the rows p selects (p.Limit is
// ignored), decoded as what says. close must be called once done.
func (e *executor) readAhead(ctx context.Context, p journal.Page, what int) *pageAhead {
	p.Limit = aheadRows
	// a row's values are not used once decoded for results.json (strings
	// are copies): the chunks' bytes go back once a page is decoded
	p.Once = what == decodeResult
	once := p.Once
	a := &pageAhead{pages: make(chan *aheadPage, pagesAhead), stop: make(chan struct{})}
	work := make(chan *aheadPage, pagesAhead+2) // in order, to the decoders (never full: pages bounds them)
	a.wg.Go(func() {
		defer close(a.pages)
		defer close(work)
		for {
			d, err := e.j.ReadPage(ctx, p)
			if err == nil && d.Len() == 0 {
				return
			}
			pg := &aheadPage{data: d, err: err, done: make(chan struct{})}
			if err != nil {
				close(pg.done)
			}
			select {
			case a.pages <- pg:
			case <-a.stop:
				return
			}
			if err != nil {
				return
			}
			p.After = d.Last()
			work <- pg
		}
	})
	for range max(1, min(2, runtime.GOMAXPROCS(0))) {
		a.wg.Go(func() {
			for pg := range work {
				pg.rows, pg.err = decodePage(pg.data, what)
				if once {
					pg.data.Release()
				}
				pg.data = nil
				close(pg.done)
			}
		})
	}
	return a
}

// each calls fn with the pages in order until there are no more, one
// could not be read or decoded, or fn says stop.
func (a *pageAhead) each(fn func([]*jrow) (bool, error)) error {
	for pg := range a.pages {
		<-pg.done
		if pg.err != nil {
			return pg.err
		}
		if more, err := fn(pg.rows); err != nil || !more {
			return err
		}
	}
	return nil
}

// close stops the reading and returns once nothing a started uses the
// journal; again, it does nothing.
func (a *pageAhead) close() {
	if a.closed {
		return
	}
	a.closed = true
	close(a.stop)
	for range a.pages {
	}
	a.wg.Wait()
}

// decodePage decodes a page's rows as what says.
func decodePage(d *journal.PageData, what int) ([]*jrow, error) {
	rows, err := d.Decode()
	if err != nil {
		return nil, err
	}
	out := make([]*jrow, len(rows))
	for i, r := range rows {
		if out[i], err = decodeRow(r, what); err != nil {
			return nil, err
		}
	}
	return out, nil
}

func (e *executor) unfinished() bool {
	for s, n := range e.counts {
		switch s {
		case journal.RowIssued, journal.RowDenied, journal.RowRefused:
		default:
			if n > 0 {
				return true
			}
		}
	}
	if e.m.Kind == results.Cobv {
		bs, _ := e.j.Batches(context.Background())
		for _, b := range bs {
			if b.State != journal.BatchDone {
				return true
			}
		}
	}
	return false
}

// ---- results ----

// head is the run's results without rows and totals: what results.json
// starts with. Whether the run is complete comes from the rows' states
// in the journal, counted there.
func (e *executor) head(ctx context.Context) (*results.Results, error) {
	r := &results.Results{Version: results.FileVersion}
	r.Run = results.RunInfo{ID: e.m.RunID, JobName: e.m.JobName, JobFile: e.m.JobFile, JobSHA256: e.m.JobSHA256,
		InputFile: e.m.InputFile, InputSHA256: e.m.InputSHA256, Kind: e.m.Kind, Service: e.m.Service,
		Account: e.m.Account, Operator: e.m.Operator, StartedAt: e.m.StartedAt, RemessaVersion: Version}
	if e.svc != nil {
		r.Run.BaseURL, r.Run.PixBaseURL = e.svc.BaseURL, e.svc.PixBaseURL
	} else {
		r.Run.BaseURL, r.Run.PixBaseURL = e.m.BaseURL, e.m.PixBaseURL
	}
	counts, err := e.j.StateCounts(ctx)
	if err != nil {
		return nil, err
	}
	complete := true
	for s, n := range counts {
		switch s {
		case journal.RowIssued, journal.RowDenied, journal.RowRefused:
		default: // pending, sending, ambiguous; a cobv created but not fetched
			if n > 0 {
				complete = false
			}
		}
	}
	r.Run.Complete = complete && e.stop.Load() == nil
	if r.Run.Complete || e.stop.Load() != nil {
		r.Run.FinishedAt = e.opts.now().UTC().Format(time.RFC3339)
	}
	return r, nil
}

// resultRow is a journaled row as results.json shows it.
func (e *executor) resultRow(jr *jrow) results.Row {
	row := jr.info
	if jr.res != nil {
		row = *jr.res
	}
	switch jr.state {
	case journal.RowIssued, journal.RowCreated:
		row.Outcome = results.Issued
	case journal.RowDenied:
		row.Outcome = results.Denied
	case journal.RowRefused:
		row.Outcome = results.Refused
	case journal.RowAmbiguous:
		row.Outcome = results.Ambiguous
	case journal.RowSending:
		row.Outcome = results.Ambiguous
		if len(row.Problems) == 0 {
			row.Problems = e.ambiguousRes(jr, errors.New("envio interrompido antes da resposta")).Problems
		}
	default:
		row.Outcome = results.Pending
	}
	return row
}

// eachResult feeds every row's result to yield, in input order, reading
// the journal a page at a time, and returns the totals and the row
// identities (keyHash) of the denied rows, for the runs index.
func (e *executor) eachResult(ctx context.Context, yield func(*results.Row) error) (results.Totals, []int64, error) {
	a := e.readAhead(ctx, journal.Page{After: -1}, decodeResult)
	defer a.close()
	return e.eachResultOf(a, yield)
}

// eachResultOf is eachResult with the rows a reads (from the first).
func (e *executor) eachResultOf(a *pageAhead, yield func(*results.Row) error) (results.Totals, []int64, error) {
	t := results.NewTotals()
	var denied []int64
	err := a.each(func(rows []*jrow) (bool, error) {
		for _, jr := range rows {
			row := e.resultRow(jr)
			t.Add(&row)
			if row.Outcome == results.Denied {
				denied = append(denied, keyHash(row.Key+"|"+row.DueDate))
			}
			if err := yield(&row); err != nil {
				return false, err
			}
		}
		return true, nil
	})
	return t, denied, err
}

// ---- crash points (tests) ----

// crasher kills the process at a chosen point: REMESSA_CRASH_AT=phase:n
// makes the n-th passage through phase send SIGKILL to the process itself,
// so the crash tests can stop a run exactly between two journal writes.
type crasher struct {
	phase string
	n     int64
	seen  atomic.Int64
}

func newCrasher() *crasher {
	v := os.Getenv("REMESSA_CRASH_AT")
	c := &crasher{}
	if i := strings.LastIndexByte(v, ':'); i > 0 {
		if n, err := strconv.ParseInt(v[i+1:], 10, 64); err == nil && n > 0 {
			c.phase, c.n = v[:i], n
		}
	}
	return c
}

func (c *crasher) at(phase string) {
	if c.n == 0 || phase != c.phase {
		return
	}
	if c.seen.Add(1) == c.n {
		killSelf()
	}
}
