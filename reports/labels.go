package reports

import (
	"fmt"
	"strconv"
	"strings"
	"time"

	"remessa/pipeline/results"
	"remessa/rules"
)

// label is one piece of report text in Portuguese and English.
type label struct{ pt, en string }

// labels is the one table of every text the reports show. Keys are stable
// identifiers; docs/reports.md lists the Portuguese and English texts.
var labels = map[string]label{
	// report titles and sections
	"title":          {"Relatório da remessa", "Batch report"},
	"summary":        {"Resumo", "Summary"},
	"rows":           {"Linhas", "Rows"},
	"parcels":        {"Parcelas", "Parcels"},
	"problems":       {"Problemas", "Problems"},
	"identity":       {"Execução", "Run"},
	"totals":         {"Totais", "Totals"},
	"by_month":       {"Valor emitido por mês de vencimento", "Issued amount by due month"},
	"split":          {"Repasses por destinatário e mês de vencimento", "Split shares by recipient and due month"},
	"outcomes_chart": {"Linhas por resultado", "Rows by outcome"},
	"no_problems":    {"Nenhum problema: todas as linhas foram emitidas.", "No problems: every row was issued."},
	"generated_at":   {"Gerado em", "Generated at"},
	"own_account":    {"conta emissora", "issuing account"},
	"more_problems":  {"linhas com problema não mostradas aqui; veja problemas.csv ou a planilha", "problem lines not shown here; see problemas.csv or the workbook"},

	// service banners
	"service_production": {"PRODUÇÃO — cobranças reais", "PRODUCTION — real charges"},
	"service_sandbox":    {"SANDBOX — nenhum valor real", "SANDBOX — no real money"},
	"service_embedded":   {"SERVIÇO EMBUTIDO (local) — nenhum valor real", "EMBEDDED SERVICE (local) — no real money"},
	"service_unknown":    {"SERVIÇO DESCONHECIDO", "UNKNOWN SERVICE"},
	"incomplete":         {"Execução incompleta: há linhas pendentes; rode remessa resume.", "Incomplete run: rows are pending; run remessa resume."},

	// run identity
	"job_name":        {"Trabalho", "Job"},
	"run_id":          {"Execução (id)", "Run id"},
	"service":         {"Serviço", "Service"},
	"kind":            {"Tipo", "Kind"},
	"base_url":        {"Endereço do serviço", "Service URL"},
	"pix_base_url":    {"Endereço do serviço Pix", "Pix service URL"},
	"account":         {"Conta (payee_code)", "Account (payee_code)"},
	"operator":        {"Operador", "Operator"},
	"started_at":      {"Início", "Started"},
	"finished_at":     {"Fim", "Finished"},
	"version":         {"Versão do remessa", "remessa version"},
	"job_file":        {"Arquivo do trabalho", "Job file"},
	"job_sha256":      {"SHA-256 do trabalho", "Job SHA-256"},
	"input_file":      {"Planilha de entrada", "Input file"},
	"input_sha256":    {"SHA-256 da entrada", "Input SHA-256"},
	"reconciliation":  {"Conferência", "Reconciliation"},
	"reconciles":      {"Totais conferem ao centavo", "Totals reconcile to the cent"},
	"not_reconciles":  {"Totais NÃO conferem", "Totals do NOT reconcile"},
	"difference":      {"diferença", "difference"},
	"rows_add_up":     {"as linhas somam", "the rows add up to"},
	"totals_say":      {"os totais dizem", "the totals say"},
	"kind_carnets":    {"carnês", "carnets"},
	"kind_cobv":       {"Pix com vencimento (cobv)", "due-date Pix charges (cobv)"},
	"kind_boletos":    {"boletos", "slips (boletos)"},
	"section":         {"Seção", "Section"},
	"item":            {"Item", "Item"},
	"month":           {"Mês", "Month"},
	"count":           {"Linhas", "Rows"},
	"amount":          {"Valor", "Amount"},
	"text":            {"Texto", "Text"},
	"recipient":       {"Destinatário", "Recipient"},
	"outcome":         {"Resultado", "Outcome"},
	"sec_run":         {"execucao", "run"},
	"sec_totals":      {"totais", "totals"},
	"sec_month":       {"vencimento", "due_month"},
	"sec_split":       {"repasse", "split"},
	"sec_check":       {"conferencia", "reconciliation"},
	"outcome_in":      {"entrada", "in"},
	"outcome_issued":  {"emitida", "issued"},
	"outcome_refused": {"recusada na validação", "refused by validation"},
	"outcome_denied":  {"negada pelo serviço", "denied by the service"},
	"outcome_ambig":   {"ambígua", "ambiguous"},
	"outcome_pending": {"pendente", "pending"},

	// columns
	"col_source_row":  {"Linha", "Row"},
	"col_key":         {"Chave", "Key"},
	"col_payer":       {"Pagador", "Payer"},
	"col_document":    {"CPF/CNPJ", "CPF/CNPJ"},
	"col_outcome":     {"Resultado", "Outcome"},
	"col_amount":      {"Valor", "Amount"},
	"col_due":         {"Vencimento", "Due date"},
	"col_custom_id":   {"custom_id", "custom_id"},
	"col_carnet_id":   {"carnet_id", "carnet_id"},
	"col_charge_ids":  {"charge_ids", "charge_ids"},
	"col_charge_id":   {"charge_id", "charge_id"},
	"col_txid":        {"txid", "txid"},
	"col_batch":       {"Lote", "Batch"},
	"col_link":        {"Link", "Link"},
	"col_pdf":         {"PDF", "PDF"},
	"col_cover":       {"Capa", "Cover"},
	"col_typed_line":  {"Linha digitável", "Typed line"},
	"col_barcode":     {"Código de barras", "Barcode"},
	"col_pix":         {"Pix Copia e Cola", "Pix copy-and-paste"},
	"col_location":    {"Location Pix", "Pix location"},
	"col_error_code":  {"Código do erro", "Error code"},
	"col_error":       {"Erro", "Error"},
	"col_parcel":      {"Parcela", "Parcel"},
	"col_status":      {"Situação", "Status"},
	"col_status_code": {"Código da situação", "Status code"},
	"col_code":        {"Código", "Code"},
	"col_field":       {"Campo", "Field"},
	"col_column":      {"Coluna", "Column"},
	"col_place":       {"Onde", "Where"},
	"col_header":      {"Cabeçalho", "Header"},
	"col_value":       {"Valor informado", "Value given"},
	"col_message":     {"Problema", "Problem"},
	"col_action":      {"O que fazer", "What to do"},
	"col_problem":     {"Problema", "Problem"},
	"col_split_total": {"Repasses", "Split"},

	// default actions per outcome
	"action_refused":   {"Corrija a linha na planilha (veja Problema) e envie de novo as linhas rejeitadas com remessa run.", "Fix the row in the spreadsheet (see Problem) and run the rejected rows again with remessa run."},
	"action_denied":    {"O serviço recusou a cobrança: corrija conforme a mensagem e envie a linha de novo com remessa run.", "The service refused the charge: fix it as the message says and run the row again with remessa run."},
	"action_ambiguous": {"Não se sabe se a cobrança existe: rode remessa resume, que confere no serviço antes de reenviar. Não emita de novo à mão.", "Whether the charge exists is unknown: run remessa resume, which checks the service before sending again. Do not issue it again by hand."},
	"action_pending":   {"A linha ainda não foi enviada: rode remessa resume.", "The row was not sent yet: run remessa resume."},
	"msg_ambiguous":    {"resultado desconhecido: o serviço pode ter criado a cobrança", "outcome unknown: the service may have created the charge"},
	"msg_pending":      {"linha ainda não enviada", "row not sent yet"},
	"msg_denied":       {"recusada pelo serviço", "refused by the service"},
	"msg_refused":      {"recusada na validação", "refused by validation"},
}

// parcelStatuses names every charge status of the charges API (a carnet
// parcel is a charge) for people; the reports keep the API's own word in a
// column of its own for programs.
var parcelStatuses = map[string]label{
	"new":        {"nova (sem forma de pagamento)", "new (no payment method)"},
	"waiting":    {"aguardando pagamento", "waiting for payment"},
	"paid":       {"pago", "paid"},
	"unpaid":     {"vencido", "overdue"},
	"refunded":   {"devolvido", "refunded"},
	"contested":  {"contestado", "contested"},
	"canceled":   {"cancelado", "canceled"},
	"settled":    {"baixa manual", "settled manually"},
	"link":       {"link de pagamento", "payment link"},
	"expired":    {"expirado", "expired"},
	"identified": {"pagamento identificado", "payment identified"},
	"approved":   {"aprovado", "approved"},
}

// parcelStatus is the label of a parcel's status in lang; a status the
// reports do not know is shown as the service sent it.
func parcelStatus(lang, status string) string {
	l, ok := parcelStatuses[status]
	if !ok {
		return status
	}
	if lang == "en" {
		return l.en
	}
	return l.pt
}

// tr returns the text of key in lang ("en" or Portuguese otherwise). A
// missing key is a bug; it is shown as the key itself so reports never fail
// on a label.
func tr(lang, key string) string {
	l, ok := labels[key]
	if !ok {
		return key
	}
	if lang == "en" {
		return l.en
	}
	return l.pt
}

// outcomeKey maps an outcome to its label key.
func outcomeKey(o results.Outcome) string {
	switch o {
	case results.Issued:
		return "outcome_issued"
	case results.Refused:
		return "outcome_refused"
	case results.Denied:
		return "outcome_denied"
	case results.Ambiguous:
		return "outcome_ambig"
	default:
		return "outcome_pending"
	}
}

// kindKey maps a job kind to its label key.
func kindKey(k results.Kind) string {
	switch k {
	case results.Carnets:
		return "kind_carnets"
	case results.Cobv:
		return "kind_cobv"
	case results.Boletos:
		return "kind_boletos"
	}
	return string(k)
}

// serviceKey maps RunInfo.Service to the label key of its banner.
func serviceKey(service string) string {
	switch strings.ToLower(service) {
	case "production":
		return "service_production"
	case "sandbox":
		return "service_sandbox"
	case "embedded":
		return "service_embedded"
	}
	return "service_unknown"
}

// formatMoney formats cents as reais: "R$ 1.234,56" in Portuguese and
// "R$ 1,234.56" in English; negative amounts as "-R$ 1,00". Exact, no floats.
func formatMoney(lang string, cents int64) string {
	thou, dec := ".", ","
	if lang == "en" {
		thou, dec = ",", "."
	}
	sign := ""
	u := uint64(cents)
	if cents < 0 {
		sign = "-"
		u = -u
	}
	ip := strconv.FormatUint(u/100, 10)
	var b strings.Builder
	b.WriteString(sign)
	b.WriteString("R$ ")
	for i := range len(ip) {
		if i > 0 && (len(ip)-i)%3 == 0 {
			b.WriteString(thou)
		}
		b.WriteByte(ip[i])
	}
	fmt.Fprintf(&b, "%s%02d", dec, u%100)
	return b.String()
}

// plainDecimal formats cents as a decimal number without thousands
// separators, with sep as the decimal separator: 123456 -> "1234,56".
func plainDecimal(cents int64, sep byte) string {
	sign := ""
	u := uint64(cents)
	if cents < 0 {
		sign = "-"
		u = -u
	}
	return sign + strconv.FormatUint(u/100, 10) + string(sep) + fmt.Sprintf("%02d", u%100)
}

// formatMonth shows "2026-03" as "mar/2026" (pt) or "Mar 2026" (en).
// Anything that is not YYYY-MM is returned unchanged.
func formatMonth(lang, ym string) string { return rules.FormatMonth(lang, ym) }

// formatDate shows "2026-03-10" as "10/03/2026" (pt) or "2026-03-10" (en).
func formatDate(lang, d string) string {
	t, err := time.Parse("2006-01-02", d)
	if err != nil || lang == "en" {
		return d
	}
	return t.Format("02/01/2006")
}

// saoPaulo is Brasília time (UTC-3, no daylight saving since 2019).
var saoPaulo = time.FixedZone("America/Sao_Paulo", -3*3600)

// formatTimestamp shows an RFC 3339 timestamp in Brasília time.
func formatTimestamp(lang, ts string) string {
	if ts == "" {
		return ""
	}
	t, err := time.Parse(time.RFC3339Nano, ts)
	if err != nil {
		return ts
	}
	t = t.In(saoPaulo)
	if lang == "en" {
		return t.Format("2006-01-02 15:04:05") + " (UTC-3)"
	}
	return t.Format("02/01/2006 15:04:05") + " (horário de Brasília)"
}
