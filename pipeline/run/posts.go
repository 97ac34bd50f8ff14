package run

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/alitto/pond/v2"

	"remessa/api"
	"remessa/pipeline"
	"remessa/pipeline/journal"
	"remessa/pipeline/results"
	"remessa/reports"
	"remessa/rules"
)

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
	begin, end := e.listWindow()
	q.Set("begin_date", begin.In(rules.SaoPaulo).Format("2006-01-02"))
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
