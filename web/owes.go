package web

// Inadimplência (docs/web.md): who owes across every run the user may see,
// from each run's ledger through conciliacao.WhoOwes (the reconciliation's
// own "who owes"), with filters, totals, an XLSX export and the actions of
// actions.go on the payers picked.

import (
	"context"
	"fmt"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/xuri/excelize/v2"

	"remessa/pipeline/status"
	"remessa/reports/conciliacao"
	"remessa/rules"
)

// inadFilter is the page's filter (the query string).
type inadFilter struct {
	Run     int64
	Account int64
	Month   string // YYYY-MM of the oldest overdue charge
	MinDays int    // at least this many days late
}

func inadFilterOf(r *http.Request) inadFilter {
	var f inadFilter
	f.Run, _ = strconv.ParseInt(r.FormValue("execucao"), 10, 64)
	f.Account, _ = strconv.ParseInt(r.FormValue("conta"), 10, 64)
	if _, err := time.Parse("2006-01", r.FormValue("mes")); err == nil {
		f.Month = r.FormValue("mes")
	}
	if n, err := strconv.Atoi(r.FormValue("dias")); err == nil && n > 0 && n < 100000 {
		f.MinDays = n
	}
	return f
}

func (f inadFilter) query() string {
	v := url.Values{}
	if f.Run > 0 {
		v.Set("execucao", strconv.FormatInt(f.Run, 10))
	}
	if f.Account > 0 {
		v.Set("conta", strconv.FormatInt(f.Account, 10))
	}
	if f.Month != "" {
		v.Set("mes", f.Month)
	}
	if f.MinDays > 0 {
		v.Set("dias", strconv.Itoa(f.MinDays))
	}
	return v.Encode()
}

// inadRow is one payer who owes, with the run they owe in.
type inadRow struct {
	conciliacao.Debtor
	RunID   int64
	RunName string
	Account string
	Value   string // the checkbox's value: run id and key
}

// inadRun is a run the page read, with when its ledger was last synced.
type inadRun struct {
	ID       int64
	Name     string
	Account  string
	SyncedAt string
	Debtors  int
}

// inadView is the page's data.
type inadView struct {
	Filter   inadFilter
	Query    string
	Rows     []inadRow
	Runs     []inadRun // the runs read, for the filter and their sync times
	Accounts []Account
	Months   []string
	Total    conciliacao.Debtor // the sums (Overdue, Face, FineInterest, Short, Total)
	Kinds    []string
	Tomorrow string
	Created  []int64 // actions just planned from here
}

// whoOwes reads who owes in every finished run u may see, filtered.
func (s *Server) whoOwes(ctx context.Context, u User, f inadFilter) (*inadView, error) {
	acc := s.accountFilter(ctx, u)
	rows, err := s.db.QueryContext(ctx, `SELECT r.id FROM runs r WHERE `+acc.where("r.account_id")+
		` AND r.status IN ('done', 'problems') ORDER BY r.id DESC LIMIT 500`, acc.args...)
	if err != nil {
		return nil, err
	}
	var ids []int64
	for rows.Next() {
		var id int64
		if rows.Scan(&id) == nil {
			ids = append(ids, id)
		}
	}
	rows.Close()
	v := &inadView{Filter: f, Query: f.query(), Kinds: actionKinds}
	v.Accounts, _ = s.accounts(ctx, u)
	months := map[string]bool{}
	for _, id := range ids {
		rec, err := s.loadRun(ctx, id)
		if err != nil {
			continue
		}
		if _, err := os.Stat(filepath.Join(rec.Dir, "results.json")); err != nil {
			continue
		}
		// the ledger as last seen: seeded from the results when the run
		// was never synced (its charges open, overdue once past due)
		if err := ledgerCharges(ctx, rec.Dir, s.now(), func(*status.Charge) error { return nil }); err != nil {
			logOf(ctx, s.log).Error().Err(err).Int64("execucao", id).Msg("inadimplência")
			continue
		}
		asOf := status.ServiceNow(ctx, rec.Dir, s.now())
		ds, err := conciliacao.WhoOwes(ctx, rec.Dir, asOf)
		if err != nil {
			logOf(ctx, s.log).Error().Err(err).Int64("execucao", id).Msg("inadimplência")
			continue
		}
		or := inadRun{ID: rec.ID, Name: rec.Name, Account: rec.Account, SyncedAt: lastSync(ctx, rec.Dir)}
		for _, d := range ds {
			if d.OldestDue != "" {
				months[d.OldestDue[:7]] = true
			}
			if (f.Run > 0 && f.Run != rec.ID) || (f.Account > 0 && f.Account != rec.AccountID) ||
				(f.Month != "" && !strings.HasPrefix(d.OldestDue, f.Month)) || d.DaysLate < f.MinDays {
				continue
			}
			or.Debtors++
			v.Rows = append(v.Rows, inadRow{Debtor: d, RunID: rec.ID, RunName: rec.Name, Account: rec.Account, Value: fmt.Sprintf("%d|%s", rec.ID, d.Key)})
			t := &v.Total
			t.Overdue += d.Overdue
			t.Face += d.Face
			t.FineInterest += d.FineInterest
			t.Short += d.Short
			t.Total += d.Total
		}
		v.Runs = append(v.Runs, or)
	}
	ds := make([]conciliacao.Debtor, len(v.Rows))
	byKey := map[string]inadRow{}
	for i, r := range v.Rows {
		ds[i] = r.Debtor
		ds[i].Key = r.Value // unique across runs while sorting
		byKey[r.Value] = r
	}
	conciliacao.SortDebtors(ds)
	for i, d := range ds {
		v.Rows[i] = byKey[d.Key]
	}
	v.Months = sortedKeys(months)
	v.Tomorrow = rules.FormatISODate(rules.Today(s.now()).AddDate(0, 0, 1))
	return v, nil
}

// lastSync is when the run's ledger was last brought up to date from its
// service, in São Paulo time ("" when never).
func lastSync(ctx context.Context, dir string) string {
	l, err := status.OpenLedger(dir)
	if err != nil {
		return ""
	}
	defer l.Close()
	c, ok := l.LastClock(ctx)
	if !ok {
		return ""
	}
	return c.Local.In(rules.SaoPaulo).Format("02/01/2006 15:04")
}

// owesPage lists who owes.
func (s *Server) owesPage(w http.ResponseWriter, r *http.Request, ss *session) {
	s.renderOwes(w, r, ss, "", http.StatusOK)
}

func (s *Server) renderOwes(w http.ResponseWriter, r *http.Request, ss *session, msg string, code int) {
	v, err := s.whoOwes(r.Context(), ss.User, inadFilterOf(r))
	if err != nil {
		logOf(r.Context(), s.log).Error().Err(err).Msg("inadimplência")
		s.fail(w, r, http.StatusInternalServerError, msgInternal)
		return
	}
	for _, part := range strings.Split(r.URL.Query().Get("acoes"), ",") {
		if id, err := strconv.ParseInt(part, 10, 64); err == nil && id > 0 {
			v.Created = append(v.Created, id)
		}
	}
	p := s.page(r, ss, tr(langOf(r), "inad.title"), v)
	p.Error, p.Status = msg, code
	s.render(w, "inadimplencia", p)
}

// owesXLSX exports the page's list as a workbook (text cells for text,
// numbers for money and days).
func (s *Server) owesXLSX(w http.ResponseWriter, r *http.Request, ss *session) {
	v, err := s.whoOwes(r.Context(), ss.User, inadFilterOf(r))
	if err != nil {
		s.fail(w, r, http.StatusInternalServerError, msgInternal)
		return
	}
	lang := langOf(r)
	f := excelize.NewFile()
	defer f.Close()
	sheet := tr(lang, "inad.title")
	f.SetSheetName(f.GetSheetName(0), sheet)
	heads := []string{"inad.col.run", "col.account", "val.row", "run.key", "run.payer", "inad.col.email", "inad.col.phone", "inad.col.parcels",
		"inad.col.face", "inad.col.fine", "inad.col.short", "inad.col.total", "inad.col.days", "inad.col.oldest"}
	for i, h := range heads {
		c, _ := excelize.CoordinatesToCellName(i+1, 1)
		f.SetCellStr(sheet, c, tr(lang, h))
	}
	money, _ := f.NewStyle(&excelize.Style{NumFmt: 4}) // #,##0.00
	cell := func(col, row int) string { c, _ := excelize.CoordinatesToCellName(col, row); return c }
	for i, d := range v.Rows {
		n := i + 2
		parcels := make([]string, len(d.Parcels))
		for k, p := range d.Parcels {
			parcels[k] = strconv.Itoa(p)
		}
		f.SetCellStr(sheet, cell(1, n), d.RunName)
		f.SetCellStr(sheet, cell(2, n), d.Account)
		f.SetCellInt(sheet, cell(3, n), int64(d.SourceRow))
		f.SetCellStr(sheet, cell(4, n), d.Key)
		f.SetCellStr(sheet, cell(5, n), d.Payer)
		f.SetCellStr(sheet, cell(6, n), d.Email)
		f.SetCellStr(sheet, cell(7, n), d.Phone)
		f.SetCellStr(sheet, cell(8, n), strings.Join(parcels, ", "))
		for k, cents := range []int64{d.Face, d.FineInterest, d.Short, d.Total} {
			f.SetCellFloat(sheet, cell(9+k, n), float64(cents)/100, 2, 64)
			f.SetCellStyle(sheet, cell(9+k, n), cell(9+k, n), money)
		}
		f.SetCellInt(sheet, cell(13, n), int64(d.DaysLate))
		f.SetCellStr(sheet, cell(14, n), rules.FormatDate(lang, d.OldestDue))
	}
	n := len(v.Rows) + 2
	f.SetCellStr(sheet, cell(1, n), tr(lang, "inad.total"))
	for k, cents := range []int64{v.Total.Face, v.Total.FineInterest, v.Total.Short, v.Total.Total} {
		f.SetCellFloat(sheet, cell(9+k, n), float64(cents)/100, 2, 64)
		f.SetCellStyle(sheet, cell(9+k, n), cell(9+k, n), money)
	}
	w.Header().Set("Content-Type", contentTypes[".xlsx"])
	w.Header().Set("Content-Disposition", "attachment; filename*=UTF-8''"+url.PathEscape("inadimplencia-"+rules.Today(s.now()).Format("2006-01-02")+".xlsx"))
	if err := f.Write(w); err != nil {
		logOf(r.Context(), s.log).Error().Err(err).Msg("inadimplência xlsx")
	}
}

// owesAction plans the chosen action on the payers picked: one desk action
// per run (an action job acts on one run), each with its own plan page.
func (s *Server) owesAction(w http.ResponseWriter, r *http.Request, ss *session) {
	lang := langOf(r)
	r.ParseForm()
	byRun := map[int64][]string{}
	var order []int64
	for _, v := range r.PostForm["devedor"] {
		idS, key, ok := strings.Cut(v, "|")
		id, err := strconv.ParseInt(idS, 10, 64)
		if !ok || err != nil || key == "" {
			continue
		}
		if _, seen := byRun[id]; !seen {
			order = append(order, id)
		}
		byRun[id] = append(byRun[id], key)
	}
	if len(order) == 0 {
		s.renderOwes(w, r, ss, tr(lang, "inad.nopick"), http.StatusBadRequest)
		return
	}
	acc := s.accountFilter(r.Context(), ss.User)
	var created []string
	var firstID int64
	for _, runID := range order {
		rec, err := s.loadRun(r.Context(), runID)
		if err != nil || !acc.allows(rec.AccountID) || !runFinished(rec.Status) {
			s.renderOwes(w, r, ss, tr(lang, "err.notfound"), http.StatusNotFound)
			return
		}
		spec, msg := s.selectionSpec(r, rec, byRun[runID])
		if msg != "" {
			s.renderOwes(w, r, ss, msg, http.StatusBadRequest)
			return
		}
		id, msg, code := s.newDeskAction(r, ss, rec, spec, r.FormValue("acao"), nil)
		if msg != "" {
			s.renderOwes(w, r, ss, msg, code)
			return
		}
		if firstID == 0 {
			firstID = id
		}
		created = append(created, strconv.FormatInt(id, 10))
	}
	if len(created) == 1 {
		http.Redirect(w, r, fmt.Sprintf("/acoes/%d", firstID), http.StatusSeeOther)
		return
	}
	http.Redirect(w, r, "/inadimplencia?acoes="+strings.Join(created, ","), http.StatusSeeOther)
}
