package run

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"sync"

	"remessa/pipeline"
	"remessa/pipeline/journal"
	"remessa/pipeline/results"
	"remessa/reports"
	"remessa/rules"
)

// scan is what one validation pass over a job's input gathers: counts,
// the plan (batch boundaries), the rows' identities as hashes, the job's
// Pix keys and split accounts and, when the pass seeds a journal, the
// split configurations; nothing per row beyond the identities' 16 bytes.
type scan struct {
	sum             *pipeline.Summary
	plan            *pipeline.PlanBuilder
	ids             *rowIDs
	pixKeys, contas []string
	splits          map[string]splitDef
	done            *pipeline.Plan // the plan, once finished (donePlan)
}

// splitDef is a split configuration to journal.
type splitDef struct {
	id   string
	body []byte
}

// seedBatch is how many journal rows the validation hands to the
// journal's writer at a time (inserted by journal.AddRows, 128 a
// statement).
const seedBatch = 256

// rowBatch is up to seedBatch journal rows, their descriptions and
// requests written in buf: once the journal has them (it copies them
// into its chunks), the batch goes back to seedBatches and its memory
// holds the next rows' (about 1 KB a row less to allocate and collect).
type rowBatch struct {
	rows []journal.Row
	buf  []byte

	// seedRow's scratch
	row  results.Row
	req  rowReq
	cobv pipeline.CobvRequest
}

var seedBatches = sync.Pool{New: func() any {
	return &rowBatch{rows: make([]journal.Row, 0, seedBatch), buf: make([]byte, 0, seedBatch*1024)}
}}

// write appends what f appends to the batch's bytes and returns it.
func (b *rowBatch) write(f func([]byte) []byte) []byte {
	n := len(b.buf)
	b.buf = f(b.buf) // (a buffer grown leaves the rows before on the old one, unchanged)
	return b.buf[n:len(b.buf):len(b.buf)]
}

// release gives b back to seedBatches; nothing of its rows may be used
// after.
func (b *rowBatch) release() {
	clear(b.rows)
	b.rows, b.buf = b.rows[:0], b.buf[:0]
	seedBatches.Put(b)
}

// scanJob validates the job once, gathering a scan. With rows set, it
// also makes each row's journal row (refused rows included, in input
// order) and hands them to rows seedBatch at a time, in a rowBatch that
// rows' receiver releases once done with it. shaOnly keeps the
// identities' SHA-256 only (a pass checking an earlier one).
func scanJob(ctx context.Context, job *pipeline.Job, runID string, shaOnly bool, rows func(*rowBatch) error) (*scan, error) {
	s := &scan{plan: pipeline.NewPlanBuilder(job), ids: newRowIDs()}
	if shaOnly {
		s.ids.rows, s.ids.shaOnly = nil, true
	}
	cobvJob := job.Spec.Issue.Cobv != nil
	txids := rules.NewRunTxids(runID) // its prefix hashed once, not per row
	var batch *rowBatch
	next := func() *rowBatch {
		if batch == nil {
			batch = seedBatches.Get().(*rowBatch)
		}
		return batch
	}
	put := func(r journal.Row) error {
		batch.rows = append(batch.rows, r)
		if len(batch.rows) < seedBatch {
			return nil
		}
		b := batch
		batch = nil
		return rows(b)
	}
	h := pipeline.Handler{Item: func(it *pipeline.Item) error {
		s.plan.Add(it)
		s.ids.add(rowIdentity(it))
		if c := it.Cobv; c != nil && cobvJob && !hasKey(s.pixKeys, c.Chave) {
			s.pixKeys = append(s.pixKeys, strings.Clone(c.Chave))
		}
		if sp := it.PixSplit; sp != nil && cobvJob {
			for _, r := range sp.Split.Repasses {
				if r.Favorecido != nil && !slices.Contains(s.contas, r.Favorecido.Conta) {
					s.contas = append(s.contas, strings.Clone(r.Favorecido.Conta))
				}
			}
		}
		if rows == nil {
			return nil
		}
		info, req, sk, sp := seedRow(it, runID, txids, next())
		if sp != nil {
			if s.splits == nil {
				s.splits = map[string]splitDef{}
			}
			if _, ok := s.splits[sk]; !ok {
				body, _ := json.Marshal(sp)
				s.splits[strings.Clone(sk)] = splitDef{id: SplitConfigID(runID, sk), body: body}
			}
		}
		return put(journal.Row{Index: it.Index, Key: strings.Clone(it.Key), State: journal.RowPending, Info: info, Req: req})
	}}
	if rows != nil {
		h.Refused = func(r *results.Row) error {
			info, _ := json.Marshal(r)
			next()
			return put(journal.Row{Index: r.Index, Key: r.Key, State: journal.RowRefused, Info: info})
		}
	}
	sum, err := pipeline.ValidateStream(ctx, job, h)
	if err != nil {
		return nil, err
	}
	if batch != nil {
		if err := rows(batch); err != nil {
			return nil, err
		}
	}
	s.sum = sum
	return s, nil
}

// seedPass is one validation pass that seeds a journal, as seed runs it.
type seedPass struct {
	// want, when set, is an earlier pass over the same input: the rows
	// must be the same (else the input changed in between).
	want *scan
	// gate, when set, is called with the pass's scan once every row is
	// in the transaction, before anything else is written: an error
	// rolls the whole seed back.
	gate func(*scan) error
	// describe makes the message of a validation error.
	describe func(error) string
	jobPath  string // the plan's Job
}

// seed writes the run's identity (m, with the pass's Pix keys and split
// accounts), every row with its request, the batches and the split
// configurations into a new journal, in one transaction, and returns what
// its validation pass gathered. The rows stream into the journal as they
// are validated: the validation (with each row's journal values) runs in
// its own goroutine, the journal's writes in this one, so the two use
// both cores; nothing of the rows is held beyond a few batches in flight.
func seed(ctx context.Context, j *journal.Journal, job *pipeline.Job, m *Meta, p seedPass) (*scan, error) {
	var out *scan
	err := j.Tx(ctx, func(tx *journal.Tx) error {
		vctx, cancel := context.WithCancel(ctx)
		defer cancel()
		ch := make(chan *rowBatch, 8)
		type result struct {
			s   *scan
			err error
		}
		done := make(chan result, 1)
		go func() {
			s, err := scanJob(vctx, job, m.RunID, p.want != nil, func(rs *rowBatch) error {
				select {
				case ch <- rs:
					return nil
				case <-vctx.Done():
					return vctx.Err()
				}
			})
			close(ch)
			done <- result{s, err}
		}()
		var werr error
		for rs := range ch {
			if werr != nil {
				continue // drained until the validation stops
			}
			if werr = tx.AddRows(rs.rows); werr != nil {
				cancel()
			}
			rs.release() // (AddRows copied the rows' values)
		}
		res := <-done
		if werr != nil {
			return werr
		}
		if res.err != nil {
			msg := res.err.Error()
			if p.describe != nil {
				msg = p.describe(res.err)
			}
			return &UsageError{Msg: msg, Err: res.err}
		}
		s := res.s
		if w := p.want; w != nil && (s.sum.Rows != w.sum.Rows || s.sum.Accepted != w.sum.Accepted || s.sum.Refused != w.sum.Refused ||
			s.sum.AcceptedCents != w.sum.AcceptedCents || s.ids.sum() != w.ids.sum()) {
			return inputChanged(job)
		}
		if p.gate != nil {
			if err := p.gate(s); err != nil {
				return err
			}
		}
		if job.Kind == results.Cobv && job.Spec.Issue.Cobv != nil {
			m.PixKeys, m.SplitContas = s.pixKeys, s.contas
		}
		mb, _ := json.Marshal(m)
		if err := tx.SetMeta("meta", string(mb)); err != nil {
			return err
		}
		if job.Kind == results.Cobv {
			for n, b := range s.donePlan(p.jobPath).Issue.Batches {
				if err := tx.AddBatch(journal.Batch{Num: n + 1, ID: BatchID(m.RunID, n+1), First: b.First, End: b.First + b.Items, State: journal.BatchPending}); err != nil {
					return err
				}
			}
			for k, sd := range s.splits {
				if err := tx.AddSplit(journal.Split{Key: k, ID: sd.id, Body: sd.body, State: "pending"}); err != nil {
					return err
				}
			}
		}
		out = s
		return nil
	})
	return out, err
}

// donePlan is the scan's plan, finished by the first call (Done may be
// called once only).
func (s *scan) donePlan(jobPath string) *pipeline.Plan {
	if s.done == nil {
		s.done = s.plan.Done(jobPath, s.sum)
	}
	return s.done
}

func inputChanged(job *pipeline.Job) error {
	return &UsageError{Msg: fmt.Sprintf("a planilha %s mudou enquanto a execução era preparada; nada foi enviado: rode o job de novo", job.InputFile)}
}

// rowReq is what is sent for a row.
type rowReq struct {
	Carnet   *pipeline.CarnetRequest `json:"carnet,omitempty"`
	Slip     *pipeline.SlipRequest   `json:"slip,omitempty"`
	Cobv     *pipeline.CobvRequest   `json:"cobv,omitempty"`
	SplitKey string                  `json:"split_key,omitempty"`
}

// seedRow is what the journal keeps of an accepted row: its description
// (a pending result), its request with the run's custom_id or txid, and
// for a Pix split the configuration's key and body.
func seedRow(it *pipeline.Item, runID string, txids rules.RunTxids, b *rowBatch) (info, req []byte, splitKey string, split any) {
	// the row, its request and a cobv's are written from the batch's own
	// (nothing of them is kept: only their JSON, written in b)
	b.row = results.Row{Index: it.Index, SourceRow: it.SourceRow, Key: it.Key, PayerName: it.PayerName, PayerDoc: it.PayerDoc,
		Outcome: results.Pending, AmountCents: it.AmountCents, Split: it.Split}
	row := &b.row
	if !it.DueDate.IsZero() {
		row.DueDate = it.DueDate.Format("2006-01-02")
	}
	for _, p := range it.Parcels {
		row.Parcels = append(row.Parcels, results.Parcel{Number: p.Number, DueDate: p.DueDate.Format("2006-01-02"), ValueCents: p.ValueCents})
	}
	if len(row.Parcels) > 0 && row.DueDate == "" {
		row.DueDate = row.Parcels[0].DueDate
	}
	b.req = rowReq{}
	r := &b.req
	switch {
	case it.Carnet != nil:
		c := *it.Carnet
		c.Metadata = withCustomID(c.Metadata, runID, it.Key)
		row.CustomID = c.Metadata.CustomID
		r.Carnet = &c
	case it.Slip != nil:
		s := *it.Slip
		s.Metadata = withCustomID(s.Metadata, runID, it.Key)
		row.CustomID = s.Metadata.CustomID
		r.Slip = &s
	case it.Cobv != nil:
		b.cobv = *it.Cobv
		c := &b.cobv
		if c.Txid == "" {
			c.Txid = txids.Txid(it.Index)
		}
		row.Txid = c.Txid
		r.Cobv = c
		if it.PixSplit != nil {
			r.SplitKey = it.SplitKey
			splitKey, split = it.SplitKey, it.PixSplit
		}
	}
	info = b.write(func(dst []byte) []byte { return reports.AppendMarshalRow(dst, row) })
	req = b.write(func(dst []byte) []byte { return appendReq(dst, r) })
	return info, req, splitKey, split
}

// marshalReq is json.Marshal(r), a cobv's written without reflection
// (pipeline.AppendCobvJSON) when its strings and its split key are plain.
func marshalReq(r *rowReq) []byte { return appendReq(make([]byte, 0, 640), r) }

// appendReq appends marshalReq's bytes of r to dst.
func appendReq(dst []byte, r *rowReq) []byte {
	if r.Cobv != nil && r.Carnet == nil && r.Slip == nil && pipeline.JSONPlain(r.SplitKey) {
		if b, ok := pipeline.AppendCobvJSON(append(dst, `{"cobv":`...), r.Cobv); ok {
			if r.SplitKey != "" {
				b = append(append(append(b, `,"split_key":"`...), r.SplitKey...), '"')
			}
			return append(b, '}')
		}
	}
	b, _ := json.Marshal(r)
	return append(dst, b...)
}
