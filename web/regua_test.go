package web

import (
	"bytes"
	"context"
	"fmt"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"remessa/internal/smtptest"
)

// plainJob is followJob without its régua: the desk's applies.
var plainJob = strings.Split(followJob, "reminders:")[0]

// smallDeskRun issues followSheet's two carnets on the embedded account
// from the desk (a job file without a régua) and returns the run's id.
func smallDeskRun(t *testing.T, srv *Server, c *client) int64 {
	t.Helper()
	r := c.postMultipart("/remessas", url.Values{"kind": {"carnets"}, "account": {"1"}},
		upload{Field: "planilha", Name: "alunos.csv", Data: []byte(followSheet())},
		upload{Field: "job", Name: "job.yaml", Data: []byte(plainJob)})
	if r.Status != http.StatusOK || !strings.HasSuffix(r.URL.Path, "/validacao") {
		t.Fatalf("upload: %d at %s: %s", r.Status, r.URL.Path, r.Body)
	}
	base := strings.TrimSuffix(r.URL.Path, "/validacao")
	if r = c.postForm(base+"/executar", nil); r.Status != http.StatusOK || !strings.HasPrefix(r.URL.Path, "/execucoes/") {
		t.Fatalf("confirm: %d at %s", r.Status, r.URL.Path)
	}
	id, _ := strconv.ParseInt(strings.TrimPrefix(r.URL.Path, "/execucoes/"), 10, 64)
	if rec := waitRun(t, srv, id, 90*time.Second); rec.Status != "done" {
		t.Fatalf("run ended %s: %s", rec.Status, rec.Message)
	}
	return id
}

// deskSMTPForm is the admin's SMTP form for the test's server.
func deskSMTPForm(mb *smtptest.Server) url.Values {
	return url.Values{"host": {"127.0.0.1"}, "porta": {strconv.Itoa(mb.Port)}, "seguranca": {"starttls"},
		"remetente": {"Escola Aquarela <cobranca@escola.example.com>"}, "usuario": {smtptest.User}, "senha": {smtptest.Password}, "ca": {mb.CAPEM}}
}

// reguaForm4 is a régua form of four steps: 3 days before and on the due
// date by the service's e-mail, 2 and 9 days after by the desk's own.
func reguaForm4() url.Values {
	return url.Values{"ligada": {"1"}, "passo_dias": {"3", "", "2", "9", ""}, "passo_quando": {"antes", "no_dia", "depois", "depois", "depois"},
		"passo_canal": {"service", "service", "smtp", "smtp", "smtp"}, "de": {"08:00"}, "ate": {"20:00"}, "maximo": {"500"}}
}

// TestReguaPagesHTTP: the admin sets the desk's régua (steps, window,
// cap), the SMTP server (its password sealed in web.db, never shown back,
// never in the audit) and the message (a template that does not run is
// refused naming the field; the preview shows an example); an operator
// sets one run's régua (default, its own, none), each bad input refused
// with what is wrong and where; a viewer sees the run's régua and no way
// to change it, and the admin's page is the admin's.
func TestReguaPagesHTTP(t *testing.T) {
	t.Parallel()
	srv := startServer(t)
	mb := smtptest.Start(t)
	ctx := context.Background()
	c := login(t, srv, "admin", testAdminPassword)

	r := c.get("/admin/regua")
	if r.Status != http.StatusOK || !strings.Contains(r.Body, `data-regua="sugestao"`) || strings.Contains(r.Body, `name="ligada" value="1" checked`) {
		t.Fatalf("the admin's page before anything is saved should suggest a régua, off: %d\n%s", r.Status, snippet(r.Body, "padrao"))
	}
	// bad input: days that are not a number
	bad := reguaForm4()
	bad["passo_dias"] = []string{"3", "", "dois", "9", ""}
	if r = c.postForm("/admin/regua", bad); r.Status != http.StatusBadRequest || !strings.Contains(r.Body, `data-field="passo.2">dias &#34;dois&#34;: use um número inteiro`) {
		t.Errorf("days \"dois\": %d\n%s", r.Status, snippet(r.Body, "passos"))
	}
	// the service's e-mail after the due date, a window that ends before it starts
	bad = reguaForm4()
	bad["passo_canal"] = []string{"service", "service", "service", "smtp", "smtp"}
	bad["de"], bad["ate"] = []string{"20:00"}, []string{"08:00"}
	r = c.postForm("/admin/regua", bad)
	if r.Status != http.StatusBadRequest || !strings.Contains(r.Body, `data-field="passo.2">o serviço só reenvia cobranças em espera, até o vencimento: depois dele, use o e-mail próprio`) ||
		!strings.Contains(r.Body, `data-field="ate">a janela de envio está vazia: o início deve ser antes do fim`) {
		t.Errorf("service at +2d and an empty window: %d\n%s", r.Status, snippet(r.Body, "passos"))
	}
	// the own e-mail before the desk has a mail server
	if r = c.postForm("/admin/regua", reguaForm4()); r.Status != http.StatusBadRequest || !strings.Contains(r.Body, `data-field="passo.2">o e-mail próprio precisa do servidor de e-mail (SMTP) da mesa`) {
		t.Errorf("smtp steps without a server: %d\n%s", r.Status, snippet(r.Body, "passos"))
	}
	var rows int
	srv.db.QueryRow(`SELECT count(*) FROM regua_desk`).Scan(&rows)
	if rows != 0 {
		t.Errorf("refused forms saved %d rows", rows)
	}

	// the SMTP server: bad input, then the test's server
	badSMTP := deskSMTPForm(mb)
	badSMTP.Set("host", "smtp.escola.example.com")
	badSMTP.Set("seguranca", "none")
	badSMTP.Set("ca", "não é um certificado")
	r = c.postForm("/admin/regua/smtp", badSMTP)
	if r.Status != http.StatusBadRequest || !strings.Contains(r.Body, `data-field="ca">não é um certificado PEM`) {
		t.Errorf("a CA that is not PEM: %d\n%s", r.Status, snippet(r.Body, "smtp"))
	}
	badSMTP.Set("ca", "")
	r = c.postForm("/admin/regua/smtp", badSMTP)
	if r.Status != http.StatusBadRequest || !strings.Contains(r.Body, `data-field="seguranca">tls: none só é aceito em 127.0.0.1`) {
		t.Errorf("no TLS to a remote server: %d\n%s", r.Status, snippet(r.Body, "smtp"))
	}
	if strings.Contains(r.Body, smtptest.Password) {
		t.Errorf("the refused form shows the password back")
	}
	r = c.postForm("/admin/regua/smtp", deskSMTPForm(mb))
	if r.Status != http.StatusOK || r.URL.Path != "/admin/regua" || !strings.Contains(r.Body, `data-stored="senha"`) {
		t.Fatalf("save the SMTP server: %d at %s\n%s", r.Status, r.URL.Path, snippet(r.Body, "smtp"))
	}
	if strings.Contains(r.Body, smtptest.Password) || strings.Contains(r.Body, smtptest.User) {
		t.Errorf("the admin's page shows the SMTP user or password")
	}
	// sealed at rest: neither the file nor its WAL holds the password
	for _, f := range []string{DBFile, DBFile + "-wal"} {
		b, _ := os.ReadFile(filepath.Join(srv.cfg.DataDir, f))
		if bytes.Contains(b, []byte(smtptest.Password)) {
			t.Errorf("%s holds the SMTP password in the clear", f)
		}
	}
	// an empty password keeps the stored one
	keep := deskSMTPForm(mb)
	keep.Set("usuario", "")
	keep.Set("senha", "")
	if r = c.postForm("/admin/regua/smtp", keep); r.Status != http.StatusOK || !strings.Contains(r.Body, `data-stored="senha"`) {
		t.Errorf("saving without the password: %d", r.Status)
	}
	desk, err := srv.loadDeskRegua(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if sec, err := srv.smtpSecretsOf(desk); err != nil || sec.Username != smtptest.User || sec.Password != smtptest.Password || desk.SMTP.Port != mb.Port || desk.SMTP.TLS != "starttls" {
		t.Errorf("stored SMTP: %v %+v port %d tls %s", err, sec == (smtpSecrets{}), desk.SMTP.Port, desk.SMTP.TLS)
	}

	// the message
	r = c.postForm("/admin/regua/mensagem", url.Values{"assunto": {"Lembrete para {{ .Nomee }}"}, "texto": {"Olá"}})
	if r.Status != http.StatusBadRequest || !strings.Contains(r.Body, `data-field="assunto">modelo inválido:`) || !strings.Contains(r.Body, "Nomee") {
		t.Errorf("a misspelt field: %d\n%s", r.Status, snippet(r.Body, "mensagem"))
	}
	r = c.postForm("/admin/regua/mensagem", url.Values{"assunto": {"{{ .Chave }} parcela {{ .Parcela }}: {{ .Valor }} ({{ .DiasAtraso }} dias)"},
		"texto": {"Olá, {{ .Nome }}. Valor para hoje: {{ .Valor }}."}})
	if r.Status != http.StatusOK || !strings.Contains(r.Body, `data-previa="assunto">A0001 parcela 3: R$ 306,20 (2 dias)<`) ||
		!strings.Contains(r.Body, `data-previa="texto">Olá, Maria Souza. Valor para hoje: R$ 306,20.<`) {
		t.Errorf("the message's preview: %d\n%s", r.Status, snippet(r.Body, "previa"))
	}

	// the desk's default, now with the server
	if r = c.postForm("/admin/regua", reguaForm4()); r.Status != http.StatusOK || !strings.Contains(r.Body, `name="ligada" value="1" checked`) {
		t.Fatalf("save the default: %d\n%s", r.Status, snippet(r.Body, "padrao"))
	}

	// a run from a job file without a régua takes the desk's default
	id := smallDeskRun(t, srv, c)
	runPath := fmt.Sprintf("/execucoes/%d", id)
	r = c.get(runPath)
	if !strings.Contains(r.Body, `data-regua="fonte">Régua padrão da mesa.<`) || !strings.Contains(r.Body, "2 dias depois · e-mail próprio<") {
		t.Errorf("the run page should show the desk's default:\n%s", snippet(r.Body, "lembretes"))
	}

	// an operator sets the run's own régua
	if _, err := srv.createUser(ctx, "secretaria", "Secretaria", "senha-da-secretaria", RoleOperator); err != nil {
		t.Fatal(err)
	}
	op := login(t, srv, "secretaria", "senha-da-secretaria")
	if r = op.get(runPath + "/regua"); r.Status != http.StatusOK || !strings.Contains(r.Body, `value="default" checked`) {
		t.Fatalf("the run's régua page: %d\n%s", r.Status, snippet(r.Body, "escolha"))
	}
	own := url.Values{"modo": {"own"}, "passo_dias": {"5", "1", ""}, "passo_quando": {"antes", "depois", "depois"},
		"passo_canal": {"service", "service", "smtp"}, "de": {"09:00"}, "ate": {"18:00"}, "maximo": {"abc"}}
	if r = op.postForm(runPath+"/regua", own); r.Status != http.StatusBadRequest || !strings.Contains(r.Body, `data-field="maximo">use um número inteiro`) {
		t.Errorf("a cap that is not a number: %d\n%s", r.Status, snippet(r.Body, "escolha"))
	}
	own.Set("maximo", "50")
	if r = op.postForm(runPath+"/regua", own); r.Status != http.StatusBadRequest || !strings.Contains(r.Body, `data-field="passo.1">o serviço só reenvia cobranças em espera`) {
		t.Errorf("the service's e-mail a day after: %d\n%s", r.Status, snippet(r.Body, "escolha"))
	}
	if r = op.postForm(runPath+"/regua", url.Values{"modo": {"own"}, "passo_dias": {"", ""}, "passo_quando": {"antes", "depois"}, "passo_canal": {"service", "smtp"}}); r.Status != http.StatusBadRequest ||
		!strings.Contains(r.Body, "a régua própria precisa de ao menos um passo") {
		t.Errorf("an own régua without steps: %d\n%s", r.Status, snippet(r.Body, "escolha"))
	}
	if r = op.postForm(runPath+"/regua", url.Values{"modo": {"sempre"}}); r.Status != http.StatusBadRequest || !strings.Contains(r.Body, `data-field="modo">escolha uma das opções`) {
		t.Errorf("an unknown mode: %d", r.Status)
	}
	own["passo_canal"] = []string{"service", "smtp", "smtp"}
	r = op.postForm(runPath+"/regua", own)
	if r.Status != http.StatusOK || r.URL.Path != runPath || !strings.Contains(r.Body, `data-regua="fonte">Régua própria desta execução.<`) ||
		!strings.Contains(r.Body, "5 dias antes · e-mail do serviço<") || !strings.Contains(r.Body, "1 dia depois · e-mail próprio<") {
		t.Errorf("the run's own régua: %d at %s\n%s", r.Status, r.URL.Path, snippet(r.Body, "lembretes"))
	}
	rec, err := srv.loadRun(ctx, id)
	if err != nil {
		t.Fatal(err)
	}
	rg, src, err := srv.reguaFor(ctx, rec, noEnv)
	if err != nil || src != reguaFromOwn || len(rg.Steps) != 2 || rg.QuietFrom != 9*60 || rg.QuietTo != 18*60 || rg.MaxPerPass != 50 || rg.SMTP == nil || rg.SMTP.Password != smtptest.Password {
		t.Errorf("the régua the follow job runs: %v %s %+v", err, src, rg)
	}
	if r = op.postForm(runPath+"/regua", url.Values{"modo": {"off"}}); !strings.Contains(r.Body, `data-regua="fonte">Lembretes desligados nesta execução.<`) {
		t.Errorf("the run's régua off:\n%s", snippet(r.Body, "lembretes"))
	}
	if rg, src, _ := srv.reguaFor(ctx, rec, noEnv); rg != nil || src != reguaFromOff {
		t.Errorf("a run set off still has a régua: %s %+v", src, rg)
	}

	// roles: the operator cannot change the desk's; a viewer sees, cannot act
	if r = op.get("/admin/regua"); r.Status != http.StatusForbidden {
		t.Errorf("operator on the admin's régua page: %d, want 403", r.Status)
	}
	if _, err := srv.createUser(ctx, "diretora", "Diretora", "senha-da-diretora", RoleViewer); err != nil {
		t.Fatal(err)
	}
	v := login(t, srv, "diretora", "senha-da-diretora")
	if r = v.get(runPath); r.Status != http.StatusOK || !strings.Contains(r.Body, `id="lembretes"`) || strings.Contains(r.Body, `id="configurar-regua"`) {
		t.Errorf("viewer's run page: %d, configure link %v", r.Status, strings.Contains(r.Body, `id="configurar-regua"`))
	}
	if r = v.get(runPath + "/regua"); r.Status != http.StatusForbidden {
		t.Errorf("viewer on the run's régua page: %d, want 403", r.Status)
	}

	// the audit names who changed what, never the password
	var n int
	srv.db.QueryRow(`SELECT count(*) FROM audit WHERE action LIKE 'regua.%'`).Scan(&n)
	if n < 6 {
		t.Errorf("%d régua changes in the audit, want at least 6", n)
	}
	srv.db.QueryRow(`SELECT count(*) FROM audit WHERE detail LIKE ? OR detail LIKE ?`, "%"+smtptest.Password+"%", "%"+smtptest.User+"%").Scan(&n)
	if n != 0 {
		t.Errorf("%d audit entries carry the SMTP credentials", n)
	}
}
