// Package pipeline is the first half of remessa's batch pipeline: the job
// file (strict YAML with positions, ${VAR} interpolation, human values and
// relative dates), the field catalogue, validation of every input row into
// fully resolved requests, the plan, the template writer and the job file's
// JSON Schema. Nothing here talks to the service.
//
// The run stage uses it as:
//
//	job, err := pipeline.Load(path, pipeline.LoadOptions{})
//	v, err := pipeline.Validate(ctx, job)   // v.Items: accepted rows as requests
//	p := pipeline.BuildPlan(job, v)         // batches, totals, calls, days
package pipeline

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"go.yaml.in/yaml/v3"

	"remessa/formats"
	"remessa/pipeline/results"
	"remessa/rules"
)

// JobProblem is one thing wrong with a job file, at its line and column.
type JobProblem struct {
	File      string `json:"file"`
	Line      int    `json:"line,omitempty"`
	Column    int    `json:"column,omitempty"`
	Pointer   string `json:"pointer,omitempty"` // JSON pointer into the job, e.g. /issue/carnets/repeats
	Code      string `json:"code"`
	Message   string `json:"message"`
	MessageEN string `json:"message_en"`
}

// Localized renders the problem as "file:line:column: message".
func (p JobProblem) Localized(lang string) string {
	msg := p.Message
	if lang == "en" {
		msg = p.MessageEN
	}
	where := p.File
	if p.Line > 0 {
		where = fmt.Sprintf("%s:%d:%d", p.File, p.Line, p.Column)
	}
	if p.Pointer != "" {
		msg = fmt.Sprintf("%s (%s)", msg, p.Pointer)
	}
	return where + ": " + msg
}

// JobError is returned when the job file cannot be used; it lists every
// problem found.
type JobError struct {
	Problems []JobProblem
}

func (e *JobError) Error() string { return e.Localized("pt") }

// Localized renders all problems, one per line.
func (e *JobError) Localized(lang string) string {
	lines := make([]string, len(e.Problems))
	for i, p := range e.Problems {
		lines[i] = p.Localized(lang)
	}
	return strings.Join(lines, "\n")
}

// LoadOptions tune Load. Zero values mean the real clock and environment.
type LoadOptions struct {
	Now    func() time.Time            // clock; relative dates and "after today" use it
	Getenv func(string) (string, bool) // environment for ${VAR}; default os.LookupEnv
	// DefaultNotificationURL is the notification_url of carnets and slips
	// whose job names none (an embedded run points them at the local
	// listener); "" leaves them without one.
	DefaultNotificationURL string
}

// Endpoint is the resolved service endpoint. Credentials are secrets: never
// print them.
type Endpoint struct {
	BaseURL, PixBaseURL              string
	ClientID, ClientSecret           string
	Certificate, CertificatePassword string
	PayeeCode, Conta                 string
}

// String describes the endpoint with its credentials redacted, so a Job
// printed by mistake does not leak them.
func (e Endpoint) String() string {
	red := func(s string) string {
		if s == "" {
			return ""
		}
		return "***"
	}
	return fmt.Sprintf("{BaseURL:%s PixBaseURL:%s ClientID:%s ClientSecret:%s Certificate:%s CertificatePassword:%s PayeeCode:%s Conta:%s}",
		e.BaseURL, e.PixBaseURL, red(e.ClientID), red(e.ClientSecret), e.Certificate, red(e.CertificatePassword), e.PayeeCode, e.Conta)
}

// GoString is String, for %#v.
func (e Endpoint) GoString() string { return "pipeline.Endpoint" + e.String() }

// Reports is where reports go.
type Reports struct {
	Dir     string
	Formats []string
	Lang    string
}

// Job is a loaded, checked job file.
type Job struct {
	File    string // absolute path of the job file
	Dir     string // its directory (input paths are relative to it)
	SHA256  string // of the job file's bytes
	Name    string
	Service string // embedded, sandbox or production
	Kind    results.Kind

	Endpoint Endpoint
	// InputFile is the absolute path of the input; Sheet may be empty.
	InputFile, Sheet string
	KeyHeader        string // header of the key column ("" = catalogue default)
	// InputFormat is "cnab240" or "cnab400" for a CNAB remessa (given or
	// recognised from the file's first line), "" for a sheet; CNAB says
	// what its header must name.
	InputFormat string
	CNAB        formats.CNABOptions
	Columns     map[string]string // field -> header overrides

	OnInvalid   string // stop or skip
	Concurrency int
	Rate        map[string]int // requests per second per route ("default" for all)
	Quota       map[string]int // requests per day per route
	Reports     Reports

	// Today is the civil date in São Paulo when the job was loaded.
	Today time.Time
	Now   time.Time

	// Reminders is the job's régua de cobrança (nil: none).
	Reminders *Reminders

	Spec *JobSpec
	pos  map[string]Pos
}

// InputOptions are the options every reader of the job's input uses.
func (j *Job) InputOptions() formats.Options {
	return formats.Options{Sheet: j.Sheet, Format: j.InputFormat, CNAB: j.CNAB}
}

// Position returns the job file position of a JSON pointer into the job
// (or of its nearest ancestor).
func (j *Job) Position(ptr string) Pos {
	for {
		if p, ok := j.pos[ptr]; ok {
			return p
		}
		i := strings.LastIndex(ptr, "/")
		if i < 0 {
			return Pos{}
		}
		ptr = ptr[:i]
	}
}

// keySuffix marks, in the positions map, the position of a mapping key
// (the pointer without it is its value's).
const keySuffix = "#key"

// KeyPosition returns the job file position of the key of the field at ptr
// (e.g. where "conditional_discount:" is written), or Position(ptr).
func (j *Job) KeyPosition(ptr string) Pos {
	if p, ok := j.pos[ptr+keySuffix]; ok {
		return p
	}
	return j.Position(ptr)
}

// Defaults.
const (
	DefaultConcurrency    = 4
	DefaultValidade       = 30
	DefaultBatchMaxBytes  = 1 << 20
	DefaultReportsDir     = "remessa-out"
	DefaultCobvBatchLabel = "remessa"
)

// Load reads, decodes and checks a job file. Every problem with the file
// itself (syntax, unknown keys, wrong types, missing sections, undefined
// variables, values out of range, split rules) comes back at once in a
// *JobError with line and column.
func Load(path string, opts LoadOptions) (*Job, error) {
	abs, err := filepath.Abs(path)
	if err != nil {
		abs = path
	}
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, &JobError{Problems: []JobProblem{{File: path, Code: "arquivo_job",
			Message:   fmt.Sprintf("não foi possível ler o arquivo de job: %v", err),
			MessageEN: fmt.Sprintf("cannot read the job file: %v", err)}}}
	}
	return LoadBytes(path, abs, data, opts)
}

// LoadBytes is Load on bytes already read; name is used in messages and
// abs to resolve the input path.
func LoadBytes(name, abs string, data []byte, opts LoadOptions) (*Job, error) {
	if opts.Now == nil {
		opts.Now = time.Now
	}
	if opts.Getenv == nil {
		opts.Getenv = os.LookupEnv
	}
	sum := sha256.Sum256(data)
	var root yaml.Node
	dec := yaml.NewDecoder(bytes.NewReader(data))
	if err := dec.Decode(&root); err != nil {
		p := JobProblem{File: name, Code: "yaml_invalido"}
		var te *yaml.TypeError
		msg := err.Error()
		if errors.As(err, &te) {
			msg = strings.Join(te.Errors, "; ")
		}
		p.Line = yamlErrLine(msg)
		p.Message = "YAML inválido: " + msg
		p.MessageEN = "invalid YAML: " + msg
		if strings.Contains(msg, "EOF") {
			p.Message, p.MessageEN = "arquivo de job vazio", "empty job file"
		}
		return nil, &JobError{Problems: []JobProblem{p}}
	}
	d := &decoder{file: name, env: opts.Getenv, pos: map[string]Pos{}}
	spec := &JobSpec{}
	d.decode(&root, refValue(spec), "")
	if u := opts.DefaultNotificationURL; u != "" {
		for _, v := range []*Value{notificationOf(spec.Issue.Carnets), notificationOf(spec.Issue.Boletos)} {
			if v != nil && !v.Set {
				v.decodeScalar(u, Pos{})
			}
		}
	}
	now := opts.Now()
	j := &Job{File: abs, Dir: filepath.Dir(abs), SHA256: hex.EncodeToString(sum[:]), Spec: spec, pos: d.pos,
		Now: now, Today: rules.Today(now)}
	// An unknown key is skipped and leaves the rest decoded, so the checks
	// still run and a typo comes back together with the other problems; a
	// wrong type or a missing value would make them report its zero value.
	onlyUnknownKeys := true
	for _, p := range d.probs {
		onlyUnknownKeys = onlyUnknownKeys && p.Code == "chave_desconhecida"
	}
	if onlyUnknownKeys {
		c := &checker{d: d, j: j}
		c.check()
	}
	if len(d.probs) > 0 {
		sort.SliceStable(d.probs, func(a, b int) bool {
			if d.probs[a].Line != d.probs[b].Line {
				return d.probs[a].Line < d.probs[b].Line
			}
			return d.probs[a].Column < d.probs[b].Column
		})
		return nil, &JobError{Problems: d.probs}
	}
	return j, nil
}

func yamlErrLine(msg string) int {
	var line int
	if i := strings.Index(msg, "line "); i >= 0 {
		fmt.Sscanf(msg[i+5:], "%d", &line)
	}
	return line
}

// notificationOf is the notification_url of an issue section, or nil.
func notificationOf[T CarnetSpec | SlipSpec](s *T) *Value {
	switch x := any(s).(type) {
	case *CarnetSpec:
		if x != nil {
			return &x.NotificationURL
		}
	case *SlipSpec:
		if x != nil {
			return &x.NotificationURL
		}
	}
	return nil
}
