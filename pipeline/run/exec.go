package run

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"os"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/alitto/pond/v2"
	"github.com/rs/zerolog"

	"remessa/api"
	"remessa/pipeline"
	"remessa/pipeline/journal"
	"remessa/pipeline/results"
	"remessa/reports"
	"remessa/rules"
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

// postUnitRows is how many carnet or slip rows (by index) one unit holds.
const postUnitRows = 500

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

// setupQuota decides the daily request quota per route.
func (e *executor) setupQuota() {
	e.quota = map[string]int{}
	switch {
	case e.opts.Quota > 0:
		e.quota["default"] = e.opts.Quota
	case len(e.m.Quota) > 0:
		for k, v := range e.m.Quota {
			e.quota[k] = v
		}
	case e.m.Service != "embedded":
		e.quota["default"] = rules.DailyQuotaPerRoute
	}
}

func (e *executor) quotaFor(route string) int {
	if q, ok := e.quota[route]; ok {
		return q
	}
	return e.quota["default"]
}

// nextMidnight is when the daily quotas start again (São Paulo midnight).
func nextMidnight(now time.Time) time.Time {
	sp := now.In(rules.SaoPaulo)
	return time.Date(sp.Year(), sp.Month(), sp.Day()+1, 0, 0, 0, 0, rules.SaoPaulo)
}

// stopping reports whether the run is stopping (no new calls).
func (e *executor) stopping() bool { return e.stop.Load() != nil }

func (e *executor) halt(se *StopError) { e.stop.CompareAndSwap(nil, se) }

// begin waits for the route's rate limiter, checks the daily quota and
// journals the call as intended, with extra journal changes in the same
// transaction.
func (e *executor) begin(ctx context.Context, route, target string, extra func(*journal.Tx) error) (int64, error) {
	if err := e.reserve(ctx, route, true); err != nil {
		return 0, err
	}
	if e.svc != nil {
		if err := e.svc.limiter.Wait(ctx, route); err != nil {
			return 0, err
		}
	}
	var seq int64
	err := e.w.do(func(tx *journal.Tx) error {
		var err error
		if seq, err = tx.Intend(route, target); err != nil {
			return err
		}
		if extra != nil {
			return extra(tx)
		}
		return nil
	})
	return seq, err
}

// reserve checks that the run goes on and counts one call of route
// against its daily quota; a quota reached stops the run when halt says.
func (e *executor) reserve(ctx context.Context, route string, halt bool) error {
	if se := e.stop.Load(); se != nil {
		return se
	}
	if q := e.quotaFor(route); q > 0 {
		e.qmu.Lock()
		day := journal.Day(e.opts.now())
		if day != e.day {
			e.day, e.used = day, map[string]int{}
		}
		n, ok := e.used[route]
		if !ok {
			c, err := e.j.CallsOn(ctx, route, day)
			if err != nil {
				e.qmu.Unlock()
				return err
			}
			n = c
		}
		if n >= q {
			e.qmu.Unlock()
			se := &StopError{Reason: fmt.Sprintf("cota diária de %d requisições da rota %s atingida", q, route), ResumeAt: nextMidnight(e.opts.now())}
			if halt {
				e.halt(se)
			}
			return se
		}
		e.used[route] = n + 1
		e.qmu.Unlock()
	}
	return nil
}

// unreserve gives back a call reserve counted and the run did not make.
func (e *executor) unreserve(route string) {
	if e.quotaFor(route) <= 0 {
		return
	}
	e.qmu.Lock()
	if e.used[route] > 0 {
		e.used[route]--
	}
	e.qmu.Unlock()
}

// end journals a call's outcome with extra changes in the same transaction.
func (e *executor) end(ctx context.Context, seq int64, callErr error, extra func(*journal.Tx) error) error {
	state, status, text := journal.CallOK, 200, ""
	if callErr != nil {
		state, text = journal.CallFailed, api.RedactString(callErr.Error())
		status = 0
		var ae *api.Error
		if errors.As(callErr, &ae) {
			status = ae.Status
		}
		if api.IsAmbiguous(callErr) {
			state = journal.CallUnknown
		}
	}
	return e.w.do(func(tx *journal.Tx) error {
		if err := tx.Finish(seq, state, status, text); err != nil {
			return err
		}
		if extra != nil {
			return extra(tx)
		}
		return nil
	})
}

// endAsync is end without waiting for the commit (see writer).
func (e *executor) endAsync(seq int64, extra func(*journal.Tx) error) {
	e.w.async(func(tx *journal.Tx) error {
		if err := tx.Finish(seq, journal.CallOK, 200, ""); err != nil {
			return err
		}
		return extra(tx)
	})
}

// classify turns a call error into a stop when the run cannot go on
// (quota, service unreachable); nil when the error concerns only the call.
func (e *executor) classify(err error) *StopError {
	if err == nil {
		return nil
	}
	var se *StopError
	if errors.As(err, &se) {
		return se
	}
	var ae *api.Error
	if errors.As(err, &ae) {
		if ae.Status == http.StatusTooManyRequests {
			if ae.Code == 3500049 || ae.RetryAfter > api.DefaultMaxRetryWait || strings.Contains(strings.ToLower(ae.Description+ae.Err), "daily") {
				at := e.opts.now().Add(ae.RetryAfter)
				if ae.RetryAfter <= 0 {
					at = nextMidnight(e.opts.now())
				}
				return &StopError{Reason: "cota diária do serviço esgotada (429)", ResumeAt: at, Err: err}
			}
			return nil
		}
		if ae.Status == http.StatusUnauthorized || ae.Status == http.StatusForbidden {
			return &StopError{Reason: "o serviço recusou as credenciais", Err: err}
		}
		return nil
	}
	if errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
		return &StopError{Reason: "interrompida", Err: err}
	}
	if api.IsAmbiguous(err) {
		return nil
	}
	return &StopError{Reason: "serviço inacessível", Err: err}
}

// transient reports whether a call error means "not processed, try again
// later" (429 after the client's retries, 503).
func transient(err error) bool {
	var ae *api.Error
	if errors.As(err, &ae) && !ae.Ambiguous {
		return ae.Status == http.StatusTooManyRequests || ae.Status == http.StatusServiceUnavailable
	}
	return false
}

// retryable reports whether a call error may go away by itself (429, any
// 5xx, an unknown outcome): a reason to repeat an idempotent call or to
// stop and resume later, never to deny a row.
func retryable(err error) bool {
	if transient(err) || api.IsAmbiguous(err) {
		return true
	}
	var ae *api.Error
	return errors.As(err, &ae) && ae.Status >= 500
}

// problemOf describes a service refusal for the results.
func problemOf(err error) results.Problem {
	var ae *api.Error
	p := results.Problem{Code: "erro_servico", Message: api.RedactString(err.Error()), MessageEN: api.RedactString(err.Error())}
	if errors.As(err, &ae) {
		switch {
		case ae.Code != 0:
			p.Code = strconv.Itoa(ae.Code)
			p.Field = ae.Property
			if ae.Description != "" {
				p.Message = ae.Description
			}
		case ae.Problem != nil:
			p.Code = ae.Problem.TypeName()
			p.Message = ae.Problem.Title
			if ae.Problem.Detail != "" {
				p.Message += ": " + ae.Problem.Detail
			}
			for _, v := range ae.Problem.Violacoes {
				p.Message += "; " + v.Propriedade + ": " + v.Razao
			}
		case ae.Nome != "":
			p.Code, p.Message = ae.Nome, ae.Mensagem
		}
	}
	p.Action = "corrija a linha e envie-a de novo numa nova execução (ela está no arquivo de linhas rejeitadas)"
	p.ActionEN = "fix the row and send it again in a new run (it is in the rejected rows file)"
	return p
}

// ---- carnets and slips: one POST per row ----

func (e *executor) runPosts(ctx context.Context) error {
	n := e.concurrency()
	pool := pond.NewPool(n)
	defer pool.StopAndWait()
	group := pool.NewGroup()
	acc, final := e.accepted(), e.counts[journal.RowIssued]+e.counts[journal.RowDenied]
	e.prog.start(acc, final)
	e.prog.phase(fmt.Sprintf("%d linha(s) a emitir, %d simultâneas", acc-final, n))
	// rows come from the journal a page at a time and at most window of
	// them are in flight or queued: memory follows the concurrency, not
	// the rows
	window := make(chan struct{}, max(2*pageRows, 8*n))
	submit := func(r *jrow) {
		group.Submit(func() {
			defer func() { <-window }()
			if e.stopping() {
				e.withdraw(r)
				return
			}
			if err := e.postRow(ctx, r); err != nil {
				if se := e.classify(err); se != nil {
					e.halt(se)
				} else {
					e.log.Error().Err(err).Int("row", r.info.SourceRow).Msg("row failed")
				}
			}
			e.prog.row(r.state)
		})
	}
	ah := newAhead(e, n)
	in := make(chan *jrow)
	prepared := make(chan struct{})
	go func() {
		defer close(prepared)
		ah.run(ctx, in, submit)
	}()
	err := e.eachPage(ctx, e.unit.narrow(journal.Page{After: -1, Not: []string{journal.RowRefused, journal.RowIssued, journal.RowDenied}}), decodeAll,
		func(rows []*jrow) (bool, error) {
			for _, r := range rows {
				if e.stopping() {
					return false, nil
				}
				window <- struct{}{}
				in <- r
			}
			return !e.stopping(), nil
		})
	close(in)
	<-prepared
	group.Wait()
	return err
}

func (e *executor) concurrency() int {
	n := e.opts.Concurrency
	if n <= 0 {
		n = e.m.Concurrency
	}
	if n <= 0 {
		n = pipeline.DefaultConcurrency
	}
	return n
}

func (e *executor) postRoute() (route, path, chargeType string) {
	if e.m.Kind == results.Carnets {
		return routeCarnet, "/v1/carnet", "carnet"
	}
	return routeOneStep, "/v1/charge/one-step", "billet"
}

// postRow brings one carnet or slip row to issued, denied or ambiguous.
func (e *executor) postRow(ctx context.Context, r *jrow) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	route, path, _ := e.postRoute()
	var body any
	if r.req.Carnet != nil {
		body = r.req.Carnet
	} else {
		body = r.req.Slip
	}
	// An earlier attempt whose outcome is unknown is resolved first.
	if r.state == journal.RowSending || r.state == journal.RowAmbiguous {
		found, err := e.resolve(ctx, r)
		if err != nil {
			if se := e.classify(err); se != nil && !errors.Is(err, context.Canceled) {
				return se
			}
			return e.setRow(ctx, r, journal.RowAmbiguous, e.ambiguousRes(r, err))
		}
		if found {
			return nil
		}
	}
	for attempt := 0; ; attempt++ {
		if e.opts.StopAfter > 0 && int(e.sent.Load()) >= e.opts.StopAfter {
			e.halt(&StopError{Reason: "parada pedida (teste)"})
		}
		seq, err := e.sendAhead(ctx, r) // its intent journaled ahead (ahead.go)
		if seq == 0 && err == nil {
			seq, err = e.begin(ctx, route, r.info.CustomID, func(tx *journal.Tx) error {
				return tx.SetRowAttempt(r.idx, journal.RowSending)
			})
		}
		if err != nil {
			return err
		}
		r.state = journal.RowSending
		e.crash.at("post-intent")
		e.sent.Add(1)
		resp, callErr := e.svc.Client.Do(ctx, api.V1, http.MethodPost, path, body)
		e.crash.at("post-sent")
		if callErr == nil {
			res, perr := e.parsePost(r, resp.Body)
			if perr != nil {
				// created, but the answer is unreadable: find it by custom_id
				callErr = fmt.Errorf("%w: resposta ilegível: %v", api.ErrAmbiguous, perr)
			} else {
				b := journalRes(res)
				e.endAsync(seq, func(tx *journal.Tx) error { return tx.SetRow(r.idx, journal.RowIssued, b) })
				r.state, r.res = journal.RowIssued, res
				return nil
			}
		}
		switch {
		case api.IsAmbiguous(callErr):
			if err := e.end(ctx, seq, callErr, nil); err != nil {
				return err
			}
			e.log.Warn().Err(callErr).Int("row", r.info.SourceRow).Msg("outcome unknown; looking it up")
			e.prog.ambiguous()
			e.settle(ctx)
			found, err := e.resolve(ctx, r)
			if err != nil {
				return e.setRow(ctx, r, journal.RowAmbiguous, e.ambiguousRes(r, err))
			}
			if found {
				return nil
			}
			if attempt >= 4 {
				return e.setRow(ctx, r, journal.RowAmbiguous, e.ambiguousRes(r, callErr))
			}
		case transient(callErr) && e.classify(callErr) == nil:
			if err := e.end(ctx, seq, callErr, func(tx *journal.Tx) error { return tx.SetRow(r.idx, journal.RowPending, nil) }); err != nil {
				return err
			}
			r.state = journal.RowPending
			if attempt >= 6 {
				return &StopError{Reason: "o serviço continua recusando por excesso de requisições ou indisponibilidade", Err: callErr}
			}
			sleepCtx(ctx, backoff(attempt))
		default:
			if se := e.classify(callErr); se != nil {
				// not processed (429 quota, unreachable before sending): back to pending
				if err := e.end(ctx, seq, callErr, func(tx *journal.Tx) error { return tx.SetRow(r.idx, journal.RowPending, nil) }); err != nil {
					return err
				}
				r.state = journal.RowPending
				return se
			}
			res := r.info
			res.Problems = append(res.Problems, problemOf(callErr))
			return e.endRow(ctx, seq, callErr, r, journal.RowDenied, &res)
		}
	}
}

func (e *executor) endRow(ctx context.Context, seq int64, callErr error, r *jrow, state string, res *results.Row) error {
	b := journalRes(res)
	err := e.end(ctx, seq, callErr, func(tx *journal.Tx) error { return tx.SetRow(r.idx, state, b) })
	if err == nil {
		r.state, r.res = state, res
	}
	return err
}

func (e *executor) setRow(ctx context.Context, r *jrow, state string, res *results.Row) error {
	var b []byte
	if res != nil {
		b = journalRes(res)
	}
	err := e.j.Tx(context.WithoutCancel(ctx), func(tx *journal.Tx) error { return tx.SetRow(r.idx, state, b) })
	if err == nil {
		r.state = state
		if res != nil {
			r.res = res
		}
	}
	return err
}

func (e *executor) ambiguousRes(r *jrow, err error) *results.Row {
	res := r.info
	res.Problems = []results.Problem{{Code: "resultado_incerto",
		Message:   "o envio pode ter sido processado e não foi possível confirmar pelo custom_id " + r.info.CustomID + ": " + api.RedactString(err.Error()),
		MessageEN: "the request may have been processed and could not be confirmed by custom_id " + r.info.CustomID,
		Action:    "rode \"remessa resume\" mais tarde: a linha será procurada de novo e só será enviada se certamente não existir",
		ActionEN:  "run \"remessa resume\" later: the row is looked up again and only sent if it certainly does not exist"}}
	return &res
}

func (e *executor) settle(ctx context.Context) {
	d := e.opts.SettleDelay
	if d == 0 {
		d = 500 * time.Millisecond
	}
	if d > 0 {
		sleepCtx(ctx, d)
	}
}

func backoff(attempt int) time.Duration {
	d := 200 * time.Millisecond << min(attempt, 5)
	return min(d, 5*time.Second)
}

func sleepCtx(ctx context.Context, d time.Duration) {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
	case <-t.C:
	}
}

// resolve looks the row's custom_id up (GET /v1/charges) and adopts what
// exists. found false with a nil error means it certainly does not exist.
func (e *executor) resolve(ctx context.Context, r *jrow) (bool, error) {
	_, _, ctype := e.postRoute()
	q := url.Values{}
	q.Set("charge_type", ctype)
	q.Set("custom_id", r.info.CustomID)
	q.Set("begin_date", e.window[0].In(rules.SaoPaulo).Format("2006-01-02"))
	end := e.opts.now().Add(48 * time.Hour)
	if end.Before(e.window[1]) {
		end = e.window[1]
	}
	q.Set("end_date", end.In(rules.SaoPaulo).Format("2006-01-02"))
	q.Set("limit", "100")
	var list []struct {
		ID        int64  `json:"id"`
		CreatedAt string `json:"created_at"`
		Payment   *struct {
			Carnet *struct {
				CarnetID int64 `json:"carnet_id"`
			} `json:"carnet"`
		} `json:"payment"`
	}
	if err := e.v1Get(ctx, routeChargeList, "/v1/charges?"+q.Encode(), r.info.CustomID, &list); err != nil {
		return false, err
	}
	// A custom_id of the job's own (a template such as "{{ .Matrícula }}")
	// may repeat across runs: what was created before this run began is
	// another run's charge, never this row's.
	kept := list[:0]
	for _, it := range list {
		if !createdBefore(it.CreatedAt, e.runStart.Add(-createdSkew)) {
			kept = append(kept, it)
		}
	}
	list = kept
	if len(list) == 0 {
		e.log.Info().Int("row", r.info.SourceRow).Str("custom_id", r.info.CustomID).Msg("not found: will send")
		return false, nil
	}
	e.prog.adopted()
	var body []byte
	var err error
	if e.m.Kind == results.Carnets {
		id := int64(0)
		for _, it := range list {
			if it.Payment != nil && it.Payment.Carnet != nil {
				if id == 0 || it.Payment.Carnet.CarnetID < id {
					id = it.Payment.Carnet.CarnetID
				}
			}
		}
		if id == 0 {
			return false, fmt.Errorf("custom_id %s listado sem carnet_id", r.info.CustomID)
		}
		body, err = e.v1GetRaw(ctx, routeCarnetGet, "/v1/carnet/"+strconv.FormatInt(id, 10))
	} else {
		id := list[0].ID
		for _, it := range list {
			id = min(id, it.ID)
		}
		body, err = e.v1GetRaw(ctx, routeChargeGet, "/v1/charge/"+strconv.FormatInt(id, 10))
	}
	if err != nil {
		return false, err
	}
	res, err := e.parsePost(r, body)
	if err != nil {
		return false, err
	}
	if len(list) > 1 && e.m.Kind != results.Carnets {
		res.Problems = append(res.Problems, results.Problem{Code: "custom_id_repetido",
			Message: fmt.Sprintf("%d cobranças com o custom_id %s; adotada a de menor id", len(list), r.info.CustomID)})
	}
	e.log.Info().Int("row", r.info.SourceRow).Str("custom_id", r.info.CustomID).Msg("found: adopted")
	return true, e.setRow(ctx, r, journal.RowIssued, res)
}

// createdSkew is how far the service's clock may run behind ours when
// telling this run's charges from an earlier run's with the same custom_id.
const createdSkew = 10 * time.Minute

// createdBefore reports whether a charge's created_at ("YYYY-MM-DD
// HH:MM:SS", São Paulo time) is before t. A value it cannot read is not
// before: the charge is kept as a candidate.
func createdBefore(createdAt string, t time.Time) bool {
	c, err := time.ParseInLocation("2006-01-02 15:04:05", createdAt, rules.SaoPaulo)
	return err == nil && c.Before(t)
}

// v1Get journals and sends a GET to the charges API, decoding data into out.
func (e *executor) v1Get(ctx context.Context, route, path, target string, out any) error {
	b, err := e.v1GetRawT(ctx, route, path, target)
	if err != nil {
		return err
	}
	var env struct {
		Data json.RawMessage `json:"data"`
	}
	if err := json.Unmarshal(b, &env); err != nil {
		return fmt.Errorf("%s: resposta ilegível: %w", route, err)
	}
	return json.Unmarshal(env.Data, out)
}

func (e *executor) v1GetRaw(ctx context.Context, route, path string) ([]byte, error) {
	return e.v1GetRawT(ctx, route, path, path)
}

func (e *executor) v1GetRawT(ctx context.Context, route, path, target string) ([]byte, error) {
	seq, err := e.begin(ctx, route, target, nil)
	if err != nil {
		return nil, err
	}
	resp, callErr := e.svc.Client.Do(ctx, api.V1, http.MethodGet, path, nil)
	if err := e.end(ctx, seq, callErr, nil); err != nil {
		return nil, err
	}
	if callErr != nil {
		return nil, callErr
	}
	return resp.Body, nil
}

// Charges API answers (creation and query forms).
type pixOut struct {
	QRCode string `json:"qrcode"`
}
type parcelOut struct {
	ChargeID int64           `json:"charge_id"`
	Parcel   json.RawMessage `json:"parcel"`
	Status   string          `json:"status"`
	Value    int64           `json:"value"`
	ExpireAt string          `json:"expire_at"`
	URL      string          `json:"url"`
	PDF      struct {
		Charge string `json:"charge"`
	} `json:"pdf"`
	Barcode string  `json:"barcode"`
	Pix     *pixOut `json:"pix"`
}
type carnetOut struct {
	CarnetID int64  `json:"carnet_id"`
	Link     string `json:"link"`
	Cover    string `json:"cover"`
	PDF      struct {
		Carnet string `json:"carnet"`
	} `json:"pdf"`
	Charges []parcelOut `json:"charges"`
}
type billetOut struct {
	Barcode  string  `json:"barcode"`
	Pix      *pixOut `json:"pix"`
	Link     string  `json:"link"`
	ExpireAt string  `json:"expire_at"`
	PDF      struct {
		Charge string `json:"charge"`
	} `json:"pdf"`
}
type slipOut struct {
	ChargeID int64 `json:"charge_id"`
	Total    int64 `json:"total"`
	billetOut
	// Payment is "banking_billet" on creation and an object on GET.
	Payment json.RawMessage `json:"payment"`
}

// parsePost turns a creation answer (or the GET of what was created) into
// the row's result.
func (e *executor) parsePost(r *jrow, body []byte) (*results.Row, error) {
	res := r.info
	res.Problems = nil
	if e.m.Kind == results.Carnets {
		c, err := answerData[carnetOut](body)
		if err != nil {
			return nil, err
		}
		if c.CarnetID == 0 || len(c.Charges) == 0 {
			return nil, errors.New("carnê sem carnet_id ou parcelas")
		}
		res.CarnetID, res.Link, res.Cover, res.PDF = c.CarnetID, c.Link, c.Cover, c.PDF.Carnet
		res.ChargeIDs = nil
		res.Parcels = nil
		for i, p := range c.Charges {
			n := i + 1
			if s := strings.Trim(string(p.Parcel), `"`); s != "" {
				if x, err := strconv.Atoi(s); err == nil {
					n = x
				}
			}
			pc := results.Parcel{Number: n, ChargeID: p.ChargeID, DueDate: p.ExpireAt, ValueCents: p.Value, Status: p.Status,
				TypedLine: p.Barcode, Link: p.URL, PDF: p.PDF.Charge}
			if bc, err := rules.BarcodeFromTypedLine(p.Barcode); err == nil {
				pc.Barcode = bc
			}
			if p.Pix != nil {
				pc.PixCopiaECola = p.Pix.QRCode
			}
			res.ChargeIDs = append(res.ChargeIDs, p.ChargeID)
			res.Parcels = append(res.Parcels, pc)
		}
		if len(res.Parcels) > 0 {
			res.DueDate = res.Parcels[0].DueDate
		}
		return &res, nil
	}
	s, err := answerData[slipOut](body)
	if err != nil {
		return nil, err
	}
	b := s.billetOut
	if len(s.Payment) > 0 && s.Payment[0] == '{' {
		var p struct {
			BankingBillet *billetOut `json:"banking_billet"`
		}
		if err := json.Unmarshal(s.Payment, &p); err == nil && p.BankingBillet != nil {
			b = *p.BankingBillet
		}
	}
	if s.ChargeID == 0 || b.Barcode == "" {
		return nil, errors.New("boleto sem charge_id ou linha digitável")
	}
	res.ChargeIDs = []int64{s.ChargeID}
	res.TypedLine, res.Link, res.PDF = b.Barcode, b.Link, b.PDF.Charge
	if bc, err := rules.BarcodeFromTypedLine(b.Barcode); err == nil {
		res.Barcode = bc
	}
	if b.Pix != nil {
		res.PixCopiaECola = b.Pix.QRCode
	}
	if b.ExpireAt != "" {
		res.DueDate = b.ExpireAt
	}
	return &res, nil
}

// storedRes is a result as the journal keeps it: without the barcodes,
// which are derived from the typed lines (parsePost does, and
// withBarcodes does again when the result is read): 44 digits a slip or
// a parcel that need not be stored. A barcode that is not the one its
// typed line gives is kept.
func storedRes(res *results.Row) []byte {
	c := storedRow(res)
	return reports.MarshalRow(&c)
}

// journalRes is storedRes as SetRow is given it: a result with parcels
// packed (journal.PackResult) here rather than in the journal's
// transaction, where it would hold the intents waiting to be committed.
func journalRes(res *results.Row) []byte {
	c := storedRow(res)
	return journal.PackResult(&c, reports.MarshalRow(&c))
}

// storedRow is the copy of res storedRes writes.
func storedRow(res *results.Row) results.Row {
	derived := func(typed, bar string) bool {
		b, err := rules.BarcodeFromTypedLine(typed)
		return bar == "" || err == nil && b == bar
	}
	c := *res
	if c.Barcode != "" && derived(c.TypedLine, c.Barcode) {
		c.Barcode = ""
	}
	if len(c.Parcels) > 0 {
		c.Parcels = append([]results.Parcel(nil), c.Parcels...)
		for i := range c.Parcels {
			if p := &c.Parcels[i]; p.Barcode != "" && derived(p.TypedLine, p.Barcode) {
				p.Barcode = ""
			}
		}
	}
	return c
}

// marshalRes is json.Marshal's bytes of a result (reports.MarshalRow's,
// without reflection), "null" for none.
func marshalRes(r *results.Row) []byte {
	if r == nil {
		return []byte("null")
	}
	return reports.MarshalRow(r)
}

// withBarcodes puts back the barcodes storedRes left out.
func withBarcodes(res *results.Row) {
	if res.Barcode == "" && res.TypedLine != "" {
		if b, err := rules.BarcodeFromTypedLine(res.TypedLine); err == nil {
			res.Barcode = b
		}
	}
	for i := range res.Parcels {
		if p := &res.Parcels[i]; p.Barcode == "" && p.TypedLine != "" {
			if b, err := rules.BarcodeFromTypedLine(p.TypedLine); err == nil {
				p.Barcode = b
			}
		}
	}
}

// answerData decodes the "data" member of an answer in one pass (the
// answers carry QR images: decoding them twice costs).
func answerData[T any](body []byte) (*T, error) {
	var env struct {
		Data *T `json:"data"`
	}
	if err := json.Unmarshal(body, &env); err != nil || env.Data == nil {
		return nil, fmt.Errorf("sem data: %v", err)
	}
	return env.Data, nil
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
	t := results.NewTotals()
	var denied []int64
	err := e.eachPage(ctx, journal.Page{After: -1}, decodeResult, func(rows []*jrow) (bool, error) {
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
