package actions

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"time"

	"go.yaml.in/yaml/v3"

	"remessa/formats"
	"remessa/pipeline"
	"remessa/pipeline/journal"
	"remessa/rules"
)

// Kinds of action.
const (
	Cancel        = "cancel"
	ChangeDueDate = "change_due_date"
	Resend        = "resend"
	Settle        = "settle"
	SecondCopy    = "second_copy"
	Abatimento    = "abatimento" // a cobv's valor.abatimento set or removed
)

// Job is a loaded, checked action job.
type Job struct {
	File, Dir, SHA256, Name string
	SourceDir               string // the run acted on (absolute)
	Kind                    string // Cancel, ChangeDueDate, ...
	Spec                    *Spec

	Keys      map[string]bool // nil: every row
	Status    []string        // filter.status, lower case
	DueBefore string          // ISO, "" = none
	DueFrom   string
	Parcels   []int

	Parcel       int               // cancel/settle/change_due_date: only this parcel
	NewDate      string            // change_due_date: ISO
	Days         int               // change_due_date: days to add
	NewDates     map[string]string // change_due_date: ISO by row key
	Email        string            // resend override
	CopyDir      string            // second_copy folder name
	Rebate       int64             // abatimento: cents (0 with RebateRemove: removed)
	Rebates      map[string]int64  // abatimento: cents by row key
	RebateRemove bool

	Concurrency int
	Today       time.Time
	Now         time.Time

	yaml   []byte                                   // the job file's content (FromSpec: the spec as YAML)
	reload func(now func() time.Time) (*Job, error) // the same job read with another clock
}

// LoadOptions tune Load. Zero values mean the real clock and environment.
type LoadOptions struct {
	Now    func() time.Time
	Getenv func(string) (string, bool)
}

// IsActionJob reports whether the job file at path is an action job (it
// has a top-level action: key), so the commands can send it here.
func IsActionJob(path string) bool {
	b, err := os.ReadFile(path)
	if err != nil {
		return false
	}
	return slices.Contains(pipeline.TopLevelKeys(b), "action")
}

// Load reads and checks an action job. Every problem comes back at once in
// a *pipeline.JobError with line and column, as pipeline.Load does.
func Load(path string, o LoadOptions) (*Job, error) {
	if o.Now == nil {
		o.Now = time.Now
	}
	abs, err := filepath.Abs(path)
	if err != nil {
		abs = path
	}
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, &pipeline.JobError{Problems: []pipeline.JobProblem{{File: path, Code: "arquivo_job",
			Message:   fmt.Sprintf("não foi possível ler o arquivo de job: %v", err),
			MessageEN: fmt.Sprintf("cannot read the job file: %v", err)}}}
	}
	spec := &Spec{}
	pos, probs := pipeline.DecodeStrict(path, data, spec, o.Getenv)
	j := newJob(spec, abs, filepath.Dir(abs), data, o)
	j.reload = func(now func() time.Time) (*Job, error) { return Load(path, LoadOptions{Now: now, Getenv: o.Getenv}) }
	return check(j, path, pos, probs)
}

// FromSpec checks an action given as a Spec built in code instead of a job
// file (the desk's selection: rows ticked, a filter, an uploaded sheet of
// keys, and one action) with the same checks Load makes; relative paths
// (from_run, input.file) are taken from dir. The job's identity (SHA256,
// by which a second run of the same job does not resend or move by days
// again) is the hash of the spec's YAML, which RunJob writes into the
// action folder as job.yaml: the same selection is the same job.
func FromSpec(spec *Spec, dir string, o LoadOptions) (*Job, error) {
	if o.Now == nil {
		o.Now = time.Now
	}
	if abs, err := filepath.Abs(dir); err == nil {
		dir = abs
	}
	data, err := SpecYAML(spec)
	if err != nil {
		return nil, err
	}
	j := newJob(spec, "", dir, data, o)
	j.reload = func(now func() time.Time) (*Job, error) {
		return FromSpec(spec, dir, LoadOptions{Now: now, Getenv: o.Getenv})
	}
	return check(j, "job.yaml", nil, nil)
}

// SpecYAML is spec written as an action job file: the fields it sets (an
// action without options as {}), so Load reads back the same job.
func SpecYAML(spec *Spec) ([]byte, error) {
	var n yaml.Node
	if err := n.Encode(spec); err != nil {
		return nil, fmt.Errorf("ação: escrever o job: %w", err)
	}
	prune(&n)
	b, err := yaml.Marshal(&n)
	if err != nil {
		return nil, fmt.Errorf("ação: escrever o job: %w", err)
	}
	return b, nil
}

// prune drops the unset fields of a mapping: null, "", 0 and empty lists
// (an empty mapping stays: it is an action chosen without options).
func prune(n *yaml.Node) {
	if n.Kind != yaml.MappingNode {
		for _, c := range n.Content {
			prune(c)
		}
		return
	}
	var keep []*yaml.Node
	for i := 0; i+1 < len(n.Content); i += 2 {
		k, v := n.Content[i], n.Content[i+1]
		prune(v)
		switch {
		case v.Kind == yaml.ScalarNode && (v.Tag == "!!null" || v.Value == "" || (v.Tag == "!!int" && v.Value == "0")):
			continue
		case v.Kind == yaml.SequenceNode && len(v.Content) == 0:
			continue
		}
		keep = append(keep, k, v)
	}
	n.Content = keep
}

func newJob(spec *Spec, file, dir string, data []byte, o LoadOptions) *Job {
	now := o.Now()
	sum := sha256.Sum256(data)
	return &Job{File: file, Dir: dir, SHA256: hex.EncodeToString(sum[:]), Spec: spec, Now: now, Today: rules.Today(now), yaml: data}
}

// check runs the job's checks after decoding (probs: the decoder's).
func check(j *Job, path string, pos map[string]pipeline.Pos, probs []pipeline.JobProblem) (*Job, error) {
	c := &checker{file: path, pos: pos, j: j}
	onlyUnknown := true
	for _, p := range probs {
		if p.Code == "chave_desconhecida" && p.Pointer == "/issue" {
			// a job that both issues and acts
			p.Code = "emissao_e_acao"
			p.Message = "um job tem issue (emitir) ou action (agir sobre uma execução), não os dois"
			p.MessageEN = "a job has either issue (issue charges) or action (act on a run), not both"
		}
		onlyUnknown = onlyUnknown && (p.Code == "chave_desconhecida" || p.Code == "emissao_e_acao")
		c.probs = append(c.probs, p)
	}
	if len(probs) == 0 || onlyUnknown {
		c.check()
	}
	if len(c.probs) > 0 {
		sort.SliceStable(c.probs, func(a, b int) bool {
			if c.probs[a].Line != c.probs[b].Line {
				return c.probs[a].Line < c.probs[b].Line
			}
			return c.probs[a].Column < c.probs[b].Column
		})
		return nil, &pipeline.JobError{Problems: c.probs}
	}
	return j, nil
}

type checker struct {
	file  string
	pos   map[string]pipeline.Pos
	j     *Job
	probs []pipeline.JobProblem
}

func (c *checker) fail(ptr, code, pt, en string) {
	p := pipeline.JobProblem{File: c.file, Pointer: ptr, Code: code, Message: pt, MessageEN: en}
	for q := ptr; ; {
		if at, ok := c.pos[q]; ok {
			p.Line, p.Column = at.Line, at.Column
			break
		}
		i := strings.LastIndex(q, "/")
		if i < 0 {
			break
		}
		q = q[:i]
	}
	c.probs = append(c.probs, p)
}

func (c *checker) date(ptr, s string) string {
	if s == "" {
		return ""
	}
	d, err := pipeline.ParseDateExpr(s, c.j.Today)
	if err != nil {
		c.fail(ptr, "data_invalida", err.Error(), fmt.Sprintf("invalid date %q", s))
		return ""
	}
	return rules.FormatISODate(d)
}

func (c *checker) parcel(ptr string, n int) {
	if n < 0 || n > rules.MaxCarnetRepeats {
		c.fail(ptr, "parcela_fora_limite", fmt.Sprintf("parcela %d fora do limite de 1 a %d", n, rules.MaxCarnetRepeats),
			fmt.Sprintf("parcel %d out of range 1 to %d", n, rules.MaxCarnetRepeats))
	}
}

func (c *checker) check() {
	s, j := c.j.Spec, c.j
	j.Name = s.Name
	if j.Name == "" {
		j.Name = strings.TrimSuffix(filepath.Base(j.File), filepath.Ext(j.File))
	}
	j.SourceDir = s.FromRun
	if j.SourceDir != "" && !filepath.IsAbs(j.SourceDir) {
		j.SourceDir = filepath.Join(j.Dir, j.SourceDir)
	}
	if j.SourceDir != "" {
		if _, err := os.Stat(filepath.Join(j.SourceDir, journal.FileName)); err != nil {
			c.fail("/from_run", "execucao_inexistente", fmt.Sprintf("%s não é a pasta de uma execução (sem %s)", s.FromRun, journal.FileName),
				fmt.Sprintf("%s is not a run folder (no %s)", s.FromRun, journal.FileName))
		} else if _, err := os.Stat(filepath.Join(j.SourceDir, "results.json")); err != nil {
			c.fail("/from_run", "execucao_sem_resultados", fmt.Sprintf("a execução %s não tem results.json: termine-a com remessa resume", s.FromRun),
				fmt.Sprintf("the run %s has no results.json: finish it with remessa resume", s.FromRun))
		}
	}
	a := s.Action
	n := 0
	for _, x := range []struct {
		set  bool
		kind string
	}{{a.Cancel != nil, Cancel}, {a.ChangeDueDate != nil, ChangeDueDate}, {a.Resend != nil, Resend}, {a.Settle != nil, Settle}, {a.SecondCopy != nil, SecondCopy}, {a.Abatimento != nil, Abatimento}} {
		if x.set {
			n++
			j.Kind = x.kind
		}
	}
	switch {
	case n == 0:
		c.fail("/action", "acao_ausente", "action deve ter exatamente um de cancel, change_due_date, resend, settle, second_copy, abatimento",
			"action must hold exactly one of cancel, change_due_date, resend, settle, second_copy, abatimento")
	case n > 1:
		c.fail("/action", "acao_multipla", "action deve ter só um de cancel, change_due_date, resend, settle, second_copy, abatimento (um job por ação)",
			"action must hold only one of cancel, change_due_date, resend, settle, second_copy, abatimento (one job per action)")
	}
	switch {
	case a.Cancel != nil:
		j.Parcel = a.Cancel.Parcel
		c.parcel("/action/cancel/parcel", j.Parcel)
	case a.Settle != nil:
		j.Parcel = a.Settle.Parcel
		c.parcel("/action/settle/parcel", j.Parcel)
	case a.ChangeDueDate != nil:
		d := a.ChangeDueDate
		j.Parcel = d.Parcel
		c.parcel("/action/change_due_date/parcel", j.Parcel)
		given := 0
		for _, set := range []bool{d.Date != "", d.Days != 0, len(d.Dates) > 0} {
			if set {
				given++
			}
		}
		switch {
		case given != 1:
			c.fail("/action/change_due_date", "vencimento_novo", "change_due_date deve ter date (nova data), days (dias a somar) ou dates (uma data por chave), um dos três",
				"change_due_date must have one of date (a new date), days (days to add) or dates (a date per key)")
		case len(d.Dates) > 0:
			j.NewDates = map[string]string{}
			for k, v := range d.Dates {
				k = strings.TrimSpace(k)
				// a date not after today is not applicable to that row
				// alone (the plan says so), not an error of the job
				j.NewDates[k] = c.date("/action/change_due_date/dates/"+k, v)
			}
		case d.Days < 0 || d.Days > 3650:
			c.fail("/action/change_due_date/days", "fora_limite", fmt.Sprintf("days %d fora do limite de 1 a 3650 (não é possível antecipar vencimentos)", d.Days),
				fmt.Sprintf("days %d out of range 1 to 3650 (due dates cannot be brought forward)", d.Days))
		case d.Date != "":
			j.NewDate = c.date("/action/change_due_date/date", d.Date)
			if j.NewDate != "" && j.NewDate <= rules.FormatISODate(j.Today) {
				c.fail("/action/change_due_date/date", "vencimento_passado", fmt.Sprintf("a nova data de vencimento %s deve ser depois de hoje", d.Date),
					fmt.Sprintf("the new due date %s must be after today", d.Date))
			}
		}
		j.Days = d.Days
	case a.Resend != nil:
		j.Email = strings.TrimSpace(a.Resend.Email)
		if j.Email != "" && !rules.ValidEmail(j.Email) {
			c.fail("/action/resend/email", "email_invalido", fmt.Sprintf("e-mail %q inválido", j.Email), fmt.Sprintf("invalid e-mail %q", j.Email))
		}
	case a.Abatimento != nil:
		ab := a.Abatimento
		given := 0
		for _, set := range []bool{ab.Cents != 0, len(ab.ByKey) > 0, ab.Remove} {
			if set {
				given++
			}
		}
		switch {
		case given != 1:
			c.fail("/action/abatimento", "abatimento_novo", "abatimento deve ter cents (centavos), by_key (centavos por chave) ou remove: true, um dos três",
				"abatimento must have one of cents (cents), by_key (cents by key) or remove: true")
		case ab.Cents < 0:
			c.fail("/action/abatimento/cents", "fora_limite", fmt.Sprintf("cents %d: o abatimento é um valor em centavos acima de zero (para cancelar, remove: true)", ab.Cents),
				fmt.Sprintf("cents %d: the rebate is a value in cents above zero (to cancel it, remove: true)", ab.Cents))
		case len(ab.ByKey) > 0:
			j.Rebates = map[string]int64{}
			for k, v := range ab.ByKey {
				if v <= 0 {
					c.fail("/action/abatimento/by_key/"+k, "fora_limite", fmt.Sprintf("%s: %d: o abatimento é um valor em centavos acima de zero (para cancelar, remove: true)", k, v),
						fmt.Sprintf("%s: %d: the rebate is a value in cents above zero (to cancel it, remove: true)", k, v))
				}
				j.Rebates[strings.TrimSpace(k)] = v
			}
		}
		j.Rebate, j.RebateRemove = ab.Cents, ab.Remove
	case a.SecondCopy != nil:
		j.CopyDir = a.SecondCopy.Dir
		if j.CopyDir == "" {
			j.CopyDir = "segundas-vias"
		}
		if filepath.IsAbs(j.CopyDir) || strings.Contains(j.CopyDir, "..") {
			c.fail("/action/second_copy/dir", "pasta_invalida", "dir é um nome de pasta dentro da pasta da ação", "dir is a folder name inside the action folder")
		}
	}
	if f := s.Filter; f != nil {
		for _, st := range f.Status {
			j.Status = append(j.Status, strings.ToLower(strings.TrimSpace(st)))
		}
		j.DueBefore = c.date("/filter/due_before", f.DueBefore)
		j.DueFrom = c.date("/filter/due_from", f.DueFrom)
		for i, p := range f.Parcels {
			if p < 1 {
				c.parcel(fmt.Sprintf("/filter/parcels/%d", i), -1)
			} else {
				c.parcel(fmt.Sprintf("/filter/parcels/%d", i), p)
			}
		}
		j.Parcels = f.Parcels
		if len(f.Keys) > 0 {
			j.Keys = map[string]bool{}
			for _, k := range f.Keys {
				j.Keys[strings.TrimSpace(k)] = true
			}
		}
	}
	if in := s.Input; in != nil && in.File != "" {
		keys, err := readKeys(filepath.Join(j.Dir, in.File), in.Sheet, in.Key)
		if filepath.IsAbs(in.File) {
			keys, err = readKeys(in.File, in.Sheet, in.Key)
		}
		if err != nil {
			c.fail("/input/file", "erro_leitura", err.Error(), err.Error())
		} else {
			if j.Keys != nil {
				// both: the keys in the sheet and in filter.keys
				for k := range j.Keys {
					if !keys[k] {
						delete(j.Keys, k)
					}
				}
			} else {
				j.Keys = keys
			}
		}
	}
	byKey := func(has func(k string) bool, keys []string) {
		// values by key: only those rows (and the filter's or sheet's, if any)
		if j.Keys == nil {
			j.Keys = map[string]bool{}
			for _, k := range keys {
				j.Keys[k] = true
			}
			return
		}
		for k := range j.Keys {
			if !has(k) {
				delete(j.Keys, k)
			}
		}
	}
	if j.NewDates != nil {
		byKey(func(k string) bool { _, ok := j.NewDates[k]; return ok }, slices.Collect(maps.Keys(j.NewDates)))
	}
	if j.Rebates != nil {
		byKey(func(k string) bool { _, ok := j.Rebates[k]; return ok }, slices.Collect(maps.Keys(j.Rebates)))
	}
	j.Concurrency = s.Concurrency
	if j.Concurrency == 0 {
		j.Concurrency = 4
	}
	if j.Concurrency < 1 || j.Concurrency > 64 {
		c.fail("/concurrency", "fora_limite", fmt.Sprintf("concurrency %d fora do limite de 1 a 64", s.Concurrency), fmt.Sprintf("concurrency %d out of range 1 to 64", s.Concurrency))
	}
}

// readKeys reads the key column of a sheet.
func readKeys(path, sheet, header string) (map[string]bool, error) {
	r, err := formats.Open(path, formats.Options{Sheet: sheet})
	if err != nil {
		return nil, err
	}
	defer r.Close()
	col := -1
	keys := map[string]bool{}
	for {
		row, err := r.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			var fe *formats.Error
			if errors.As(err, &fe) && formats.IsRowLevel(err) {
				continue
			}
			return nil, err
		}
		if col < 0 {
			for i, h := range r.Source().Headers {
				if formats.NormalizeHeader(h) == formats.NormalizeHeader(header) {
					col = i
				}
			}
			if col < 0 {
				return nil, fmt.Errorf("%s: coluna %q não encontrada (colunas: %s)", filepath.Base(path), header, strings.Join(r.Source().Headers, ", "))
			}
		}
		if k := strings.TrimSpace(row.Get(col).Value); k != "" {
			keys[k] = true
		}
	}
	return keys, nil
}
