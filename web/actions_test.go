package web

import (
	"archive/zip"
	"bytes"
	"context"
	"fmt"
	"net/http"
	"net/url"
	"regexp"
	"strings"
	"testing"
	"time"

	"remessa/pipeline/results"
	"remessa/pipeline/run"
	"remessa/pipeline/run/runtest"
	"remessa/rules"
	"remessa/sandbox/control"
)

// escolaRun issues the school's 40 carnets of 12 parcels on the embedded
// account through the desk, as the admin, and returns the finished run.
func escolaRun(t *testing.T, srv *Server, c *client) (*runRecord, *results.Results) {
	t.Helper()
	return escolaRunDue(t, srv, c, "dia 10 do próximo mês")
}

// waitAction waits until desk action id ends and returns it; it fails at
// the test's deadline. within is what the action takes on a quiet
// machine: taking longer is logged, not failed (under -race on a busy
// machine an action took minutes).
func waitAction(t testing.TB, srv *Server, id int64, within time.Duration) *deskAction {
	t.Helper()
	start, end, logged := time.Now(), testDeadline(t), false
	for {
		a, err := srv.loadAction(context.Background(), id)
		if err != nil {
			t.Fatal(err)
		}
		switch a.Status {
		case "done", "problems", "failed":
			return a
		}
		if !logged && time.Since(start) > within {
			t.Logf("action %d still %s after %s (a busy machine?)", id, a.Status, within)
			logged = true
		}
		if time.Now().After(end) {
			t.Fatalf("action %d still %s at the test's deadline, %s after it started waiting: %s", id, a.Status, time.Since(start).Round(time.Second), a.Message)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

var actionPath = regexp.MustCompile(`^/acoes/(\d+)$`)

// planDeskAction posts a selection and returns the action's id and plan page.
func planDeskAction(t *testing.T, c *client, runID int64, form url.Values) (int64, *response) {
	t.Helper()
	r := c.postForm(fmt.Sprintf("/execucoes/%d/acoes", runID), form)
	m := actionPath.FindStringSubmatch(r.URL.Path)
	if r.Status != http.StatusOK || m == nil {
		t.Fatalf("plan %v: %d at %s: %s", form, r.Status, r.URL.Path, snippet(r.Body, "erro"))
	}
	var id int64
	fmt.Sscanf(m[1], "%d", &id)
	return id, r
}

// snippet is the text around id="name" in a page (for failure messages).
func snippet(body, name string) string {
	i := strings.Index(body, `id="`+name+`"`)
	if i < 0 {
		return fmt.Sprintf("%.400s", body)
	}
	return body[i:min(len(body), i+400)]
}

func count(body, name string) string {
	m := regexp.MustCompile(`data-count="` + name + `">([^<]*)<`).FindStringSubmatch(body)
	if m == nil {
		return ""
	}
	return m[1]
}

// TestDeskActionsHTTP: through the desk's routes, without a browser:
// cancel the open parcels of one student (one parcel already paid is "já
// paga"), confirm twice (one job, nothing cancelled twice), plan the same
// again (nothing to do), move one parcel by 5 days (the same selection
// again moves nothing), second copies as a zip and per row, the run page's
// situation and list of actions, the audit naming the users, bad input,
// and a viewer who sees the pages but cannot act.
func TestDeskActionsHTTP(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	srv := startServer(t)
	c := login(t, srv, "admin", testAdminPassword)
	rec, res := escolaRun(t, srv, c)
	rn, err := srv.embedded()
	if err != nil {
		t.Fatal(err)
	}
	a, b := res.Rows[0], res.Rows[1]
	if _, err := sandboxControl(t, rn.URL).PayParcel(ctx, a.CarnetID, 1, control.PayRequest{}, rn.PayeeCode); err != nil {
		t.Fatal(err)
	}

	// the selection page lists the 40 students
	r := c.get(fmt.Sprintf("/execucoes/%d/acoes/nova", rec.ID))
	if r.Status != http.StatusOK || strings.Count(r.Body, `name="chave"`) != 40 {
		t.Fatalf("selection page: %d, %d checkboxes, want 40", r.Status, strings.Count(r.Body, `name="chave"`))
	}
	// bad input says what is wrong, plans nothing
	r = c.postForm(fmt.Sprintf("/execucoes/%d/acoes", rec.ID), url.Values{"chave": {b.Key}, "acao": {"change_due_date"}, "modo": {"data"}})
	if r.Status != http.StatusBadRequest || !strings.Contains(r.Body, "Escolha a nova data de vencimento") {
		t.Errorf("change_due_date without a date: %d %s", r.Status, snippet(r.Body, "erro"))
	}
	r = c.postForm(fmt.Sprintf("/execucoes/%d/acoes", rec.ID), url.Values{"chave": {b.Key}, "acao": {"cancel"}, "parcelas": {"3, 13"}})
	if r.Status != http.StatusBadRequest || !strings.Contains(r.Body, "números de 1 a 12") {
		t.Errorf("parcel 13: %d %s", r.Status, snippet(r.Body, "erro"))
	}
	r = c.postForm(fmt.Sprintf("/execucoes/%d/acoes", rec.ID), url.Values{"acao": {"cancel"}})
	if r.Status != http.StatusBadRequest || !strings.Contains(r.Body, "Marque ao menos uma linha") {
		t.Errorf("nothing ticked: %d %s", r.Status, snippet(r.Body, "erro"))
	}
	var planned int
	srv.db.QueryRow(`SELECT count(*) FROM desk_actions`).Scan(&planned)
	if planned != 0 {
		t.Errorf("%d actions kept from refused selections", planned)
	}

	// 1. cancel the remaining parcels of student a
	id, r := planDeskAction(t, c, rec.ID, url.Values{"chave": {a.Key}, "acao": {"cancel"}})
	if got := count(r.Body, "charges"); got != "11" {
		t.Fatalf("cancel plan: %s charges, want 11 (12 parcels, 1 paid): %s", got, snippet(r.Body, "muda"))
	}
	if !strings.Contains(r.Body, "não se aplica: já paga") || !strings.Contains(r.Body, "PUT /v1/carnet/:id/cancel") {
		t.Errorf("the plan does not say parcel 1 is paid, or lacks the route")
	}
	r = c.postForm(fmt.Sprintf("/acoes/%d/confirmar", id), nil)
	if r.Status != http.StatusOK {
		t.Fatalf("confirm: %d", r.Status)
	}
	c.postForm(fmt.Sprintf("/acoes/%d/confirmar", id), nil) // a second click
	act := waitAction(t, srv, id, 60*time.Second)
	if act.Status != "done" {
		t.Fatalf("cancel ended %s: %s", act.Status, act.Message)
	}
	var jobs int
	srv.db.QueryRow(`SELECT count(*) FROM river_job WHERE kind = 'remessa_acao'`).Scan(&jobs)
	if jobs != 1 {
		t.Errorf("%d River jobs after two confirmations, want 1", jobs)
	}
	cl := runtest.Client(t, rn)
	cn, err := cl.GetCarnet(ctx, a.CarnetID)
	if err != nil {
		t.Fatal(err)
	}
	for k, pc := range cn.Charges {
		want := "canceled"
		if k == 0 {
			want = "paid"
		}
		if pc.Status != want {
			t.Errorf("carnet %d parcel %d: %s, want %s", a.CarnetID, k+1, pc.Status, want)
		}
	}
	// the same selection planned again: nothing to cancel
	id2, r := planDeskAction(t, c, rec.ID, url.Values{"chave": {a.Key}, "acao": {"cancel"}})
	if got := count(r.Body, "charges"); got != "0" || strings.Count(r.Body, "não se aplica: já cancelada") != 11 || strings.Contains(r.Body, `id="confirmar-acao"`) {
		t.Errorf("cancel again: %s charges, %d \"já cancelada\", confirm button %v", got, strings.Count(r.Body, "não se aplica: já cancelada"),
			strings.Contains(r.Body, `id="confirmar-acao"`))
	}
	if r := c.postForm(fmt.Sprintf("/acoes/%d/confirmar", id2), nil); r.Status != http.StatusBadRequest {
		t.Errorf("confirming an empty plan: %d, want 400", r.Status)
	}
	c.postForm(fmt.Sprintf("/acoes/%d/descartar", id2), nil)

	// 2. move parcel 3 of student b by 5 days, twice
	move := url.Values{"chave": {b.Key}, "acao": {"change_due_date"}, "modo": {"dias"}, "dias": {"5"}, "parcelas": {"3"}}
	id, r = planDeskAction(t, c, rec.ID, move)
	due, _ := rules.ParseISODate(b.Parcels[2].DueDate)
	newDue := due.AddDate(0, 0, 5)
	if got := count(r.Body, "charges"); got != "1" || !strings.Contains(r.Body, newDue.Format("02/01/2006")) {
		t.Fatalf("move plan: %s charges, new date %s shown %v", got, newDue.Format("02/01/2006"), strings.Contains(r.Body, newDue.Format("02/01/2006")))
	}
	c.postForm(fmt.Sprintf("/acoes/%d/confirmar", id), nil)
	if act := waitAction(t, srv, id, 60*time.Second); act.Status != "done" {
		t.Fatalf("move ended %s: %s", act.Status, act.Message)
	}
	id, r = planDeskAction(t, c, rec.ID, move)
	if got := count(r.Body, "charges"); got != "0" || !strings.Contains(r.Body, "já feito pela ação") {
		t.Errorf("the same move again: %s charges, says done before %v", got, strings.Contains(r.Body, "já feito pela ação"))
	}
	c.postForm(fmt.Sprintf("/acoes/%d/descartar", id), nil)
	cn, _ = cl.GetCarnet(ctx, b.CarnetID)
	if got := cn.Charges[2].ExpireAt; got != rules.FormatISODate(newDue) {
		t.Errorf("parcel 3 of %s due %s, want %s", b.Key, got, rules.FormatISODate(newDue))
	}

	// 3. second copies of two students
	keys := []string{res.Rows[2].Key, res.Rows[3].Key}
	id, _ = planDeskAction(t, c, rec.ID, url.Values{"chave": keys, "acao": {"second_copy"}})
	c.postForm(fmt.Sprintf("/acoes/%d/confirmar", id), nil)
	if act := waitAction(t, srv, id, 60*time.Second); act.Status != "done" {
		t.Fatalf("second copy ended %s: %s", act.Status, act.Message)
	}
	r = c.get(fmt.Sprintf("/acoes/%d", id))
	if !strings.Contains(r.Body, "segundas-vias.zip") {
		t.Fatalf("result page lacks the zip")
	}
	r = c.get(fmt.Sprintf("/acoes/%d/arquivos/segundas-vias.zip", id))
	zr, err := zip.NewReader(bytes.NewReader([]byte(r.Body)), int64(len(r.Body)))
	if r.Status != http.StatusOK || err != nil {
		t.Fatalf("zip: %d %v", r.Status, err)
	}
	if len(zr.File) != 2 {
		t.Errorf("zip has %d files, want 2", len(zr.File))
	}
	pdf := fmt.Sprintf("segundas-vias/%s/carne-%d.pdf", keys[0], res.Rows[2].CarnetID)
	if r := c.get(fmt.Sprintf("/acoes/%d/arquivos/%s", id, pdf)); r.Status != http.StatusOK || !strings.HasPrefix(r.Body, "%PDF") {
		t.Errorf("per-row PDF %s: %d", pdf, r.Status)
	}
	for _, bad := range []string{"../../../web.db", "journal.db", "segundas-vias/x/../../journal.db"} {
		if r := c.get(fmt.Sprintf("/acoes/%d/arquivos/%s", id, bad)); r.Status != http.StatusNotFound {
			t.Errorf("download of %s: %d, want 404", bad, r.Status)
		}
	}

	// the run page: the situation counts the 11 cancelled parcels, the actions are listed
	var cancelled int64
	for _, p := range a.Parcels[1:] {
		cancelled += p.ValueCents
	}
	r = c.get(fmt.Sprintf("/execucoes/%d", rec.ID))
	if want := `data-sit="cancelled">` + rules.FormatBRL(cancelled) + `<`; !strings.Contains(r.Body, want) {
		t.Errorf("run page lacks %s", want)
	}
	if n := strings.Count(r.Body, "data-acao="); n != 3 {
		t.Errorf("run page lists %d actions, want 3 (cancel, move, second copy; the empty plans discarded): %s", n, snippet(r.Body, "acoes"))
	}

	// the audit names the users
	var audits int
	srv.db.QueryRow(`SELECT count(*) FROM audit WHERE action = 'acao_confirmada' AND detail LIKE '%confirmada por admin%'`).Scan(&audits)
	if audits != 3 {
		t.Errorf("%d confirmations in the audit naming admin, want 3", audits)
	}

	// a viewer sees, cannot act
	if _, err := srv.createUser(ctx, "leitora", "Leitora", "senha-da-leitora", RoleViewer); err != nil {
		t.Fatal(err)
	}
	v := login(t, srv, "leitora", "senha-da-leitora")
	r = v.get(fmt.Sprintf("/execucoes/%d", rec.ID))
	if r.Status != http.StatusOK || strings.Contains(r.Body, "/acoes/nova") || !strings.Contains(r.Body, "data-acao=") {
		t.Errorf("viewer's run page: %d, action button %v, actions listed %v", r.Status, strings.Contains(r.Body, "/acoes/nova"), strings.Contains(r.Body, "data-acao="))
	}
	r = v.get(fmt.Sprintf("/acoes/%d", id))
	if r.Status != http.StatusOK || strings.Contains(r.Body, "/confirmar") {
		t.Errorf("viewer's action page: %d, confirm form %v", r.Status, strings.Contains(r.Body, "/confirmar"))
	}
	if r := v.postForm(fmt.Sprintf("/execucoes/%d/acoes", rec.ID), url.Values{"chave": {b.Key}, "acao": {"cancel"}}); r.Status != http.StatusForbidden {
		t.Errorf("viewer's plan: %d, want 403", r.Status)
	}
	_ = run.Options{}
}
