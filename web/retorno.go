package web

import (
	"bytes"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"time"

	"remessa/pipeline/retorno"
	"remessa/pipeline/status"
	"remessa/reports/conciliacao"
	"remessa/rules"
)

// retornoView is the run page's section of CNAB retornos: those written,
// and the form that writes the next one.
type retornoView struct {
	Files   []retornoRow
	Layout  string // the run's input layout ("" a sheet: the user picks)
	Layouts []string
}

type retornoRow struct {
	NSA    int
	Layout string
	When   string
	Titles int
	Cents  int64
}

// retornos reads what the run page shows of the run's retornos.
func retornos(r *http.Request, dir string) *retornoView {
	v := &retornoView{Layout: retorno.DefaultLayout(r.Context(), dir), Layouts: retorno.Layouts}
	fs, err := retorno.List(r.Context(), dir)
	if err != nil {
		return v
	}
	for _, f := range fs {
		when := f.CreatedAt
		if t, err := time.Parse(time.RFC3339, f.CreatedAt); err == nil {
			when = t.In(rules.SaoPaulo).Format("02/01/2006 15:04")
		}
		v.Files = append(v.Files, retornoRow{NSA: f.NSA, Layout: f.Layout, When: when, Titles: f.Titles, Cents: f.Cents})
	}
	slices.Reverse(v.Files) // the newest first
	return v
}

// makeRetorno writes the run's next retorno (`remessa retorno`: a status
// sync first, then every event not yet in a retorno) and goes back to the
// run page, where it can be downloaded.
func (s *Server) makeRetorno(w http.ResponseWriter, r *http.Request, ss *session) {
	rec := s.drivableRun(w, r, ss)
	if rec == nil {
		return
	}
	lang := langOf(r)
	if !runFinished(rec.Status) {
		http.Redirect(w, r, fmt.Sprintf("/execucoes/%d", rec.ID), http.StatusSeeOther)
		return
	}
	layout := r.PostFormValue("layout")
	if layout != "" && !slices.Contains(retorno.Layouts, layout) {
		s.fail(w, r, http.StatusBadRequest, fmt.Sprintf(tr(lang, "ret.badlayout"), layout))
		return
	}
	ctx := r.Context()
	ro, cleanup, err := s.runOptions(ctx, rec)
	if err != nil {
		s.fail(w, r, http.StatusBadGateway, fmt.Sprintf(tr(lang, "sit.failed"), err))
		return
	}
	defer cleanup()
	ro.Observe = nil
	res, err := retorno.Write(ctx, rec.Dir, retorno.Options{Layout: layout, Sync: true, Status: status.Options{Run: ro, Now: s.cfg.Now}, Lang: lang})
	var le *retorno.LayoutError
	switch {
	case errors.As(err, &le):
		s.fail(w, r, http.StatusBadRequest, le.Msg)
		return
	case err != nil:
		s.log.Error().Err(err).Int64("execucao", rec.ID).Msg("retorno")
		s.fail(w, r, http.StatusBadGateway, fmt.Sprintf(tr(lang, "ret.failed"), err))
		return
	}
	if res.Sync != nil {
		// the sync moved the ledger on: the run page's status follows it
		if _, _, err := conciliacao.WriteRun(ctx, rec.Dir, res.Sync.Today(), "pt"); err != nil {
			s.log.Error().Err(err).Int64("execucao", rec.ID).Msg("conciliação")
		}
	}
	ok := "retorno_vazio"
	if !res.Empty {
		ok = "retorno"
		s.audit(ctx, ss.User.ID, "retorno_gerado", fmt.Sprintf("%s NSA %d", rec.RunID, res.NSA))
		if !res.Check.OK {
			ok = "retorno_divergente"
		}
	}
	http.Redirect(w, r, fmt.Sprintf("/execucoes/%d?ok=%s#retorno", rec.ID, ok), http.StatusSeeOther)
}

// retornoDownload serves retorno NSA of a run, written again from what
// retornos.db recorded (byte for byte the file first written).
func (s *Server) retornoDownload(w http.ResponseWriter, r *http.Request, ss *session) {
	rec := s.runFor(w, r, ss)
	if rec == nil {
		return
	}
	nsa, err := strconv.Atoi(r.PathValue("nsa"))
	if err != nil || nsa < 1 {
		s.fail(w, r, http.StatusNotFound, tr(langOf(r), "err.notfound"))
		return
	}
	var b bytes.Buffer
	if _, err := retorno.Render(r.Context(), rec.Dir, nsa, &b); err != nil {
		if errors.Is(err, retorno.ErrNoSuchRetorno) {
			s.fail(w, r, http.StatusNotFound, tr(langOf(r), "err.notfound"))
			return
		}
		s.log.Error().Err(err).Int64("execucao", rec.ID).Msg("retorno")
		s.fail(w, r, http.StatusInternalServerError, msgInternal)
		return
	}
	name := fmt.Sprintf("%s-%s-RETORNO-%06d.RET", fileSafe(rec.Account), rec.RunID, nsa)
	w.Header().Set("Content-Type", "text/plain; charset=windows-1252")
	w.Header().Set("Content-Disposition", "attachment; filename*=UTF-8''"+url.PathEscape(name))
	w.Write(b.Bytes())
}

// retornoDict holds the texts of the run page's retorno section.
var retornoDict = map[string][2]string{
	"ret.title":                {"Arquivo de retorno (CNAB)", "Retorno file (CNAB)"},
	"ret.intro":                {"O arquivo que o ERP importa para dar baixa no que foi pago: entradas confirmadas (02) e rejeitadas (03), vencimentos alterados (14), liquidações (06) e baixas (09). Antes de gerar, a situação é consultada no serviço; cada acontecimento vai em um só retorno, e o NSA da conta segue sem pular números.", "The file the ERP imports to write off what was paid: entries confirmed (02) and rejected (03), due dates changed (14), settlements (06) and write-offs (09). The status is fetched from the service first; each event goes into one retorno only, and the account's NSA goes on without gaps."},
	"ret.layout":               {"Leiaute", "Layout"},
	"ret.layout.cnab240":       {"CNAB 240 (FEBRABAN)", "CNAB 240 (FEBRABAN)"},
	"ret.layout.cnab400-237":   {"CNAB 400 Bradesco", "CNAB 400 Bradesco"},
	"ret.layout.cnab400-341":   {"CNAB 400 Itaú", "CNAB 400 Itaú"},
	"ret.make":                 {"Gerar retorno", "Write retorno"},
	"ret.none":                 {"Nenhum retorno gerado ainda.", "No retorno written yet."},
	"ret.col.nsa":              {"NSA", "NSA"},
	"ret.col.value":            {"Valor dos títulos", "Titles' value"},
	"ret.col.titles":           {"Ocorrências", "Occurrences"},
	"ret.download":             {"Baixar", "Download"},
	"ret.badlayout":            {"Leiaute %q desconhecido: escolha CNAB 240, CNAB 400 Bradesco ou CNAB 400 Itaú.", "Unknown layout %q: choose CNAB 240, CNAB 400 Bradesco or CNAB 400 Itaú."},
	"ret.failed":               {"Não foi possível gerar o retorno: %v", "Could not write the retorno: %v"},
	"flash.retorno":            {"Retorno gerado: baixe-o na lista abaixo.", "Retorno written: download it from the list below."},
	"flash.retorno_vazio":      {"Nada de novo desde o último retorno: nenhum arquivo gerado.", "Nothing new since the last retorno: no file written."},
	"flash.retorno_divergente": {"Retorno gerado, mas os totais do trailer NÃO conferem: não o importe; avise o suporte.", "Retorno written, but its trailer totals do NOT check: do not import it; tell support."},
}

func init() {
	for k, v := range retornoDict {
		dict[k] = v
	}
}
