package pipeline

import (
	"context"
	"errors"
	"fmt"
	"hash/maphash"
	"io"
	"os"
	"sort"
	"strings"
	"time"

	"remessa/formats"
	"remessa/pipeline/results"
	"remessa/rules"
)

// Severity of a note.
const (
	SevError   = "error"
	SevWarning = "warning"
)

// Note is one problem or warning about an input row, with where it is.
type Note struct {
	Severity string `json:"severity"` // error or warning
	Row      int    `json:"row"`      // row number as the spreadsheet shows it
	Index    int    `json:"index"`    // 0-based data row
	Key      string `json:"key,omitempty"`
	File     string `json:"file,omitempty"`
	Sheet    string `json:"sheet,omitempty"`
	results.Problem
}

// Localized renders the note as "file, linha 3, coluna C (CPF): message".
func (n Note) Localized(lang string) string {
	msg := n.Message
	if lang == "en" && n.MessageEN != "" {
		msg = n.MessageEN
	}
	header := n.Header
	if n.Column == "" {
		header = ""
	}
	place := formats.Place(lang, n.Row, n.Column, header)
	if n.Column == "" && n.Field != "" {
		if place != "" {
			place += ", "
		}
		place += n.Field
	}
	return place + ": " + msg + " [" + n.Code + "]"
}

// Handler receives validation results as they stream. Any nil func is
// skipped. Items and rows passed are not reused by the validator. The
// strings of an item share buffers with the rows around it (the readers
// cut them from large blocks): a caller that keeps strings of only a few
// items out of many should keep copies (strings.Clone), or it keeps the
// blocks alive. Notes and refused rows carry copies already.
type Handler struct {
	Item    func(*Item) error
	Refused func(*results.Row) error
	Note    func(Note)
}

// Summary counts what a streaming validation saw.
type Summary struct {
	Source        formats.Source
	Rows          int   // data rows read
	Accepted      int   // rows that became items
	Refused       int   // rows refused
	Errors        int   // error notes
	Warnings      int   // warning notes
	AcceptedCents int64 // total asked by accepted rows
	RefusedCents  int64 // best-effort total of refused rows
}

// Validation is the collected result of Validate.
type Validation struct {
	Job     *Job
	Summary Summary
	Items   []Item        // accepted rows, in input order
	Refused []results.Row // refused rows with their problems, in input order
	Notes   []Note        // every error and warning, in row order
}

// Clean reports whether no row was refused.
func (v *Validation) Clean() bool { return v.Summary.Refused == 0 }

// Validate reads every row of the job's input and returns the accepted
// rows as fully resolved requests, the refused rows with their problems,
// and every note. The error is non-nil only when the job or the input file
// cannot be used at all (*JobError, *formats.Error).
func Validate(ctx context.Context, job *Job) (*Validation, error) {
	v := &Validation{Job: job}
	sum, err := ValidateStream(ctx, job, Handler{
		Item:    func(it *Item) error { v.Items = append(v.Items, *it); return nil },
		Refused: func(r *results.Row) error { v.Refused = append(v.Refused, *r); return nil },
		Note:    func(n Note) { v.Notes = append(v.Notes, n) },
	})
	if err != nil {
		return nil, err
	}
	sort.SliceStable(v.Notes, func(a, b int) bool { return v.Notes[a].Row < v.Notes[b].Row })
	v.Summary = *sum
	return v, nil
}

// ValidateNotes is Validate without keeping the items and refused rows:
// the summary and the notes only, in memory proportional to the problems
// found, not to the input (what validate needs on big files).
func ValidateNotes(ctx context.Context, job *Job) (*Validation, error) {
	v := &Validation{Job: job}
	sum, err := ValidateStream(ctx, job, Handler{Note: func(n Note) { v.Notes = append(v.Notes, n) }})
	if err != nil {
		return nil, err
	}
	sort.SliceStable(v.Notes, func(a, b int) bool { return v.Notes[a].Row < v.Notes[b].Row })
	v.Summary = *sum
	return v, nil
}

// ValidateStream validates row by row, passing results to h as they are
// decided and keeping only compact state (64-bit hashes of keys, txids
// and payer/value/due triples) across rows, so memory does not grow with
// the rows' content. A duplicate is refused on its later occurrence, citing
// the first.
func ValidateStream(ctx context.Context, job *Job, h Handler) (*Summary, error) {
	r, err := formats.Open(job.InputFile, withReuse(job.InputOptions()))
	if err != nil {
		return nil, err
	}
	defer r.Close()
	src := r.Source()
	vr, err := newRowValidator(job, src)
	if err != nil {
		return nil, err
	}
	vr.reuse = h.Item == nil
	sum := &Summary{}
	emit := func(n Note) {
		if n.Severity == SevError {
			sum.Errors++
		} else {
			sum.Warnings++
		}
		if h.Note != nil {
			h.Note(n)
		}
	}
	// The reader runs in its own goroutine, a batch of rows ahead of the
	// validation, so the two use both cores; rows stay in order.
	stop := make(chan struct{})
	free := make(chan *rowBatch, 4)
	batches := readBatches(ctx, r, stop, free)
	defer func() {
		close(stop)
		for range batches { // wait for the reader to finish before Close
		}
	}()
	index := 0
	var final error
	for b := range batches {
		vr.touchKeys(b)
		for i := range b.rows {
			if err := b.errs[i]; err != nil {
				var fe *formats.Error
				errors.As(err, &fe)
				sum.Rows++
				sum.Refused++
				p := results.Problem{Code: fe.Code, Column: fe.Column, Header: fe.Header, Value: fe.Value, Message: fe.Message, MessageEN: fe.MessageEN}
				emit(Note{Severity: SevError, Row: fe.Row, Index: index, File: src.File, Sheet: src.Sheet, Problem: p})
				if h.Refused != nil {
					if err := h.Refused(&results.Row{Index: index, SourceRow: fe.Row, Outcome: results.Refused, Problems: []results.Problem{p}}); err != nil {
						return nil, err
					}
				}
				index++
				continue
			}
			sum.Rows++
			vr.keyHash = b.keyHash[i]
			it, refused, notes := vr.row(index, b.rows[i])
			for _, n := range notes {
				n.File, n.Sheet = src.File, src.Sheet
				emit(n)
			}
			if refused != nil {
				sum.Refused++
				sum.RefusedCents += refused.AmountCents
				if h.Refused != nil {
					if err := h.Refused(refused); err != nil {
						return nil, err
					}
				}
			} else {
				sum.Accepted++
				sum.AcceptedCents += it.AmountCents
				if h.Item != nil {
					if err := h.Item(it); err != nil {
						return nil, err
					}
				}
			}
			index++
		}
		if b.final != nil {
			final = b.final
		}
		select { // the batch's cells can be reused: nothing kept points into them
		case free <- b:
		default:
		}
	}
	if final != io.EOF {
		if final == nil {
			final = errors.New("pipeline: reader stopped early")
		}
		return nil, final
	}
	src = r.Source()
	for _, w := range src.Warnings {
		emit(Note{Severity: SevWarning, Row: w.Row, File: src.File, Sheet: src.Sheet,
			Problem: results.Problem{Code: w.Code, Column: w.Column, Header: w.Header, Value: w.Value, Message: w.Message, MessageEN: w.MessageEN}})
	}
	sum.Source = src
	return sum, nil
}

// rowBatch is a run of rows read ahead: rows[i] is a data row, or errs[i]
// is a row-level reader error in its place. final is set on the last batch
// (io.EOF at the end, or the error that stopped the reading).
type rowBatch struct {
	rows  []formats.Row
	errs  []error
	offs  []int
	slab  []formats.Cell
	final error
	// keyHash[i] is the hash of row i's key (0: none), set by touchKeys.
	keyHash []uint64
}

const batchRows = 256

// readBatches reads r in a goroutine and sends batches of rows, copying
// each row's cells (the reader reuses its slice) into the batch. It stops
// at the end of the input, at a final error, when ctx is done or when stop
// is closed, and closes the channel when it returns. Batches sent back on
// free are reused.
func readBatches(ctx context.Context, r formats.Reader, stop <-chan struct{}, free <-chan *rowBatch) <-chan *rowBatch {
	out := make(chan *rowBatch, 2)
	cr, _ := r.(formats.CellsReader)
	ncols := len(r.Source().Headers)
	go func() {
		defer close(out)
		for {
			var b *rowBatch
			select {
			case b = <-free:
				b.rows, b.errs, b.offs, b.slab = b.rows[:0], b.errs[:0], b.offs[:0], b.slab[:0]
			default:
				b = &rowBatch{rows: make([]formats.Row, 0, batchRows), errs: make([]error, 0, batchRows), offs: make([]int, 0, batchRows+1)}
			}
			if b.slab == nil && ncols > 0 {
				b.slab = make([]formats.Cell, 0, batchRows*ncols)
			}
			for len(b.rows) < batchRows && b.final == nil {
				var row formats.Row
				var err error
				inSlab := false
				if cr != nil && cap(b.slab)-len(b.slab) >= ncols {
					// the reader writes the cells straight into the batch
					row, err = cr.NextCells(b.slab[len(b.slab):cap(b.slab)])
					inSlab = err == nil && len(row.Cells) > 0 && &row.Cells[0] == &b.slab[:len(b.slab)+1][len(b.slab)]
				} else {
					row, err = r.Next()
				}
				switch {
				case err == io.EOF:
					b.final = err
				case err != nil && formats.IsRowLevel(err) && errors.As(err, new(*formats.Error)):
					b.offs = append(b.offs, len(b.slab))
					b.rows = append(b.rows, formats.Row{})
					b.errs = append(b.errs, err)
				case err != nil:
					b.final = err
				default:
					if b.slab == nil {
						b.slab = make([]formats.Cell, 0, batchRows*len(row.Cells))
					}
					b.offs = append(b.offs, len(b.slab))
					if inSlab {
						b.slab = b.slab[:len(b.slab)+len(row.Cells)]
					} else {
						b.slab = append(b.slab, row.Cells...)
					}
					b.rows = append(b.rows, formats.Row{Number: row.Number})
					b.errs = append(b.errs, nil)
				}
			}
			b.offs = append(b.offs, len(b.slab))
			for i := range b.rows {
				b.rows[i].Cells = b.slab[b.offs[i]:b.offs[i+1]:b.offs[i+1]]
			}
			if b.final == nil {
				if err := ctx.Err(); err != nil {
					b.final = err
				}
			}
			select {
			case out <- b:
			case <-stop:
				return
			}
			if b.final != nil {
				return
			}
		}
	}()
	return out
}

// rowValidator holds what validating one row needs.
type rowValidator struct {
	job     *Job
	kind    results.Kind
	src     formats.Source
	col     map[string]int // field -> column index
	byName  map[string]int // header (as written and normalised) -> column index
	keys    *seenSet
	txids   *seenSet
	triples *seenSet
	tmplAny bool
	own     string
	hash    maphash.Hash
	seed    maphash.Seed
	maxRows int            // most data rows the input can have
	cols    [numFields]int // column index per field ordinal, -1 when absent
	// modc holds the constant multa, juros and abatimento of a cobv job,
	// built once and shared by every item (read only).
	modc  []modCache
	dates [64]struct {
		day int64
		s   string
	}
	// cobvSlot is the request allocated with the current row's item.
	cobvSlot *CobvRequest
	// reuse: nobody receives the items, so one is reused for every row;
	// otherwise items come from slabs, many to an allocation.
	reuse bool
	one   itemSlot
	// keyHash is the current row's key hash from touchKeys (0: none).
	keyHash uint64
	sink    uint64
	slab    []itemSlot
	strs    strArena // the row's built strings (see formats.Arena)
	// ctrl: the columns checked for control characters.
	ctrl []ctrlCol
}

// touchKeys hashes the key of every row of a batch and loads the slot of
// the duplicate table each hash starts at. The loads do not depend on each
// other, so the memory system serves them together, and each row then
// finds its slot in cache instead of waiting for memory on its own.
func (vr *rowValidator) touchKeys(b *rowBatch) {
	ki := vr.cols[iKey]
	b.keyHash = b.keyHash[:0]
	sink := vr.sink
	for i, row := range b.rows {
		var h uint64
		if b.errs[i] == nil && ki >= 0 && ki < len(row.Cells) && row.Cells[ki].Value != "" {
			h = vr.keys.hash(row.Cells[ki].Value)
			sink ^= vr.keys.touch(h)
		}
		b.keyHash = append(b.keyHash, h)
	}
	vr.sink = sink // kept, so the loads are not optimised away
}

// itemSlot is an item with room for its request.
type itemSlot struct {
	item Item
	cobv CobvRequest
}

// slotsPerSlab is how many items are allocated at once.
const slotsPerSlab = 32

// nextSlot returns a zeroed item slot for the next row.
func (vr *rowValidator) nextSlot() *itemSlot {
	if vr.reuse {
		vr.one = itemSlot{}
		return &vr.one
	}
	if len(vr.slab) == 0 {
		vr.slab = make([]itemSlot, slotsPerSlab)
	}
	s := &vr.slab[0]
	vr.slab = vr.slab[1:]
	return s
}

// strArena is a formats.Arena that writes the request strings of a row.
type strArena struct{ formats.Arena }

// pixAmount is rules.FormatPixAmount written into the arena.
func (a *strArena) pixAmount(cents int64) string {
	var buf [24]byte
	return a.Bytes(rules.AppendPixAmount(buf[:0], cents))
}

// join writes the non-empty parts separated by ", " into the arena.
func (a *strArena) join(parts ...string) string {
	n := 0
	for _, p := range parts {
		n += len(p) + 2
	}
	a.Begin(n)
	for _, p := range parts {
		if p == "" {
			continue
		}
		if a.Len() > 0 {
			a.WriteString(", ")
		}
		a.WriteString(p)
	}
	return a.End()
}

// isoDate is rules.FormatISODate with a small cache: due dates repeat
// across rows.
func (vr *rowValidator) isoDate(t time.Time) string {
	k := t.Unix() / 86400
	e := &vr.dates[uint64(k)%uint64(len(vr.dates))]
	if e.s == "" || e.day != k {
		e.day, e.s = k, rules.FormatISODate(t)
	}
	return e.s
}

func nonZero(h uint64) uint64 {
	if h == 0 {
		return 1
	}
	return h
}

func newRowValidator(job *Job, src formats.Source) (*rowValidator, error) {
	specs, overrides, _ := columnSpecs(job)
	m, err := formats.MatchHeaders(src.Headers, specs, overrides)
	if err != nil {
		var fe *formats.Error
		if errors.As(err, &fe) && fe.File == "" {
			fe.File, fe.Sheet = src.File, src.Sheet
		}
		return nil, err
	}
	seed := maphash.MakeSeed()
	hint := maxDataRows(job.InputFile, src.Format) // the tables never grow
	vr := &rowValidator{job: job, kind: job.Kind, src: src, col: m.ByField, byName: map[string]int{},
		keys: newSeenSet(seed, hint), triples: newSeenSet(seed, hint), own: job.Endpoint.PayeeCode}
	vr.hash.SetSeed(seed)
	vr.seed = seed
	vr.maxRows = hint
	for i, hdr := range src.Headers {
		if _, dup := vr.byName[hdr]; !dup {
			vr.byName[hdr] = i
		}
		if n := formats.NormalizeHeader(hdr); n != "" {
			if _, dup := vr.byName["\x00"+n]; !dup {
				vr.byName["\x00"+n] = i
			}
		}
	}
	if job.KeyHeader != "" {
		i, ok := findHeader(vr.col, src.Headers, job.KeyHeader)
		if !ok {
			found, foundEN := formats.QuoteHeaders(src.Headers)
			return nil, &formats.Error{File: src.File, Sheet: src.Sheet, Row: src.HeaderRow, Header: job.KeyHeader, Code: formats.CodeMissingColumns,
				Message:   fmt.Sprintf("a coluna da chave %q (input.key) não existe; cabeçalhos encontrados: %s", job.KeyHeader, found),
				MessageEN: fmt.Sprintf("the key column %q (input.key) does not exist; headers found: %s", job.KeyHeader, foundEN)}
		}
		vr.col[FKey] = i
	}
	for fi, f := range Catalogue {
		vr.cols[fi] = -1
		if i, ok := vr.col[f.ID]; ok {
			vr.cols[fi] = i
		}
	}
	if err := vr.bind(); err != nil {
		return nil, err
	}
	vr.controlColumns()
	return vr, nil
}

// maxDataRows bounds the data rows of an input, to size the duplicate
// tables once: the readers' limit, or for a text file (CSV, YAML) half
// its size when smaller (a data row takes at least two bytes). An XLSX
// is compressed, so its size bounds nothing.
func maxDataRows(path, format string) int {
	n := formats.DefaultMaxRows
	if format == "xlsx" {
		return n
	}
	if st, err := os.Stat(path); err == nil && st.Size()/2 < int64(n) {
		n = int(st.Size() / 2)
	}
	return n
}

func itemsNeedValue(items []ItemSpec) bool {
	if len(items) == 0 {
		return true
	}
	for _, it := range items {
		if !it.Value.Set {
			return true
		}
	}
	return false
}

// lookup finds a column by field name, header as written, or normalised
// header.
func (vr *rowValidator) lookup(name string) (int, bool) {
	if i, ok := vr.col[name]; ok {
		return i, true
	}
	if i, ok := vr.byName[name]; ok {
		return i, true
	}
	if i, ok := vr.byName["\x00"+formats.NormalizeHeader(name)]; ok {
		return i, true
	}
	return 0, false
}

// bind resolves every template of the job against the input's headers:
// a name that is neither a header nor a field is a job problem.
func (vr *rowValidator) bind() error {
	var probs []JobProblem
	sample := map[string]string{}
	for _, h := range vr.src.Headers {
		sample[h] = ""
	}
	for _, f := range Catalogue {
		sample[f.ID] = ""
	}
	headers, headersEN := formats.QuoteHeaders(vr.src.Headers)
	fail := func(v *Value, name string) {
		probs = append(probs, JobProblem{File: vr.job.File, Line: v.Pos.Line, Column: v.Pos.Column, Pointer: v.info.ptr, Code: "coluna_inexistente",
			Message:   fmt.Sprintf("o modelo %q usa %q, que não é cabeçalho da planilha nem campo conhecido; cabeçalhos: %s", v.Raw, name, headers),
			MessageEN: fmt.Sprintf("template %q uses %q, which is neither a spreadsheet header nor a known field; headers: %s", v.Raw, name, headersEN)})
	}
	walkValues(vr.job.Spec, func(v *Value) {
		if v.info == nil || !v.IsTemplate() {
			return
		}
		if v.ref != "" {
			i, ok := vr.lookup(v.ref)
			if !ok {
				fail(v, v.ref)
				return
			}
			v.col = i
			return
		}
		vr.tmplAny = true
		if err := v.tmpl.Execute(io.Discard, sample); err != nil {
			name := err.Error()
			if i := strings.Index(name, "map has no entry for key "); i >= 0 {
				name = strings.Trim(name[i+len("map has no entry for key "):], `"`)
			}
			fail(v, name)
		}
	})
	if len(probs) > 0 {
		return &JobError{Problems: probs}
	}
	return nil
}

// walkValues calls fn for every Value of the job's issue section.
func walkValues(s *JobSpec, fn func(*Value)) {
	items := func(its []ItemSpec) {
		for i := range its {
			it := &its[i]
			fn(&it.Name)
			fn(&it.Value)
			fn(&it.Amount)
			if it.Marketplace != nil {
				for k := range it.Marketplace.Repasses {
					r := &it.Marketplace.Repasses[k]
					fn(&r.PayeeCode)
					fn(&r.Percentage)
					fn(&r.Fixed)
				}
			}
		}
	}
	disc := func(d *DiscountSpec, cd *ConditionalDiscountSpec) {
		if d != nil {
			fn(&d.Value)
		}
		if cd != nil {
			fn(&cd.Value)
			fn(&cd.UntilDate)
		}
	}
	if c := s.Issue.Carnets; c != nil {
		fn(&c.Repeats)
		fn(&c.FirstDue)
		items(c.Items)
		fn(&c.Fine)
		fn(&c.InterestPerDay)
		fn(&c.Message)
		fn(&c.NotificationURL)
		fn(&c.CustomID)
		disc(c.Discount, c.ConditionalDiscount)
	}
	if b := s.Issue.Boletos; b != nil {
		fn(&b.Due)
		items(b.Items)
		fn(&b.Fine)
		fn(&b.InterestPerDay)
		fn(&b.DaysToWriteOff)
		fn(&b.Message)
		fn(&b.NotificationURL)
		fn(&b.CustomID)
		disc(b.Discount, b.ConditionalDiscount)
	}
	if c := s.Issue.Cobv; c != nil {
		fn(&c.Due)
		fn(&c.Chave)
		fn(&c.Solicitacao)
		fn(&c.Valor)
		fn(&c.Txid)
		for _, m := range []*PixModSpec{c.Multa, c.Juros, c.Abatimento} {
			if m != nil {
				fn(&m.Valor)
			}
		}
		if d := c.Desconto; d != nil {
			fn(&d.Valor)
			for i := range d.Datas {
				fn(&d.Datas[i].Data)
				fn(&d.Datas[i].Valor)
			}
		}
		if sp := c.Split; sp != nil {
			fn(&sp.MinhaParte.Valor)
			for i := range sp.Repasses {
				r := &sp.Repasses[i]
				fn(&r.Valor)
				fn(&r.CPF)
				fn(&r.CNPJ)
				fn(&r.Conta)
			}
		}
	}
}
