package web

import (
	"bytes"
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"html"
	"math/big"
	"net/http"
	"net/url"
	"os"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"software.sslmate.com/src/go-pkcs12"
)

func TestRoleAllowsStrictOrder(t *testing.T) {
	for i, have := range Roles {
		for j, need := range Roles {
			if got := have.Allows(need); got != (i >= j) {
				t.Errorf("%s.Allows(%s) = %v, want %v", have, need, got, i >= j)
			}
		}
		for _, bad := range []Role{"", "root", "Admin"} {
			if have.Allows(bad) {
				t.Errorf("%s.Allows(%q) = true", have, bad)
			}
			if bad.Allows(have) {
				t.Errorf("%q.Allows(%s) = true", bad, have)
			}
		}
	}
	if len(Roles) != 4 || Roles[0] != RoleViewer || Roles[3] != RoleAdmin {
		t.Fatalf("Roles = %v", Roles)
	}
}

var shownPassword = regexp.MustCompile(`id="nova-senha">([^<]+)</code>`)

// createUserShown creates a user through the admin page with a generated
// password and returns the user's id and the password the page showed.
func createUserShown(t *testing.T, admin *client, username string, role Role) (int64, string) {
	t.Helper()
	r := admin.postForm("/admin/usuarios", url.Values{"usuario": {username}, "nome": {"Pessoa " + username}, "papel": {string(role)}})
	if r.Status != http.StatusOK || !strings.HasPrefix(r.URL.Path, "/admin/usuarios/") || r.URL.Query().Get("ok") != "created" {
		t.Fatalf("create %s: status %d at %s\n%.600s", username, r.Status, r.URL, r.Body)
	}
	m := shownPassword.FindStringSubmatch(r.Body)
	if m == nil {
		t.Fatalf("create %s: no password shown", username)
	}
	id, err := strconv.ParseInt(strings.TrimPrefix(r.URL.Path, "/admin/usuarios/"), 10, 64)
	if err != nil {
		t.Fatal(err)
	}
	return id, html.UnescapeString(m[1])
}

func TestAdminCreateUsers(t *testing.T) {
	t.Parallel()
	srv := startServer(t)
	admin := login(t, srv, "admin", testAdminPassword)
	for _, role := range Roles {
		name := "user-" + string(role)
		id, pw := createUserShown(t, admin, name, role)
		if !strings.Contains(admin.get("/admin/usuarios").Body, ">"+name+"</a>") {
			t.Errorf("%s not in the list", name)
		}
		// shown once: the same page again does not show it
		again := admin.get("/admin/usuarios/" + strconv.FormatInt(id, 10))
		if strings.Contains(again.Body, pw) || shownPassword.MatchString(again.Body) {
			t.Errorf("%s: password shown a second time", name)
		}
		u := login(t, srv, name, pw)
		var got string
		srv.db.QueryRow(`SELECT role FROM users WHERE id = ?`, id).Scan(&got)
		if got != string(role) {
			t.Errorf("%s: role %q", name, got)
		}
		if u.get("/admin/usuarios").Status == http.StatusOK != (role == RoleAdmin) {
			t.Errorf("%s: admin page access wrong", name)
		}
	}
	// a typed initial password is used as given and not shown
	r := admin.postForm("/admin/usuarios", url.Values{"usuario": {"bia"}, "nome": {"Bia"}, "papel": {"viewer"}, "senha": {"uma-senha-boa"}})
	if r.Status != http.StatusOK || shownPassword.MatchString(r.Body) {
		t.Fatalf("typed password: status %d, shown %v", r.Status, shownPassword.MatchString(r.Body))
	}
	login(t, srv, "bia", "uma-senha-boa")
	var n int
	srv.db.QueryRow(`SELECT count(*) FROM audit WHERE action = 'usuario.criar'`).Scan(&n)
	if n != 5 {
		t.Errorf("audit has %d user creations, want 5", n)
	}
}

func TestAdminBadUserInput(t *testing.T) {
	t.Parallel()
	srv := startServer(t)
	admin := login(t, srv, "admin", testAdminPassword)
	cases := []struct {
		form url.Values
		want string
	}{
		{url.Values{"usuario": {"Nome Com Espaço"}, "papel": {"viewer"}}, "Nome de usuário inválido"},
		{url.Values{"usuario": {"x"}, "papel": {"viewer"}}, "Nome de usuário inválido"},
		{url.Values{"usuario": {"admin"}, "papel": {"viewer"}}, "Já existe um usuário"},
		{url.Values{"usuario": {"carla"}, "papel": {"dono"}}, "Escolha um papel"},
		{url.Values{"usuario": {"carla"}, "papel": {"viewer"}, "senha": {"curta"}}, "A senha precisa ter de 10 a 72 caracteres"},
		{url.Values{"usuario": {"carla"}, "papel": {"viewer"}, "senha": {strings.Repeat("x", 73)}}, "A senha precisa ter de 10 a 72 caracteres"},
	}
	for _, c := range cases {
		r := admin.postForm("/admin/usuarios", c.form)
		if r.Status != http.StatusBadRequest || !strings.Contains(html.UnescapeString(r.Body), c.want) || !strings.Contains(r.Body, `class="field-error"`) {
			t.Errorf("%v: status %d, want 400 with %q", c.form, r.Status, c.want)
		}
	}
	var n int
	srv.db.QueryRow(`SELECT count(*) FROM users`).Scan(&n)
	if n != 1 {
		t.Errorf("%d users after bad input, want 1", n)
	}
	// the form keeps what was typed (but never the password)
	r := admin.postForm("/admin/usuarios", url.Values{"usuario": {"carla"}, "nome": {"Carla Dias"}, "papel": {"approver"}, "senha": {"curta-pw"}})
	if !strings.Contains(r.Body, `value="Carla Dias"`) || strings.Contains(r.Body, "curta-pw") {
		t.Errorf("re-rendered form lost the name or echoed the password")
	}
	if admin.get("/admin/usuarios/9999").Status != http.StatusNotFound || admin.get("/admin/usuarios/abc").Status != http.StatusNotFound {
		t.Errorf("unknown user is not 404")
	}
}

func TestAdminResetPasswordEndsSessions(t *testing.T) {
	t.Parallel()
	srv := startServer(t)
	admin := login(t, srv, "admin", testAdminPassword)
	id, pw := createUserShown(t, admin, "ana", RoleOperator)
	ana := login(t, srv, "ana", pw)
	path := "/admin/usuarios/" + strconv.FormatInt(id, 10) + "/senha"

	r := admin.postForm(path, url.Values{"senha": {"curta"}})
	if r.Status != http.StatusBadRequest || !strings.Contains(r.Body, "A senha precisa ter") {
		t.Fatalf("short password: status %d", r.Status)
	}
	if !ana.signedIn() {
		t.Fatal("a refused reset ended the session")
	}

	r = admin.postForm(path, url.Values{})
	m := shownPassword.FindStringSubmatch(r.Body)
	if r.Status != http.StatusOK || r.URL.Query().Get("ok") != "password" || m == nil {
		t.Fatalf("reset: status %d at %s, shown %v", r.Status, r.URL, m != nil)
	}
	newPW := html.UnescapeString(m[1])
	if newPW == pw {
		t.Fatal("same password after reset")
	}
	if ana.signedIn() {
		t.Error("old session still works after the reset")
	}
	if _, err := tryLogin(t, srv, "ana", pw); err == nil {
		t.Error("old password still signs in")
	}
	login(t, srv, "ana", newPW)

	// typed password
	r = admin.postForm(path, url.Values{"senha": {"outra-senha-boa"}})
	if r.Status != http.StatusOK || shownPassword.MatchString(r.Body) {
		t.Fatalf("typed reset: status %d", r.Status)
	}
	login(t, srv, "ana", "outra-senha-boa")

	// an admin resetting their own password stays signed in here only
	other := login(t, srv, "admin", testAdminPassword)
	r = admin.postForm("/admin/usuarios/1/senha", url.Values{"senha": {"nova-senha-admin"}})
	if r.Status != http.StatusOK || r.URL.Path != "/admin/usuarios/1" {
		t.Fatalf("own reset: status %d at %s", r.Status, r.URL)
	}
	if !admin.signedIn() || other.signedIn() {
		t.Errorf("own reset: this session %v (want true), other session %v (want false)", admin.signedIn(), other.signedIn())
	}
	if r := admin.get("/admin/usuarios"); r.Status != http.StatusOK {
		t.Errorf("admin page after own reset: %d", r.Status)
	}
}

func TestAdminDisabledUserCannotSignIn(t *testing.T) {
	t.Parallel()
	srv := startServer(t)
	admin := login(t, srv, "admin", testAdminPassword)
	id, pw := createUserShown(t, admin, "davi", RoleApprover)
	davi := login(t, srv, "davi", pw)
	path := "/admin/usuarios/" + strconv.FormatInt(id, 10)
	r := admin.postForm(path, url.Values{"nome": {"Davi"}, "papel": {"approver"}, "desativado": {"1"}})
	if r.Status != http.StatusOK || r.URL.Query().Get("ok") != "saved" {
		t.Fatalf("disable: status %d at %s", r.Status, r.URL)
	}
	if davi.signedIn() {
		t.Error("disabled user's session still works")
	}
	if _, err := tryLogin(t, srv, "davi", pw); err == nil {
		t.Error("disabled user signed in")
	}
	if !strings.Contains(admin.get("/admin/usuarios").Body, "desativado") {
		t.Error("list does not say disabled")
	}
	admin.postForm(path, url.Values{"nome": {"Davi"}, "papel": {"approver"}})
	login(t, srv, "davi", pw)
}

func TestAdminUserAccountLimits(t *testing.T) {
	t.Parallel()
	srv := startServer(t)
	admin := login(t, srv, "admin", testAdminPassword)
	id, _ := createUserShown(t, admin, "eva", RoleOperator)
	r := admin.postMultipart("/admin/contas", url.Values{"nome": {"Loja A"}, "servico": {"sandbox"}})
	if r.Status != http.StatusOK {
		t.Fatalf("create account: %d\n%.500s", r.Status, r.Body)
	}
	accID := strings.TrimPrefix(r.URL.Path, "/admin/contas/")
	path := "/admin/usuarios/" + strconv.FormatInt(id, 10)
	r = admin.postForm(path, url.Values{"nome": {"Eva"}, "papel": {"operator"}, "contas": {accID}})
	if r.Status != http.StatusOK {
		t.Fatalf("limit: %d", r.Status)
	}
	accs, err := srv.accounts(context.Background(), User{ID: id})
	if err != nil || len(accs) != 1 || accs[0].Name != "Loja A" {
		t.Fatalf("eva's accounts: %v %v", accs, err)
	}
	if !strings.Contains(r.Body, `name="contas" value="`+accID+`" checked`) {
		t.Error("the limit is not ticked on the page")
	}
	if !strings.Contains(admin.get("/admin/usuarios").Body, "Loja A") {
		t.Error("the list does not show the limit")
	}
	if r := admin.postForm(path, url.Values{"nome": {"Eva"}, "papel": {"operator"}, "contas": {"999"}}); r.Status != http.StatusBadRequest {
		t.Errorf("unknown account: %d", r.Status)
	}
	admin.postForm(path, url.Values{"nome": {"Eva"}, "papel": {"operator"}})
	if accs, _ := srv.accounts(context.Background(), User{ID: id}); len(accs) != 2 {
		t.Errorf("no limits: %d accounts, want 2", len(accs))
	}
}

func TestAdminLastAdmin(t *testing.T) {
	t.Parallel()
	srv := startServer(t)
	admin := login(t, srv, "admin", testAdminPassword)
	for _, form := range []url.Values{
		{"nome": {"Administrador"}, "papel": {"operator"}},
		{"nome": {"Administrador"}, "papel": {"admin"}, "desativado": {"1"}},
	} {
		r := admin.postForm("/admin/usuarios/1", form)
		if r.Status != http.StatusBadRequest || !strings.Contains(r.Body, "último administrador ativo") {
			t.Errorf("%v: status %d, want 400 about the last admin", form, r.Status)
		}
	}
	var role string
	var disabled int
	srv.db.QueryRow(`SELECT role, disabled FROM users WHERE id = 1`).Scan(&role, &disabled)
	if role != "admin" || disabled != 0 {
		t.Fatalf("last admin changed: %s %d", role, disabled)
	}
	// a disabled admin does not count
	id, pw := createUserShown(t, admin, "chefe", RoleAdmin)
	p := "/admin/usuarios/" + strconv.FormatInt(id, 10)
	admin.postForm(p, url.Values{"papel": {"admin"}, "desativado": {"1"}})
	if r := admin.postForm("/admin/usuarios/1", url.Values{"papel": {"viewer"}}); r.Status != http.StatusBadRequest {
		t.Errorf("demoted with only a disabled admin left: %d", r.Status)
	}
	admin.postForm(p, url.Values{"papel": {"admin"}})
	chefe := login(t, srv, "chefe", pw)
	if r := chefe.postForm("/admin/usuarios/1", url.Values{"papel": {"viewer"}}); r.Status != http.StatusOK {
		t.Fatalf("demote with another admin: %d", r.Status)
	}
	// chefe gives up admin, then admin is the only one again; admin leaves
	// admin to chefe by demoting themselves and lands on the home page
	admin2 := login(t, srv, "admin", testAdminPassword)
	if r := admin2.get("/admin/usuarios"); r.Status != http.StatusForbidden {
		t.Fatalf("viewer on the admin pages: %d", r.Status)
	}
	chefe.postForm("/admin/usuarios/1", url.Values{"papel": {"admin"}})
	if r := admin2.postForm("/admin/usuarios/1", url.Values{"papel": {"operator"}}); r.Status != http.StatusOK || r.URL.Path != "/" {
		t.Fatalf("self-demotion: status %d at %s", r.Status, r.URL.Path)
	}
	if admin.get("/admin/usuarios").Status != http.StatusForbidden {
		t.Error("demoted admin still opens the admin pages")
	}
	if r := chefe.postForm(p, url.Values{"papel": {"operator"}}); r.Status != http.StatusBadRequest {
		t.Errorf("the new last admin demoted themselves: %d", r.Status)
	}
}

// adminRoutePath fills a route pattern's {id} with id.
func adminRoutePath(pattern string, id string) (method, path string) {
	method, path, _ = strings.Cut(pattern, " ")
	return method, strings.ReplaceAll(path, "{id}", id)
}

func TestAdminRoutesNeedAdmin(t *testing.T) {
	t.Parallel()
	srv := startServer(t)
	admin := login(t, srv, "admin", testAdminPassword)
	routes := srv.adminRoutes()
	if len(routes) < 9 {
		t.Fatalf("%d admin routes", len(routes))
	}
	registered := map[string]bool{}
	for _, r := range srv.Routes() {
		registered[r.Pattern] = true
	}
	for _, rt := range routes {
		if rt.role != RoleAdmin {
			t.Errorf("%s needs %s", rt.pattern, rt.role)
		}
		if !registered[rt.pattern] {
			t.Errorf("%s is not registered (extraRoutes)", rt.pattern)
		}
	}
	for _, role := range []Role{RoleViewer, RoleOperator, RoleApprover} {
		_, pw := createUserShown(t, admin, "u-"+string(role), role)
		c := login(t, srv, "u-"+string(role), pw)
		for _, rt := range routes {
			method, path := adminRoutePath(rt.pattern, "1")
			var r *response
			if method == http.MethodGet {
				r = c.get(path)
			} else {
				r = c.postForm(path, url.Values{"usuario": {"intruso"}, "papel": {"admin"}, "nome": {"x"}, "servico": {"sandbox"}})
			}
			if r.Status != http.StatusForbidden {
				t.Errorf("%s: %s %s = %d, want 403", role, method, path, r.Status)
			}
		}
	}
	// signed out: pages go to the sign-in page, changes are refused
	anon := newClient(t, srv)
	for _, rt := range routes {
		method, path := adminRoutePath(rt.pattern, "1")
		if method == http.MethodGet {
			if r := anon.get(path); r.URL.Path != "/entrar" {
				t.Errorf("signed out GET %s ended at %s", path, r.URL.Path)
			}
		} else if r := anon.postForm(path, url.Values{"csrf": {"x"}}); r.Status != http.StatusUnauthorized {
			t.Errorf("signed out POST %s = %d", path, r.Status)
		}
	}
	// an admin without the CSRF token is refused too
	if r := admin.postForm("/admin/usuarios", url.Values{"csrf": {"errado"}, "usuario": {"intruso"}, "papel": {"admin"}}); r.Status != http.StatusForbidden {
		t.Errorf("admin without CSRF: %d", r.Status)
	}
	var n int
	srv.db.QueryRow(`SELECT count(*) FROM users WHERE username = 'intruso'`).Scan(&n)
	if n != 0 {
		t.Error("a refused request created a user")
	}
}

// testP12 makes a PKCS#12 file with a fresh key and a self-signed
// certificate valid until notAfter.
func testP12(t *testing.T, password string, notAfter time.Time) []byte {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(7), Subject: pkix.Name{CommonName: "loja-teste"},
		NotBefore: notAfter.AddDate(-2, 0, 0), NotAfter: notAfter, KeyUsage: x509.KeyUsageDigitalSignature,
		ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth}}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	cert, err := x509.ParseCertificate(der)
	if err != nil {
		t.Fatal(err)
	}
	p12, err := pkcs12.Modern2023.Encode(key, cert, nil, password)
	if err != nil {
		t.Fatal(err)
	}
	return p12
}

func TestAdminAccountCredentialsSealed(t *testing.T) {
	t.Parallel()
	srv := startServer(t)
	ctx := context.Background()
	admin := login(t, srv, "admin", testAdminPassword)
	const (
		clientID  = "Client_Id_f00dcafe1234"
		secret    = "Client_Secret_7c1d9e0f5a2b4c8d"
		p12pw     = "senha-do-p12-9x8y"
		newSecret = "Client_Secret_novo_3e4f5a6b"
	)
	p12 := testP12(t, p12pw, time.Now().AddDate(1, 0, 0))
	r := admin.postMultipart("/admin/contas", url.Values{
		"nome": {"Loja Centro"}, "servico": {"production"},
		"base_url": {"https://cobrancas.exemplo.com.br/"}, "pix_base_url": {"https://pix.exemplo.com.br"},
		"client_id": {clientID}, "client_secret": {secret}, "senha_certificado": {p12pw},
	}, upload{"certificado", "loja.p12", p12})
	if r.Status != http.StatusOK || r.URL.Query().Get("ok") != "created" {
		t.Fatalf("create: status %d at %s\n%.800s", r.Status, r.URL, r.Body)
	}
	id, err := strconv.ParseInt(strings.TrimPrefix(r.URL.Path, "/admin/contas/"), 10, 64)
	if err != nil {
		t.Fatal(err)
	}
	check := func(wantSecret string) {
		t.Helper()
		var raw []byte
		var hasCert int
		var base string
		if err := srv.db.QueryRow(`SELECT secrets, has_cert, base_url FROM accounts WHERE id = ?`, id).Scan(&raw, &hasCert, &base); err != nil {
			t.Fatal(err)
		}
		for _, s := range []string{clientID, wantSecret, p12pw} {
			if bytes.Contains(raw, []byte(s)) {
				t.Errorf("the secrets column holds %q in the clear", s)
			}
		}
		if bytes.Contains(raw, p12[len(p12)/2:len(p12)/2+32]) {
			t.Error("the secrets column holds the certificate in the clear")
		}
		if hasCert != 1 || base != "https://cobrancas.exemplo.com.br" {
			t.Errorf("has_cert %d, base_url %q", hasCert, base)
		}
		c, err := srv.credentials(ctx, id)
		if err != nil {
			t.Fatal(err)
		}
		if c.ClientID != clientID || c.ClientSecret != wantSecret || c.P12Password != p12pw || !bytes.Equal(c.P12, p12) {
			t.Errorf("credentials = %q %q %q %d bytes", c.ClientID, c.ClientSecret, c.P12Password, len(c.P12))
		}
	}
	check(secret)
	noSecrets := func(where string, body string) {
		t.Helper()
		for _, s := range []string{clientID, secret, newSecret, p12pw} {
			if strings.Contains(body, s) {
				t.Errorf("%s shows %q", where, s)
			}
		}
	}
	noSecrets("the page after creating", r.Body)
	pages := []string{"/admin/contas", "/admin/contas/" + strconv.FormatInt(id, 10), "/admin/usuarios", "/admin/usuarios/1", "/"}
	for _, p := range pages {
		r := admin.get(p)
		if r.Status != http.StatusOK {
			t.Errorf("GET %s: %d", p, r.Status)
		}
		noSecrets(p, r.Body)
	}
	list := admin.get("/admin/contas").Body
	if !strings.Contains(list, "Loja Centro") || !strings.Contains(list, "••• cadastrado") || !strings.Contains(list, "https://pix.exemplo.com.br") {
		t.Error("the list does not show the account, its address and that credentials are stored")
	}

	// editing with empty credential fields keeps them
	p := "/admin/contas/" + strconv.FormatInt(id, 10)
	r = admin.postMultipart(p, url.Values{"nome": {"Loja Centro 2"}, "base_url": {"https://cobrancas.exemplo.com.br"}})
	if r.Status != http.StatusOK || r.URL.Query().Get("ok") != "saved" {
		t.Fatalf("rename: status %d\n%.600s", r.Status, r.Body)
	}
	check(secret)
	if a, _ := srv.account(ctx, id); a.Name != "Loja Centro 2" || a.PixBaseURL != "" {
		t.Errorf("after edit: %+v", a)
	}
	admin.postMultipart(p, url.Values{"nome": {"Loja Centro 2"}, "base_url": {"https://cobrancas.exemplo.com.br"}, "pix_base_url": {"https://pix.exemplo.com.br"}})
	// replacing only the secret keeps the rest
	r = admin.postMultipart(p, url.Values{"nome": {"Loja Centro 2"}, "base_url": {"https://cobrancas.exemplo.com.br"}, "pix_base_url": {"https://pix.exemplo.com.br"}, "client_secret": {newSecret}})
	if r.Status != http.StatusOK {
		t.Fatalf("new secret: %d", r.Status)
	}
	noSecrets("the page after saving", r.Body)
	check(newSecret)
	// a wrong certificate password on edit is refused and changes nothing
	r = admin.postMultipart(p, url.Values{"nome": {"Loja Centro 2"}, "senha_certificado": {"senha-errada"}})
	if r.Status != http.StatusBadRequest || !strings.Contains(r.Body, "A senha do certificado não confere") {
		t.Errorf("wrong p12 password on edit: %d", r.Status)
	}
	noSecrets("the refused edit", r.Body)
	check(newSecret)

	var audit string
	srv.db.QueryRow(`SELECT group_concat(action || ' ' || detail, char(10)) FROM audit`).Scan(&audit)
	if !strings.Contains(audit, "conta.criar") || !strings.Contains(audit, "conta.editar") {
		t.Errorf("audit:\n%s", audit)
	}
	noSecrets("the audit", audit)

	// the embedded account can be renamed and never asks for credentials
	var embID int64
	srv.db.QueryRow(`SELECT id FROM accounts WHERE service = 'embedded'`).Scan(&embID)
	ep := "/admin/contas/" + strconv.FormatInt(embID, 10)
	if body := admin.get(ep).Body; strings.Contains(body, `name="client_secret"`) {
		t.Error("the embedded account asks for credentials")
	}
	if r := admin.postMultipart(ep, url.Values{"nome": {"Local"}, "base_url": {"https://x.example"}}); r.Status != http.StatusOK {
		t.Errorf("rename embedded: %d", r.Status)
	}
	if a, _ := srv.account(ctx, embID); a.Name != "Local" || a.BaseURL != "" {
		t.Errorf("embedded after edit: %+v", a)
	}
}

func TestAdminAccountBadInput(t *testing.T) {
	t.Parallel()
	srv := startServer(t)
	admin := login(t, srv, "admin", testAdminPassword)
	good := testP12(t, "senha-p12", time.Now().AddDate(1, 0, 0))
	expired := testP12(t, "senha-p12", time.Now().AddDate(0, -1, 0))
	base := func(kv ...string) url.Values {
		v := url.Values{"nome": {"Loja"}, "servico": {"sandbox"}, "client_id": {"id-1"}, "client_secret": {"segredo-1"}}
		for i := 0; i+1 < len(kv); i += 2 {
			v.Set(kv[i], kv[i+1])
		}
		return v
	}
	cases := []struct {
		name  string
		form  url.Values
		files []upload
		want  string
	}{
		{"not a p12", base("senha_certificado", "senha-p12"), []upload{{"certificado", "x.p12", []byte("isto não é um certificado")}}, "não é um certificado PKCS#12"},
		{"wrong password", base("senha_certificado", "outra"), []upload{{"certificado", "x.p12", good}}, "A senha do certificado não confere"},
		{"expired", base("senha_certificado", "senha-p12"), []upload{{"certificado", "x.p12", expired}}, "O certificado venceu"},
		{"too big", base(), []upload{{"certificado", "x.p12", bytes.Repeat([]byte{1}, maxP12+1)}}, "passa de 1 MB"},
		{"password without file", base("senha_certificado", "senha-p12"), nil, "Envie o arquivo .p12"},
		{"secret without id", base("client_id", ""), nil, "Obrigatório quando há credenciais"},
		{"bad url", base("base_url", "ftp://cobrancas.exemplo"), nil, "Endereço inválido"},
		{"url without scheme", base("pix_base_url", "pix.exemplo.com.br"), nil, "Endereço inválido"},
		{"http in production", base("servico", "production", "base_url", "http://cobrancas.exemplo"), nil, "precisa começar com https://"},
		{"embedded service", base("servico", "embedded"), nil, "Escolha homologação ou produção"},
		{"no name", base("nome", " "), nil, "Dê um nome à conta"},
		{"taken name", base("nome", EmbeddedAccountName), nil, "Já existe uma conta com este nome"},
	}
	for _, c := range cases {
		r := admin.postMultipart("/admin/contas", c.form, c.files...)
		body := html.UnescapeString(r.Body)
		if r.Status != http.StatusBadRequest || !strings.Contains(body, c.want) || !strings.Contains(body, `class="field-error"`) {
			t.Errorf("%s: status %d, want 400 with %q", c.name, r.Status, c.want)
		}
		if strings.Contains(r.Body, "segredo-1") || strings.Contains(r.Body, "senha-p12") {
			t.Errorf("%s: the form echoed a secret", c.name)
		}
	}
	var n int
	srv.db.QueryRow(`SELECT count(*) FROM accounts`).Scan(&n)
	if n != 1 {
		t.Errorf("%d accounts after bad input, want 1 (the embedded one)", n)
	}
	// and a good one goes through
	r := admin.postMultipart("/admin/contas", base("senha_certificado", "senha-p12", "base_url", "http://127.0.0.1:9999"), upload{"certificado", "x.p12", good})
	if r.Status != http.StatusOK {
		t.Errorf("good account: %d\n%.600s", r.Status, r.Body)
	}
}

// TestAdminTexts: every text the admin pages and handlers use is in dict
// in Portuguese and English, and no page shows a bare key.
func TestAdminTexts(t *testing.T) {
	for k, v := range adminDict {
		if v[0] == "" || v[1] == "" {
			t.Errorf("%s lacks a language: %q", k, v)
		}
		if strings.Count(v[0], "%") != strings.Count(v[1], "%") {
			t.Errorf("%s: the languages take different arguments", k)
		}
	}
	keyUse := regexp.MustCompile(`(?:\.Tf? |tr\(lang, )"([a-z_.]+)"`)
	files, _ := templateFS.ReadDir("templates")
	var sources []string
	for _, f := range files {
		if strings.HasPrefix(f.Name(), "admin_") {
			b, _ := templateFS.ReadFile("templates/" + f.Name())
			sources = append(sources, string(b))
		}
	}
	if src, err := os.ReadFile("admin.go"); err == nil {
		sources = append(sources, string(src))
	} else {
		t.Fatal(err)
	}
	n := 0
	for _, src := range sources {
		for _, m := range keyUse.FindAllStringSubmatch(src, -1) {
			n++
			if _, ok := dict[m[1]]; !ok {
				t.Errorf("text %q is not in dict", m[1])
			}
		}
	}
	if n < 50 {
		t.Errorf("found only %d text uses; is the pattern right?", n)
	}
	for _, r := range Roles {
		for _, k := range []string{"role." + string(r), "role." + string(r) + ".hint"} {
			if _, ok := dict[k]; !ok {
				t.Errorf("%s is not in dict", k)
			}
		}
	}

	srv := startServer(t)
	admin := login(t, srv, "admin", testAdminPassword)
	admin.postMultipart("/admin/contas", url.Values{"nome": {"Loja"}, "servico": {"sandbox"}})
	bare := regexp.MustCompile(`\b(admin|role|service|flash|err)\.[a-z_]+`)
	for _, lang := range []string{"pt", "en"} {
		for _, p := range []string{"/admin/usuarios", "/admin/usuarios/1", "/admin/contas", "/admin/contas/1", "/admin/contas/2"} {
			r := admin.get(p + "?lang=" + lang)
			if r.Status != http.StatusOK {
				t.Errorf("%s in %s: %d", p, lang, r.Status)
			}
			if m := bare.FindString(r.Body); m != "" {
				t.Errorf("%s in %s shows the bare key %q", p, lang, m)
			}
		}
	}
	r := admin.postForm("/admin/usuarios?lang=en", url.Values{"usuario": {"X"}, "papel": {"viewer"}, "senha": {"curta"}})
	if r.Status != http.StatusBadRequest || !strings.Contains(r.Body, "Invalid username") || !strings.Contains(r.Body, "10 to 72") {
		t.Errorf("English errors: %d", r.Status)
	}
}
