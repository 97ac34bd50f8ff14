package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"

	"remessa/formats"
	"remessa/rules"
	"remessa/sandbox/control"
	"remessa/sandbox/outbox"
)

func init() {
	registerSandboxSub("pay", "paga um boleto, parcela, cartão ou Pix num sandbox em execução", runSandboxPay)
	registerSandboxSub("clock", "mostra ou avança o relógio de um sandbox em execução", runSandboxClock)
	registerSandboxSub("refund", "estorna uma cobrança no cartão num sandbox em execução", runSandboxRefund)
	registerSandboxSub("outbox", "lista as notificações e webhooks de um sandbox em execução", runSandboxOutbox)
}

var (
	payCmd = &command{Name: "sandbox pay", Summary: "Simula o pagamento informado pelo banco: boleto ou parcela (valor e data opcionais), cartão, Pix (cob/cobv).",
		Usage: "slip ID | parcel CARNE N | card ID | cob TXID_OU_COPIA_E_COLA  [--value VALOR] [--date DATA] [--payee-code HEX] [--url URL]"}
	clockCmd = &command{Name: "sandbox clock", Summary: "Mostra o relógio do sandbox ou o avança (só para a frente): vencimentos passam, notificações e novas tentativas saem.",
		Usage: "[advance 48h|3d|1d12h] [--to AAAA-MM-DD] [--url URL]"}
	outboxCmd = &command{Name: "sandbox outbox", Summary: "Lista as entregas (notificações de cobrança e webhooks Pix): pendentes, entregues e desistidas.",
		Usage: "[--state pending|done] [--url URL] [--format text|json]"}
	refundCmd = &command{Name: "sandbox refund", Summary: "Estorna (total ou parcial) uma cobrança paga no cartão.",
		Usage: "card ID [--value VALOR] [--payee-code HEX] [--url URL]"}
)

// controlFlags are the flags every control subcommand shares.
type controlFlags struct {
	url, payee, format string
}

func (c *controlFlags) bind(fs *flag.FlagSet) {
	def := os.Getenv("REMESSA_SANDBOX_URL")
	if def == "" {
		def = "http://127.0.0.1:8080"
	}
	fs.StringVar(&c.url, "url", def, "endereço do sandbox em execução (ou REMESSA_SANDBOX_URL)")
	fs.StringVar(&c.format, "format", "text", "saída: text ou json")
}

func (c *controlFlags) client() *control.Client { return &control.Client{BaseURL: c.url} }

// parse parses args of subcommand cmd (flags bound on fs, the shared ones
// included) and checks --format; when ok is false the caller exits with
// code.
func (c *controlFlags) parse(fs *flag.FlagSet, cmd *command, args []string, stderr io.Writer) (pos []string, code int, ok bool) {
	pos, code, ok = parseFlags(fs, args)
	if !ok {
		return nil, code, false
	}
	if !checkFormat(cmd.Name, c.format, stderr) {
		return nil, exitUsage, false
	}
	return pos, exitOK, true
}

// moneyFlag parses the --value of subcommand name (example shows the
// form); ok is false (and the problem printed) for a bad or non-positive
// value. An empty flag is 0, ok.
func moneyFlag(name, value, example string, stderr io.Writer) (int64, bool) {
	if value == "" {
		return 0, true
	}
	v, err := formats.ParseMoney(value)
	if err != nil || v <= 0 {
		fmt.Fprintf(stderr, "remessa %s: --value %q: informe um valor positivo como \"%s\"\n", name, value, example)
		return 0, false
	}
	return v, true
}

// controlDone prints the answer (or the error) and returns the exit code.
func controlDone(name string, stdout, stderr io.Writer, format string, v any, text string, err error) int {
	if err != nil {
		fmt.Fprintf(stderr, "remessa %s: %v\n", name, err)
		var ce *control.Error
		switch {
		case errors.As(err, &ce):
			return exitProblems
		case errors.Is(err, control.ErrUnreachable):
			return exitInternal
		}
		return exitUsage
	}
	if format == "json" {
		_ = printSandboxJSON(stdout, v)
		return exitOK
	}
	fmt.Fprintln(stdout, text)
	return exitOK
}

func checkFormat(name, format string, stderr io.Writer) bool {
	if format != "text" && format != "json" {
		fmt.Fprintf(stderr, "remessa %s: --format %q: use text ou json\n", name, format)
		return false
	}
	return true
}

func positiveID(name, what, s string, stderr io.Writer) (int64, bool) {
	n, err := strconv.ParseInt(s, 10, 64)
	if err != nil || n <= 0 {
		fmt.Fprintf(stderr, "remessa %s: %s %q: esperado um número inteiro positivo\n", name, what, s)
		return 0, false
	}
	return n, true
}

func runSandboxPay(args []string, stdout, stderr io.Writer) int {
	fs := newFlagSet(payCmd, stdout, stderr)
	var cf controlFlags
	cf.bind(fs)
	fs.StringVar(&cf.payee, "payee-code", "", "conta dona da cobrança (payee_code); padrão: a dona")
	value := fs.String("value", "", "valor pago (\"R$ 1.234,56\", \"1234,56\" ou \"1234.56\"); padrão: o que o pagador deve na data (boleto e parcela: valor com multa, juros e desconto condicional do dia; Pix com vencimento: valor final com multa, juros, abatimento e desconto)")
	date := fs.String("date", "", "data do pagamento (\"10/03/2026\" ou \"2026-03-10\"); padrão: hoje no sandbox; não depois de hoje nem antes da criação da cobrança")
	pos, code, ok := cf.parse(fs, payCmd, args, stderr)
	if !ok {
		return code
	}
	if len(pos) < 2 {
		fs.Usage()
		return exitUsage
	}
	var req control.PayRequest
	cents, ok := moneyFlag(payCmd.Name, *value, "R$ 150,75", stderr)
	if !ok {
		return exitUsage
	}
	if cents > 0 {
		req.Value = &cents
	}
	if *date != "" {
		d, err := formats.ParseDate(*date)
		if err != nil {
			fmt.Fprintf(stderr, "remessa %s: --date %q: %v\n", payCmd.Name, *date, err)
			return exitUsage
		}
		req.PaidAt = d.Format("2006-01-02")
	}
	ctx := context.Background()
	kind, c := pos[0], cf.client()
	want := map[string]int{"slip": 2, "charge": 2, "card": 2, "parcel": 3, "cob": 2, "cobv": 2}
	n, known := want[kind]
	if !known {
		fmt.Fprintf(stderr, "remessa %s: %q: use slip, parcel, card, cob ou cobv\n", payCmd.Name, kind)
		return exitUsage
	}
	if len(pos) != n {
		fmt.Fprintf(stderr, "remessa %s %s: esperados %d argumentos, recebidos %d\n", payCmd.Name, kind, n-1, len(pos)-1)
		return exitUsage
	}
	switch kind {
	case "cob", "cobv":
		if *date != "" || cf.payee != "" {
			fmt.Fprintf(stderr, "remessa %s %s: --date e --payee-code não valem para Pix\n", payCmd.Name, kind)
			return exitUsage
		}
		valor := ""
		if cents > 0 {
			valor = rules.FormatPixAmount(cents)
		}
		r, err := c.PayPix(ctx, pos[1], valor)
		return controlDone(payCmd.Name, stdout, stderr, cf.format, r, pixPayText(r), err)
	case "parcel":
		id, ok1 := positiveID(payCmd.Name, "carnê", pos[1], stderr)
		p, ok2 := positiveID(payCmd.Name, "parcela", pos[2], stderr)
		if !ok1 || !ok2 {
			return exitUsage
		}
		r, err := c.PayParcel(ctx, id, int(p), req, cf.payee)
		return controlDone(payCmd.Name, stdout, stderr, cf.format, r, payText(r), err)
	default:
		id, ok := positiveID(payCmd.Name, "cobrança", pos[1], stderr)
		if !ok {
			return exitUsage
		}
		r, err := c.PayCharge(ctx, id, req, cf.payee)
		return controlDone(payCmd.Name, stdout, stderr, cf.format, r, payText(r), err)
	}
}

func payText(r control.PayResult) string {
	what := fmt.Sprintf("cobrança %d", r.ChargeID)
	if r.CarnetID != 0 {
		what = fmt.Sprintf("parcela %d do carnê %d (cobrança %d)", r.Parcel, r.CarnetID, r.ChargeID)
	}
	s := fmt.Sprintf("%s paga: %s em %s", what, rules.FormatBRL(r.Value), r.PaidAt)
	var parts []string
	if r.Discount > 0 {
		parts = append(parts, "desconto "+rules.FormatBRL(r.Discount))
	}
	if r.Fine > 0 {
		parts = append(parts, "multa "+rules.FormatBRL(r.Fine))
	}
	if r.Interest > 0 {
		parts = append(parts, fmt.Sprintf("juros %s (%d dias)", rules.FormatBRL(r.Interest), r.DaysLate))
	}
	if r.Owed > 0 && (r.Owed != r.Value || len(parts) > 0) {
		s += " (devido " + rules.FormatBRL(r.Owed)
		if len(parts) > 0 {
			s += ": " + strings.Join(parts, ", ")
		}
		s += ")"
	}
	return s
}

func pixPayText(r control.PixPayResult) string {
	s := fmt.Sprintf("Pix recebido: txid %s, valor %s, endToEndId %s", r.Txid, r.Valor, r.EndToEndID)
	var parts []string
	for _, p := range []struct{ name, v string }{{"abatimento", r.Abatimento}, {"desconto", r.Desconto}, {"multa", r.Multa}, {"juros", r.Juros}} {
		if p.v != "" {
			parts = append(parts, p.name+" "+p.v)
		}
	}
	if r.DiasAtraso > 0 {
		parts = append(parts, fmt.Sprintf("%d dias de atraso", r.DiasAtraso))
	}
	if r.Devido != "" && (r.Devido != r.Valor || len(parts) > 0) {
		s += fmt.Sprintf(" (devido %s; original %s", r.Devido, r.Original)
		if len(parts) > 0 {
			s += ", " + strings.Join(parts, ", ")
		}
		s += ")"
	}
	return s
}

func runSandboxRefund(args []string, stdout, stderr io.Writer) int {
	fs := newFlagSet(refundCmd, stdout, stderr)
	var cf controlFlags
	cf.bind(fs)
	fs.StringVar(&cf.payee, "payee-code", "", "conta dona da cobrança (payee_code); padrão: a dona")
	value := fs.String("value", "", "valor a estornar; padrão: tudo o que ainda não foi estornado")
	pos, code, ok := cf.parse(fs, refundCmd, args, stderr)
	if !ok {
		return code
	}
	if len(pos) != 2 || pos[0] != "card" {
		fs.Usage()
		return exitUsage
	}
	id, ok := positiveID(refundCmd.Name, "cobrança", pos[1], stderr)
	if !ok {
		return exitUsage
	}
	cents, ok := moneyFlag(refundCmd.Name, *value, "R$ 50,00", stderr)
	if !ok {
		return exitUsage
	}
	r, err := cf.client().RefundCard(context.Background(), id, cents, cf.payee)
	return controlDone(refundCmd.Name, stdout, stderr, cf.format, r,
		fmt.Sprintf("cobrança %d: estorno de %s; status %s", r.ChargeID, rules.FormatBRL(r.Value), r.Status), err)
}

func runSandboxClock(args []string, stdout, stderr io.Writer) int {
	fs := newFlagSet(clockCmd, stdout, stderr)
	var cf controlFlags
	cf.bind(fs)
	to := fs.String("to", "", "avança até esta data (\"2027-03-01\" ou \"01/03/2027\"), mantendo a hora do dia")
	pos, code, ok := cf.parse(fs, clockCmd, args, stderr)
	if !ok {
		return code
	}
	var req control.AdvanceRequest
	switch {
	case len(pos) == 0 && *to == "":
		s, err := cf.client().Clock(context.Background())
		return controlDone(clockCmd.Name, stdout, stderr, cf.format, s, clockText(s), err)
	case len(pos) == 2 && pos[0] == "advance" && *to == "":
		if _, err := control.ParseDuration(pos[1]); err != nil {
			fmt.Fprintf(stderr, "remessa %s: %v\n", clockCmd.Name, err)
			return exitUsage
		}
		req.Duration = pos[1]
	case *to != "" && (len(pos) == 0 || (len(pos) == 1 && pos[0] == "advance")):
		d, err := formats.ParseDate(*to)
		if err != nil {
			fmt.Fprintf(stderr, "remessa %s: --to %q: %v\n", clockCmd.Name, *to, err)
			return exitUsage
		}
		req.To = d.Format("2006-01-02")
	default:
		fs.Usage()
		return exitUsage
	}
	s, err := cf.client().Advance(context.Background(), req)
	return controlDone(clockCmd.Name, stdout, stderr, cf.format, s, clockText(s), err)
}

func clockText(s control.ClockState) string {
	var b strings.Builder
	fmt.Fprintf(&b, "agora no sandbox: %s (hoje %s)", s.Now, s.Today)
	if s.Offset != "" && s.Offset != "0s" {
		fmt.Fprintf(&b, "; adiantado %s", s.Offset)
	}
	if s.Advanced != "" {
		fmt.Fprintf(&b, "\navançou %s", s.Advanced)
	}
	if s.Delivered != nil {
		fmt.Fprintf(&b, "; notificações entregues agora: %d", *s.Delivered)
	}
	if s.TickError != "" {
		fmt.Fprintf(&b, "\natenção: %s", s.TickError)
	}
	return b.String()
}

func runSandboxOutbox(args []string, stdout, stderr io.Writer) int {
	fs := newFlagSet(outboxCmd, stdout, stderr)
	var cf controlFlags
	cf.bind(fs)
	state := fs.String("state", "", "pending (a entregar) ou done (entregues e desistidas); padrão: as duas")
	pos, code, ok := cf.parse(fs, outboxCmd, args, stderr)
	if !ok {
		return code
	}
	if len(pos) > 0 || (*state != "" && *state != "pending" && *state != "done") {
		fs.Usage()
		return exitUsage
	}
	l, err := cf.client().Outbox(context.Background(), *state)
	var b strings.Builder
	for _, group := range []struct {
		title string
		list  []outbox.DeliveryView
	}{{"Pendentes", l.Pending}, {"Concluídas", l.Done}} {
		if *state == "pending" && group.title != "Pendentes" || *state == "done" && group.title != "Concluídas" {
			continue
		}
		fmt.Fprintf(&b, "%s: %d\n", group.title, len(group.list))
		for _, d := range group.list {
			line := fmt.Sprintf("  #%d %s %s tentativas %d", d.ID, d.State, d.URL, d.Attempts)
			if d.LastStatus != 0 {
				line += fmt.Sprintf(" último HTTP %d", d.LastStatus)
			} else if d.LastError != "" {
				line += " erro: " + d.LastError
			}
			if d.NextAt != nil {
				line += " próxima " + d.NextAt.In(rules.SaoPaulo).Format("02/01/2006 15:04:05")
			}
			fmt.Fprintln(&b, line)
		}
	}
	return controlDone(outboxCmd.Name, stdout, stderr, cf.format, l, strings.TrimRight(b.String(), "\n"), err)
}
