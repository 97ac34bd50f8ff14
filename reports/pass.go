package reports

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sync"
	"sync/atomic"

	"remessa/pipeline/results"
)

// A run's reports are written in one pass over its rows: every sink (one per
// format) gets each row in turn, and finishes once the totals are known. The
// rows come from memory (Write) or are decoded one at a time from
// results.json (WriteFromFile), so the reports of a big run need little
// memory beyond the run's own.

// source feeds a run's results: start once, before the first row, with the
// head (Version and Run; Rows nil when the file says null); then each row in
// order. It returns the results with their Totals (Rows may be nil when
// streamed).
type source func(start func(head *results.Results) error, row func(*results.Row) error) (*results.Results, error)

// memorySource feeds results held in memory.
func memorySource(r *results.Results) source {
	return func(start func(*results.Results) error, row func(*results.Row) error) (*results.Results, error) {
		if err := start(r); err != nil {
			return nil, err
		}
		for i := range r.Rows {
			if err := row(&r.Rows[i]); err != nil {
				return nil, err
			}
		}
		return r, nil
	}
}

// ErrBadResults wraps every failure to read a results.json: missing,
// unreadable, not JSON, wrong version.
var ErrBadResults = errors.New("results.json ilegível")

// errLayout means results.json does not have version and run before rows.
var errLayout = errors.New("results.json: \"rows\" before \"version\" and \"run\"")

// fileSource decodes results.json one row at a time. Members other than
// version, run, rows and totals are skipped.
func fileSource(path string) source {
	return func(start func(*results.Results) error, row func(*results.Row) error) (*results.Results, error) {
		bad := func(err error) error { return fmt.Errorf("%w: %s: %w", ErrBadResults, path, err) }
		f, err := os.Open(path)
		if err != nil {
			return nil, bad(err)
		}
		defer f.Close()
		dec := json.NewDecoder(bufio.NewReaderSize(f, 1<<20))
		if tok, err := dec.Token(); err != nil || tok != json.Delim('{') {
			if err == nil {
				err = fmt.Errorf("esperava um objeto JSON")
			}
			return nil, bad(err)
		}
		h := &results.Results{}
		var seenRun, started bool
		begin := func() error {
			if h.Version != results.FileVersion {
				return bad(fmt.Errorf("version %d, want %d", h.Version, results.FileVersion))
			}
			started = true
			return start(h)
		}
		for dec.More() {
			tok, err := dec.Token()
			if err != nil {
				return nil, bad(err)
			}
			key, _ := tok.(string)
			switch key {
			case "version":
				err = dec.Decode(&h.Version)
			case "run":
				err = dec.Decode(&h.Run)
				seenRun = true
			case "totals":
				err = dec.Decode(&h.Totals)
			case "rows":
				if !seenRun || started {
					return nil, errLayout
				}
				tok, err := dec.Token()
				if err != nil {
					return nil, bad(err)
				}
				if tok == json.Delim('[') {
					h.Rows = []results.Row{}
				} else if tok != nil {
					return nil, bad(fmt.Errorf("\"rows\" não é uma lista"))
				}
				if err := begin(); err != nil {
					return nil, err
				}
				if tok == nil {
					continue
				}
				for n := 0; dec.More(); n++ {
					var r results.Row
					if err := dec.Decode(&r); err != nil {
						return nil, bad(fmt.Errorf("linha %d de rows: %w", n, err))
					}
					if err := row(&r); err != nil {
						return nil, err
					}
				}
				if _, err := dec.Token(); err != nil {
					return nil, bad(err)
				}
			default:
				var skip json.RawMessage
				err = dec.Decode(&skip)
			}
			if err != nil {
				return nil, bad(err)
			}
		}
		if tok, err := dec.Token(); err != nil || tok != json.Delim('}') {
			if err == nil {
				err = fmt.Errorf("esperava o fim do objeto, achei %v", tok)
			}
			return nil, bad(fmt.Errorf("incompleto: %w", err))
		}
		if !started {
			if err := begin(); err != nil {
				return nil, err
			}
		}
		h.Rows = nil
		return h, nil
	}
}

// digest is what the summary, the HTML page and the rejected rows need from
// the rows, gathered during the pass.
type digest struct {
	lang          string
	own           map[string]bool // split recipients marked Own
	rejected      *rejectedSpill  // source row -> problems, for refused and denied rows; nil: not kept
	problems      []htmlProblem   // the first maxHTMLProblems problem lines
	problemsTotal int
	rowTotals     results.Totals // the rows' own tallies (outcomes only), to check the totals against
}

func newDigest(lang string) *digest {
	return &digest{lang: lang, own: map[string]bool{}}
}

func (d *digest) add(row *results.Row) {
	t := &d.rowTotals
	for _, tl := range []*results.Tally{&t.In, outcomeTally(t, row.Outcome)} {
		tl.Rows++
		tl.AmountCents += row.AmountCents
	}
	for _, s := range row.Split {
		if s.Own {
			d.own[s.Recipient] = true
		}
	}
	for _, p := range row.Parcels {
		for _, s := range p.Split {
			if s.Own {
				d.own[s.Recipient] = true
			}
		}
	}
	if row.Outcome == results.Issued {
		return
	}
	probs := rowProblems(d.lang, row)
	if d.rejected != nil && (row.Outcome == results.Refused || row.Outcome == results.Denied) {
		d.rejected.add(row.SourceRow, rejectedText(d.lang, row, probs))
	}
	for _, p := range probs {
		d.problemsTotal++
		if len(d.problems) >= maxHTMLProblems {
			continue
		}
		msg, action := problemText(d.lang, row.Outcome, p)
		d.problems = append(d.problems, htmlProblem{
			SourceRow: row.SourceRow, Key: row.Key, Payer: row.PayerName, Document: formatDocument(row.PayerDoc),
			Outcome: tr(d.lang, outcomeKey(row.Outcome)), OutcomeCode: string(row.Outcome), Cents: row.AmountCents,
			Code: p.Code, Place: problemPlace(d.lang, p), Value: p.Value, Message: msg, Action: action,
		})
	}
}

// outcomeTally is the tally of t an outcome counts in (as results.Compute
// counts: anything unknown is pending).
func outcomeTally(t *results.Totals, o results.Outcome) *results.Tally {
	switch o {
	case results.Issued:
		return &t.Issued
	case results.Refused:
		return &t.Refused
	case results.Denied:
		return &t.Denied
	case results.Ambiguous:
		return &t.Ambiguous
	}
	return &t.Pending
}

// sink writes one format during the pass.
type sink interface {
	start(head *results.Results) error
	row(row *results.Row) error
	// finish completes the output with the totals and returns the files
	// written (none for a sink writing to an io.Writer).
	finish(r *results.Results, d *digest) ([]string, error)
	abort()
}

// passBatch is how many rows go to the sinks at a time.
const passBatch = 1024

// runPass feeds src to the sinks and finishes them in order. Each sink runs
// in its own goroutine and gets the rows in batches, in order, so decoding
// and the formats share the machine's cores; a row is never changed once
// handed over.
func runPass(src source, sinks []sink, d *digest) ([]string, *results.Results, error) {
	abort := func() {
		for _, s := range sinks {
			s.abort()
		}
	}
	var (
		chans   []chan []*results.Row
		errs    = make([]error, len(sinks))
		failed  atomic.Bool
		wg      sync.WaitGroup
		cur     []*results.Row
		started bool
	)
	send := func() {
		for _, c := range chans {
			c <- cur
		}
		cur = make([]*results.Row, 0, passBatch)
	}
	stop := func() {
		if !started {
			return
		}
		started = false
		if len(cur) > 0 {
			send()
		}
		for _, c := range chans {
			close(c)
		}
		wg.Wait()
	}
	r, err := src(func(h *results.Results) error {
		for _, s := range sinks {
			if err := s.start(h); err != nil {
				return err
			}
		}
		started = true
		for i, s := range sinks {
			c := make(chan []*results.Row, 4)
			chans = append(chans, c)
			wg.Add(1)
			go func() {
				defer wg.Done()
				for b := range c {
					if errs[i] != nil {
						continue
					}
					for _, row := range b {
						if errs[i] = s.row(row); errs[i] != nil {
							failed.Store(true)
							break
						}
					}
				}
			}()
		}
		cur = make([]*results.Row, 0, passBatch)
		return nil
	}, func(row *results.Row) error {
		if failed.Load() {
			return errSinkFailed
		}
		d.add(row)
		cur = append(cur, row)
		if len(cur) == passBatch {
			send()
		}
		return nil
	})
	stop()
	if err == nil || errors.Is(err, errSinkFailed) {
		for _, e := range errs {
			if e != nil {
				err = e
				break
			}
		}
	}
	if err != nil {
		abort()
		return nil, nil, err
	}
	var written []string
	for i, s := range sinks {
		ps, err := s.finish(r, d)
		written = append(written, ps...)
		if err != nil {
			for _, rest := range sinks[i+1:] {
				rest.abort()
			}
			return written, r, err
		}
	}
	return written, r, nil
}

var errSinkFailed = errors.New("reports: a report writer failed")

// atomicFile is a report file written under a temporary name and renamed
// into place by commit, so a crash never leaves half a report.
type atomicFile struct {
	path string
	f    *os.File
	w    *bufio.Writer
}

func createAtomic(path string) (*atomicFile, error) {
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return nil, fmt.Errorf("reports: criar %s: %w", filepath.Dir(path), err)
	}
	f, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".*.tmp")
	if err != nil {
		return nil, fmt.Errorf("reports: criar %s: %w", path, err)
	}
	return &atomicFile{path: path, f: f, w: bufio.NewWriterSize(f, 256<<10)}, nil
}

func (a *atomicFile) Write(p []byte) (int, error) { return a.w.Write(p) }

func (a *atomicFile) commit() error {
	err := a.w.Flush()
	if err == nil {
		err = a.f.Chmod(0o644)
	}
	if cerr := a.f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(a.f.Name(), a.path)
	}
	if err != nil {
		os.Remove(a.f.Name())
		return fmt.Errorf("reports: escrever %s: %w", a.path, err)
	}
	return nil
}

func (a *atomicFile) abort() {
	if a == nil || a.f == nil {
		return
	}
	a.f.Close()
	os.Remove(a.f.Name())
}

// writeAtomic writes path through fn via an atomicFile.
func writeAtomic(path string, fn func(w io.Writer) error) error {
	a, err := createAtomic(path)
	if err != nil {
		return err
	}
	if err := fn(a); err != nil {
		a.abort()
		return fmt.Errorf("reports: escrever %s: %w", path, err)
	}
	return a.commit()
}

// EachRow reads results.json at path one row at a time: start gets the
// head (version and run) before the first row, row each row in order.
// It returns the results with their totals and no rows, so a run of any
// size is read in little memory. Errors wrap ErrBadResults.
func EachRow(path string, start func(head *results.Results) error, row func(*results.Row) error) (*results.Results, error) {
	if start == nil {
		start = func(*results.Results) error { return nil }
	}
	return fileSource(path)(start, row)
}
