package web

import (
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"time"

	"remessa/pipeline"
	"remessa/pipeline/results"
)

func (s *Server) extraRoutes() []route {
	rs := []route{
		{"GET /modelos/{kind}", RoleViewer, s.templateDownload},
		{"GET /remessas/nova", RoleOperator, s.newDraftPage},
		{"POST /remessas", RoleOperator, s.createDraft},
		{"GET /remessas/{id}", RoleOperator, s.draftHome},
		{"GET /remessas/{id}/colunas", RoleOperator, s.columnsPage},
		{"POST /remessas/{id}/colunas", RoleOperator, s.saveColumns},
		{"GET /remessas/{id}/configuracao", RoleOperator, s.settingsPage},
		{"POST /remessas/{id}/configuracao", RoleOperator, s.saveSettings},
		{"GET /remessas/{id}/job.yaml", RoleOperator, s.jobDownload},
		{"POST /remessas/{id}/planilha", RoleOperator, s.replaceSheet},
		{"GET /remessas/{id}/validacao", RoleOperator, s.validationPage},
		{"GET /remessas/{id}/recusadas", RoleOperator, s.rejectedDownload},
		{"GET /remessas/{id}/plano", RoleOperator, s.planPage},
		{"POST /remessas/{id}/executar", RoleOperator, s.startRun},
		{"GET /execucoes/{id}", RoleViewer, s.runPage},
		{"GET /execucoes/{id}/eventos", RoleViewer, s.runEvents},
		{"GET /execucoes/{id}/relatorio", RoleViewer, s.runReport},
		{"GET /execucoes/{id}/arquivos/{name}", RoleViewer, s.runFile},
		{"GET /execucoes/{id}/documento/{row}", RoleViewer, s.runDocument},
		{"POST /execucoes/{id}/cancelar", RoleOperator, s.cancelRun},
		{"POST /execucoes/{id}/retomar", RoleOperator, s.resumeRun},
		{"POST /execucoes/{id}/situacao", RoleOperator, s.refreshStatus},
		{"POST /execucoes/{id}/retorno", RoleOperator, s.makeRetorno},
		{"GET /execucoes/{id}/retorno/{nsa}", RoleViewer, s.retornoDownload},
	}
	rs = append(rs, s.actionRoutes()...)
	rs = append(rs, s.reguaRoutes()...)
	return append(rs, s.adminRoutes()...)
}

// kindOf reads a kind from a form or path value.
func kindOf(v string) (results.Kind, bool) {
	k, err := pipeline.ParseKind(v)
	return k, err == nil
}

// templateDownload serves the ready-to-fill sheet of a kind
// (`remessa template`'s XLSX).
func (s *Server) templateDownload(w http.ResponseWriter, r *http.Request, ss *session) {
	k, ok := kindOf(r.PathValue("kind"))
	if !ok {
		s.fail(w, r, http.StatusNotFound, tr(langOf(r), "err.notfound"))
		return
	}
	dir, err := os.MkdirTemp(s.cfg.DataDir, ".modelo-*")
	if err != nil {
		s.fail(w, r, http.StatusInternalServerError, msgInternal)
		return
	}
	defer os.RemoveAll(dir)
	p := filepath.Join(dir, "modelo.xlsx")
	if err := pipeline.WriteTemplate(k, p, s.now(), langOf(r)); err != nil {
		logOf(r.Context(), s.log).Error().Err(err).Msg("modelo")
		s.fail(w, r, http.StatusInternalServerError, msgInternal)
		return
	}
	w.Header().Set("Content-Disposition", fmt.Sprintf("attachment; filename=\"modelo-%s.xlsx\"", k))
	w.Header().Set("Content-Type", "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet")
	http.ServeFile(w, r, p)
}

// newDraftPage: pick the kind and the account, download the template,
// upload the sheet (and optionally a job.yaml).
func (s *Server) newDraftPage(w http.ResponseWriter, r *http.Request, ss *session) {
	s.renderNew(w, r, ss, "", http.StatusOK)
}

func (s *Server) renderNew(w http.ResponseWriter, r *http.Request, ss *session, msg string, status int) {
	accs, _ := s.accounts(r.Context(), ss.User)
	// the account chosen before (a form shown again), else with --db the
	// first that can issue there (the embedded one cannot)
	selected := r.FormValue("account")
	if selected == "" && s.cfg.DB != "" {
		for _, a := range accs {
			if a.Service != "embedded" {
				selected = fmt.Sprint(a.ID)
				break
			}
		}
	}
	p := s.page(r, ss, tr(langOf(r), "new.title"), map[string]any{"Accounts": accs, "Kind": r.FormValue("kind"),
		"MaxMB": s.cfg.MaxUpload >> 20, "Cluster": s.cfg.DB != "", "Selected": selected})
	p.Error, p.Status = msg, status
	s.render(w, "new", p)
}

func (s *Server) createDraft(w http.ResponseWriter, r *http.Request, ss *session) {
	ctx := r.Context()
	lang := langOf(r)
	if err := r.ParseMultipartForm(8 << 20); err != nil {
		s.renderNew(w, r, ss, uploadMsg(err, s.cfg.MaxUpload, lang), http.StatusBadRequest)
		return
	}
	defer r.MultipartForm.RemoveAll()
	kind, ok := kindOf(r.FormValue("kind"))
	if !ok {
		s.renderNew(w, r, ss, tr(lang, "new.pickkind"), http.StatusBadRequest)
		return
	}
	accID, _ := strconv.ParseInt(r.FormValue("account"), 10, 64)
	acc, err := s.account(ctx, accID)
	if err != nil || !s.accountFilter(ctx, ss.User).allows(accID) {
		s.renderNew(w, r, ss, tr(lang, "new.pickaccount"), http.StatusBadRequest)
		return
	}
	file, hdr, err := r.FormFile("planilha")
	if err != nil {
		s.renderNew(w, r, ss, tr(lang, "new.pickfile"), http.StatusBadRequest)
		return
	}
	defer file.Close()
	now := nowText()
	res, err := s.db.ExecContext(ctx, `INSERT INTO drafts (kind, account_id, created_by, created_at, updated_at) VALUES (?, ?, ?, ?, ?)`,
		string(kind), acc.ID, ss.User.ID, now, now)
	if err != nil {
		s.fail(w, r, http.StatusInternalServerError, msgInternal)
		return
	}
	id, _ := res.LastInsertId()
	d := &Draft{ID: id, Kind: kind, AccountID: acc.ID, Columns: map[string]string{}}
	fail := func(msg string) {
		s.db.ExecContext(ctx, `DELETE FROM drafts WHERE id = ?`, id)
		os.RemoveAll(s.draftDir(id))
		s.renderNew(w, r, ss, msg, http.StatusBadRequest)
	}
	stored, err := storeUpload(s.draftDir(id), file, hdr.Filename, s.cfg.MaxUpload)
	if err != nil {
		fail(uploadMsg(err, s.cfg.MaxUpload, lang))
		return
	}
	d.InputFile, d.InputName = stored, cleanName(hdr.Filename)
	base := d.InputName
	if i := len(base) - len(filepath.Ext(base)); i > 0 {
		base = base[:i]
	}
	d.Settings = defaultSettings(kind, base)
	if s.draftCNAB(d) {
		// each title of a CNAB remessa carries its own fine and interest
		// (none is none): a desk default would replace them
		d.Settings.Fine, d.Settings.Interest = "", ""
	}
	next := "colunas"
	if jf, jh, err := r.FormFile("job"); err == nil {
		defer jf.Close()
		data := make([]byte, 1<<20)
		n, _ := io.ReadFull(jf, data)
		if n >= len(data) {
			fail(tr(lang, "new.jobtoobig"))
			return
		}
		b, err := adoptJob(data[:n], d.InputFile)
		if err != nil {
			fail(uploadMsg(err, s.cfg.MaxUpload, lang))
			return
		}
		if err := writeFileSync(s.draftJobPath(id), b); err != nil {
			fail(msgInternal)
			return
		}
		d.JobUploaded = true
		_ = jh
		next = "validacao"
	} else if err := s.writeJob(d); err != nil {
		fail(msgInternal)
		return
	}
	if err := s.saveDraft(ctx, d); err != nil {
		fail(msgInternal)
		return
	}
	s.audit(ctx, ss.User.ID, "remessa_criada", fmt.Sprintf("remessa %d (%s)", id, kind))
	http.Redirect(w, r, fmt.Sprintf("/remessas/%d/%s", id, next), http.StatusSeeOther)
}

// draftHome sends a remessa to the step it is at.
func (s *Server) draftHome(w http.ResponseWriter, r *http.Request, ss *session) {
	d := s.draftFor(w, r, ss)
	if d == nil || !s.editable(w, r, d) {
		return
	}
	http.Redirect(w, r, fmt.Sprintf("/remessas/%d/validacao", d.ID), http.StatusSeeOther)
}

// uploadMsg says what went wrong with an upload, in the user's words.
func uploadMsg(err error, max int64, lang string) string {
	if ue, ok := err.(*uploadError); ok {
		return ue.msg
	}
	var mbe *http.MaxBytesError
	if errors.As(err, &mbe) {
		return fmt.Sprintf(tr(lang, "new.toobig"), max>>20)
	}
	return tr(lang, "new.badupload")
}

var _ = time.Now
