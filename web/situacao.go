package web

import (
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"time"

	"remessa/pipeline/status"
	"remessa/reports/conciliacao"
	"remessa/rules"
)

// refreshStatus brings a finished run's charges up to date from its
// service (`remessa status`) and writes the reconciliation beside its
// reports.
func (s *Server) refreshStatus(w http.ResponseWriter, r *http.Request, ss *session) {
	rec := s.drivableRun(w, r, ss)
	if rec == nil {
		return
	}
	ctx := r.Context()
	if !runFinished(rec.Status) {
		http.Redirect(w, r, fmt.Sprintf("/execucoes/%d", rec.ID), http.StatusSeeOther)
		return
	}
	ro, cleanup, err := s.runOptions(ctx, rec)
	if err != nil {
		s.fail(w, r, http.StatusBadGateway, fmt.Sprintf(tr(langOf(r), "sit.failed"), err))
		return
	}
	defer cleanup()
	ro.Observe = nil
	sum, err := status.Sync(ctx, rec.Dir, status.Options{Run: ro, Now: s.cfg.Now})
	if err != nil {
		logOf(r.Context(), s.log).Error().Err(err).Int64("execucao", rec.ID).Msg("situação")
		s.fail(w, r, http.StatusBadGateway, fmt.Sprintf(tr(langOf(r), "sit.failed"), err))
		return
	}
	if _, _, err := conciliacao.WriteRun(ctx, rec.Dir, sum.Today(), "pt"); err != nil {
		s.fail(w, r, http.StatusInternalServerError, msgInternal)
		return
	}
	s.audit(ctx, ss.User.ID, "situacao_atualizada", rec.RunID)
	http.Redirect(w, r, fmt.Sprintf("/execucoes/%d?ok=situacao#situacao", rec.ID), http.StatusSeeOther)
}

// situationView is what the run page shows of the reconciliation.
type situationView struct {
	AsOf     string
	SyncedAt string
	Totals   conciliacao.Amounts
	OK       bool
	Problems []string
	Aging    []agingRow
	// who owes (quemdeve.go)
	Owes      []owesRow
	OwesCount int
	OwesTotal int64
	OwesMore  int
	// OwesFirst are the rows shown, OwesFolded those behind "ver todos"
	OwesFirst, OwesFolded []owesRow
	OwesShown             int
}

type agingRow struct {
	Bucket string
	Cents  int64
	Count  int
}

// situation reads the run's last reconciliation (conciliacao.json), if any.
func situation(dir string) *situationView {
	f, err := os.Open(filepath.Join(dir, "conciliacao.json"))
	if err != nil {
		return nil
	}
	defer f.Close()
	var rc conciliacao.Reconciliation
	if err := json.NewDecoder(f).Decode(&rc); err != nil {
		return nil
	}
	v := &situationView{AsOf: rc.AsOf, SyncedAt: rc.SyncedAt, Totals: rc.Totals, OK: rc.Reconcile.OK, Problems: rc.Reconcile.Problems}
	if t, err := time.Parse(time.RFC3339Nano, rc.SyncedAt); err == nil {
		v.SyncedAt = t.In(rules.SaoPaulo).Format("02/01/2006 15:04")
	}
	for _, b := range conciliacao.Buckets {
		if a, ok := rc.Aging[b]; ok {
			v.Aging = append(v.Aging, agingRow{Bucket: b, Cents: a.Open + a.Overdue, Count: a.Charges})
		}
	}
	v.owes(rc.WhoOwes)
	return v
}
