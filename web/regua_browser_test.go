package web

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/riverqueue/river"
	"github.com/riverqueue/river/rivertype"

	"remessa/internal/smtptest"
	"remessa/pipeline/remind"
	"remessa/sandbox/control"
)

// TestBrowserRegua is the régua in a real browser, as a school would set
// it: the admin opens "Régua de cobrança" from the menu, sets the mail
// server (the password never comes back), writes a message with a
// misspelt field (told which and where), fixes it and sees the preview,
// and turns the suggested default on; the secretary gives one run a régua
// of its own (3 days before by the service's e-mail, 1 day after by the
// school's own), the follow job runs on the day after the due date, and
// the run page shows who was e-mailed; the principal (a viewer) sees the
// same block without a way to change it. Every page at 1280 and 390 px.
func TestBrowserRegua(t *testing.T) {
	t.Parallel()
	ctx0 := context.Background()
	srv := btServer(t)
	chromiumPath(t)
	mb := smtptest.Start(t)
	for _, u := range []struct {
		name string
		role Role
	}{{"secretaria", RoleOperator}, {"diretora", RoleViewer}} {
		if _, err := srv.createUser(ctx0, u.name, u.name, "senha-da-"+u.name, u.role); err != nil {
			t.Fatal(err)
		}
	}
	rn, err := srv.embedded()
	if err != nil {
		t.Fatal(err)
	}
	ctl := sandboxControl(t, rn.URL)
	if _, err := ctl.Advance(ctx0, control.AdvanceRequest{To: "2027-02-22T09:00:00-03:00"}); err != nil {
		t.Fatal(err)
	}
	id := smallDeskRun(t, srv, login(t, srv, "admin", testAdminPassword))
	runPath := fmt.Sprintf("/execucoes/%d", id)

	// the admin
	ctx := newBrowserFor(t, 3*time.Minute)
	errs := browserErrors(t, ctx)
	browserAcceptLanguage(t, ctx, "pt-BR,pt;q=0.9")
	browserLogin(t, ctx, srv, "admin", testAdminPassword)
	browserClick(t, ctx, "header nav a[href='/admin/regua']")
	if !browserHas(t, ctx, "[data-regua=sugestao]") || browserEval[bool](t, ctx, `document.querySelector("input[name=ligada]").checked`) {
		t.Errorf("the first visit should show the suggested régua, off")
	}
	browserBothWidths(t, ctx, "01-regua-admin")
	browserFitsAt(t, ctx, 390, "the desk's régua") // nothing cut or wider than a phone (the "Quando" select was cut)
	browserType(t, ctx, "input[name=host]", "127.0.0.1")
	browserType(t, ctx, "input[name=porta]", strconv.Itoa(mb.Port))
	browserSelect(t, ctx, "select[name=seguranca]", "starttls")
	browserType(t, ctx, "input[name=remetente]", "Escola Aquarela <cobranca@escola.example.com>")
	browserType(t, ctx, "input[name=usuario]", smtptest.User)
	browserType(t, ctx, "input[name=senha]", smtptest.Password)
	browserSelect(t, ctx, "textarea[name=ca]", mb.CAPEM)
	browserClick(t, ctx, "#salvar-smtp")
	if !browserHas(t, ctx, "[data-stored=senha]") || browserEval[string](t, ctx, `document.querySelector("input[name=senha]").value`) != "" {
		t.Errorf("after saving the server the page should say a password is stored and not show it")
	}
	if strings.Contains(browserEval[string](t, ctx, "document.documentElement.outerHTML"), smtptest.Password) {
		t.Errorf("the page carries the SMTP password")
	}
	// a misspelt field in the message
	browserType(t, ctx, "input[name=assunto]", "Mensalidade de {{ .Nomee }}")
	browserClick(t, ctx, "#salvar-mensagem")
	if got := browserText(t, ctx, "[data-field=assunto]"); !strings.Contains(got, "modelo inválido") || !strings.Contains(got, "Nomee") {
		t.Errorf("the misspelt field: %q", got)
	}
	browserBothWidths(t, ctx, "02-regua-mensagem-erro")
	browserType(t, ctx, "input[name=assunto]", "Mensalidade de {{ .Nome }}: {{ .Valor }}")
	browserClick(t, ctx, "#salvar-mensagem")
	if got := browserText(t, ctx, "[data-previa=assunto]"); got != "Mensalidade de Maria Souza: R$ 306,20" {
		t.Errorf("the preview's subject: %q", got)
	}
	browserTap(t, ctx, "input[name=ligada]")
	browserClick(t, ctx, "#salvar-regua")
	if !browserEval[bool](t, ctx, `document.querySelector("input[name=ligada]").checked`) || browserHas(t, ctx, ".field-error") {
		t.Errorf("the default was not saved on")
	}
	browserBothWidths(t, ctx, "03-regua-admin-salva")
	browserFitsAt(t, ctx, 390, "the desk's régua, saved") // nothing cut or wider than a phone (the "Quando" select was cut)
	browserCheckConsole(t, errs)

	// the secretary: this run's own régua
	ctx = newBrowserFor(t, 3*time.Minute)
	errs = browserErrors(t, ctx)
	browserAcceptLanguage(t, ctx, "pt-BR,pt;q=0.9")
	browserLogin(t, ctx, srv, "secretaria", "senha-da-secretaria")
	browserGo(t, ctx, srv.URL+runPath)
	if got := browserText(t, ctx, "#lembretes [data-regua=fonte]"); got != "Régua padrão da mesa." {
		t.Errorf("the run's régua before: %q", got)
	}
	browserClick(t, ctx, "#configurar-regua")
	browserBothWidths(t, ctx, "04-regua-execucao")
	browserFitsAt(t, ctx, 390, "the run's régua") // nothing cut or wider than a phone (the "Quando" select was cut)
	browserTap(t, ctx, "input[name=modo][value=own]")
	for i, row := range []struct{ days, when, channel string }{{"3", "antes", "service"}, {"1", "depois", "service"}, {"", "depois", "smtp"}, {"", "depois", "smtp"}, {"", "depois", "smtp"}} {
		browserType(t, ctx, fmt.Sprintf("tr[data-passo='%d'] input[name=passo_dias]", i), row.days)
		browserSelect(t, ctx, fmt.Sprintf("tr[data-passo='%d'] select[name=passo_quando]", i), row.when)
		browserSelect(t, ctx, fmt.Sprintf("tr[data-passo='%d'] select[name=passo_canal]", i), row.channel)
	}
	browserClick(t, ctx, "#salvar-regua")
	// the service's e-mail a day after the due date is refused, on its row
	if got := browserText(t, ctx, "[data-field='passo.1']"); !strings.Contains(got, "o serviço só reenvia cobranças em espera") {
		t.Errorf("the +1d step by the service: %q", got)
	}
	browserBothWidths(t, ctx, "05-regua-execucao-erro")
	browserSelect(t, ctx, "tr[data-passo='1'] select[name=passo_canal]", "smtp")
	browserClick(t, ctx, "#salvar-regua")
	if got := browserText(t, ctx, "#lembretes [data-regua=fonte]"); got != "Régua própria desta execução." {
		t.Errorf("the run's régua after: %q", got)
	}

	// the day after the due date (Thursday 04/03, 10:00) the follow job
	// runs: the 3-days-before step passed without a pass (skipped), the
	// +1d e-mail goes to both families: R$ 250,00 + 2 % (5,00) + one day
	// of 0,033 % (0,0825 → 0,08) = R$ 255,08
	if _, err := ctl.Advance(ctx0, control.AdvanceRequest{To: "2027-03-04T10:00:00-03:00"}); err != nil {
		t.Fatal(err)
	}
	w := &followRunWorker{s: srv}
	if err := w.Work(ctx0, &river.Job[FollowRunArgs]{JobRow: &rivertype.JobRow{}, Args: FollowRunArgs{Run: id}}); err != nil {
		t.Fatal(err)
	}
	want := []string{"a1@example.com Mensalidade de Responsável Ana: R$ 255,08", "a2@example.com Mensalidade de Responsável Bruno: R$ 255,08"}
	if got := mb.List(); strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("e-mails: got %q, want %q", got, want)
	}
	rec, _ := srv.loadRun(ctx0, id)
	hist, _ := remind.ReadHistory(ctx0, rec.Dir)
	var states []string
	for _, h := range hist {
		states = append(states, fmt.Sprintf("%s p%d %d %s %s %d", h.RowKey, h.Parcel, h.Offset, h.Channel, h.State, h.AmountCents))
	}
	wantStates := []string{"A1 p1 -3 service skipped 25508", "A1 p1 1 smtp sent 25508", "A2 p1 -3 service skipped 25508", "A2 p1 1 smtp sent 25508"}
	if strings.Join(states, "\n") != strings.Join(wantStates, "\n") {
		t.Errorf("history:\n got %q\nwant %q", states, wantStates)
	}
	browserGo(t, ctx, srv.URL+runPath+"#lembretes")
	if got := browserText(t, ctx, "#lembretes [data-rem=sent]"); got != "Lembretes enviados: 2." {
		t.Errorf("the run page's count: %q", got)
	}
	browserBothWidths(t, ctx, "06-execucao-lembretes")
	browserCheckConsole(t, errs)

	// the principal sees, cannot change
	ctx = newBrowserFor(t, 2*time.Minute)
	errs = browserErrors(t, ctx)
	browserAcceptLanguage(t, ctx, "pt-BR,pt;q=0.9")
	browserLogin(t, ctx, srv, "diretora", "senha-da-diretora")
	browserGo(t, ctx, srv.URL+runPath+"#lembretes")
	if browserHas(t, ctx, "#configurar-regua") || !browserHas(t, ctx, "#lembretes tr[data-state=sent]") {
		t.Errorf("viewer's run page: configure link %v, history shown %v", browserHas(t, ctx, "#configurar-regua"), browserHas(t, ctx, "#lembretes tr[data-state=sent]"))
	}
	browserBothWidths(t, ctx, "07-leitora-lembretes")
	if got := browserGo(t, ctx, srv.URL+runPath+"/regua"); got != 403 {
		t.Errorf("viewer opening the run's régua page: %d, want 403", got)
	}
	if got := browserGo(t, ctx, srv.URL+"/admin/regua"); got != 403 {
		t.Errorf("viewer opening the admin's régua page: %d, want 403", got)
	}
	browserCheckConsole(t, errs)
}
