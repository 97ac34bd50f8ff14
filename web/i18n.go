package web

import (
	"net/http"
	"strings"
)

const langCookie = "remessa_idioma"

// langOf picks the page language: the ?lang= choice remembered in a
// cookie, else the browser's Accept-Language (English when it prefers
// English), else Portuguese.
func langOf(r *http.Request) string {
	if l := r.URL.Query().Get("lang"); l == "pt" || l == "en" {
		return l
	}
	if c, err := r.Cookie(langCookie); err == nil && (c.Value == "pt" || c.Value == "en") {
		return c.Value
	}
	for _, part := range strings.Split(r.Header.Get("Accept-Language"), ",") {
		tag := strings.ToLower(strings.TrimSpace(strings.SplitN(part, ";", 2)[0]))
		switch {
		case strings.HasPrefix(tag, "pt"):
			return "pt"
		case strings.HasPrefix(tag, "en"):
			return "en"
		}
	}
	return "pt"
}

// tr is the text of key in lang (Portuguese when English lacks it; the key
// itself when both do, which a test catches).
func tr(lang, key string) string {
	e, ok := dict[key]
	if !ok {
		return key
	}
	if lang == "en" && e[1] != "" {
		return e[1]
	}
	return e[0]
}

// dict holds every text of the pages: key -> {Portuguese, English}.
var dict = map[string][2]string{
	"app.name":           {"remessa", "remessa"},
	"app.tagline":        {"Emissão de cobranças em lote", "Bulk billing"},
	"nav.home":           {"Início", "Home"},
	"nav.new":            {"Nova remessa", "New batch"},
	"nav.admin":          {"Administração", "Administration"},
	"nav.users":          {"Usuários", "Users"},
	"nav.accounts":       {"Contas de serviço", "Service accounts"},
	"nav.backup":         {"Backup", "Backup"},
	"nav.logout":         {"Sair", "Sign out"},
	"nav.lang":           {"English", "Português"},
	"err.title":          {"Não foi possível continuar", "Could not continue"},
	"err.signin":         {"Entre para continuar.", "Sign in to continue."},
	"err.csrf":           {"O formulário expirou ou não veio desta página. Volte, recarregue a página e tente de novo.", "The form expired or did not come from this page. Go back, reload the page and try again."},
	"err.role":           {"Seu usuário não tem permissão para isto. Peça a um administrador.", "Your user is not allowed to do this. Ask an administrator."},
	"err.notfound":       {"Não encontramos esta página.", "We could not find this page."},
	"err.back":           {"Voltar ao início", "Back to home"},
	"login.title":        {"Entrar", "Sign in"},
	"login.user":         {"Usuário", "Username"},
	"login.password":     {"Senha", "Password"},
	"login.submit":       {"Entrar", "Sign in"},
	"login.bad":          {"Usuário ou senha incorretos.", "Wrong username or password."},
	"login.slow":         {"Muitas tentativas. Espere um minuto e tente de novo.", "Too many attempts. Wait a minute and try again."},
	"home.title":         {"Remessas recentes", "Recent batches"},
	"home.empty":         {"Nenhuma remessa ainda. Comece com \"Nova remessa\".", "No batches yet. Start with \"New batch\"."},
	"home.drafts":        {"Em preparação", "In preparation"},
	"col.status":         {"Situação", "Status"},
	"col.kind":           {"Tipo", "Kind"},
	"col.name":           {"Nome", "Name"},
	"col.rows":           {"Linhas", "Rows"},
	"col.total":          {"Total", "Total"},
	"col.by":             {"Quem", "By"},
	"col.when":           {"Quando", "When"},
	"col.account":        {"Conta", "Account"},
	"col.file":           {"Planilha", "Sheet"},
	"kind.carnets":       {"Carnês", "Carnets"},
	"kind.cobv":          {"Pix com vencimento", "Due-date Pix"},
	"kind.boletos":       {"Boletos", "Slips"},
	"status.queued":      {"na fila", "queued"},
	"status.running":     {"em execução", "running"},
	"status.done":        {"concluída", "done"},
	"status.problems":    {"concluída com problemas", "done with problems"},
	"status.stopped":     {"interrompida", "stopped"},
	"status.cancelled":   {"cancelada", "cancelled"},
	"status.failed":      {"falhou", "failed"},
	"flash.saved":        {"Salvo.", "Saved."},
	"flash.created":      {"Criado.", "Created."},
	"flash.password":     {"Senha redefinida.", "Password reset."},
	"flash.cancel":       {"Cancelamento pedido: a execução para depois das chamadas em andamento.", "Cancellation asked: the run stops after the calls in flight."},
	"service.embedded":   {"embutido (local, nenhum valor real)", "embedded (local, no real money)"},
	"service.sandbox":    {"homologação (sandbox do banco)", "homologation (bank sandbox)"},
	"service.production": {"PRODUÇÃO (cobranças reais)", "PRODUCTION (real charges)"},
}
