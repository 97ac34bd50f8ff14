package web

import (
	"archive/zip"
	"bytes"
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"remessa/rules"
	"remessa/sandbox/control"
)

// TestBrowserDeskActions is the secretary's month in a real browser: after
// the school's carnets are issued (and one parcel paid), she cancels the
// remaining parcels of one student, moves one parcel of another by five
// days, downloads the second copies of two students as a zip, and sees the
// run page change (the cancelled amount, the list of actions) and who owes;
// a viewer sees the same pages without a button to act. Every page is
// photographed at 1280 and 390 px.
func TestBrowserDeskActions(t *testing.T) {
	t.Parallel()
	ctx0 := context.Background()
	srv := btServer(t)
	chromiumPath(t)
	for _, u := range []struct {
		name string
		role Role
	}{{"secretaria", RoleOperator}, {"diretora", RoleViewer}} {
		if _, err := srv.createUser(ctx0, u.name, u.name, "senha-da-"+u.name, u.role); err != nil {
			t.Fatal(err)
		}
	}
	rec, res := escolaRun(t, srv, login(t, srv, "admin", testAdminPassword))
	rn, err := srv.embedded()
	if err != nil {
		t.Fatal(err)
	}
	a, b := res.Rows[0], res.Rows[1]
	if _, err := sandboxControl(t, rn.URL).PayParcel(ctx0, a.CarnetID, 1, control.PayRequest{}, rn.PayeeCode); err != nil {
		t.Fatal(err)
	}
	runPath := fmt.Sprintf("/execucoes/%d", rec.ID)
	lastAction := func() int64 {
		var id int64
		srv.db.QueryRow(`SELECT max(id) FROM desk_actions`).Scan(&id)
		return id
	}
	confirmAndWait := func(ctx context.Context, name string) int64 {
		t.Helper()
		id := lastAction()
		browserClick(t, ctx, "#confirmar-acao")
		if act := waitAction(t, srv, id, 60*time.Second); act.Status != "done" {
			t.Fatalf("%s ended %s: %s", name, act.Status, act.Message)
		}
		// the page reloads itself every 2 s while the action runs
		browserWait(t, ctx, "#itens")
		return id
	}

	// 1. cancel the remaining parcels of student a, 2. move parcel 3 of b
	ctx := newBrowserFor(t, 4*time.Minute)
	errs := browserErrors(t, ctx)
	browserAcceptLanguage(t, ctx, "pt-BR,pt;q=0.9")
	browserLogin(t, ctx, srv, "secretaria", "senha-da-secretaria")
	browserGo(t, ctx, srv.URL+runPath)
	browserClick(t, ctx, "#agir")
	browserBothWidths(t, ctx, "01-selecao")
	browserTap(t, ctx, fmt.Sprintf("input[name=chave][value=%q]", a.Key))
	browserTap(t, ctx, "input[name=acao][value=cancel]")
	browserClick(t, ctx, "#planejar")
	if got := browserText(t, ctx, "[data-count=charges]"); got != "11" {
		t.Fatalf("cancel plan: %s charges, want 11", got)
	}
	if !strings.Contains(browserText(t, ctx, "#nao-se-aplica"), "já paga") {
		t.Errorf("the plan does not say parcel 1 is paid")
	}
	browserBothWidths(t, ctx, "02-plano-cancelar")
	confirmAndWait(ctx, "cancel")
	browserBothWidths(t, ctx, "03-resultado-cancelar")

	browserGo(t, ctx, srv.URL+runPath+"/acoes/nova?busca="+b.Key)
	browserTap(t, ctx, fmt.Sprintf("input[name=chave][value=%q]", b.Key))
	browserType(t, ctx, "input[name=parcelas]", "3")
	browserTap(t, ctx, "input[name=acao][value=change_due_date]")
	browserTap(t, ctx, "input[name=modo][value=dias]")
	browserType(t, ctx, "input[name=dias]", "5")
	browserClick(t, ctx, "#planejar")
	due, _ := rules.ParseISODate(b.Parcels[2].DueDate)
	moved := due.AddDate(0, 0, 5)
	if got := browserText(t, ctx, "#muda"); !strings.Contains(got, moved.Format("02/01/2006")) {
		t.Fatalf("move plan does not show %s: %q", moved.Format("02/01/2006"), got)
	}
	browserBothWidths(t, ctx, "04-plano-vencimento")
	confirmAndWait(ctx, "move")
	browserCheckConsole(t, errs)

	// 3. second copies of two students, as a zip; the run page changed
	ctx = newBrowserFor(t, 4*time.Minute)
	errs = browserErrors(t, ctx)
	browserAcceptLanguage(t, ctx, "pt-BR,pt;q=0.9")
	browserLogin(t, ctx, srv, "secretaria", "senha-da-secretaria")
	browserGo(t, ctx, srv.URL+runPath+"/acoes/nova")
	keys := []string{res.Rows[2].Key, res.Rows[3].Key}
	for _, k := range keys {
		browserTap(t, ctx, fmt.Sprintf("input[name=chave][value=%q]", k))
	}
	browserTap(t, ctx, "input[name=acao][value=second_copy]")
	browserClick(t, ctx, "#planejar")
	id := confirmAndWait(ctx, "second copy")
	browserBothWidths(t, ctx, "05-segundas-vias")
	status, ctype, zb := fetchBytes(t, ctx, fmt.Sprintf("/acoes/%d/arquivos/segundas-vias.zip", id))
	zr, err := zip.NewReader(bytes.NewReader(zb), int64(len(zb)))
	if status != 200 || ctype != "application/zip" || err != nil || len(zr.File) != 2 {
		t.Fatalf("zip: %d %s %v", status, ctype, err)
	}
	for _, f := range zr.File {
		rc, _ := f.Open()
		head := make([]byte, 4)
		rc.Read(head)
		rc.Close()
		if string(head) != "%PDF" {
			t.Errorf("%s in the zip is not a PDF", f.Name)
		}
	}
	browserGo(t, ctx, srv.URL+runPath)
	var cancelled int64
	for _, p := range a.Parcels[1:] {
		cancelled += p.ValueCents
	}
	if got := browserText(t, ctx, "[data-sit=cancelled]"); got != rules.FormatBRL(cancelled) {
		t.Errorf("the run page shows %s cancelled, want %s", got, rules.FormatBRL(cancelled))
	}
	if n := browserEval[int](t, ctx, `document.querySelectorAll("#acoes tr[data-acao]").length`); n != 3 {
		t.Errorf("the run page lists %d actions, want 3", n)
	}
	browserBothWidths(t, ctx, "06-execucao-depois")
	// ten days after parcel 1's due date (the 10th of next month: twenty
	// days on, what this once did, pass it only after the 20th of a
	// month), after "Atualizar situação": who owes is everyone but student a
	due1, err := time.Parse("2006-01-02", b.Parcels[0].DueDate)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := sandboxControl(t, rn.URL).Advance(ctx0, control.AdvanceRequest{To: due1.AddDate(0, 0, 10).Format("2006-01-02") + "T10:00:00-03:00"}); err != nil {
		t.Fatal(err)
	}
	if st := browserClick(t, ctx, "form[action$='/situacao'] button"); st != 200 || !strings.Contains(browserPath(t, ctx), "ok=situacao") {
		t.Fatalf("Atualizar situação: status %d at %s: %s", st, browserPath(t, ctx), browserText(t, ctx, "main"))
	}
	browserGo(t, ctx, srv.URL+"/inadimplencia")
	var face int64
	for _, row := range res.Rows[1:] {
		face += row.Parcels[0].ValueCents
	}
	if got := browserText(t, ctx, "[data-count=payers]"); got != "39" {
		t.Errorf("who owes: %s payers, want 39 (every student but the one cancelled)", got)
	}
	if got := browserText(t, ctx, "[data-count=face]"); got != rules.FormatBRL(face) {
		t.Errorf("who owes: %s overdue, want %s (parcel 1 of 39 students)", got, rules.FormatBRL(face))
	}
	if browserHas(t, ctx, fmt.Sprintf("#quem-deve tr[data-key=%q]", a.Key)) {
		t.Errorf("student %s, whose parcels are paid or cancelled, is listed as owing", a.Key)
	}
	browserBothWidths(t, ctx, "07-inadimplencia")
	status, ctype, xb := fetchBytes(t, ctx, "/inadimplencia/planilha")
	if status != 200 || !strings.Contains(ctype, "spreadsheetml") || !bytes.HasPrefix(xb, []byte("PK")) {
		t.Errorf("who owes XLSX: %d %s", status, ctype)
	}
	// from there, the second copy of one payer's overdue parcel
	browserTap(t, ctx, fmt.Sprintf("input[name=devedor][value=\"%d|%s\"]", rec.ID, b.Key))
	browserClick(t, ctx, "#planejar")
	if got := browserText(t, ctx, "[data-count=charges]"); got != "1" {
		t.Errorf("second copy of %s's overdue parcel from who owes: %s charges, want 1", b.Key, got)
	}
	browserBothWidths(t, ctx, "07b-plano-da-inadimplencia")
	browserCheckConsole(t, errs)

	// a viewer: the same pages, no button to act
	ctx = newBrowserFor(t, 4*time.Minute)
	errs = browserErrors(t, ctx)
	browserAcceptLanguage(t, ctx, "pt-BR,pt;q=0.9")
	browserLogin(t, ctx, srv, "diretora", "senha-da-diretora")
	browserGo(t, ctx, srv.URL+runPath)
	if browserHas(t, ctx, "#agir") || !browserHas(t, ctx, "#acoes tr[data-acao]") {
		t.Errorf("viewer's run page: act button %v, actions listed %v", browserHas(t, ctx, "#agir"), browserHas(t, ctx, "#acoes tr[data-acao]"))
	}
	browserBothWidths(t, ctx, "08-leitora-execucao")
	browserGo(t, ctx, fmt.Sprintf("%s/acoes/%d", srv.URL, id))
	if browserHas(t, ctx, "#confirmar-card") || !browserHas(t, ctx, "#itens") {
		t.Errorf("viewer's action page shows the confirmation, or not the result")
	}
	browserBothWidths(t, ctx, "09-leitora-acao")
	browserGo(t, ctx, srv.URL+"/inadimplencia")
	if browserHas(t, ctx, "input[name=devedor]") || browserHas(t, ctx, "#planejar") {
		t.Errorf("viewer's who-owes page has checkboxes or the action form")
	}
	browserBothWidths(t, ctx, "10-leitora-inadimplencia")
	if got := browserGo(t, ctx, srv.URL+runPath+"/acoes/nova"); got != 403 {
		t.Errorf("viewer opening the selection page: %d, want 403", got)
	}
	browserCheckConsole(t, errs)
}
