package run

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"sync"
	"time"

	"github.com/alitto/pond/v2"

	"remessa/api"
	"remessa/pipeline/journal"
	"remessa/pipeline/results"
)

// runCobv sends the split configurations, then every batch (batches in
// parallel up to the concurrency: batch 2 goes out while batch 1 is
// processing), and for each final batch the split links and the paged
// fetch of the charges.
func (e *executor) runCobv(ctx context.Context) error {
	splits, err := e.j.Splits(ctx)
	if err != nil {
		return err
	}
	cfgID := map[string]string{}
	for _, s := range splits {
		cfgID[s.Key] = s.ID
		if s.State == "done" || s.State == "refused" {
			continue
		}
		var callErr error
		for attempt := 0; ; attempt++ {
			seq, err := e.begin(ctx, routeSplitCfg, s.ID, nil)
			if err != nil {
				return err
			}
			e.crash.at("split-config")
			_, callErr = e.svc.Client.Do(ctx, api.Pix, http.MethodPut, "/v2/gn/split/config/"+s.ID, json.RawMessage(s.Body))
			if err := e.end(ctx, seq, callErr, func(tx *journal.Tx) error {
				if callErr == nil {
					return tx.SetSplit(s.Key, "done")
				}
				return nil
			}); err != nil {
				return err
			}
			if callErr == nil {
				break
			}
			if se := e.classify(callErr); se != nil {
				return se
			}
			if !retryable(callErr) {
				break
			}
			// a PUT with an id is safe to repeat; a service that keeps
			// failing stops the run (resumable), it never denies the rows
			if attempt >= 6 {
				return &StopError{Reason: "o serviço continua falhando ao receber a configuração de split " + s.ID, Err: callErr}
			}
			sleepCtx(ctx, backoff(attempt))
		}
		if callErr != nil {
			// refused configuration: its rows are denied (nothing of them is
			// sent), the other rows go on
			p := problemOf(callErr)
			p.Code = "split_recusado:" + p.Code
			p.Message = "o serviço recusou a configuração de split " + s.ID + ": " + p.Message
			p.Action = "corrija o split no job (contas favorecidas, percentuais) e envie estas linhas numa nova execução"
			p.ActionEN = "fix the job's split (receiving accounts, percentages) and send these rows in a new run"
			if err := e.denySplit(ctx, s.Key, p); err != nil {
				return err
			}
			e.prog.say(p.Message + " (as linhas desta configuração foram negadas)")
		}
	}
	batches, err := e.j.Batches(ctx)
	if err != nil {
		return err
	}
	spans, err := e.j.BatchRows(ctx, batches)
	if err != nil {
		return err
	}
	e.prog.start(e.accepted(), e.counts[journal.RowIssued]+e.counts[journal.RowDenied])
	e.prog.batches(len(batches))
	n := e.concurrency()
	bpool := pond.NewPool(min(n, max(1, len(batches))))
	defer bpool.StopAndWait()
	lpool := pond.NewPool(n)
	defer lpool.StopAndWait()
	g := bpool.NewGroup()
	for i, b := range batches {
		if !e.unit.hasBatch(b.Num) {
			continue
		}
		if b.State == journal.BatchDone {
			e.prog.batchDone()
			continue
		}
		span := spans[i]
		g.Submit(func() {
			if err := e.doBatch(ctx, b, span, cfgID, lpool); err != nil {
				se := e.classify(err)
				if se == nil {
					se = &StopError{Reason: fmt.Sprintf("lote %d", b.Num), Err: err}
				}
				e.halt(se)
			}
		})
	}
	g.Wait()
	return nil
}

// denySplit denies the pending rows of a split configuration the service
// refused (nothing of them is sent), a page of rows to a transaction, and
// then records the refusal: a run stopped in between is resumed by
// sending the configuration again, which the service refuses again, and
// the rows still pending are denied then.
func (e *executor) denySplit(ctx context.Context, key string, p results.Problem) error {
	ctx = context.WithoutCancel(ctx)
	err := e.eachPage(ctx, journal.Page{After: -1, Only: []string{journal.RowPending}}, decodeCobv, func(rows []*jrow) (bool, error) {
		return true, e.j.Tx(ctx, func(tx *journal.Tx) error {
			for _, r := range rows {
				if r.req.SplitKey != key {
					continue
				}
				res := r.info
				res.Problems = []results.Problem{p}
				rb, _ := json.Marshal(res)
				if err := tx.SetRow(r.idx, journal.RowDenied, rb); err != nil {
					return err
				}
			}
			return nil
		})
	})
	if err != nil {
		return err
	}
	return e.j.Tx(ctx, func(tx *journal.Tx) error { return tx.SetSplit(key, "refused") })
}

// batchRows reads a batch's rows from the journal: the accepted rows with
// an index in span.
func (e *executor) batchRows(ctx context.Context, span [2]int) ([]*jrow, error) {
	page, err := e.j.RowsPage(ctx, journal.Page{After: span[0] - 1, Before: span[1], Not: []string{journal.RowRefused}})
	if err != nil {
		return nil, err
	}
	rows := make([]*jrow, 0, len(page))
	for _, r := range page {
		jr, err := decodeRow(r, decodeCobv)
		if err != nil {
			return nil, err
		}
		rows = append(rows, jr)
	}
	return rows, nil
}

// doBatch brings one batch to its end: sent, polled until final, its
// charges linked to their split and fetched. It reads its rows from the
// journal and needs nothing else of the run: a unit of work.
func (e *executor) doBatch(ctx context.Context, b journal.Batch, span [2]int, cfgID map[string]string, lpool pond.Pool) error {
	all, err := e.batchRows(ctx, span)
	if err != nil {
		return err
	}
	if len(all) != b.End-b.First {
		return fmt.Errorf("journal: lote %d: %d linhas, esperava %d", b.Num, len(all), b.End-b.First)
	}
	// rows denied before any batch was sent (refused split configuration)
	// are not part of the batch, on every attempt alike
	var rows []*jrow
	for _, r := range all {
		if r.state == journal.RowDenied && r.info.BatchID == "" && (r.res == nil || r.res.BatchID == "") {
			continue
		}
		rows = append(rows, r)
	}
	if len(rows) == 0 {
		e.prog.batchDone()
		return e.j.Tx(context.WithoutCancel(ctx), func(tx *journal.Tx) error { return tx.SetBatch(b.Num, journal.BatchDone) })
	}
	path := "/v2/lotecobv/" + b.ID
	if b.State == journal.BatchPending || b.State == journal.BatchSent {
		put := true
		if b.State == journal.BatchSent {
			// maybe accepted before a stop: ask before re-sending
			if _, err := e.getLote(ctx, b); err == nil {
				put = false
			} else if !isStatus(err, http.StatusNotFound) {
				return err
			}
		}
		if put {
			body := loteBody(e.m.BatchDesc, rows)
			for attempt := 0; ; attempt++ {
				seq, err := e.begin(ctx, routeLotePut, b.ID, func(tx *journal.Tx) error { return tx.SetBatch(b.Num, journal.BatchSent) })
				if err != nil {
					return err
				}
				e.crash.at("lote-intent")
				_, callErr := e.svc.Client.Do(ctx, api.Pix, http.MethodPut, path, json.RawMessage(body))
				e.crash.at("lote-sent")
				if err := e.end(ctx, seq, callErr, nil); err != nil {
					return err
				}
				if callErr == nil {
					break
				}
				if se := e.classify(callErr); se != nil {
					return se
				}
				if retryable(callErr) {
					if attempt >= 6 {
						return &StopError{Reason: fmt.Sprintf("o serviço continua falhando ao receber o lote %d", b.Num), Err: callErr}
					}
					sleepCtx(ctx, backoff(attempt)) // a PUT with an id is safe to repeat
					continue
				}
				// the whole batch refused: every row denied, never retried blindly
				p := problemOf(callErr)
				return e.j.Tx(context.WithoutCancel(ctx), func(tx *journal.Tx) error {
					for _, r := range rows {
						res := r.info
						res.BatchID = b.ID
						res.Problems = []results.Problem{p}
						rb, _ := json.Marshal(res)
						if err := tx.SetRow(r.idx, journal.RowDenied, rb); err != nil {
							return err
						}
						r.state, r.res = journal.RowDenied, &res
					}
					return tx.SetBatch(b.Num, journal.BatchDone)
				})
			}
		}
		e.prog.phase(fmt.Sprintf("lote %d (%s) enviado: %d cobranças", b.Num, b.ID, len(rows)))
		// poll with backoff until every item is CRIADA or NEGADA; the
		// first poll waits for about 3/4 of the time the last batch took
		// (polls answer with every item: each one the service need not
		// serve is 1,000 items' work saved)
		wait := 50 * time.Millisecond
		maxWait := e.opts.PollMax
		if maxWait <= 0 {
			maxWait = 2 * time.Second
		}
		sent := time.Now()
		if d := min(time.Duration(e.finalAfter.Load())*3/4, 4*maxWait); d > wait {
			sleepCtx(ctx, d)
			wait = min(max(wait, d/4), maxWait)
		}
		var lote *api.LoteCobV
		for {
			l, err := e.getLote(ctx, b)
			e.crash.at("lote-poll")
			if err != nil {
				if se := e.classify(err); se != nil {
					return se
				}
				if !transient(err) && !isStatus(err, 500) && !isStatus(err, 404) {
					return err
				}
			} else if l.Done() {
				lote = l
				e.finalAfter.Store(int64(time.Since(sent)))
				break
			}
			sleepCtx(ctx, wait)
			if se := e.stop.Load(); se != nil {
				return se
			}
			wait = min(wait*3/2, maxWait)
		}
		status := map[string]api.LoteCobVStatus{}
		for _, it := range lote.Cobsv {
			status[it.Txid] = it
		}
		type outcome struct {
			state string
			res   *results.Row
		}
		outs := make([]outcome, len(rows))
		links := false
		for i, r := range rows {
			it, ok := status[r.info.Txid]
			res := r.info
			res.BatchID = b.ID
			state := journal.RowCreated
			switch {
			case !ok:
				state = journal.RowDenied
				res.Problems = []results.Problem{{Code: "fora_do_lote", Message: "o lote não contém este txid"}}
			case it.Status == "NEGADA":
				state = journal.RowDenied
				p := results.Problem{Code: "negada", Message: "cobrança negada pelo serviço",
					Action:   "corrija a linha e envie-a de novo numa nova execução (ela está no arquivo de linhas rejeitadas)",
					ActionEN: "fix the row and send it again in a new run (it is in the rejected rows file)"}
				if it.Problema != nil {
					p.Code, p.Message = it.Problema.TypeName(), problemText(it.Problema)
					for _, v := range it.Problema.Violacoes {
						if p.Field == "" {
							p.Field, p.Value = v.Propriedade, v.Valor
						}
					}
				}
				res.Problems = []results.Problem{p}
			}
			outs[i] = outcome{state, &res}
			links = links || state == journal.RowCreated && r.req.SplitKey != ""
		}
		if !links {
			// nothing to link: the charges are fetched first, and then
			// each row is journaled once, final (issued or denied), with
			// the batch done, in one transaction. Until then the batch
			// stays sent: a run stopped in between asks for the batch
			// again (GET, idempotent) and fetches it again.
			for i, r := range rows {
				r.state, r.res = outs[i].state, outs[i].res
			}
			fetchErr := e.fetchBatch(ctx, b, rows, false)
			state := journal.BatchDone
			if fetchErr != nil {
				state = journal.BatchFinal // as if journaled before the fetch: created rows are fetched on resume
			}
			// the results' JSON is made before the journal's writer is
			// held (the other batches' intents wait for it)
			rbs := make([][]byte, len(rows))
			for i, r := range rows {
				rbs[i] = marshalRes(r.res)
			}
			issued, denied := 0, 0
			sets := make([]journal.RowSet, len(rows))
			for i, r := range rows {
				sets[i] = journal.RowSet{Idx: r.idx, State: r.state, Res: rbs[i]}
				switch r.state {
				case journal.RowIssued:
					issued++
				case journal.RowDenied:
					denied++
				}
			}
			if err := e.j.Tx(context.WithoutCancel(ctx), func(tx *journal.Tx) error {
				if err := tx.SetRows(sets); err != nil {
					return err
				}
				return tx.SetBatch(b.Num, state)
			}); err != nil {
				return err
			}
			for range issued {
				e.prog.row(journal.RowIssued)
			}
			for range denied {
				e.prog.row(journal.RowDenied)
			}
			if fetchErr != nil {
				return fetchErr
			}
			e.prog.phase(fmt.Sprintf("lote %d final", b.Num))
			e.prog.batchDone()
			return nil
		}
		rbs := make([][]byte, len(rows))
		for i := range rows {
			rbs[i] = marshalRes(outs[i].res)
		}
		sets := make([]journal.RowSet, len(rows))
		for i, r := range rows {
			sets[i] = journal.RowSet{Idx: r.idx, State: outs[i].state, Res: rbs[i]}
		}
		if err := e.j.Tx(context.WithoutCancel(ctx), func(tx *journal.Tx) error {
			if err := tx.SetRows(sets); err != nil {
				return err
			}
			for i, r := range rows {
				r.state, r.res = outs[i].state, outs[i].res
			}
			return tx.SetBatch(b.Num, journal.BatchFinal)
		}); err != nil {
			return err
		}
		b.State = journal.BatchFinal
		e.prog.phase(fmt.Sprintf("lote %d final", b.Num))
	}
	// split links, one per created charge not yet linked
	g := lpool.NewGroup()
	var lmu sync.Mutex
	var linkErr error
	for _, r := range rows {
		if r.state != journal.RowCreated || r.req.SplitKey == "" || r.res == nil || r.linked() {
			continue
		}
		g.Submit(func() {
			if err := e.link(ctx, r, cfgID[r.req.SplitKey]); err != nil {
				lmu.Lock()
				if linkErr == nil {
					linkErr = err
				}
				lmu.Unlock()
			}
		})
	}
	g.Wait()
	if linkErr != nil {
		return linkErr
	}
	// copy-and-paste codes and locations, by page
	if err := e.fetchBatch(ctx, b, rows, true); err != nil {
		return err
	}
	if err := e.j.Tx(context.WithoutCancel(ctx), func(tx *journal.Tx) error { return tx.SetBatch(b.Num, journal.BatchDone) }); err != nil {
		return err
	}
	e.prog.batchDone()
	return nil
}

// loteBody is the body of PUT /v2/lotecobv/:id for rows: the description
// and each row's request as the journal holds it (json.Marshal's bytes:
// the body is the same on every attempt and after a resume).
func loteBody(desc string, rows []*jrow) []byte {
	n := 64 + len(desc)
	for _, r := range rows {
		n += len(r.cobv) + 1
	}
	b := make([]byte, 0, n)
	b = append(b, '{')
	if desc != "" {
		d, _ := json.Marshal(desc)
		b = append(append(append(b, `"descricao":`...), d...), ',')
	}
	b = append(b, `"cobsv":[`...)
	for i, r := range rows {
		if i > 0 {
			b = append(b, ',')
		}
		if len(r.cobv) == 0 {
			b = append(b, "null"...)
			continue
		}
		b = append(b, r.cobv...)
	}
	return append(b, "]}"...)
}

// linked reports whether the row's split link was journaled as made.
func (r *jrow) linked() bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, p := range r.resProblems() {
		if p.Code == "split_vinculado" {
			return true
		}
	}
	return false
}

func (r *jrow) resProblems() []results.Problem {
	if r.res == nil {
		return nil
	}
	return r.res.Problems
}

func (e *executor) link(ctx context.Context, r *jrow, cfg string) error {
	if e.stopping() {
		return e.stop.Load()
	}
	for attempt := 0; ; attempt++ {
		seq, err := e.begin(ctx, routeSplitLink, r.info.Txid, nil)
		if err != nil {
			return err
		}
		e.crash.at("link")
		_, callErr := e.svc.Client.Do(ctx, api.Pix, http.MethodPut, "/v2/gn/split/cobv/"+r.info.Txid+"/vinculo/"+cfg, nil)
		if callErr == nil {
			r.mu.Lock()
			res := *r.res
			res.Problems = append(append([]results.Problem(nil), res.Problems...), results.Problem{Code: "split_vinculado", Message: "vinculada à configuração de split " + cfg})
			r.mu.Unlock()
			rb, _ := json.Marshal(&res)
			err := e.end(ctx, seq, nil, func(tx *journal.Tx) error { return tx.SetRow(r.idx, journal.RowCreated, rb) })
			if err == nil {
				r.mu.Lock()
				r.res = &res
				r.mu.Unlock()
			}
			return err
		}
		if err := e.end(ctx, seq, callErr, nil); err != nil {
			return err
		}
		if se := e.classify(callErr); se != nil {
			return se
		}
		if attempt >= 6 {
			return fmt.Errorf("vínculo de split de %s: %w", r.info.Txid, callErr)
		}
		sleepCtx(ctx, backoff(attempt))
	}
}

func (e *executor) getLote(ctx context.Context, b journal.Batch) (*api.LoteCobV, error) {
	seq, err := e.begin(ctx, routeLoteGet, b.ID, nil)
	if err != nil {
		return nil, err
	}
	resp, callErr := e.svc.Client.Do(ctx, api.Pix, http.MethodGet, "/v2/lotecobv/"+b.ID, nil)
	if err := e.end(ctx, seq, callErr, nil); err != nil {
		return nil, err
	}
	if callErr != nil {
		return nil, callErr
	}
	var l api.LoteCobV
	if err := unmarshalLote(resp.Body, &l); err != nil {
		return nil, fmt.Errorf("lote %s: resposta ilegível: %w", b.ID, err)
	}
	return &l, nil
}

// fetchBatch reads the batch's charges by page (GET /v2/cobv?loteCobVId=)
// and completes the created rows with pixCopiaECola and location: issued.
// With journalPages, each page's rows are journaled as it comes; without, the
// rows are completed in memory only (r.state, r.res), for the caller to
// journal.
func (e *executor) fetchBatch(ctx context.Context, b journal.Batch, rows []*jrow, journalPages bool) error {
	byTxid := map[string]*jrow{}
	for _, r := range rows {
		if r.state == journal.RowCreated {
			byTxid[r.info.Txid] = r
		}
	}
	if len(byTxid) == 0 {
		return nil
	}
	id, _ := strconv.ParseInt(b.ID, 10, 64)
	for page := 0; ; page++ {
		p := api.ListCobVParams{LoteCobVID: id}
		p.Inicio, p.Fim = e.listWindow()
		p.PaginaAtual, p.ItensPorPagina = page, 1000
		var pg *api.CobVCodePage
		for attempt := 0; ; attempt++ {
			seq, err := e.begin(ctx, routeCobvList, b.ID+"#"+strconv.Itoa(page), nil)
			if err != nil {
				return err
			}
			var callErr error
			pg, callErr = e.svc.Client.ListCobVCodes(ctx, p)
			if err := e.end(ctx, seq, callErr, nil); err != nil {
				return err
			}
			if callErr == nil {
				break
			}
			if se := e.classify(callErr); se != nil {
				return se
			}
			if attempt >= 6 {
				return callErr
			}
			sleepCtx(ctx, backoff(attempt))
		}
		e.crash.at("fetch")
		got := make([]*jrow, 0, len(pg.Cobs))
		for _, c := range pg.Cobs {
			r := byTxid[c.Txid]
			if r == nil {
				continue
			}
			r.mu.Lock()
			res := *r.res
			res.PixCopiaECola = c.PixCopiaECola
			res.Location = c.Location
			if res.Location == "" && c.Loc != nil {
				res.Location = c.Loc.Location
			}
			if c.Calendario.DataDeVencimento != "" {
				res.DueDate = c.Calendario.DataDeVencimento
			}
			// the link marker is internal bookkeeping, not a problem
			var keep []results.Problem
			for _, pr := range res.Problems {
				if pr.Code != "split_vinculado" {
					keep = append(keep, pr)
				}
			}
			res.Problems = keep
			r.state, r.res = journal.RowIssued, &res
			r.mu.Unlock()
			delete(byTxid, c.Txid)
			got = append(got, r)
		}
		if journalPages {
			sets := make([]journal.RowSet, len(got))
			for i, r := range got {
				sets[i] = journal.RowSet{Idx: r.idx, State: journal.RowIssued, Res: marshalRes(r.res)}
			}
			if err := e.j.Tx(context.WithoutCancel(ctx), func(tx *journal.Tx) error { return tx.SetRows(sets) }); err != nil {
				return err
			}
			for range got {
				e.prog.row(journal.RowIssued)
			}
		}
		pag := pg.Parametros.Paginacao
		if len(byTxid) == 0 || len(pg.Cobs) == 0 || page+1 >= pag.QuantidadeDePaginas {
			break
		}
	}
	if len(byTxid) > 0 {
		return errors.New("lote " + b.ID + ": " + strconv.Itoa(len(byTxid)) + " cobrança(s) criadas não apareceram na listagem")
	}
	return nil
}

func isStatus(err error, status int) bool {
	var ae *api.Error
	return errors.As(err, &ae) && ae.Status == status
}
