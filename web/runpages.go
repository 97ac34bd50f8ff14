package web

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"
	"unicode"

	"remessa/formats"
	"remessa/pipeline"
	"remessa/pipeline/movements"
	"remessa/pipeline/results"
	"remessa/pipeline/run"
	"remessa/reports"
)

// planView is the plan page's data.
type planView struct {
	Draft    *Draft
	Step     int
	Plan     *pipeline.Plan
	Months   []monthTotal
	Split    []splitTotal
	Text     string
	NeedsApp bool // sandbox or production: an approver confirms by typing the rows
	Account  *Account
	// Cluster: the server runs on PostgreSQL (--db); NoCluster: the
	// account is the embedded service, which a cluster run cannot use
	Cluster, NoCluster bool
	// Movements is a CNAB remessa's titles that are not entries (baixas,
	// new due dates…), carried out after the issuance on the runs that
	// issued them: nil when the file has none.
	Movements *movementsView
}

// movementsView is the plan page's section on a CNAB remessa's movements.
type movementsView struct {
	Titles  int
	Apply   int // titles in Groups: what the run will carry out
	Groups  []movementGroup
	Refused []movementRefusal
}

type movementGroup struct {
	Code, Name, RunID string
	Titles            int
}

type movementRefusal struct {
	Where, Key, Code, Reason string
}

// planMovements is the movements section of d's plan, from the same
// pipeline/movements.Scan a run of d carries out: nil for a sheet or a
// file of entries only.
func (s *Server) planMovements(ctx context.Context, d *Draft, service, lang string) (*movementsView, string) {
	job, err := s.loadJob(d)
	if err != nil || !movements.IsCNAB(job) {
		return nil, ""
	}
	mp, err := movements.Scan(ctx, job, s.runsDir(), service)
	if err != nil || mp.Titles == 0 {
		return nil, "" // a file the reader refuses: the plan says why
	}
	v := &movementsView{Titles: mp.Titles}
	for _, g := range mp.Groups {
		pt, en := formats.CNABMovementName(g.Code)
		name := pt
		if lang == "en" {
			name = en
		}
		v.Groups = append(v.Groups, movementGroup{Code: g.Code, Name: name, RunID: g.RunID, Titles: len(g.Titles)})
		v.Apply += len(g.Titles)
	}
	for _, r := range mp.Refused {
		reason := r.Reason
		if lang == "en" && r.ReasonEN != "" {
			reason = r.ReasonEN
		}
		v.Refused = append(v.Refused, movementRefusal{Where: r.Where(lang), Key: r.Key, Code: r.Code, Reason: reason})
	}
	var b strings.Builder
	mp.WriteText(&b)
	return v, b.String()
}

type monthTotal struct {
	Month string
	Cents int64
}

type splitTotal struct {
	Recipient string
	Own       bool
	Cents     int64
}

// planFor validates and plans a draft the way `remessa plan` does.
func (s *Server) planFor(ctx context.Context, d *Draft) (*pipeline.Plan, error) {
	job, err := s.loadJob(d)
	if err != nil {
		return nil, err
	}
	plan, err := run.Plan(ctx, s.draftJobPath(d.ID), job, s.runsDir())
	if err != nil || s.cfg.DB == "" {
		return plan, err
	}
	acc, err := s.account(ctx, d.AccountID)
	if err != nil || acc.Service == "embedded" {
		return plan, err
	}
	// the duplicate-run check and repeated rows of the database's runs
	// index: runs started on any machine
	job.Service = acc.Service
	notes, err := s.cw.PlanNotes(ctx, job)
	if err != nil {
		return nil, err
	}
	plan.Earlier = append(plan.Earlier, notes...)
	return plan, nil
}

func (s *Server) planPage(w http.ResponseWriter, r *http.Request, ss *session) {
	d := s.draftFor(w, r, ss)
	if d == nil || !s.editable(w, r, d) {
		return
	}
	s.renderPlan(w, r, ss, d, "", http.StatusOK)
}

func (s *Server) renderPlan(w http.ResponseWriter, r *http.Request, ss *session, d *Draft, msg string, status int) {
	ctx := r.Context()
	lang := langOf(r)
	plan, err := s.planFor(ctx, d)
	if err != nil {
		s.fail(w, r, http.StatusBadRequest, s.cleanPaths(d, describeJobErr(err, lang)))
		return
	}
	acc, err := s.account(ctx, d.AccountID)
	if err != nil {
		s.fail(w, r, http.StatusInternalServerError, msgInternal)
		return
	}
	v := planView{Draft: d, Step: 5, Plan: plan, Account: acc, NeedsApp: acc.Service != "embedded",
		Cluster: s.cfg.DB != "", NoCluster: s.cfg.DB != "" && acc.Service == "embedded"}
	for _, m := range sortedKeys(plan.Totals.ByDueMonth) {
		v.Months = append(v.Months, monthTotal{m, plan.Totals.ByDueMonth[m]})
	}
	for _, rcp := range sortedKeys(plan.Totals.BySplitRecipient) {
		var sum int64
		for _, c := range plan.Totals.BySplitRecipient[rcp] {
			sum += c
		}
		v.Split = append(v.Split, splitTotal{Recipient: rcp, Own: rcp == pipeline.OwnRecipient, Cents: sum})
	}
	var b strings.Builder
	plan.WriteText(&b, lang)
	var movText string
	v.Movements, movText = s.planMovements(ctx, d, acc.Service, lang)
	b.WriteString(movText)
	v.Text = s.cleanPaths(d, b.String())
	p := s.page(r, ss, tr(lang, "plan.title"), v)
	p.Error, p.Status = msg, status
	s.render(w, "plan", p)
}

// startRun confirms a remessa and queues its run. On the embedded service
// an operator confirms with a button; on sandbox or production only an
// approver can, by typing the number of rows that will be issued.
func (s *Server) startRun(w http.ResponseWriter, r *http.Request, ss *session) {
	d := s.draftFor(w, r, ss)
	if d == nil || !s.editable(w, r, d) {
		return
	}
	ctx := r.Context()
	lang := langOf(r)
	acc, err := s.account(ctx, d.AccountID)
	if err != nil {
		s.fail(w, r, http.StatusInternalServerError, msgInternal)
		return
	}
	if acc.Service != "embedded" && !ss.User.Role.Allows(RoleApprover) {
		s.fail(w, r, http.StatusForbidden, tr(lang, "plan.approver"))
		return
	}
	if s.cfg.DB != "" && acc.Service == "embedded" {
		// a cluster run is worked on other machines too, which cannot
		// reach this server's embedded sandbox
		s.renderPlan(w, r, ss, d, tr(lang, "plan.nocluster"), http.StatusBadRequest)
		return
	}
	plan, err := s.planFor(ctx, d)
	if err != nil {
		s.fail(w, r, http.StatusBadRequest, s.cleanPaths(d, describeJobErr(err, lang)))
		return
	}
	// a CNAB remessa of movements only (baixas, new due dates) issues
	// nothing and is still work to confirm
	apply := 0
	if mv, _ := s.planMovements(ctx, d, acc.Service, lang); mv != nil {
		apply = mv.Apply
	}
	if plan.Accepted+apply == 0 || (plan.Refused > 0 && plan.OnInvalid != "skip") {
		s.renderPlan(w, r, ss, d, tr(lang, "plan.notready"), http.StatusBadRequest)
		return
	}
	if acc.Service != "embedded" {
		typed := strings.TrimSpace(strings.ReplaceAll(r.PostFormValue("confirmacao"), ".", ""))
		if typed != strconv.Itoa(plan.Accepted+apply) {
			msg := fmt.Sprintf(tr(lang, "plan.typecount"), plan.Accepted)
			if apply > 0 {
				msg = fmt.Sprintf(tr(lang, "plan.mov.typecount"), plan.Accepted+apply)
			}
			s.renderPlan(w, r, ss, d, msg, http.StatusBadRequest)
			return
		}
	}
	again := r.PostFormValue("novamente") == "1"
	runID := newWebRunID(s.now())
	tx, err := s.rdb.BeginTx(ctx, nil)
	if err != nil {
		s.fail(w, r, http.StatusInternalServerError, msgInternal)
		return
	}
	defer tx.Rollback()
	var exists int
	tx.QueryRowContext(ctx, `SELECT count(*) FROM runs WHERE draft_id = ?`, d.ID).Scan(&exists)
	if exists > 0 {
		http.Redirect(w, r, "/", http.StatusSeeOther)
		return
	}
	ag, clu := 0, 0
	if again {
		ag = 1
	}
	if s.cfg.DB != "" {
		clu = 1 // the intent of a cluster run (cluster.go): handed to PostgreSQL by its driver
	}
	res, err := tx.ExecContext(ctx, `INSERT INTO runs (draft_id, account_id, kind, name, run_id, dir, status, rows, amount_cents, started_by, created_at, again, cluster, db)
		VALUES (?, ?, ?, ?, ?, ?, 'queued', ?, ?, ?, ?, ?, ?, ?)`, d.ID, acc.ID, string(d.Kind), plan.Name, runID, filepath.Join(s.runsDir(), runID),
		plan.Accepted, plan.Totals.AcceptedCents, ss.User.ID, nowText(), ag, clu, s.dbName())
	if err != nil {
		s.fail(w, r, http.StatusInternalServerError, msgInternal)
		return
	}
	id, _ := res.LastInsertId()
	job, err := s.river.InsertTx(ctx, tx, RunArgs{Run: id, Gen: 0, RequestID: requestIDOf(ctx)}, nil)
	if err != nil {
		s.fail(w, r, http.StatusInternalServerError, msgInternal)
		return
	}
	if _, err := tx.ExecContext(ctx, `UPDATE runs SET job_id = ? WHERE id = ?`, job.Job.ID, id); err != nil {
		s.fail(w, r, http.StatusInternalServerError, msgInternal)
		return
	}
	if err := tx.Commit(); err != nil {
		s.fail(w, r, http.StatusInternalServerError, msgInternal)
		return
	}
	s.audit(ctx, ss.User.ID, "execucao_confirmada", fmt.Sprintf("execução %s da remessa %d na conta %s (%d linhas)", runID, d.ID, acc.Name, plan.Accepted))
	http.Redirect(w, r, fmt.Sprintf("/execucoes/%d", id), http.StatusSeeOther)
}

func newWebRunID(now time.Time) string {
	b := make([]byte, 3)
	rand.Read(b)
	return now.UTC().Format("20060102-150405") + "-" + hex.EncodeToString(b)
}

// runFor loads the run in the request's {id} that ss's user may see.
func (s *Server) runFor(w http.ResponseWriter, r *http.Request, ss *session) *runRecord {
	rec, _ := owned(s, w, r, ss, s.loadRun, func(r *runRecord) int64 { return r.AccountID })
	return rec
}

// runView is the run page's data.
type runView struct {
	Run      *runRecord
	Event    RunEvent
	Finished bool
	Totals   *results.Totals
	Rows     []results.Row
	Files    []string
	Page     int
	Pages    int
	PrevURL  string
	NextURL  string
	HasHTML  bool
	Sit      *situationView // the last reconciliation, after "Atualizar situação"
	Remind   *reminderView  // the run's régua and what it sent (lembretes.go)
	Actions  []runActionRow // the desk's follow-up actions on the run (actions.go)
	Ret      *retornoView   // the run's CNAB retornos (retorno.go)
}

// rowsPerPage is how many result rows the run page lists at a time.
const rowsPerPage = 50

func (s *Server) runPage(w http.ResponseWriter, r *http.Request, ss *session) {
	rec := s.runFor(w, r, ss)
	if rec == nil {
		return
	}
	v := runView{Run: rec, Event: s.runEvent(rec), Finished: runFinished(rec.Status)}
	v.Page, _ = strconv.Atoi(r.URL.Query().Get("pagina"))
	if v.Page < 1 {
		v.Page = 1
	}
	if _, err := os.Stat(filepath.Join(rec.Dir, "results.json")); err == nil && (v.Finished || rec.Status == "stopped") {
		tot, rows, n, err := readResultsPage(filepath.Join(rec.Dir, "results.json"), (v.Page-1)*rowsPerPage, rowsPerPage)
		if err == nil {
			v.Totals, v.Rows = tot, rows
			v.Pages = (n + rowsPerPage - 1) / rowsPerPage
		}
		v.Files = runFiles(rec.Dir)
		v.Sit = situation(rec.Dir)
		v.Remind = s.reminders(r.Context(), rec, langOf(r))
		v.Actions = s.runActions(r.Context(), rec.ID)
		v.Ret = retornos(r, rec.Dir)
		for _, f := range v.Files {
			if f == "relatorio.html" {
				v.HasHTML = true
			}
		}
	}
	if v.Page > 1 {
		v.PrevURL = fmt.Sprintf("/execucoes/%d?pagina=%d#linhas", rec.ID, v.Page-1)
	}
	if v.Page < v.Pages {
		v.NextURL = fmt.Sprintf("/execucoes/%d?pagina=%d#linhas", rec.ID, v.Page+1)
	}
	s.render(w, "run", s.page(r, ss, rec.Name, v))
}

// readResultsPage reads results.json as a stream, keeping the totals and
// only the rows [from, from+n) (a 100,000-row run is never held whole).
func readResultsPage(path string, from, n int) (*results.Totals, []results.Row, int, error) {
	var rows []results.Row
	count := 0
	res, err := reports.EachRow(path, nil, func(r *results.Row) error {
		if count >= from && count < from+n {
			rows = append(rows, *r)
		}
		count++
		return nil
	})
	if err != nil {
		return nil, nil, 0, err
	}
	return &res.Totals, rows, count, nil
}

// runFiles lists the downloads of a run folder: the reports, the results
// and the rejected rows (never the journal, the log or the job).
func runFiles(dir string) []string {
	ents, err := os.ReadDir(dir)
	if err != nil {
		return nil
	}
	var out []string
	for _, e := range ents {
		if e.Type().IsRegular() && downloadable(e.Name()) {
			out = append(out, e.Name())
		}
	}
	return out
}

func downloadable(name string) bool {
	switch {
	case name == "relatorio.xlsx", name == "relatorio.html", name == "results.json":
		return true
	case strings.HasPrefix(name, "rejeitadas."), strings.HasPrefix(name, "conciliacao.") && !strings.HasSuffix(name, ".tmp"):
		return true
	case strings.HasSuffix(name, ".csv") && !strings.Contains(name, "/"):
		return true
	}
	return false
}

var contentTypes = map[string]string{".xlsx": "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet", ".csv": "text/csv; charset=utf-8",
	".json": "application/json", ".html": "text/html; charset=utf-8", ".yaml": "application/yaml; charset=utf-8"}

func (s *Server) runFile(w http.ResponseWriter, r *http.Request, ss *session) {
	rec := s.runFor(w, r, ss)
	if rec == nil {
		return
	}
	name := r.PathValue("name")
	if !downloadable(name) || filepath.Base(name) != name {
		s.fail(w, r, http.StatusNotFound, tr(langOf(r), "err.notfound"))
		return
	}
	p := filepath.Join(rec.Dir, name)
	if _, err := os.Stat(p); err != nil {
		s.fail(w, r, http.StatusNotFound, tr(langOf(r), "err.notfound"))
		return
	}
	w.Header().Set("Content-Type", contentTypes[filepath.Ext(name)])
	// the file's name says which account and which run it belongs to
	w.Header().Set("Content-Disposition", "attachment; filename*=UTF-8''"+url.PathEscape(fileSafe(rec.Account)+"-"+rec.RunID+"-"+name))
	http.ServeFile(w, r, p)
}

// runReport shows the run's HTML report (inline on the run page).
func (s *Server) runReport(w http.ResponseWriter, r *http.Request, ss *session) {
	rec := s.runFor(w, r, ss)
	if rec == nil {
		return
	}
	p := filepath.Join(rec.Dir, "relatorio.html")
	if _, err := os.Stat(p); err != nil {
		s.fail(w, r, http.StatusNotFound, tr(langOf(r), "err.notfound"))
		return
	}
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.Header().Set("Content-Security-Policy", "default-src 'none'; style-src 'unsafe-inline'; img-src data:; frame-ancestors 'self'")
	http.ServeFile(w, r, p)
}

// runDocument serves a row's slip or carnet PDF (or a parcel's with ?parcela=N).
// On the embedded service the server fetches it from its own sandbox (the
// address the run recorded may be an earlier start's); a real service's
// documents are public links and the browser is sent there.
func (s *Server) runDocument(w http.ResponseWriter, r *http.Request, ss *session) {
	rec := s.runFor(w, r, ss)
	if rec == nil {
		return
	}
	lang := langOf(r)
	idx, err := strconv.Atoi(r.PathValue("row"))
	if err != nil || idx < 0 {
		s.fail(w, r, http.StatusNotFound, tr(lang, "err.notfound"))
		return
	}
	_, rows, _, err := readResultsPage(filepath.Join(rec.Dir, "results.json"), idx, 1)
	if err != nil || len(rows) == 0 {
		s.fail(w, r, http.StatusNotFound, tr(lang, "err.notfound"))
		return
	}
	row := rows[0]
	link := row.PDF
	if n, err := strconv.Atoi(r.URL.Query().Get("parcela")); err == nil {
		link = ""
		for _, p := range row.Parcels {
			if p.Number == n {
				link = p.PDF
			}
		}
	}
	if link == "" {
		s.fail(w, r, http.StatusNotFound, tr(lang, "run.nodoc"))
		return
	}
	u, err := url.Parse(link)
	if err != nil {
		s.fail(w, r, http.StatusNotFound, tr(lang, "run.nodoc"))
		return
	}
	if rec.Service != "embedded" {
		if u.Scheme != "https" {
			s.fail(w, r, http.StatusNotFound, tr(lang, "run.nodoc"))
			return
		}
		http.Redirect(w, r, u.String(), http.StatusFound)
		return
	}
	rn, err := s.embedded()
	if err != nil {
		s.fail(w, r, http.StatusServiceUnavailable, tr(lang, "run.nodoc"))
		return
	}
	base, _ := url.Parse(rn.URL)
	u.Scheme, u.Host = base.Scheme, base.Host
	req, _ := http.NewRequestWithContext(r.Context(), http.MethodGet, u.String(), nil)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		s.fail(w, r, http.StatusBadGateway, tr(lang, "run.nodoc"))
		return
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		s.fail(w, r, http.StatusNotFound, tr(lang, "run.nodoc"))
		return
	}
	w.Header().Set("Content-Type", resp.Header.Get("Content-Type"))
	w.Header().Set("Content-Disposition", fmt.Sprintf("inline; filename=\"%s-linha-%d.pdf\"", rec.RunID, row.SourceRow))
	io.Copy(w, resp.Body)
}

// runEvents streams a run's progress as Server-Sent Events: the stored
// state at once (so a reload or a new browser is right at once), then
// every change, until the run ends.
func (s *Server) runEvents(w http.ResponseWriter, r *http.Request, ss *session) {
	rec := s.runFor(w, r, ss)
	if rec == nil {
		return
	}
	fl, ok := w.(http.Flusher)
	if !ok {
		s.fail(w, r, http.StatusInternalServerError, msgInternal)
		return
	}
	ch, stop := s.hub.subscribe(rec.ID)
	defer stop()
	w.Header().Set("Content-Type", "text/event-stream")
	w.Header().Set("Cache-Control", "no-store")
	w.Header().Set("X-Accel-Buffering", "no")
	send := func(b []byte) {
		fmt.Fprintf(w, "event: progress\ndata: %s\n\n", b)
		fl.Flush()
	}
	last, _ := json.Marshal(s.runEvent(rec))
	send(last)
	if runFinished(rec.Status) {
		return
	}
	// at least one event a second: a phase that reports nothing for a while
	// (validating a big sheet, a slow batch) repeats the last state, so the
	// page shows the run is alive. The wait starts again at each event sent
	// (a ticker that skipped a tick just after an event let 1,9 s pass)
	beat := time.NewTimer(time.Second)
	defer beat.Stop()
	for {
		select {
		case <-r.Context().Done():
			return
		case b, ok := <-ch:
			if !ok {
				return
			}
			last = b
			send(b)
			beat.Reset(time.Second)
			var ev RunEvent
			if json.Unmarshal(b, &ev) == nil && ev.Finished {
				return
			}
		case <-beat.C:
			// the stored state only when the status moved (it is stored once
			// a second and may be older than the last event's counters)
			var prev RunEvent
			json.Unmarshal(last, &prev)
			if cur, err := s.loadRun(r.Context(), rec.ID); err == nil && cur.Status != prev.Status {
				last, _ = json.Marshal(s.runEvent(cur))
			}
			send(last)
			beat.Reset(time.Second)
			var ev RunEvent
			if json.Unmarshal(last, &ev) == nil && ev.Finished {
				return
			}
		}
	}
}

// cancelRun asks a run to stop after its in-flight calls; it can be
// resumed from its page.
func (s *Server) cancelRun(w http.ResponseWriter, r *http.Request, ss *session) {
	rec := s.drivableRun(w, r, ss)
	if rec == nil {
		return
	}
	ctx := r.Context()
	if !runFinished(rec.Status) {
		s.db.ExecContext(ctx, `UPDATE runs SET cancel_asked = 1 WHERE id = ?`, rec.ID)
		s.cancelUnits(ctx, rec)
		if c, ok := s.cancels.Load(rec.ID); ok {
			c.(context.CancelFunc)()
		} else {
			s.river.JobCancel(ctx, rec.JobID)
			s.setRunStatus(ctx, rec.ID, "cancelled", "")
		}
		s.audit(ctx, ss.User.ID, "execucao_cancelada", rec.RunID)
	}
	http.Redirect(w, r, fmt.Sprintf("/execucoes/%d?ok=cancel", rec.ID), http.StatusSeeOther)
}

// resumeRun queues a cancelled or stopped run again; it goes on from its
// journal.
func (s *Server) resumeRun(w http.ResponseWriter, r *http.Request, ss *session) {
	rec := s.drivableRun(w, r, ss)
	if rec == nil {
		return
	}
	ctx := r.Context()
	if rec.Status == "cancelled" || rec.Status == "stopped" {
		s.db.ExecContext(ctx, `UPDATE runs SET cancel_asked = 0 WHERE id = ?`, rec.ID)
		if err := s.enqueueRun(ctx, rec.ID, rec.Generation+1); err != nil {
			s.fail(w, r, http.StatusInternalServerError, msgInternal)
			return
		}
		s.audit(ctx, ss.User.ID, "execucao_retomada", rec.RunID)
	}
	http.Redirect(w, r, fmt.Sprintf("/execucoes/%d", rec.ID), http.StatusSeeOther)
}

// drivableRun loads the run of the request's {id} for a user who may
// drive it (cancel, resume, refresh), answering 404 or 403 itself.
func (s *Server) drivableRun(w http.ResponseWriter, r *http.Request, ss *session) *runRecord {
	rec := s.runFor(w, r, ss)
	if rec != nil && !s.mayDrive(ss, rec) {
		s.fail(w, r, http.StatusForbidden, tr(langOf(r), "err.role"))
		return nil
	}
	return rec
}

// mayDrive: an operator drives runs on the embedded service; runs on
// sandbox or production need an approver.
func (s *Server) mayDrive(ss *session, rec *runRecord) bool {
	if rec.Service != "embedded" {
		return ss.User.Role.Allows(RoleApprover)
	}
	return ss.User.Role.Allows(RoleOperator)
}

func sortedKeys[V any](m map[string]V) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	for i := 1; i < len(out); i++ {
		for j := i; j > 0 && out[j] < out[j-1]; j-- {
			out[j], out[j-1] = out[j-1], out[j]
		}
	}
	return out
}

// fileSafe is s fit for a downloaded file's name: letters, digits, dots,
// hyphens and underscores, spaces as hyphens.
func fileSafe(s string) string {
	var b strings.Builder
	for _, r := range s {
		switch {
		case r == ' ':
			b.WriteByte('-')
		case r == '.' || r == '-' || r == '_' || unicode.IsLetter(r) || unicode.IsDigit(r):
			b.WriteRune(r)
		}
	}
	if b.Len() == 0 {
		return "conta"
	}
	return b.String()
}
