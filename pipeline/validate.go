package pipeline

import (
	"context"
	"encoding/binary"
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
	rowW, colW := "linha", "coluna"
	msg := n.Message
	if lang == "en" {
		rowW, colW = "row", "column"
		if n.MessageEN != "" {
			msg = n.MessageEN
		}
	}
	parts := []string{}
	if n.Row > 0 {
		parts = append(parts, fmt.Sprintf("%s %d", rowW, n.Row))
	}
	if n.Column != "" {
		c := colW + " " + n.Column
		if n.Header != "" && n.Header != n.Column {
			c += " (" + n.Header + ")"
		}
		parts = append(parts, c)
	} else if n.Field != "" {
		parts = append(parts, n.Field)
	}
	return strings.Join(parts, ", ") + ": " + msg + " [" + n.Code + "]"
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
	r, err := formats.Open(job.InputFile, formats.Options{Sheet: job.Sheet, ReuseCells: true})
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

// rowCtx is one row being validated.
type rowCtx struct {
	vr    *rowValidator
	row   formats.Row
	data  map[string]string
	notes []Note
	errs  int
	index int
	key   string
}

// noCell is what cell returns for a field without a column; read only.
var noCell formats.Cell

// cell returns the row's cell for a field ordinal (a pointer into the
// row, valid while the row is processed), with its column letter and
// header; ok is false when the input has no column for the field.
func (rc *rowCtx) cell(fi int) (*formats.Cell, bool) {
	i := rc.vr.cols[fi]
	if i < 0 {
		return &noCell, false
	}
	var c *formats.Cell
	if i < len(rc.row.Cells) {
		c = &rc.row.Cells[i]
	} else {
		c = &formats.Cell{}
	}
	if c.Column == "" && i < len(rc.vr.src.Columns) {
		c.Column, c.Header = rc.vr.src.Columns[i], rc.vr.src.Headers[i]
	}
	return c, true
}

func (rc *rowCtx) text(fi int) (string, *formats.Cell) {
	c, _ := rc.cell(fi)
	return c.Value, c
}

func (rc *rowCtx) note(sev, code, field string, c *formats.Cell, value, pt, en string) {
	p := results.Problem{Code: code, Field: field, Value: value, Message: pt, MessageEN: en}
	if c != nil {
		p.Column, p.Header = c.Column, c.Header
		if value == "" {
			p.Value = c.Value
		}
	}
	if sev == SevError {
		rc.errs++
	}
	// The row's strings share the reader's buffers; a note outlives the
	// row, so it keeps copies rather than pinning a whole buffer.
	p.Value = strings.Clone(p.Value)
	rc.notes = append(rc.notes, Note{Severity: sev, Row: rc.row.Number, Index: rc.index, Key: strings.Clone(rc.key), Problem: p})
}

func (rc *rowCtx) fail(code, field string, c *formats.Cell, pt, en string) {
	rc.note(SevError, code, field, c, "", pt, en)
}

func (rc *rowCtx) failLim(le *limitErr, field string, c *formats.Cell, value string) {
	rc.note(SevError, le.code, field, c, value, le.pt, le.en)
}

func (rc *rowCtx) templateData() map[string]string {
	if rc.data != nil {
		return rc.data
	}
	d := make(map[string]string, 2*len(rc.row.Cells))
	for i, c := range rc.row.Cells {
		if i < len(rc.vr.src.Headers) {
			d[rc.vr.src.Headers[i]] = c.Value
		}
	}
	for f, i := range rc.vr.col {
		d[f] = rc.row.Get(i).Value
	}
	for _, f := range Catalogue {
		if _, ok := d[f.ID]; !ok {
			d[f.ID] = ""
		}
	}
	rc.data = d
	return d
}

// get evaluates a prepared Value for the row: the constant, or the
// template's text parsed by the value's parser. ok is false when the value
// is not set or has a problem (already noted).
func (rc *rowCtx) get(v *Value) (any, bool) {
	if v == nil || !v.Set || v.info == nil {
		return nil, false
	}
	if !v.IsTemplate() {
		return v.info.parsed, v.info.parsed != nil
	}
	var s string
	var cell *formats.Cell
	if v.ref != "" {
		c := rc.row.Get(v.col)
		if c.Column == "" && v.col < len(rc.vr.src.Columns) {
			c.Column, c.Header = rc.vr.src.Columns[v.col], rc.vr.src.Headers[v.col]
		}
		cell = &c
		s = c.Value
		if c.Kind == formats.KindNumber && isMoneyParser(v) {
			// a numeric cell is a plain decimal with a dot
			if cents, err := formats.ParseMoneyCell(c); err == nil {
				s = rules.FormatPixAmount(cents)
			}
		}
	} else {
		var b strings.Builder
		if err := v.tmpl.Execute(&b, rc.templateData()); err != nil {
			rc.fail("modelo_erro", v.info.field, nil, fmt.Sprintf("modelo %q: %v", v.Raw, err), fmt.Sprintf("template %q: %v", v.Raw, err))
			return nil, false
		}
		s = b.String()
		if !rc.checkTemplateControls(v, s) {
			return nil, false
		}
	}
	x, le := v.info.parse(s)
	if le != nil {
		rc.failLim(le, v.info.field, cell, s)
		return nil, false
	}
	return x, true
}

// isMoneyParser is a cheap marker: money values have "valor" or "value"
// pointers. Numeric cells are converted for them.
func isMoneyParser(v *Value) bool {
	p := v.info.ptr
	return strings.HasSuffix(p, "/value") || strings.HasSuffix(p, "/valor") || strings.HasSuffix(p, "/fixed")
}

func (rc *rowCtx) getInt(v *Value, def int64) int64 {
	if x, ok := rc.get(v); ok {
		return x.(int64)
	}
	return def
}

func (rc *rowCtx) getStr(v *Value) string {
	if x, ok := rc.get(v); ok {
		return x.(string)
	}
	return ""
}

// row validates one data row.
func (vr *rowValidator) row(index int, row formats.Row) (*Item, *results.Row, []Note) {
	rc := &rowCtx{vr: vr, row: row, index: index}
	slot := vr.nextSlot()
	it := &slot.item
	vr.cobvSlot = &slot.cobv
	it.Index, it.SourceRow = index, row.Number
	rc.checkControls()

	key, kc := rc.text(iKey)
	rc.key = key
	it.Key = key
	if key == "" {
		rc.fail("chave_ausente", FKey, kc, "a linha não tem chave (a coluna que identifica a linha está vazia)", "the row has no key (the column that identifies the row is empty)")
	} else if first := vr.addKey(key, index, row.Number); first != 0 {
		rc.fail("chave_duplicada", FKey, kc, fmt.Sprintf("chave %q repetida: já aparece na linha %d", key, first), fmt.Sprintf("key %q repeated: already on row %d", key, first))
	}

	payer := vr.payer(rc, it)
	if isTemplateExample(key, it.PayerName, it.PayerDoc) {
		rc.fail(CodeTemplateExample, FKey, kc, "é a linha de exemplo do modelo (Código "+key+", "+it.PayerName+"); apague-a antes de emitir",
			"this is the template's example row (key "+key+", "+it.PayerName+"); delete it before issuing")
	}

	switch vr.kind {
	case results.Carnets:
		vr.carnet(rc, it, payer)
	case results.Boletos:
		vr.slip(rc, it, payer)
	case results.Cobv:
		vr.cobv(rc, it, payer)
	}

	if rc.errs == 0 && it.PayerDoc != "" {
		if first := vr.triples.addHash(vr.tripleHash(it.PayerDoc, it.AmountCents, it.DueDate), index, row.Number); first != 0 {
			rc.note(SevWarning, "possivel_duplicata", FDocument, nil, rules.MaskDocument(it.PayerDoc),
				fmt.Sprintf("mesmo pagador, valor e vencimento da linha %d: confira se não é uma cobrança em dobro", first),
				fmt.Sprintf("same payer, value and due date as row %d: check it is not a double charge", first))
		}
	}
	notes := rc.notes
	for _, n := range notes {
		if n.Severity == SevWarning {
			it.Warnings = append(it.Warnings, n.Problem)
		}
	}
	if rc.errs > 0 {
		// copies, as for notes: refused rows are few and may be kept
		rr := &results.Row{Index: index, SourceRow: row.Number, Key: strings.Clone(key), PayerName: strings.Clone(it.PayerName), PayerDoc: strings.Clone(it.PayerDoc),
			Outcome: results.Refused, AmountCents: it.AmountCents}
		if !it.DueDate.IsZero() {
			rr.DueDate = rules.FormatISODate(it.DueDate)
		}
		for _, n := range notes {
			if n.Severity == SevError {
				rr.Problems = append(rr.Problems, n.Problem)
			}
		}
		return nil, rr, notes
	}
	return it, nil, notes
}

// tripleHash hashes a payer, a value and a due date in one call when
// they fit a small buffer (they do: a clean CPF or CNPJ), streaming
// otherwise.
func (vr *rowValidator) tripleHash(doc string, cents int64, due time.Time) uint64 {
	var buf [48]byte
	if len(doc) <= len(buf)-16 {
		n := copy(buf[:], doc)
		binary.LittleEndian.PutUint64(buf[n:], uint64(cents))
		binary.LittleEndian.PutUint64(buf[n+8:], uint64(due.Unix()))
		return nonZero(maphash.Bytes(vr.seed, buf[:n+16]))
	}
	h := &vr.hash
	h.Reset()
	h.WriteString(doc)
	binary.LittleEndian.PutUint64(buf[:8], uint64(cents))
	binary.LittleEndian.PutUint64(buf[8:16], uint64(due.Unix()))
	h.Write(buf[:16])
	return nonZero(h.Sum64())
}

// addKey records the row's key, with the hash touchKeys computed when
// there is one.
func (vr *rowValidator) addKey(key string, index, row int) int {
	if h := vr.keyHash; h != 0 {
		vr.keyHash = 0
		return vr.keys.addHash(h, index, row)
	}
	return vr.keys.add(key, index, row)
}

// payerInfo is the row's payer, validated.
type payerInfo struct {
	name, doc, email, phone, birth string
	isCNPJ                         bool
	corporate                      string
	addr                           Address
	hasAddr                        bool
}

func (vr *rowValidator) payer(rc *rowCtx, it *Item) payerInfo {
	var p payerInfo
	maxName := MaxNameLen
	if vr.kind == results.Cobv {
		maxName = MaxPixNameLen
	}
	name, nc := rc.text(iName)
	if name == "" {
		rc.fail("nome_ausente", FName, nc, "nome do pagador vazio", "payer name is empty")
	} else if le := checkTextLen(name, maxName, "nome do pagador", "payer name"); le != nil {
		rc.failLim(le, FName, nc, "")
	}
	p.name, it.PayerName = name, name

	docRaw, dc := rc.text(iDocument)
	if docRaw == "" {
		rc.fail("documento_ausente", FDocument, dc, "CPF/CNPJ do pagador vazio", "payer CPF/CNPJ is empty")
	} else {
		doc, restored := formats.RestoreDocument(docRaw)
		if restored && !rules.AllDigits(strings.TrimSuffix(docRaw, ".0")) {
			// only a number loses its zeros; a masked text was typed short
			doc, restored = rules.CleanDocument(docRaw), false
		}
		switch {
		case len(doc) == 11 && rules.AllDigits(doc):
			if !rules.ValidCPF(doc) {
				rc.fail("cpf_invalido", FDocument, dc, fmt.Sprintf("CPF %s inválido: dígitos verificadores não conferem", docRaw), fmt.Sprintf("CPF %s is invalid: check digits do not match", docRaw))
			}
		case len(doc) == 14:
			p.isCNPJ = true
			if !rules.ValidCNPJ(doc) {
				rc.fail("cnpj_invalido", FDocument, dc, fmt.Sprintf("CNPJ %s inválido: dígitos verificadores não conferem", docRaw), fmt.Sprintf("CNPJ %s is invalid: check digits do not match", docRaw))
			}
		case formats.IsScientific(docRaw):
			rc.fail("documento_invalido", FDocument, dc,
				fmt.Sprintf("%q: o Excel gravou o CPF/CNPJ como número em notação científica e os dígitos se perderam; formate a coluna como texto e digite-os de novo", docRaw),
				fmt.Sprintf("%q: Excel stored the CPF/CNPJ as a number in scientific notation and its digits are lost; format the column as text and type them again", docRaw))
		default:
			rc.fail("documento_invalido", FDocument, dc, fmt.Sprintf("%q não é CPF (11 dígitos) nem CNPJ (14 caracteres)", docRaw), fmt.Sprintf("%q is neither a CPF (11 digits) nor a CNPJ (14 characters)", docRaw))
		}
		if restored && rc.errs == 0 {
			rc.note(SevWarning, "zeros_restaurados", FDocument, dc, "",
				fmt.Sprintf("%s perdeu os zeros à esquerda (guardado como número); restaurado como %s — formate a coluna como texto", docRaw, doc),
				fmt.Sprintf("%s lost its leading zeros (stored as a number); restored as %s — format the column as text", docRaw, doc))
		}
		p.doc, it.PayerDoc = doc, doc
	}
	if p.isCNPJ {
		corp, _ := rc.text(iCorporateName)
		if corp == "" {
			corp = name
		}
		p.corporate = corp
	}

	if email, ec := rc.text(iEmail); email != "" {
		if !rules.ValidEmail(email) {
			rc.fail("email_invalido", FEmail, ec, fmt.Sprintf("e-mail %q inválido", email), fmt.Sprintf("invalid e-mail %q", email))
		}
		p.email = email
	}
	if phone, pc := rc.text(iPhone); phone != "" {
		cp := rules.CleanPhone(phone)
		if !rules.ValidPhone(cp) {
			rc.fail("telefone_invalido", FPhone, pc, fmt.Sprintf("telefone %q inválido: use DDD + número, 10 ou 11 dígitos", phone), fmt.Sprintf("invalid phone %q: use area code + number, 10 or 11 digits", phone))
		}
		p.phone = cp
	}
	if birth, bc := rc.text(iBirth); birth != "" {
		d, err := formats.ParseDate(birth)
		switch {
		case err != nil:
			rc.fail("nascimento_invalido", FBirth, bc, fmt.Sprintf("data de nascimento %q inválida", birth), fmt.Sprintf("invalid birth date %q", birth))
		case !d.Before(vr.job.Today) || d.Year() < 1900:
			rc.fail("nascimento_invalido", FBirth, bc, fmt.Sprintf("data de nascimento %s impossível", formats.FormatDate(d)), fmt.Sprintf("impossible birth date %s", rules.FormatISODate(d)))
		default:
			p.birth = rules.FormatISODate(d)
		}
	}

	street, _ := rc.text(iStreet)
	number, _ := rc.text(iNumber)
	hood, _ := rc.text(iNeighborhood)
	cepRaw, cc := rc.text(iZipcode)
	city, _ := rc.text(iCity)
	ufRaw, uc := rc.text(iState)
	compl, _ := rc.text(iComplement)
	cep := ""
	if cepRaw != "" {
		c, restored := cepRaw, false
		if !rules.ValidCEP(cepRaw) {
			c, restored = formats.RestoreCEP(cepRaw)
		}
		if restored && !(len(cepRaw) == 7 && rules.AllDigits(cepRaw)) {
			// a CEP stored as a number loses one zero (none starts with 00)
			c, restored = cepRaw, false
		}
		if !rules.ValidCEP(c) {
			rc.fail("cep_invalido", FZipcode, cc, fmt.Sprintf("CEP %q inválido: 8 dígitos", cepRaw), fmt.Sprintf("invalid CEP %q: 8 digits", cepRaw))
		} else if restored {
			rc.note(SevWarning, "zeros_restaurados", FZipcode, cc, "",
				fmt.Sprintf("CEP %s perdeu o zero à esquerda; restaurado como %s", cepRaw, c),
				fmt.Sprintf("CEP %s lost its leading zero; restored as %s", cepRaw, c))
		}
		cep = strings.ReplaceAll(c, "-", "")
	}
	uf := strings.ToUpper(ufRaw)
	if uf != "" && !rules.ValidUF(uf) {
		rc.fail("uf_invalida", FState, uc, fmt.Sprintf("UF %q inválida: use a sigla do estado, ex.: SP", ufRaw), fmt.Sprintf("invalid state %q: use the two-letter code, e.g. SP", ufRaw))
	}
	if street != "" || number != "" || hood != "" || cep != "" || city != "" || uf != "" {
		p.addr, p.hasAddr = Address{Street: street, Number: number, Neighborhood: hood, Zipcode: cep, City: city, Complement: compl, State: uf}, true
		if vr.kind != results.Cobv {
			var missing []string
			at, atField := (*formats.Cell)(nil), FStreet // the first missing field's cell, when it has a column
			for _, f := range []struct {
				v, id string
				fi    int
			}{{street, FStreet, iStreet}, {number, FNumber, iNumber}, {hood, FNeighborhood, iNeighborhood}, {cep, FZipcode, iZipcode}, {city, FCity, iCity}, {uf, FState, iState}} {
				if f.v == "" {
					fd, _ := FieldByID(f.id)
					missing = append(missing, fd.Label)
					if c, ok := rc.cell(f.fi); ok && at == nil {
						at, atField = c, f.id
					}
				}
			}
			if len(missing) > 0 && cepRaw != "" || len(missing) > 0 && street != "" {
				rc.fail("endereco_incompleto", atField, at, "endereço incompleto: falta "+strings.Join(missing, ", "), "incomplete address: missing "+strings.Join(missing, ", "))
			}
		}
	}
	return p
}

func (p payerInfo) customer() Customer {
	c := Customer{Name: p.name, Email: p.email, PhoneNumber: p.phone, Birth: p.birth}
	if p.hasAddr {
		a := p.addr
		c.Address = &a
	}
	if p.isCNPJ {
		c.JuridicalPerson = &JuridicalPerson{CorporateName: p.corporate, CNPJ: p.doc}
	} else {
		c.CPF = p.doc
	}
	return c
}

// dueFrom evaluates the job's due date or reads the due date column.
func (vr *rowValidator) dueFrom(rc *rowCtx, v *Value) time.Time {
	if v.Set {
		if x, ok := rc.get(v); ok {
			return x.(time.Time)
		}
		return time.Time{}
	}
	s, c := rc.text(iDueDate)
	if s == "" {
		rc.fail("vencimento_ausente", FDueDate, c, "vencimento vazio", "due date is empty")
		return time.Time{}
	}
	d, err := formats.ParseDate(s)
	if err != nil {
		le := fromValueErr(err, "data_invalida")
		rc.failLim(le, FDueDate, c, "")
		return time.Time{}
	}
	if le := checkDue(d, vr.job.Today, vr.kind); le != nil {
		rc.failLim(le, FDueDate, c, "")
		return time.Time{}
	}
	return d
}

// valueColumn reads the value column as cents (> 0).
func (vr *rowValidator) valueColumn(rc *rowCtx, max int64) int64 {
	c, ok := rc.cell(iValue)
	if !ok {
		return 0
	}
	if strings.TrimSpace(c.Value) == "" {
		rc.fail("valor_ausente", FValue, c, "valor vazio", "value is empty")
		return 0
	}
	v, err := formats.ParseMoneyCell(*c)
	if err != nil {
		rc.failLim(fromValueErr(err, "valor_invalido"), FValue, c, "")
		return 0
	}
	if le := checkPositive(v, "valor", "value"); le != nil {
		rc.failLim(le, FValue, c, "")
		return v
	}
	if v > max {
		rc.fail("valor_acima_limite", FValue, c, fmt.Sprintf("valor %s acima do limite de %s", rules.FormatBRL(v), rules.FormatBRL(max)), fmt.Sprintf("value %s above the limit of %s", rules.FormatBRL(v), rules.FormatBRL(max)))
	}
	return v
}

// items resolves the charge items of a carnet or slip.
func (vr *rowValidator) items(rc *rowCtx, specs []ItemSpec) ([]ChargeItem, int64) {
	var out []ChargeItem
	var total int64
	if len(specs) == 0 {
		name, _ := rc.text(iDescription)
		if name == "" {
			name = vr.job.Name
		}
		v := vr.valueColumn(rc, MaxChargeCents)
		return []ChargeItem{{Name: name, Value: v, Amount: 1}}, v
	}
	for i := range specs {
		s := &specs[i]
		ci := ChargeItem{Name: rc.getStr(&s.Name), Amount: rc.getInt(&s.Amount, 1)}
		if s.Value.Set {
			ci.Value = rc.getInt(&s.Value, 0)
		} else {
			ci.Value = vr.valueColumn(rc, MaxChargeCents)
		}
		if m := s.Marketplace; m != nil {
			mk := &Marketplace{Mode: m.Mode}
			for k := range m.Repasses {
				r := &m.Repasses[k]
				mk.Repasses = append(mk.Repasses, Repasse{PayeeCode: rc.getStr(&r.PayeeCode), Percentage: rc.getInt(&r.Percentage, 0), Fixed: rc.getInt(&r.Fixed, 0)})
			}
			ci.Marketplace = mk
		}
		out = append(out, ci)
		total += ci.Value * ci.Amount
	}
	return out, total
}

func toSplitItems(items []ChargeItem) []rules.SplitItem {
	out := make([]rules.SplitItem, len(items))
	for i, ci := range items {
		out[i] = rules.SplitItem{Name: ci.Name, ValueCents: ci.Value, Amount: ci.Amount}
		if ci.Marketplace != nil {
			m := &rules.Marketplace{Mode: ci.Marketplace.Mode}
			for _, r := range ci.Marketplace.Repasses {
				m.Repasses = append(m.Repasses, rules.Repasse{PayeeCode: r.PayeeCode, Percentage: r.Percentage, Fixed: r.Fixed})
			}
			out[i].Marketplace = m
		}
	}
	return out
}

func hasMarketplace(items []ChargeItem) bool {
	for _, it := range items {
		if it.Marketplace != nil {
			return true
		}
	}
	return false
}

// checkRowMarketplace runs the marketplace rules on a row whose split
// depends on the row.
func (vr *rowValidator) checkRowMarketplace(rc *rowCtx, items []ChargeItem, specs []ItemSpec, base string) {
	if !hasMarketplace(items) || rc.errs > 0 {
		return
	}
	if marketplaceConstant(specs) {
		return // checked at load
	}
	for _, v := range rules.CheckMarketplace(toSplitItems(items), nil, vr.own) {
		rc.fail(ruleCode(v.Rule), strings.ReplaceAll(strings.TrimPrefix(base+v.Pointer, "/"), "/", "."), nil, v.Message, v.MessageEN)
	}
}

func (vr *rowValidator) charges(rc *rowCtx, fine, interest, message, notif, customID *Value, d *DiscountSpec, cd *ConditionalDiscountSpec, due time.Time) (*Configurations, string, *Metadata, *Discount, *ConditionalDiscount) {
	var cfg *Configurations
	f, i := rc.getInt(fine, 0), rc.getInt(interest, 0)
	if f != 0 || i != 0 {
		cfg = &Configurations{Fine: f, Interest: i}
	}
	msg := rc.getStr(message)
	if m, mc := rc.text(iMessage); m != "" {
		var le *limitErr
		if vr.kind == results.Boletos {
			le = checkSlipMessage(m)
			m = strings.ReplaceAll(strings.ReplaceAll(m, "\r\n", "\n"), `\n`, "\n")
		} else {
			le = checkTextLen(m, rules.MaxCarnetMessage, "mensagem do carnê", "carnet message")
		}
		if le != nil {
			rc.failLim(le, FMessage, mc, "")
		}
		msg = m
	}
	var md *Metadata
	if n, c := rc.getStr(notif), rc.getStr(customID); n != "" || c != "" {
		md = &Metadata{NotificationURL: n, CustomID: c}
	}
	var disc *Discount
	if d != nil {
		if x, ok := rc.get(&d.Value); ok {
			disc = &Discount{Type: d.Type, Value: x.(pm).v}
		}
	}
	var cdisc *ConditionalDiscount
	if cd != nil {
		if x, ok := rc.get(&cd.Value); ok {
			until := due.AddDate(0, 0, -cd.DaysBeforeDue)
			if cd.UntilDate.Set {
				if u, ok := rc.get(&cd.UntilDate); ok {
					until = u.(time.Time)
				}
			}
			if !due.IsZero() && until.After(due) {
				rc.fail("desconto_data", "conditional_discount.until_date", nil,
					fmt.Sprintf("o desconto condicional vai até %s, depois do vencimento %s", formats.FormatDate(until), formats.FormatDate(due)),
					fmt.Sprintf("the conditional discount runs until %s, after the due date %s", rules.FormatISODate(until), rules.FormatISODate(due)))
			}
			cdisc = &ConditionalDiscount{Type: cd.Type, Value: x.(pm).v, UntilDate: rules.FormatISODate(until)}
		}
	}
	return cfg, msg, md, disc, cdisc
}

func (vr *rowValidator) carnet(rc *rowCtx, it *Item, p payerInfo) {
	s := vr.job.Spec.Issue.Carnets
	repeats := int(rc.getInt(&s.Repeats, 0))
	due := vr.dueFrom(rc, &s.FirstDue)
	items, perParcel := vr.items(rc, s.Items)
	vr.checkRowMarketplace(rc, items, s.Items, "/issue/carnets")
	cfg, msg, md, disc, cdisc := vr.charges(rc, &s.Fine, &s.InterestPerDay, &s.Message, &s.NotificationURL, &s.CustomID, s.Discount, s.ConditionalDiscount, due)
	it.DueDate = due
	if repeats < 1 {
		repeats = 1
	}
	// Parcel values: without split_items every parcel carries the items;
	// with split_items the items' total is divided among the parcels, the
	// remainder cents on the first parcel (inferred; the service's own
	// rounding is not documented).
	values := make([]int64, repeats)
	if s.SplitItems {
		for k := range values {
			values[k] = perParcel / int64(repeats)
		}
		values[0] += perParcel % int64(repeats)
		it.AmountCents = perParcel
	} else {
		for k := range values {
			values[k] = perParcel
		}
		it.AmountCents = perParcel * int64(repeats)
	}
	if perParcel > 0 && values[len(values)-1] < MinSlipCents {
		rc.fail("valor_minimo", "value", nil,
			fmt.Sprintf("cada parcela fica em %s: o mínimo por cobrança é %s", rules.FormatBRL(values[len(values)-1]), rules.FormatBRL(MinSlipCents)),
			fmt.Sprintf("each parcel comes to %s: the minimum per charge is %s", rules.FormatBRL(values[len(values)-1]), rules.FormatBRL(MinSlipCents)))
	}
	if rc.errs > 0 {
		return
	}
	for k := range values {
		it.Parcels = append(it.Parcels, ParcelPlan{Number: k + 1, DueDate: rules.AddMonthsClamped(due, k), ValueCents: values[k]})
	}
	it.Carnet = &CarnetRequest{Items: items, Customer: p.customer(), ExpireAt: rules.FormatISODate(due), Repeats: repeats, SplitItems: s.SplitItems,
		Metadata: md, Configurations: cfg, Message: msg, Discount: disc, ConditionalDiscount: cdisc}
	if hasMarketplace(items) {
		shares := rules.SplitShares(toSplitItems(items), nil)
		for k, pp := range it.Parcels {
			month := pp.DueDate.Format("2006-01")
			for _, sh := range shares {
				c := sh.Cents
				if s.SplitItems {
					c = sh.Cents / int64(repeats)
					if k == 0 {
						c += sh.Cents % int64(repeats)
					}
				}
				it.Split = append(it.Split, results.Share{Recipient: sh.PayeeCode, Own: sh.Own, DueMonth: month, AmountCents: c})
			}
		}
	}
}

func (vr *rowValidator) slip(rc *rowCtx, it *Item, p payerInfo) {
	s := vr.job.Spec.Issue.Boletos
	due := vr.dueFrom(rc, &s.Due)
	items, total := vr.items(rc, s.Items)
	vr.checkRowMarketplace(rc, items, s.Items, "/issue/boletos")
	cfg, msg, md, disc, cdisc := vr.charges(rc, &s.Fine, &s.InterestPerDay, &s.Message, &s.NotificationURL, &s.CustomID, s.Discount, s.ConditionalDiscount, due)
	if x, ok := rc.get(&s.DaysToWriteOff); ok {
		n := int(x.(int64))
		if cfg == nil {
			cfg = &Configurations{}
		}
		cfg.DaysToWriteOff = &n
	}
	it.DueDate, it.AmountCents = due, total
	if total > 0 && total < MinSlipCents {
		rc.fail("valor_minimo", "value", nil,
			fmt.Sprintf("total do boleto %s abaixo do mínimo de %s", rules.FormatBRL(total), rules.FormatBRL(MinSlipCents)),
			fmt.Sprintf("slip total %s below the minimum of %s", rules.FormatBRL(total), rules.FormatBRL(MinSlipCents)))
	}
	if rc.errs > 0 {
		return
	}
	it.Slip = &SlipRequest{Items: items, Metadata: md, Payment: SlipPayment{BankingBillet: BankingBillet{
		Customer: p.customer(), ExpireAt: rules.FormatISODate(due), Configurations: cfg, Message: msg, Discount: disc, ConditionalDiscount: cdisc}}}
	if hasMarketplace(items) {
		month := due.Format("2006-01")
		for _, sh := range rules.SplitShares(toSplitItems(items), nil) {
			it.Split = append(it.Split, results.Share{Recipient: sh.PayeeCode, Own: sh.Own, DueMonth: month, AmountCents: sh.Cents})
		}
	}
}

func (vr *rowValidator) pixMod(rc *rowCtx, m *PixModSpec) *Modalidade {
	if m == nil {
		return nil
	}
	for _, c := range vr.modc {
		if c.spec == m {
			return c.md
		}
	}
	x, ok := rc.get(&m.Valor)
	if !ok {
		return nil
	}
	md := &Modalidade{Modalidade: m.Modalidade, ValorPerc: rules.FormatPixAmount(x.(pm).v)}
	if !m.Valor.IsTemplate() {
		vr.modc = append(vr.modc, modCache{m, md})
	}
	return md
}

type modCache struct {
	spec *PixModSpec
	md   *Modalidade
}

func (vr *rowValidator) cobv(rc *rowCtx, it *Item, p payerInfo) {
	s := vr.job.Spec.Issue.Cobv
	due := vr.dueFrom(rc, &s.Due)
	var valor int64
	if s.Valor.Set {
		valor = rc.getInt(&s.Valor, 0)
	} else {
		valor = vr.valueColumn(rc, MaxPixCents)
	}
	it.DueDate, it.AmountCents = due, valor
	txid := ""
	if s.Txid.Set {
		txid = rc.getStr(&s.Txid)
	} else if t, tc := rc.text(iTxid); t != "" {
		if _, le := pTxid(t); le != nil {
			rc.failLim(le, FTxid, tc, "")
		} else {
			txid = t
		}
	}
	if txid != "" {
		if vr.txids == nil { // made on the first txid: most jobs have none
			vr.txids = newSeenSet(vr.seed, vr.maxRows)
		}
		if first := vr.txids.add(txid, rc.index, rc.row.Number); first != 0 {
			tc, _ := rc.cell(iTxid)
			rc.fail("txid_duplicado", FTxid, tc, fmt.Sprintf("txid %s repetido: já aparece na linha %d", txid, first), fmt.Sprintf("txid %s repeated: already on row %d", txid, first))
		}
	}
	chave := rc.getStr(&s.Chave)
	sol := rc.getStr(&s.Solicitacao)
	if m, mc := rc.text(iMessage); m != "" {
		if le := checkTextLen(m, rules.MaxSolicitacaoPagador, "solicitação ao pagador", "solicitacaoPagador"); le != nil {
			rc.failLim(le, FMessage, mc, "")
		}
		sol = m
	}
	val := CobvValor{Original: vr.strs.pixAmount(valor), Multa: vr.pixMod(rc, s.Multa), Juros: vr.pixMod(rc, s.Juros), Abatimento: vr.pixMod(rc, s.Abatimento)}
	if d := s.Desconto; d != nil {
		cd := &CobvDesconto{Modalidade: d.Modalidade}
		if d.Modalidade >= 3 {
			if x, ok := rc.get(&d.Valor); ok {
				cd.ValorPerc = rules.FormatPixAmount(x.(pm).v)
			}
		}
		for i := range d.Datas {
			dt, ok1 := rc.get(&d.Datas[i].Data)
			v, ok2 := rc.get(&d.Datas[i].Valor)
			if !ok1 || !ok2 {
				continue
			}
			rd := dt.(relDate)
			date := rd.abs
			if rd.abs.IsZero() {
				date = due.AddDate(0, 0, -rd.daysBefore)
			}
			if !due.IsZero() && date.After(due) {
				rc.fail("desconto_data", fmt.Sprintf("issue.cobv.desconto.datas.%d.data", i), nil,
					fmt.Sprintf("data do desconto %s depois do vencimento %s", formats.FormatDate(date), formats.FormatDate(due)),
					fmt.Sprintf("discount date %s after the due date %s", rules.FormatISODate(date), rules.FormatISODate(due)))
			}
			cd.DescontoDataFixa = append(cd.DescontoDataFixa, DataValor{Data: rules.FormatISODate(date), ValorPerc: rules.FormatPixAmount(v.(pm).v)})
		}
		val.Desconto = cd
	}
	var split *PixSplitConfig
	if sp := s.Split; sp != nil && rc.errs == 0 {
		split = vr.pixSplit(rc, sp, valor, due, it)
	}
	if rc.errs > 0 {
		return
	}
	dev := Devedor{Nome: p.name, Email: p.email}
	if p.isCNPJ {
		dev.CNPJ = p.doc
	} else {
		dev.CPF = p.doc
	}
	if p.hasAddr {
		a := &p.addr
		dev.Logradouro = vr.strs.join(a.Street, a.Number, a.Complement)
		dev.Cidade, dev.UF, dev.CEP = a.City, a.State, a.Zipcode
	}
	validade := s.ValidadeAposVencimento
	if validade == 0 {
		validade = DefaultValidade
	}
	*vr.cobvSlot = CobvRequest{Calendario: Calendario{DataDeVencimento: vr.isoDate(due), ValidadeAposVencimento: validade},
		Txid: txid, Devedor: dev, Valor: val, Chave: chave, SolicitacaoPagador: sol}
	it.Cobv = vr.cobvSlot
	it.PixSplit = split
}

// pixSplit resolves the row's Pix split configuration and its shares:
// a percentage repasse gets floor(valor × pct / 10000), a fixed one its
// value, the remainder goes to the own account.
func (vr *rowValidator) pixSplit(rc *rowCtx, sp *PixSplitSpec, valor int64, due time.Time, it *Item) *PixSplitConfig {
	div := sp.DivisaoTarifa
	if div == "" {
		div = "assumir_total"
	}
	mp, _ := rc.get(&sp.MinhaParte.Valor)
	rs := rules.PixSplit{DivisaoTarifa: div, MinhaParte: rules.PixSplitPart{Tipo: sp.MinhaParte.Tipo}}
	if x, ok := mp.(pm); ok {
		rs.MinhaParte.Valor = x.v
	}
	constant := true
	for i := range sp.Repasses {
		r := &sp.Repasses[i]
		part := rules.PixSplitPart{Tipo: r.Tipo, CPF: rules.CleanDocument(rc.getStr(&r.CPF)), CNPJ: rules.CleanDocument(rc.getStr(&r.CNPJ)), Conta: rc.getStr(&r.Conta)}
		if x, ok := rc.get(&r.Valor); ok {
			part.Valor = x.(pm).v
		}
		constant = constant && !r.Valor.IsTemplate() && !r.CPF.IsTemplate() && !r.CNPJ.IsTemplate() && !r.Conta.IsTemplate()
		rs.Repasses = append(rs.Repasses, part)
	}
	constant = constant && !sp.MinhaParte.Valor.IsTemplate()
	if rc.errs > 0 {
		return nil
	}
	if !constant {
		for _, v := range rules.CheckPixSplit(rs, vr.job.Endpoint.Conta) {
			rc.fail(ruleCode(v.Rule), strings.ReplaceAll(strings.TrimPrefix("/issue/cobv"+pixPointer(v.Pointer), "/"), "/", "."), nil, v.Message, v.MessageEN)
		}
	}
	month := due.Format("2006-01")
	left := valor
	var shares []results.Share
	var sumFixed int64
	for _, r := range rs.Repasses {
		c := r.Valor
		if r.Tipo == rules.PixSplitPercent {
			c = valor * r.Valor / 10000
		} else {
			sumFixed += r.Valor
		}
		if c > left {
			c = left
		}
		left -= c
		shares = append(shares, results.Share{Recipient: r.Conta, DueMonth: month, AmountCents: c})
	}
	if rs.MinhaParte.Tipo == rules.PixSplitFixed {
		sumFixed += rs.MinhaParte.Valor
		if sumFixed != valor {
			rc.fail("pixsplit_fixo", "issue.cobv.split", nil,
				fmt.Sprintf("split fixo soma %s, diferente do valor da cobrança %s", rules.FormatBRL(sumFixed), rules.FormatBRL(valor)),
				fmt.Sprintf("the fixed split totals %s, not the charge value %s", rules.FormatBRL(sumFixed), rules.FormatBRL(valor)))
		}
	}
	if rc.errs > 0 {
		return nil
	}
	it.Split = append([]results.Share{{Own: true, DueMonth: month, AmountCents: left}}, shares...)
	cfg := &PixSplitConfig{Descricao: sp.Descricao, Lancamento: Lancamento{Imediato: true},
		Split: PixSplit{DivisaoTarifa: div, MinhaParte: PixSplitPart{Tipo: rs.MinhaParte.Tipo, Valor: rules.FormatPixAmount(rs.MinhaParte.Valor)}}}
	var key strings.Builder
	key.WriteString(div + "|" + cfg.Split.MinhaParte.Tipo + ":" + cfg.Split.MinhaParte.Valor)
	for _, r := range rs.Repasses {
		cfg.Split.Repasses = append(cfg.Split.Repasses, PixSplitPart{Tipo: r.Tipo, Valor: rules.FormatPixAmount(r.Valor), Favorecido: &Favorecido{CPF: r.CPF, CNPJ: r.CNPJ, Conta: r.Conta}})
		fmt.Fprintf(&key, "|%s:%d:%s:%s:%s", r.Tipo, r.Valor, r.CPF, r.CNPJ, r.Conta)
	}
	it.SplitKey = key.String()
	return cfg
}
