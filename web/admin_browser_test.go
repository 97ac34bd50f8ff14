package web

import (
	"strings"
	"testing"
)

// TestBrowserAdmin is the administrator's pages in a real browser: the
// users list, a new operator created with a password the app makes up
// (shown once, then never again), the accounts list and a new account
// with its client credentials (the secret never comes back into a page),
// and the backup page.
// Every page is photographed at 1280 and 390 px.
func TestBrowserAdmin(t *testing.T) {
	t.Parallel()
	srv := btServer(t)
	ctx := newBrowser(t)
	rec := browserErrors(t, ctx)
	browserAcceptLanguage(t, ctx, "pt-BR,pt;q=0.9")
	browserLogin(t, ctx, srv, "admin", testAdminPassword)

	browserGo(t, ctx, srv.URL+"/admin/usuarios")
	browserBothWidths(t, ctx, "admin-01-usuarios")
	browserType(t, ctx, "form[action='/admin/usuarios'] input[name=usuario]", "tesouraria")
	browserType(t, ctx, "form[action='/admin/usuarios'] input[name=nome]", "Tesouraria Central")
	browserSelect(t, ctx, "form[action='/admin/usuarios'] select[name=papel]", string(RoleOperator))
	browserClick(t, ctx, "form[action='/admin/usuarios'] button.btn")
	userPath := browserPath(t, ctx)
	if !strings.HasPrefix(userPath, "/admin/usuarios/") {
		t.Fatalf("after creating a user: %s: %s", userPath, browserText(t, ctx, "main"))
	}
	pw := browserText(t, ctx, "#nova-senha")
	if len(pw) < 12 {
		t.Fatalf("the password made up for the new user is %q", pw)
	}
	browserBothWidths(t, ctx, "admin-02-usuario-criado")
	// shown once: the same page again no longer has it
	browserGo(t, ctx, srv.URL+userPath)
	if browserHas(t, ctx, "#nova-senha") || strings.Contains(browserEval[string](t, ctx, "document.documentElement.outerHTML"), pw) {
		t.Error("the new user's password is shown a second time")
	}
	browserGo(t, ctx, srv.URL+"/admin/usuarios")
	if !strings.Contains(browserText(t, ctx, "main"), "Tesouraria Central") {
		t.Error("the users list does not show the new user")
	}

	const secret = "Client_Secret_browser_5d6e7f"
	browserGo(t, ctx, srv.URL+"/admin/contas")
	browserBothWidths(t, ctx, "admin-03-contas")
	form := "form[action='/admin/contas'] "
	browserType(t, ctx, form+"input[name=nome]", "Loja Centro")
	browserSelect(t, ctx, form+"select[name=servico]", "production")
	browserType(t, ctx, form+"input[name=base_url]", "https://cobrancas.exemplo.com.br")
	browserType(t, ctx, form+"input[name=pix_base_url]", "https://pix.exemplo.com.br")
	browserType(t, ctx, form+"input[name=client_id]", "Client_Id_browser_1234")
	browserType(t, ctx, form+"input[name=client_secret]", secret)
	browserClick(t, ctx, form+"button.btn")
	accPath := browserPath(t, ctx)
	if !strings.HasPrefix(accPath, "/admin/contas/") {
		t.Fatalf("after creating an account: %s: %s", accPath, browserText(t, ctx, "main"))
	}
	// the account's notification addresses: on this page's address, with
	// the warning that the desk does not know its public one
	if txt := browserText(t, ctx, "#notificacoes"); !strings.Contains(txt, srv.URL+NotifyPath) || !strings.Contains(txt, srv.URL+PixPath) ||
		!strings.Contains(txt, "--public-url") {
		t.Errorf("the account page's notifications block: %q", txt)
	}
	browserBothWidths(t, ctx, "admin-04-conta-criada")
	// the embedded account: its runs name the desk by themselves
	browserGo(t, ctx, srv.URL+"/admin/contas/1")
	if txt := browserText(t, ctx, "#notificacoes"); !strings.Contains(txt, "avisam a mesa sozinhas") || !strings.Contains(txt, srv.URL+NotifyPath) {
		t.Errorf("the embedded account's notifications block: %q", txt)
	}
	browserBothWidths(t, ctx, "admin-04b-conta-embutida")
	browserGo(t, ctx, srv.URL+accPath)
	if got := browserEval[string](t, ctx, "document.querySelector('input[name=nome]').value"); got != "Loja Centro" {
		t.Errorf("the account page shows the name %q", got)
	}
	for _, p := range []string{accPath, "/admin/contas"} {
		browserGo(t, ctx, srv.URL+p)
		if strings.Contains(browserEval[string](t, ctx, "document.documentElement.outerHTML"), secret) {
			t.Errorf("%s shows the client secret", p)
		}
	}
	// the list, now with the new account's addresses
	if !strings.Contains(browserText(t, ctx, "#contas"), "https://pix.exemplo.com.br") {
		t.Error("the accounts list does not show the new account's Pix address")
	}
	browserBothWidths(t, ctx, "admin-05-contas-com-loja")

	// the backup page, reached from the menu
	browserClick(t, ctx, "a[href='/admin/backup']")
	if p := browserPath(t, ctx); p != "/admin/backup" {
		t.Fatalf("the menu's Backup went to %s", p)
	}
	if txt := browserText(t, ctx, "main"); !strings.Contains(txt, "Baixar backup") || !strings.Contains(txt, "remessa restore") {
		t.Errorf("the backup page lacks its button or the restore command: %s", txt)
	}
	browserBothWidths(t, ctx, "admin-06-backup")
	browserCheckConsole(t, rec)
}
