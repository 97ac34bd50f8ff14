package web

// Follow-up actions from the desk (docs/web.md "Ações sobre as cobranças"):
// pick charges of a run (rows ticked, a filter, or a sheet of keys), an
// action, a plan, a confirmation, and a River job that runs it through
// pipeline/actions (the same journal, ledger updates and exactly-once
// guarantees as `remessa action`). The desk builds an actions.Spec and
// calls the library; it never plans or calls the service itself.

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"go.yaml.in/yaml/v3"

	"remessa/pipeline/actions"
	"remessa/pipeline/journal"
	"remessa/pipeline/results"
	"remessa/pipeline/status"
	"remessa/rules"
)

// actionRoutes are the follow-up actions' routes (extraRoutes appends them).
func (s *Server) actionRoutes() []route {
	return []route{
		{"GET /execucoes/{id}/acoes/nova", RoleOperator, s.selectPage},
		{"POST /execucoes/{id}/acoes", RoleOperator, s.planAction},
		{"GET /acoes/{id}", RoleViewer, s.actionPage},
		{"POST /acoes/{id}/confirmar", RoleOperator, s.confirmAction},
		{"POST /acoes/{id}/descartar", RoleOperator, s.discardAction},
		{"GET /acoes/{id}/arquivos/{path...}", RoleViewer, s.actionFile},
		{"GET /inadimplencia", RoleViewer, s.owesPage},
		{"GET /inadimplencia/planilha", RoleViewer, s.owesXLSX},
		{"POST /inadimplencia/acoes", RoleOperator, s.owesAction},
	}
}

// actionKinds are the actions the desk offers, in the form's order.
var actionKinds = []string{actions.Cancel, actions.ChangeDueDate, actions.SecondCopy, actions.Resend, actions.Settle}

// selFilter is the selection page's filter (the query string).
type selFilter struct {
	Status string // "", open, overdue, paid, cancelled
	Month  string // YYYY-MM
	Parcel int
	Key    string // part of a key or a payer's name
}

func filterOf(r *http.Request) selFilter {
	f := selFilter{Status: r.FormValue("situacao"), Month: r.FormValue("mes"), Key: strings.TrimSpace(r.FormValue("busca"))}
	switch f.Status {
	case "open", "overdue", "paid", "cancelled":
	default:
		f.Status = ""
	}
	if _, err := time.Parse("2006-01", f.Month); err != nil {
		f.Month = ""
	}
	if n, err := strconv.Atoi(r.FormValue("parcela")); err == nil && n >= 1 && n <= rules.MaxCarnetRepeats {
		f.Parcel = n
	}
	if len(f.Key) > 100 {
		f.Key = f.Key[:100]
	}
	return f
}

// query is the filter as a query string (for the pager).
func (f selFilter) query() url.Values {
	v := url.Values{}
	if f.Status != "" {
		v.Set("situacao", f.Status)
	}
	if f.Month != "" {
		v.Set("mes", f.Month)
	}
	if f.Parcel > 0 {
		v.Set("parcela", strconv.Itoa(f.Parcel))
	}
	if f.Key != "" {
		v.Set("busca", f.Key)
	}
	return v
}

// filterSpec is the filter as the action job's filter.
func (f selFilter) filterSpec() *actions.FilterSpec {
	fs := &actions.FilterSpec{}
	switch f.Status {
	case "paid":
		fs.Status = []string{"paid", "settled"}
	case "":
	default:
		fs.Status = []string{f.Status}
	}
	if f.Month != "" {
		m, _ := time.Parse("2006-01", f.Month)
		fs.DueFrom = m.Format("2006-01-02")
		fs.DueBefore = m.AddDate(0, 1, 0).Format("2006-01-02")
	}
	if f.Parcel > 0 {
		fs.Parcels = []int{f.Parcel}
	}
	return fs
}

// selCharge is one charge on the selection page.
type selCharge struct {
	Parcel int
	Due    string
	Cents  int64
	State  string // open, overdue, paid, settled, cancelled, refunded
}

// selRow is one row of the run on the selection page.
type selRow struct {
	Key, Payer string
	SourceRow  int
	Charges    []selCharge
	OpenCents  int64
	Overdue    int
}

// selectView is the selection page's data.
type selectView struct {
	Run       *runRecord
	Filter    selFilter
	Rows      []selRow
	Matching  int // rows the filter shows
	Charges   int // their charges the filter selects
	Months    []string
	Parcels   []int
	Page      int
	Pages     int
	PrevURL   string
	NextURL   string
	Kinds     []string
	Carnets   bool
	KeyHeader string
	Tomorrow  string
	Checked   map[string]bool
	States    []string // the filter's choices
}

// selRowsPerPage is how many rows the selection page lists at a time.
const selRowsPerPage = 100

// ledgerCharges reads a finished run's charges from its ledger (seeded
// from results.json the first time).
func ledgerCharges(ctx context.Context, dir string, now time.Time, fn func(*status.Charge) error) error {
	l, err := status.OpenLedger(dir)
	if err != nil {
		return err
	}
	defer l.Close()
	res, err := results.Load(filepath.Join(dir, "results.json"))
	if err != nil {
		return err
	}
	if _, err := l.Seed(ctx, res, now); err != nil {
		return err
	}
	return l.EachCharge(ctx, fn)
}

// chargeState is the state the desk shows: open charges past their due
// date are overdue.
func chargeState(c *status.Charge, today string) string {
	if c.State == status.StateOpen && c.Due < today {
		return "overdue"
	}
	return c.State
}

// actionable loads the run of the request's {id} for a user who may act on
// it: finished, and an operator on the embedded account (an approver
// confirms on the others, but an operator may select and plan).
func (s *Server) actionableRun(w http.ResponseWriter, r *http.Request, ss *session) *runRecord {
	rec := s.runFor(w, r, ss)
	if rec == nil {
		return nil
	}
	if !runFinished(rec.Status) {
		s.fail(w, r, http.StatusConflict, tr(langOf(r), "act.notfinished"))
		return nil
	}
	if _, err := os.Stat(filepath.Join(rec.Dir, "results.json")); err != nil {
		s.fail(w, r, http.StatusConflict, tr(langOf(r), "act.notfinished"))
		return nil
	}
	return rec
}

// selectPage lists a run's rows with their charges as the ledger knows
// them, a filter, checkboxes and the action form.
func (s *Server) selectPage(w http.ResponseWriter, r *http.Request, ss *session) {
	rec := s.actionableRun(w, r, ss)
	if rec == nil {
		return
	}
	s.renderSelect(w, r, ss, rec, "", http.StatusOK)
}

func (s *Server) renderSelect(w http.ResponseWriter, r *http.Request, ss *session, rec *runRecord, msg string, code int) {
	ctx := r.Context()
	f := filterOf(r)
	v := selectView{Run: rec, Filter: f, Kinds: actionKinds, Carnets: rec.Kind == string(results.Carnets),
		KeyHeader: runKeyHeader(rec.Dir), Tomorrow: rules.FormatISODate(rules.Today(s.now()).AddDate(0, 0, 1)), Checked: map[string]bool{},
		States: []string{"open", "overdue", "paid", "cancelled"}}
	for _, k := range r.Form["chave"] {
		v.Checked[k] = true
	}
	v.Page, _ = strconv.Atoi(r.FormValue("pagina"))
	if v.Page < 1 {
		v.Page = 1
	}
	// overdue as of the service's day (the ledger's last sync learnt its clock)
	svcNow := func() time.Time { return status.ServiceNow(ctx, rec.Dir, s.now()) }
	j, err := actions.FromSpec(&actions.Spec{Version: 1, FromRun: rec.Dir, Filter: f.filterSpec(),
		Action: actions.ActionSpec{SecondCopy: &actions.SecondCopySpec{}}}, rec.Dir, actions.LoadOptions{Now: svcNow, Getenv: noEnv})
	if err != nil {
		s.fail(w, r, http.StatusInternalServerError, msgInternal)
		return
	}
	today := rules.FormatISODate(j.Today)
	months := map[string]bool{}
	parcels := map[int]bool{}
	from := (v.Page - 1) * selRowsPerPage
	var cur *selRow
	curIdx := -1
	flush := func() {
		if cur != nil && len(cur.Charges) > 0 {
			if v.Matching >= from && v.Matching < from+selRowsPerPage {
				v.Rows = append(v.Rows, *cur)
			}
			v.Matching++
			v.Charges += len(cur.Charges)
		}
		cur = nil
	}
	search := strings.ToLower(f.Key)
	err = ledgerCharges(ctx, rec.Dir, s.now(), func(c *status.Charge) error {
		months[c.Due[:min(7, len(c.Due))]] = true
		if c.Parcel > 0 {
			parcels[c.Parcel] = true
		}
		if c.RowIndex != curIdx {
			flush()
			curIdx = c.RowIndex
			cur = &selRow{Key: c.RowKey, Payer: c.Payer, SourceRow: c.SourceRow}
		}
		if search != "" && !strings.Contains(strings.ToLower(c.RowKey), search) && !strings.Contains(strings.ToLower(c.Payer), search) {
			return nil
		}
		if !j.Matches(c) {
			return nil
		}
		st := chargeState(c, today)
		cur.Charges = append(cur.Charges, selCharge{Parcel: c.Parcel, Due: c.Due, Cents: c.ValueCents, State: st})
		if st == "open" || st == "overdue" {
			cur.OpenCents += c.ValueCents
		}
		if st == "overdue" {
			cur.Overdue++
		}
		return nil
	})
	flush()
	if err != nil {
		logOf(r.Context(), s.log).Error().Err(err).Int64("execucao", rec.ID).Msg("seleção")
		s.fail(w, r, http.StatusInternalServerError, msgInternal)
		return
	}
	v.Months = sortedKeys(months)
	for p := 1; p <= rules.MaxCarnetRepeats; p++ {
		if parcels[p] {
			v.Parcels = append(v.Parcels, p)
		}
	}
	v.Pages = max(1, (v.Matching+selRowsPerPage-1)/selRowsPerPage)
	q := f.query()
	if v.Page > 1 {
		q.Set("pagina", strconv.Itoa(v.Page-1))
		v.PrevURL = fmt.Sprintf("/execucoes/%d/acoes/nova?%s", rec.ID, q.Encode())
	}
	if v.Page < v.Pages {
		q.Set("pagina", strconv.Itoa(v.Page+1))
		v.NextURL = fmt.Sprintf("/execucoes/%d/acoes/nova?%s", rec.ID, q.Encode())
	}
	p := s.page(r, ss, tr(langOf(r), "act.select.title"), v)
	p.Error, p.Status = msg, code
	s.render(w, "acao_nova", p)
}

// runKeyHeader is the header of the run's key column (its job's
// input.key), the default column of an uploaded sheet of keys.
func runKeyHeader(dir string) string {
	var m struct {
		Input struct {
			Key string `yaml:"key"`
		} `yaml:"input"`
	}
	if b, err := os.ReadFile(filepath.Join(dir, "job.yaml")); err == nil && yaml.Unmarshal(b, &m) == nil && m.Input.Key != "" {
		return m.Input.Key
	}
	return ""
}

// selectionSpec builds the action job of a posted selection, or says what
// is wrong with it (in the user's words).
func (s *Server) selectionSpec(r *http.Request, rec *runRecord, keys []string) (*actions.Spec, string) {
	lang := langOf(r)
	f := filterOf(r)
	spec := &actions.Spec{Version: 1, FromRun: rec.Dir, Filter: f.filterSpec()}
	if ps := strings.TrimSpace(r.FormValue("parcelas")); ps != "" {
		var list []int
		for _, part := range strings.FieldsFunc(ps, func(c rune) bool { return c == ',' || c == ';' || c == ' ' }) {
			n, err := strconv.Atoi(part)
			if err != nil || n < 1 || n > rules.MaxCarnetRepeats {
				return nil, fmt.Sprintf(tr(lang, "act.badparcels"), ps)
			}
			if !slices.Contains(list, n) {
				list = append(list, n)
			}
		}
		slices.Sort(list)
		spec.Filter.Parcels = list
	}
	if len(keys) > 0 {
		slices.Sort(keys)
		spec.Filter.Keys = slices.Compact(keys)
	}
	kind := r.FormValue("acao")
	spec.Name = tr("pt", "act.kind."+kind)
	switch kind {
	case actions.Cancel:
		spec.Action.Cancel = &actions.CancelSpec{}
	case actions.Settle:
		spec.Action.Settle = &actions.SettleSpec{}
	case actions.SecondCopy:
		spec.Action.SecondCopy = &actions.SecondCopySpec{}
	case actions.Resend:
		spec.Action.Resend = &actions.ResendSpec{Email: strings.TrimSpace(r.FormValue("email"))}
	case actions.ChangeDueDate:
		d := &actions.DueSpec{}
		switch r.FormValue("modo") {
		case "dias":
			n, err := strconv.Atoi(strings.TrimSpace(r.FormValue("dias")))
			if err != nil || n < 1 || n > 3650 {
				return nil, tr(lang, "act.baddays")
			}
			d.Days = n
		default:
			date := strings.TrimSpace(r.FormValue("data"))
			if date == "" {
				return nil, tr(lang, "act.nodate")
			}
			d.Date = date
		}
		spec.Action.ChangeDueDate = d
	default:
		return nil, tr(lang, "act.pickkind")
	}
	return spec, ""
}

// planAction makes a desk action of the posted selection: the action job
// is checked and planned by pipeline/actions (after a sync of the run's
// ledger, as `remessa action JOB plan`), and the plan page shows it.
func (s *Server) planAction(w http.ResponseWriter, r *http.Request, ss *session) {
	rec := s.actionableRun(w, r, ss)
	if rec == nil {
		return
	}
	lang := langOf(r)
	if err := r.ParseMultipartForm(8 << 20); err != nil && !errors.Is(err, http.ErrNotMultipart) {
		s.renderSelect(w, r, ss, rec, uploadMsg(err, s.cfg.MaxUpload, lang), http.StatusBadRequest)
		return
	}
	if r.MultipartForm != nil {
		defer r.MultipartForm.RemoveAll()
	}
	var keys []string
	sheet, hdr, sheetErr := r.FormFile("planilha")
	switch r.FormValue("alvo") {
	case "filtro":
	case "planilha":
		if sheetErr != nil {
			s.renderSelect(w, r, ss, rec, tr(lang, "act.nosheet"), http.StatusBadRequest)
			return
		}
	default:
		keys = r.Form["chave"]
		if len(keys) == 0 {
			s.renderSelect(w, r, ss, rec, tr(lang, "act.nokeys"), http.StatusBadRequest)
			return
		}
		if len(keys) > 100000 {
			keys = keys[:100000]
		}
	}
	spec, msg := s.selectionSpec(r, rec, keys)
	if msg != "" {
		s.renderSelect(w, r, ss, rec, msg, http.StatusBadRequest)
		return
	}
	var up *keysUpload
	if r.FormValue("alvo") == "planilha" {
		defer sheet.Close()
		up = &keysUpload{file: sheet, name: hdr.Filename, column: strings.TrimSpace(r.FormValue("coluna"))}
	}
	id, msg, code := s.newDeskAction(r, ss, rec, spec, r.FormValue("acao"), up)
	if msg != "" {
		s.renderSelect(w, r, ss, rec, msg, code)
		return
	}
	http.Redirect(w, r, fmt.Sprintf("/acoes/%d", id), http.StatusSeeOther)
}

// keysUpload is a sheet of keys posted with a selection.
type keysUpload struct {
	file   io.Reader
	name   string
	column string
}

// newDeskAction records a selection as a desk action and plans it with
// pipeline/actions (after a sync of the run's ledger, as `remessa action
// JOB plan` does); it returns the action's id, or a message for the user
// and its status (nothing is kept of a selection that cannot be planned).
func (s *Server) newDeskAction(r *http.Request, ss *session, rec *runRecord, spec *actions.Spec, kind string, up *keysUpload) (int64, string, int) {
	ctx := r.Context()
	lang := langOf(r)
	specJSON, _ := json.Marshal(spec)
	res, err := s.db.ExecContext(ctx, `INSERT INTO desk_actions (run_id, kind, spec, status, created_by, created_at) VALUES (?, ?, ?, 'planning', ?, ?)`,
		rec.ID, kind, string(specJSON), ss.User.ID, nowText())
	if err != nil {
		return 0, msgInternal, http.StatusInternalServerError
	}
	id, _ := res.LastInsertId()
	drop := func(msg string, code int) (int64, string, int) {
		s.db.ExecContext(context.WithoutCancel(ctx), `DELETE FROM desk_actions WHERE id = ?`, id)
		os.RemoveAll(s.actionUploads(id))
		return 0, msg, code
	}
	if up != nil {
		stored, err := storeUpload(s.actionUploads(id), up.file, up.name, s.cfg.MaxUpload)
		if err != nil {
			return drop(uploadMsg(err, s.cfg.MaxUpload, lang), http.StatusBadRequest)
		}
		col := up.column
		if col == "" {
			col = runKeyHeader(rec.Dir)
		}
		spec.Input = &actions.InputSpec{File: filepath.Base(stored), Key: col}
		specJSON, _ = json.Marshal(spec)
	}
	j, err := actions.FromSpec(spec, s.actionUploads(id), actions.LoadOptions{Now: s.cfg.Now, Getenv: noEnv})
	if err != nil {
		return drop(s.cleanActionMsg(describeJobErr(err, lang)), http.StatusBadRequest)
	}
	ro, cleanup, err := s.runOptions(ctx, rec)
	if err != nil {
		return drop(fmt.Sprintf(tr(lang, "sit.failed"), err), http.StatusBadGateway)
	}
	defer cleanup()
	ro.Observe = nil
	j, plan, err := actions.PrepareJob(ctx, j, actions.Options{Run: ro, Now: s.cfg.Now})
	if err != nil {
		logOf(r.Context(), s.log).Error().Err(err).Int64("execucao", rec.ID).Msg("plano da ação")
		return drop(fmt.Sprintf(tr(lang, "sit.failed"), s.cleanActionMsg(err.Error())), http.StatusBadGateway)
	}
	pb, _ := json.Marshal(plan)
	if _, err := s.db.ExecContext(ctx, `UPDATE desk_actions SET spec = ?, plan = ?, items = ?, charges = ?, amount_cents = ?, status = 'planned' WHERE id = ?`,
		string(specJSON), string(pb), len(plan.Items), plan.Charges, plan.Cents, id); err != nil {
		return drop(msgInternal, http.StatusInternalServerError)
	}
	s.audit(ctx, ss.User.ID, "acao_planejada", fmt.Sprintf("ação %d (%s) planejada por %s na execução %s: %d cobranças, %s",
		id, j.Kind, ss.User.Username, rec.RunID, plan.Charges, rules.FormatBRL(plan.Cents)))
	return id, "", 0
}

// cleanActionMsg keeps the data folder's paths out of a message.
func (s *Server) cleanActionMsg(msg string) string {
	msg = strings.ReplaceAll(msg, s.runsDir()+string(filepath.Separator), "")
	return strings.ReplaceAll(msg, s.cfg.DataDir+string(filepath.Separator), "")
}

// actionView is the action page's data.
type actionView struct {
	A        *deskAction
	Run      *runRecord
	Plan     *actions.Plan
	Routes   []routeCount
	NeedsApp bool
	MayDrive bool
	Sum      *actionSummary
	Progress actionProgress
	Outcome  *actions.Outcome
	Files    []string
	Running  bool
}

type routeCount struct {
	Route string
	Calls int
}

// actionProgress counts an action's journal rows by state.
type actionProgress struct {
	Total, Done, Skipped, Uncertain, Failed, Pending int
}

func (s *Server) actionFor(w http.ResponseWriter, r *http.Request, ss *session) (*deskAction, *runRecord) {
	a, ok := owned(s, w, r, ss, s.loadAction, func(a *deskAction) int64 {
		rec, err := s.loadRun(r.Context(), a.RunID)
		if err != nil {
			return -1
		}
		return rec.AccountID
	})
	if !ok || a.Status == "planning" {
		if ok {
			s.fail(w, r, http.StatusNotFound, tr(langOf(r), "err.notfound"))
		}
		return nil, nil
	}
	rec, err := s.loadRun(r.Context(), a.RunID)
	if err != nil {
		s.fail(w, r, http.StatusNotFound, tr(langOf(r), "err.notfound"))
		return nil, nil
	}
	return a, rec
}

// actionPage shows a desk action: its plan and the confirmation, its
// progress, or its result with the downloads.
func (s *Server) actionPage(w http.ResponseWriter, r *http.Request, ss *session) {
	a, rec := s.actionFor(w, r, ss)
	if a == nil {
		return
	}
	s.renderAction(w, r, ss, a, rec, "", http.StatusOK)
}

func (s *Server) renderAction(w http.ResponseWriter, r *http.Request, ss *session, a *deskAction, rec *runRecord, msg string, status int) {
	v := actionView{A: a, Run: rec, NeedsApp: rec.Service != "embedded", MayDrive: s.mayDrive(ss, rec), Plan: &actions.Plan{}}
	json.Unmarshal([]byte(a.Plan), v.Plan)
	for _, k := range sortedKeys(v.Plan.Calls) {
		v.Routes = append(v.Routes, routeCount{k, v.Plan.Calls[k]})
	}
	if a.Outcome != "" {
		v.Sum = &actionSummary{}
		json.Unmarshal([]byte(a.Outcome), v.Sum)
	}
	v.Running = a.Status == "queued" || a.Status == "running"
	if a.ActionID != "" {
		dir := actionDir(rec, a)
		v.Progress = journalProgress(r.Context(), dir)
		if !v.Running {
			if b, err := os.ReadFile(filepath.Join(dir, "resultado.json")); err == nil {
				var out actions.Outcome
				if json.Unmarshal(b, &out) == nil {
					v.Outcome = &out
					v.Files = actionFiles(&out)
				}
			}
		}
	}
	p := s.page(r, ss, tr(langOf(r), "act.kind."+a.Kind), v)
	p.Error, p.Status = msg, status
	s.render(w, "acao", p)
}

// journalProgress counts the rows of the action journal in dir by state.
func journalProgress(ctx context.Context, dir string) actionProgress {
	var p actionProgress
	b, err := os.ReadFile(filepath.Join(dir, "resultado.json"))
	if err == nil {
		var out actions.Outcome
		if json.Unmarshal(b, &out) == nil {
			return actionProgress{Total: len(out.Items), Done: out.Done, Skipped: out.Skipped, Uncertain: out.Uncertain, Failed: out.Failed, Pending: out.Pending}
		}
	}
	jn, err := journal.Open(filepath.Join(dir, journal.FileName))
	if err != nil {
		return p
	}
	defer jn.Close()
	rows, err := jn.Rows(ctx)
	if err != nil {
		return p
	}
	for _, row := range rows {
		p.Total++
		switch row.State {
		case actions.StateDone:
			p.Done++
		case actions.StateSkipped:
			p.Skipped++
		case actions.StateUncertain, actions.StateAmbiguous:
			p.Uncertain++
		case actions.StateFailed:
			p.Failed++
		default:
			p.Pending++
		}
	}
	return p
}

// actionFiles lists an outcome's downloads: the report, the results, the
// zip of second copies and each row's PDF.
func actionFiles(out *actions.Outcome) []string {
	files := []string{"relatorio.txt", "resultado.json"}
	if out.Zip != "" {
		files = append(files, out.Zip)
	}
	return files
}

// actionFileAllowed says whether rel names a download of the action: the
// report, results, job, the zip, or a PDF an item wrote.
func actionFileAllowed(out *actions.Outcome, rel string) bool {
	switch rel {
	case "relatorio.txt", "resultado.json", "job.yaml":
		return true
	}
	if out.Zip != "" && rel == out.Zip {
		return true
	}
	for _, it := range out.Items {
		if slices.Contains(it.Files, rel) {
			return true
		}
	}
	return false
}

// actionFile serves one of an action's downloads.
func (s *Server) actionFile(w http.ResponseWriter, r *http.Request, ss *session) {
	a, rec := s.actionFor(w, r, ss)
	if a == nil {
		return
	}
	lang := langOf(r)
	rel := filepath.Clean(filepath.FromSlash(r.PathValue("path")))
	dir := actionDir(rec, a)
	var out actions.Outcome
	b, err := os.ReadFile(filepath.Join(dir, "resultado.json"))
	if a.ActionID == "" || err != nil || json.Unmarshal(b, &out) != nil || !actionFileAllowed(&out, rel) || strings.HasPrefix(rel, "..") {
		s.fail(w, r, http.StatusNotFound, tr(lang, "err.notfound"))
		return
	}
	p := filepath.Join(dir, rel)
	if _, err := os.Stat(p); err != nil {
		s.fail(w, r, http.StatusNotFound, tr(lang, "err.notfound"))
		return
	}
	ct := map[string]string{".zip": "application/zip", ".pdf": "application/pdf", ".txt": "text/plain; charset=utf-8",
		".json": "application/json", ".yaml": "application/yaml; charset=utf-8"}[filepath.Ext(rel)]
	w.Header().Set("Content-Type", ct)
	name := fileSafe(rec.Account) + "-" + rec.RunID + "-acao-" + strconv.FormatInt(a.ID, 10) + "-" + strings.ReplaceAll(filepath.ToSlash(rel), "/", "-")
	disp := "attachment"
	if filepath.Ext(rel) == ".pdf" {
		disp = "inline"
	}
	w.Header().Set("Content-Disposition", disp+"; filename*=UTF-8''"+url.PathEscape(name))
	http.ServeFile(w, r, p)
}

// confirmAction queues a planned action: on the embedded account an
// operator confirms with the button; on sandbox or production only an
// approver, typing the number of charges. The plan→queued change and the
// River job are one transaction, so a second confirmation (a double click,
// a form posted again) finds it queued and adds nothing.
func (s *Server) confirmAction(w http.ResponseWriter, r *http.Request, ss *session) {
	a, rec := s.actionFor(w, r, ss)
	if a == nil {
		return
	}
	ctx := r.Context()
	lang := langOf(r)
	if !s.mayDrive(ss, rec) {
		s.fail(w, r, http.StatusForbidden, tr(lang, "act.approver"))
		return
	}
	if a.Status != "planned" {
		http.Redirect(w, r, fmt.Sprintf("/acoes/%d", a.ID), http.StatusSeeOther)
		return
	}
	if a.Items == 0 {
		s.renderAction(w, r, ss, a, rec, tr(lang, "act.nothing"), http.StatusBadRequest)
		return
	}
	if rec.Service != "embedded" {
		typed := strings.TrimSpace(strings.ReplaceAll(r.PostFormValue("confirmacao"), ".", ""))
		if typed != strconv.Itoa(a.Charges) {
			s.renderAction(w, r, ss, a, rec, fmt.Sprintf(tr(lang, "plan.typecount"), a.Charges), http.StatusBadRequest)
			return
		}
	}
	folder := s.now().In(rules.SaoPaulo).Format("20060102-150405") + fmt.Sprintf("-desk%d", a.ID)
	tx, err := s.rdb.BeginTx(ctx, nil)
	if err != nil {
		s.fail(w, r, http.StatusInternalServerError, msgInternal)
		return
	}
	defer tx.Rollback()
	res, err := tx.ExecContext(ctx, `UPDATE desk_actions SET status = 'queued', action_id = ?, confirmed_by = ?, confirmed_at = ? WHERE id = ? AND status = 'planned'`,
		folder, ss.User.ID, nowText(), a.ID)
	if err != nil {
		s.fail(w, r, http.StatusInternalServerError, msgInternal)
		return
	}
	if n, _ := res.RowsAffected(); n == 0 {
		http.Redirect(w, r, fmt.Sprintf("/acoes/%d", a.ID), http.StatusSeeOther)
		return
	}
	job, err := s.river.InsertTx(ctx, tx, ActionArgs{Action: a.ID, Gen: 0, RequestID: requestIDOf(ctx)}, nil)
	if err != nil {
		s.fail(w, r, http.StatusInternalServerError, msgInternal)
		return
	}
	if _, err := tx.ExecContext(ctx, `UPDATE desk_actions SET job_id = ? WHERE id = ?`, job.Job.ID, a.ID); err != nil {
		s.fail(w, r, http.StatusInternalServerError, msgInternal)
		return
	}
	if err := tx.Commit(); err != nil {
		s.fail(w, r, http.StatusInternalServerError, msgInternal)
		return
	}
	s.audit(ctx, ss.User.ID, "acao_confirmada", fmt.Sprintf("ação %d (%s) confirmada por %s na execução %s da conta %s: %d cobranças, %s",
		a.ID, a.Kind, ss.User.Username, rec.RunID, rec.Account, a.Charges, rules.FormatBRL(a.Cents)))
	http.Redirect(w, r, fmt.Sprintf("/acoes/%d", a.ID), http.StatusSeeOther)
}

// discardAction drops a planned action that was not confirmed.
func (s *Server) discardAction(w http.ResponseWriter, r *http.Request, ss *session) {
	a, rec := s.actionFor(w, r, ss)
	if a == nil {
		return
	}
	if a.Status == "planned" {
		s.db.ExecContext(r.Context(), `DELETE FROM desk_actions WHERE id = ? AND status = 'planned'`, a.ID)
		os.RemoveAll(s.actionUploads(a.ID))
		s.audit(r.Context(), ss.User.ID, "acao_descartada", fmt.Sprintf("ação %d (%s) descartada por %s", a.ID, a.Kind, ss.User.Username))
	}
	http.Redirect(w, r, fmt.Sprintf("/execucoes/%d", rec.ID), http.StatusSeeOther)
}

// runActionRow is one of a run's actions on its page.
type runActionRow struct {
	ID                     int64
	Kind, Status, By, When string
	Charges                int
	Cents                  int64
}

// runActions lists a run's desk actions, newest first.
func (s *Server) runActions(ctx context.Context, runID int64) []runActionRow {
	rows, err := s.db.QueryContext(ctx, `SELECT a.id, a.kind, a.status, coalesce(c.username, u.username), a.created_at, a.charges, a.amount_cents
		FROM desk_actions a JOIN users u ON u.id = a.created_by LEFT JOIN users c ON c.id = a.confirmed_by
		WHERE a.run_id = ? AND a.status <> 'planning' ORDER BY a.id DESC LIMIT 50`, runID)
	if err != nil {
		return nil
	}
	defer rows.Close()
	var out []runActionRow
	for rows.Next() {
		var x runActionRow
		if rows.Scan(&x.ID, &x.Kind, &x.Status, &x.By, &x.When, &x.Charges, &x.Cents) == nil {
			out = append(out, x)
		}
	}
	return out
}
