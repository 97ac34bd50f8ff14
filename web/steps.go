package web

import (
	"errors"
	"fmt"
	"net/http"
	"path/filepath"
	"strconv"
	"strings"

	"remessa/formats"
	"remessa/pipeline"
	"remessa/pipeline/results"
)

// columnsPage shows each header of the sheet and the field it was matched
// to (the pipeline's alias matching), with a select to change it, and the
// required fields that have no column.
func (s *Server) columnsPage(w http.ResponseWriter, r *http.Request, ss *session) {
	d := s.draftFor(w, r, ss)
	if d == nil || !s.editable(w, r, d) {
		return
	}
	s.renderColumns(w, r, ss, d, "", http.StatusOK)
}

func (s *Server) renderColumns(w http.ResponseWriter, r *http.Request, ss *session, d *Draft, msg string, status int) {
	lang := langOf(r)
	data := map[string]any{"Draft": d, "Step": 2}
	job, err := s.columnsJob(d)
	if err == nil {
		var cm *pipeline.ColumnMatch
		cm, err = pipeline.MatchColumns(job)
		data["Match"] = cm
		if cm != nil {
			data["Missing"], data["Later"], data["LaterIDs"] = missingColumns(cm, d, lang)
			if cm.Layout != "" {
				data["CNAB"] = cnabFieldsView(cm, lang)
			}
		}
	}
	if err != nil {
		data["Problem"] = describeJobErr(err, lang)
	}
	title := tr(lang, "cols.title")
	if data["CNAB"] != nil {
		title = tr(lang, "cols.cnab.title")
	}
	p := s.page(r, ss, title, data)
	p.Error, p.Status = msg, status
	s.render(w, "columns", p)
}

// missingColumns splits the required fields the sheet has no column for
// into those only a column can give (missing) and those the next page,
// Configuração, can give instead (later: the due date, a carnet's first),
// each named in words for people, not by its field code.
func missingColumns(cm *pipeline.ColumnMatch, d *Draft, lang string) (missing, later []string, laterIDs map[string]bool) {
	laterIDs = map[string]bool{}
	for _, id := range cm.Missing {
		label := id
		if f, ok := cm.Choice(id); ok {
			label = f.Label
			if lang == "en" && f.LabelEN != "" {
				label = f.LabelEN
			}
		}
		if id == pipeline.FDueDate && !d.JobUploaded {
			later = append(later, label)
			laterIDs[id] = true
			continue
		}
		missing = append(missing, label)
	}
	return missing, later, laterIDs
}

// cnabView is the columns page of a CNAB remessa: the layout in words and
// where each field the remessa reads is in the file's first title.
type cnabView struct {
	Layout string // "CNAB 240 (FEBRABAN)"
	Fields []cnabFieldRow
}

type cnabFieldRow struct {
	Field string // the field, as the validation table heads it ("Vencimento")
	Place string // "linha 3, posições 78–85"
}

// cnabLayoutWords names a CNAB layout table for people, by the words of
// the retorno's layouts (a layout not known here by its table's name).
func cnabLayoutWords(layout, lang string) string {
	for prefix, key := range map[string]string{"febraban240": "ret.layout.cnab240", "bradesco400": "ret.layout.cnab400-237", "itau400": "ret.layout.cnab400-341"} {
		if strings.HasPrefix(layout, prefix) {
			return tr(lang, key)
		}
	}
	return layout
}

func cnabFieldsView(cm *pipeline.ColumnMatch, lang string) *cnabView {
	v := &cnabView{Layout: cnabLayoutWords(cm.Layout, lang)}
	for _, h := range cm.Headers {
		if h.Column == "" {
			continue // the first title leaves it out (no discount, no rebate)
		}
		v.Fields = append(v.Fields, cnabFieldRow{Field: h.Header, Place: formats.Place(lang, 0, h.Column, "")})
	}
	return v
}

// columnsJob is the draft's job for the columns step. The columns come
// before the settings, so a setting still empty there (a cobv's receiving
// Pix key, which the job file requires) must not keep the sheet's columns
// from being matched: a placeholder key stands in for it, here only.
func (s *Server) columnsJob(d *Draft) (*pipeline.Job, error) {
	if d.JobUploaded || d.Kind != results.Cobv || d.Settings.Chave != "" {
		return s.loadJob(d)
	}
	st := d.Settings
	st.Chave = "chave@example.com"
	b, err := jobYAML(d.Kind, st, d.InputFile, "", d.Columns)
	if err != nil {
		return nil, err
	}
	p := s.draftJobPath(d.ID)
	abs, err := filepath.Abs(p)
	if err != nil {
		abs = p
	}
	return pipeline.LoadBytes(p, abs, b, pipeline.LoadOptions{Now: s.cfg.Now, Getenv: noEnv})
}

func (s *Server) saveColumns(w http.ResponseWriter, r *http.Request, ss *session) {
	d := s.draftFor(w, r, ss)
	if d == nil || !s.editable(w, r, d) {
		return
	}
	if d.JobUploaded {
		http.Redirect(w, r, fmt.Sprintf("/remessas/%d/validacao", d.ID), http.StatusSeeOther)
		return
	}
	job, err := s.columnsJob(d)
	if err != nil {
		s.renderColumns(w, r, ss, d, describeJobErr(err, langOf(r)), http.StatusBadRequest)
		return
	}
	cm, err := pipeline.MatchColumns(job)
	if err != nil && cm == nil {
		s.renderColumns(w, r, ss, d, describeJobErr(err, langOf(r)), http.StatusBadRequest)
		return
	}
	if cm.Layout != "" {
		// a CNAB remessa's fields are at fixed positions: nothing to match
		d.Columns = map[string]string{}
		if err := s.writeJob(d); err != nil {
			s.fail(w, r, http.StatusInternalServerError, msgInternal)
			return
		}
		s.saveDraft(r.Context(), d)
		http.Redirect(w, r, fmt.Sprintf("/remessas/%d/configuracao", d.ID), http.StatusSeeOther)
		return
	}
	valid := map[string]bool{}
	for _, f := range cm.Fields {
		valid[f.ID] = true
	}
	cols := map[string]string{}
	seen := map[string]string{}
	for i, h := range cm.Headers {
		f := r.PostFormValue("col_" + strconv.Itoa(i))
		if f == "" {
			continue
		}
		if !valid[f] {
			s.renderColumns(w, r, ss, d, fmt.Sprintf(tr(langOf(r), "cols.badfield"), h.Header), http.StatusBadRequest)
			return
		}
		if other, dup := seen[f]; dup {
			s.renderColumns(w, r, ss, d, fmt.Sprintf(tr(langOf(r), "cols.twice"), other, h.Header), http.StatusBadRequest)
			return
		}
		seen[f] = h.Header
		if h.Field != f || h.Override {
			cols[f] = h.Header
		}
	}
	d.Columns = cols
	if err := s.writeJob(d); err != nil {
		s.fail(w, r, http.StatusInternalServerError, msgInternal)
		return
	}
	s.saveDraft(r.Context(), d)
	http.Redirect(w, r, fmt.Sprintf("/remessas/%d/configuracao", d.ID), http.StatusSeeOther)
}

// settingsPage is the form for everything the job says for the kind.
func (s *Server) settingsPage(w http.ResponseWriter, r *http.Request, ss *session) {
	d := s.draftFor(w, r, ss)
	if d == nil || !s.editable(w, r, d) {
		return
	}
	if d.JobUploaded {
		http.Redirect(w, r, fmt.Sprintf("/remessas/%d/validacao", d.ID), http.StatusSeeOther)
		return
	}
	s.renderSettings(w, r, ss, d, nil, http.StatusOK)
}

// settingsView is the settings page's data.
type settingsView struct {
	Draft    *Draft
	S        Settings
	Step     int
	Errs     map[string][]string // form field -> messages
	General  []string            // messages about no field of the form
	Accounts []Account
	CNAB     bool // the file is a CNAB remessa: empty settings take each title's own
}

// Err is the first message about field f.
func (v settingsView) Err(f string) []string { return v.Errs[f] }

func (s *Server) renderSettings(w http.ResponseWriter, r *http.Request, ss *session, d *Draft, jerr error, status int) {
	lang := langOf(r)
	v := settingsView{Draft: d, S: d.Settings, Step: 3, Errs: map[string][]string{}, CNAB: d.CNAB}
	if jerr != nil {
		var je *pipeline.JobError
		if errors.As(jerr, &je) {
			for _, p := range je.Problems {
				msg := p.Message
				if lang == "en" && p.MessageEN != "" {
					msg = p.MessageEN
				}
				if f := fieldOfPointer(p.Pointer); f != "" {
					v.Errs[f] = append(v.Errs[f], msg)
				} else {
					v.General = append(v.General, msg)
				}
			}
		} else {
			v.General = append(v.General, describeJobErr(jerr, lang))
		}
	}
	p := s.page(r, ss, tr(lang, "set.title"), v)
	p.Status = status
	s.render(w, "settings", p)
}

func (s *Server) saveSettings(w http.ResponseWriter, r *http.Request, ss *session) {
	d := s.draftFor(w, r, ss)
	if d == nil || !s.editable(w, r, d) {
		return
	}
	if err := r.ParseForm(); err != nil {
		s.fail(w, r, http.StatusBadRequest, tr(langOf(r), "new.badupload"))
		return
	}
	d.Settings = settingsFromForm(r.PostForm)
	if err := s.writeJob(d); err != nil {
		s.fail(w, r, http.StatusInternalServerError, msgInternal)
		return
	}
	s.saveDraft(r.Context(), d)
	if _, err := s.loadJob(d); err != nil {
		s.renderSettings(w, r, ss, d, err, http.StatusBadRequest)
		return
	}
	http.Redirect(w, r, fmt.Sprintf("/remessas/%d/validacao", d.ID), http.StatusSeeOther)
}

// jobDownload gives the remessa's job file with input.file naming the
// sheet as the user called it, so the two side by side run with
// `remessa run job.yaml` unchanged.
func (s *Server) jobDownload(w http.ResponseWriter, r *http.Request, ss *session) {
	d := s.draftFor(w, r, ss)
	if d == nil {
		return
	}
	var b []byte
	var err error
	if d.JobUploaded {
		var raw []byte
		raw, err = readFileLimited(s.draftJobPath(d.ID), 1<<20)
		if err == nil {
			b, err = adoptJob(raw, d.InputName)
		}
	} else {
		b, err = jobYAML(d.Kind, d.Settings, d.InputName, "", d.Columns)
	}
	if err != nil {
		s.fail(w, r, http.StatusInternalServerError, msgInternal)
		return
	}
	w.Header().Set("Content-Type", "application/yaml; charset=utf-8")
	w.Header().Set("Content-Disposition", "attachment; filename=\"job.yaml\"")
	w.Write(b)
}

// describeJobErr says why a job or its sheet cannot be used, in the
// page's language (the pipeline's own messages, with file and position).
func describeJobErr(err error, lang string) string {
	rep := pipeline.NewValidationReport("job.yaml", nil, nil, err)
	var msgs []string
	for _, p := range rep.JobProblems {
		m := p.Message
		if lang == "en" && p.MessageEN != "" {
			m = p.MessageEN
		}
		msgs = append(msgs, m)
	}
	if fp := rep.FileProblem; fp != nil {
		msgs = append(msgs, fp.Localized(lang))
	}
	if len(msgs) == 0 {
		return err.Error()
	}
	out := msgs[0]
	for _, m := range msgs[1:] {
		out += "; " + m
	}
	return out
}
