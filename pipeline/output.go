package pipeline

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"

	"remessa/formats"
	"remessa/pipeline/results"
)

// Exit codes of validate and plan (the same as the CLI's).
const (
	ExitClean    = 0 // no row problems (warnings allowed)
	ExitProblems = 1 // some rows have problems
	ExitUnusable = 2 // the job or the input file cannot be used
)

// ValidationReport is the JSON form of a validation (validate --format json).
type ValidationReport struct {
	Job         string       `json:"job"`
	Name        string       `json:"name,omitempty"`
	Kind        results.Kind `json:"kind,omitempty"`
	Input       *InputInfo   `json:"input,omitempty"`
	Rows        int          `json:"rows"`
	Accepted    int          `json:"accepted"`
	Refused     int          `json:"refused"`
	Errors      int          `json:"errors"`
	Warnings    int          `json:"warnings"`
	ExitCode    int          `json:"exit_code"`
	JobProblems []JobProblem `json:"job_problems,omitempty"`
	// JobWarnings are warnings about the job file itself (Job.JobWarnings),
	// counted in Warnings.
	JobWarnings []JobProblem `json:"job_warnings,omitempty"`
	FileProblem *FileProblem `json:"file_problem,omitempty"`
	Notes       []Note       `json:"notes"`
}

// InputInfo describes the input file read.
type InputInfo struct {
	File      string   `json:"file"`
	Format    string   `json:"format"`
	Sheet     string   `json:"sheet,omitempty"`
	Encoding  string   `json:"encoding,omitempty"`
	Delimiter string   `json:"delimiter,omitempty"`
	Headers   []string `json:"headers"`
}

// FileProblem is why the input file cannot be used.
type FileProblem struct {
	File      string `json:"file"`
	Sheet     string `json:"sheet,omitempty"`
	Row       int    `json:"row,omitempty"`
	Column    string `json:"column,omitempty"`
	Header    string `json:"header,omitempty"`
	Code      string `json:"code"`
	Message   string `json:"message"`
	MessageEN string `json:"message_en"`
}

// Localized returns the message in lang ("en" for English) prefixed by where
// in the file it is (sheet, line, column and its header), without the file's
// name: "linha 2, coluna B (Nome): célula com mais de 256 KB …".
func (p *FileProblem) Localized(lang string) string {
	msg := p.Message
	if lang == "en" && p.MessageEN != "" {
		msg = p.MessageEN
	}
	return formats.Position(lang, "", p.Sheet, p.Row, p.Column, p.Header) + msg
}

// ExitCode gives the exit code for a validation outcome: err from Load or
// Validate, or the validation.
func ExitCode(v *Validation, err error) int {
	if err != nil {
		return ExitUnusable
	}
	if v != nil && v.Summary.Refused > 0 {
		return ExitProblems
	}
	return ExitClean
}

// NewValidationReport builds the report of a validation or of the error
// that prevented it. jobPath is the job file as the user gave it.
func NewValidationReport(jobPath string, job *Job, v *Validation, err error) *ValidationReport {
	r := &ValidationReport{Job: jobPath, Notes: []Note{}, ExitCode: ExitCode(v, err)}
	if job != nil {
		r.Name, r.Kind = job.Name, job.Kind
	}
	var je *JobError
	var fe *formats.Error
	switch {
	case errors.As(err, &je):
		r.JobProblems = je.Problems
	case errors.As(err, &fe):
		file := fe.File
		if job != nil && job.Spec != nil {
			file = job.Spec.Input.File
		}
		r.FileProblem = &FileProblem{File: file, Sheet: fe.Sheet, Row: fe.Row, Column: fe.Column, Header: fe.Header, Code: fe.Code, Message: fe.Message, MessageEN: fe.MessageEN}
	case err != nil:
		r.FileProblem = &FileProblem{Code: "erro", Message: err.Error(), MessageEN: err.Error()}
	}
	if v != nil {
		s := v.Summary
		r.Rows, r.Accepted, r.Refused, r.Errors, r.Warnings = s.Rows, s.Accepted, s.Refused, s.Errors, s.Warnings
		r.JobWarnings = job.JobWarnings(jobPath)
		r.Warnings += len(r.JobWarnings)
		r.Input = &InputInfo{File: job.Spec.Input.File, Format: s.Source.Format, Sheet: s.Source.Sheet, Encoding: s.Source.Encoding, Delimiter: s.Source.Delimiter, Headers: s.Source.Headers}
		for _, n := range v.Notes {
			n.File = job.Spec.Input.File
			r.Notes = append(r.Notes, n)
		}
	}
	return r
}

// WriteJSON writes the report as indented JSON.
func (r *ValidationReport) WriteJSON(w io.Writer) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(r)
}

// WriteText writes the report for people, in Portuguese or English.
func (r *ValidationReport) WriteText(w io.Writer, lang string) error {
	en := lang == "en"
	t := func(pt, e string) string {
		if en {
			return e
		}
		return pt
	}
	if len(r.JobProblems) > 0 {
		fmt.Fprintf(w, t("O arquivo de job %s não pode ser usado (%s):\n", "The job file %s cannot be used (%s):\n"), r.Job,
			plural(len(r.JobProblems), t("problema", "problem"), t("problemas", "problems")))
		for _, p := range r.JobProblems {
			fmt.Fprintln(w, "  "+p.Localized(lang))
		}
		return nil
	}
	if p := r.FileProblem; p != nil {
		what := t("A planilha %s não pode ser usada: %s [%s]\n", "The input %s cannot be used: %s [%s]\n")
		if strings.HasPrefix(p.Code, "cnab_") { // a CNAB remessa is no spreadsheet
			what = t("O arquivo %s não pode ser usado: %s [%s]\n", "The input %s cannot be used: %s [%s]\n")
		}
		fmt.Fprintf(w, what, p.File, p.Localized(lang), p.Code)
		return nil
	}
	if r.Input != nil {
		fmt.Fprintf(w, t("%s: %s (%s", "%s: %s (%s"), r.Job, r.Input.File, r.Input.Format)
		if r.Input.Encoding != "" && r.Input.Format == "csv" {
			fmt.Fprintf(w, ", %s, %q", r.Input.Encoding, r.Input.Delimiter)
		}
		if r.Input.Sheet != "" {
			fmt.Fprintf(w, t(", aba %s", ", sheet %s"), r.Input.Sheet)
		}
		fmt.Fprintln(w, ")")
	}
	for _, jw := range r.JobWarnings {
		fmt.Fprintf(w, "  %s %s\n", t("AVISO", "WARN "), jw.Localized(lang))
	}
	for _, n := range r.Notes {
		sev := t("ERRO ", "ERROR")
		if n.Severity == SevWarning {
			sev = t("AVISO", "WARN ")
		}
		fmt.Fprintf(w, "  %s %s\n", sev, n.Localized(lang))
	}
	fmt.Fprintf(w, t("%s: %d %s, %d %s; %s, %s.\n", "%s: %d %s, %d %s; %s, %s.\n"),
		plural(r.Rows, t("linha", "row"), t("linhas", "rows")),
		r.Accepted, t(pick(r.Accepted, "aceita", "aceitas"), "accepted"), r.Refused, t(pick(r.Refused, "recusada", "recusadas"), "refused"),
		plural(r.Errors, t("erro", "error"), t("erros", "errors")), plural(r.Warnings, t("aviso", "warning"), t("avisos", "warnings")))
	if r.ExitCode == ExitClean {
		fmt.Fprintln(w, t("Tudo certo.", "All good."))
	}
	return nil
}

// plural writes "1 linha", "2 linhas", "0 linhas".
func plural(n int, one, many string) string {
	return fmt.Sprintf("%d %s", n, pick(n, one, many))
}

func pick(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}
