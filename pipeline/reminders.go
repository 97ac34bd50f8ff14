package pipeline

import (
	"fmt"
	"path/filepath"
	"strconv"
	"strings"
	"text/template"

	"remessa/pipeline/results"
	"remessa/rules"
)

// This file is the régua de cobrança (dunning schedule) of a job file, its
// `reminders:` section: the spec it is decoded into, the resolved
// Reminders both faces execute (`remessa remind` and the desk's periodic
// job, through pipeline/remind), and its checks. The desk builds the same
// Reminders from its form with ParseReminders.

// Reminder channels.
const (
	// ChannelService asks the service to e-mail the charge again
	// (POST /v1/carnet/:id/parcel/:n/resend, /v1/charge/:id/billet/resend).
	ChannelService = "service"
	// ChannelSMTP is remessa's own e-mail over SMTP.
	ChannelSMTP = "smtp"
)

// Defaults of a régua.
const (
	DefaultQuietFrom  = 8 * 60  // 08:00, São Paulo
	DefaultQuietTo    = 20 * 60 // 20:00
	DefaultMaxPerPass = 500
	MaxReminderSteps  = 10
	minReminderOffset = -30
	maxReminderOffset = 120
)

// DefaultReminderSubject and DefaultReminderBody are the pt-BR message of
// the smtp channel when the job names none (text/template; the fields are
// ReminderFields').
const (
	DefaultReminderSubject = `{{ if .Vencida }}Cobrança vencida em {{ .Vencimento }}{{ else }}Lembrete: cobrança com vencimento em {{ .Vencimento }}{{ end }} - {{ .Descricao }}`
	DefaultReminderBody    = `Olá, {{ .Nome }}.

{{ if .Vencida }}Não identificamos o pagamento de {{ .Descricao }}, vencida em {{ .Vencimento }} ({{ .DiasAtraso }} dia(s) de atraso).
Valor para pagamento hoje, com multa e juros: {{ .Valor }} (valor original {{ .ValorOriginal }}).
{{ else }}Lembramos que {{ .Descricao }} vence em {{ .Vencimento }}.
Valor: {{ .Valor }}.
{{ end }}{{ if .PixCopiaECola }}
Pix copia e cola:
{{ .PixCopiaECola }}
{{ end }}{{ if .LinhaDigitavel }}
Linha digitável do boleto: {{ .LinhaDigitavel }}
{{ end }}{{ if .Link }}
Boleto e 2ª via: {{ .Link }}
{{ end }}
Se você já pagou, desconsidere esta mensagem.
`
)

// RemindersSpec is the job file's `reminders:` section.
type RemindersSpec struct {
	Enabled    *bool            `yaml:"enabled" doc:"liga ou desliga a régua desta execução (padrão true)" doc_en:"turns this run's schedule on or off (default true)"`
	Steps      []ReminderStepIn `yaml:"steps" req:"true" doc:"passos relativos ao vencimento de cada cobrança, até 10" doc_en:"steps relative to each charge's due date, up to 10"`
	QuietHours *QuietHoursSpec  `yaml:"quiet_hours" doc:"quando se pode enviar (hora de São Paulo); padrão 08:00-20:00, dias úteis" doc_en:"when sending is allowed (São Paulo time); default 08:00-20:00, business days"`
	MaxPerPass int              `yaml:"max_per_pass" doc:"máximo de envios por passada (padrão 500)" doc_en:"most sends per pass (default 500)"`
	SMTP       *SMTPSpec        `yaml:"smtp" doc:"servidor de e-mail próprio (canal smtp); obrigatório para cobv" doc_en:"own mail server (smtp channel); required for cobv"`
	Message    *MessageSpec     `yaml:"message" doc:"a mensagem do canal smtp (modelos text/template)" doc_en:"the smtp channel's message (text/template)"`
}

// ReminderStepIn is one step of the régua as written.
type ReminderStepIn struct {
	At      string `yaml:"at" req:"true" doc:"dias relativos ao vencimento: -3d, 0d, +1d, +7d" doc_en:"days relative to the due date: -3d, 0d, +1d, +7d"`
	Channel string `yaml:"channel" req:"true" enum:"service,smtp" doc:"service: o próprio serviço reenvia (carnês e boletos, até o vencimento); smtp: e-mail do remessa" doc_en:"service: the service resends it (carnets and slips, until the due date); smtp: remessa's own e-mail"`
}

// QuietHoursSpec is when reminders may go out.
type QuietHoursSpec struct {
	From     string `yaml:"from" doc:"início, HH:MM (padrão 08:00)" doc_en:"start, HH:MM (default 08:00)"`
	To       string `yaml:"to" doc:"fim, HH:MM (padrão 20:00)" doc_en:"end, HH:MM (default 20:00)"`
	Weekends bool   `yaml:"weekends" doc:"envia também em fins de semana e feriados (padrão false)" doc_en:"also send on weekends and holidays (default false)"`
}

// SMTPSpec is the own mail server.
type SMTPSpec struct {
	Host     string `yaml:"host" req:"true" doc:"servidor SMTP" doc_en:"SMTP server"`
	Port     int    `yaml:"port" doc:"porta (padrão 587)" doc_en:"port (default 587)"`
	Username string `yaml:"username" secret:"true" doc:"usuário; apenas ${VAR}" doc_en:"user name; ${VAR} only"`
	Password string `yaml:"password" secret:"true" doc:"senha; apenas ${VAR}" doc_en:"password; ${VAR} only"`
	From     string `yaml:"from" req:"true" doc:"remetente, ex.: \"Escola <cobranca@escola.com.br>\"" doc_en:"sender, e.g. \"School <billing@school.example>\""`
	TLS      string `yaml:"tls" enum:"starttls,tls,none" doc:"starttls (padrão, obrigatório), tls (porta 465) ou none (só em 127.0.0.1)" doc_en:"starttls (default, mandatory), tls (port 465) or none (127.0.0.1 only)"`
	CAFile   string `yaml:"ca_file" doc:"certificado da autoridade do servidor (PEM), se não for pública" doc_en:"the server's certificate authority (PEM), when not a public one"`
}

// MessageSpec is the editable message.
type MessageSpec struct {
	Subject string `yaml:"subject" doc:"assunto (modelo)" doc_en:"subject (template)"`
	Body    string `yaml:"body" doc:"texto (modelo): {{ .Nome }}, {{ .Valor }}, {{ .ValorOriginal }}, {{ .Vencimento }}, {{ .DiasAtraso }}, {{ .Vencida }}, {{ .Descricao }}, {{ .PixCopiaECola }}, {{ .LinhaDigitavel }}, {{ .Link }}, {{ .PDF }}" doc_en:"text (template): the same fields"`
}

// Reminders is a resolved régua.
type Reminders struct {
	Enabled    bool           `json:"enabled"`
	Steps      []ReminderStep `json:"steps"`
	QuietFrom  int            `json:"quiet_from"` // minutes after midnight, São Paulo
	QuietTo    int            `json:"quiet_to"`
	Weekends   bool           `json:"weekends"`
	MaxPerPass int            `json:"max_per_pass"`
	SMTP       *SMTPSettings  `json:"smtp,omitempty"`
	Subject    string         `json:"subject"`
	Body       string         `json:"body"`
}

// ReminderStep is one step: Offset days from the due date, on Channel.
type ReminderStep struct {
	Offset  int    `json:"offset"`
	Channel string `json:"channel"`
}

// Label is the step as written: "-3d", "0d", "+7d".
func (s ReminderStep) Label() string { return OffsetLabel(s.Offset) }

// OffsetLabel writes a day offset as a step does.
func OffsetLabel(n int) string {
	if n > 0 {
		return fmt.Sprintf("+%dd", n)
	}
	return fmt.Sprintf("%dd", n)
}

// SMTPSettings is how the own e-mail is sent. Password and Username are
// secrets: never print them (String redacts them).
type SMTPSettings struct {
	Host     string `json:"host"`
	Port     int    `json:"port"`
	Username string `json:"username,omitempty"`
	Password string `json:"password,omitempty"`
	From     string `json:"from"`
	TLS      string `json:"tls"`
	CAFile   string `json:"ca_file,omitempty"`
	// CAPEM is the server's certificate authority itself (PEM), as the
	// desk keeps it; used instead of CAFile when set.
	CAPEM string `json:"ca_pem,omitempty"`
}

// String describes the settings with the credentials redacted.
func (s SMTPSettings) String() string {
	red := func(v string) string {
		if v == "" {
			return ""
		}
		return "***"
	}
	return fmt.Sprintf("{Host:%s Port:%d Username:%s Password:%s From:%s TLS:%s}", s.Host, s.Port, red(s.Username), red(s.Password), s.From, s.TLS)
}

// GoString is String, for %#v.
func (s SMTPSettings) GoString() string { return "pipeline.SMTPSettings" + s.String() }

// ReminderFields are the fields of the message templates.
type ReminderFields struct {
	Nome           string // payer's name
	Descricao      string // "a parcela 2 do carnê" / "o boleto" / "a cobrança Pix"
	Valor          string // what is owed today, fine and interest included ("R$ 1.234,56")
	ValorOriginal  string
	Vencimento     string // dd/mm/aaaa
	DiasAtraso     int
	Vencida        bool
	Parcela        int
	PixCopiaECola  string
	LinhaDigitavel string
	Link           string
	PDF            string
	Chave          string // the row's key
}

// ReminderProblem is one thing wrong with a régua: Field names the key
// under reminders ("steps/1/at"), for the job file's pointer or the
// desk's form.
type ReminderProblem struct {
	Field, Code, Message, MessageEN string
}

// ParseOffset reads a step's day offset: "-3d", "0d", "+7d", "7d", "-3".
func ParseOffset(s string) (int, bool) {
	t := strings.TrimSpace(strings.ToLower(s))
	t = strings.TrimSuffix(t, "d")
	t = strings.TrimPrefix(t, "+")
	n, err := strconv.Atoi(t)
	if err != nil || t == "" {
		return 0, false
	}
	return n, true
}

// ParseClock reads "HH:MM" into minutes after midnight.
func ParseClock(s string) (int, bool) {
	h, m, ok := strings.Cut(strings.TrimSpace(s), ":")
	if !ok || len(m) != 2 || len(h) == 0 || len(h) > 2 {
		return 0, false
	}
	hh, e1 := strconv.Atoi(h)
	mm, e2 := strconv.Atoi(m)
	if e1 != nil || e2 != nil || hh < 0 || hh > 24 || mm < 0 || mm > 59 || (hh == 24 && mm != 0) {
		return 0, false
	}
	return hh*60 + mm, true
}

// FormatClock writes minutes after midnight as "HH:MM".
func FormatClock(m int) string { return fmt.Sprintf("%02d:%02d", m/60, m%60) }

// ParseReminders resolves and checks a régua for a run of kind: every
// problem at once, each naming its field.
func ParseReminders(s *RemindersSpec, kind results.Kind) (*Reminders, []ReminderProblem) {
	var probs []ReminderProblem
	fail := func(field, code, pt, en string) {
		probs = append(probs, ReminderProblem{Field: field, Code: code, Message: pt, MessageEN: en})
	}
	r := &Reminders{Enabled: s.Enabled == nil || *s.Enabled, QuietFrom: DefaultQuietFrom, QuietTo: DefaultQuietTo,
		MaxPerPass: s.MaxPerPass, Subject: DefaultReminderSubject, Body: DefaultReminderBody}
	if r.MaxPerPass == 0 {
		r.MaxPerPass = DefaultMaxPerPass
	}
	if r.MaxPerPass < 1 || r.MaxPerPass > 100000 {
		fail("max_per_pass", "fora_limite", fmt.Sprintf("max_per_pass %d fora do limite de 1 a 100000", s.MaxPerPass),
			fmt.Sprintf("max_per_pass %d out of range 1 to 100000", s.MaxPerPass))
	}
	if len(s.Steps) == 0 {
		fail("steps", "regua_vazia", "a régua precisa de ao menos um passo (ex.: at: -3d, channel: service)",
			"the schedule needs at least one step (e.g. at: -3d, channel: service)")
	}
	if len(s.Steps) > MaxReminderSteps {
		fail("steps", "fora_limite", fmt.Sprintf("a régua tem %d passos; o máximo é %d", len(s.Steps), MaxReminderSteps),
			fmt.Sprintf("the schedule has %d steps; at most %d", len(s.Steps), MaxReminderSteps))
	}
	seen := map[ReminderStep]int{}
	needSMTP := -1
	for i, st := range s.Steps {
		f := fmt.Sprintf("steps/%d", i)
		n, ok := ParseOffset(st.At)
		if !ok {
			fail(f+"/at", "passo_invalido", fmt.Sprintf("at %q inválido: use dias relativos ao vencimento, como -3d, 0d ou +7d", st.At),
				fmt.Sprintf("invalid at %q: use days relative to the due date, such as -3d, 0d or +7d", st.At))
			continue
		}
		if n < minReminderOffset || n > maxReminderOffset {
			fail(f+"/at", "fora_limite", fmt.Sprintf("at %q fora do limite de %dd a +%dd", st.At, minReminderOffset, maxReminderOffset),
				fmt.Sprintf("at %q out of range %dd to +%dd", st.At, minReminderOffset, maxReminderOffset))
			continue
		}
		step := ReminderStep{Offset: n, Channel: st.Channel}
		switch st.Channel {
		case ChannelService:
			if kind == results.Cobv {
				fail(f+"/channel", "canal_invalido", "cobranças Pix (cobv) não têm reenvio pelo serviço: use channel: smtp",
					"due-date Pix charges (cobv) have no resend by the service: use channel: smtp")
			} else if n > 0 {
				fail(f+"/channel", "canal_invalido", fmt.Sprintf("o serviço só reenvia cobranças em espera, até o vencimento: %s depois do vencimento precisa de channel: smtp", OffsetLabel(n)),
					fmt.Sprintf("the service only resends waiting charges, until the due date: %s after the due date needs channel: smtp", OffsetLabel(n)))
			}
		case ChannelSMTP:
			if needSMTP < 0 {
				needSMTP = i
			}
		case "":
		default:
			fail(f+"/channel", "valor_nao_permitido", fmt.Sprintf("channel %q: use service ou smtp", st.Channel), fmt.Sprintf("channel %q: use service or smtp", st.Channel))
		}
		if j, dup := seen[step]; dup {
			fail(f, "passo_repetido", fmt.Sprintf("o passo %s por %s repete o passo %d", OffsetLabel(n), st.Channel, j+1),
				fmt.Sprintf("step %s by %s repeats step %d", OffsetLabel(n), st.Channel, j+1))
			continue
		}
		seen[step] = i
		r.Steps = append(r.Steps, step)
	}
	if q := s.QuietHours; q != nil {
		r.Weekends = q.Weekends
		if q.From != "" {
			if m, ok := ParseClock(q.From); ok {
				r.QuietFrom = m
			} else {
				fail("quiet_hours/from", "hora_invalida", fmt.Sprintf("hora %q inválida: use HH:MM", q.From), fmt.Sprintf("invalid time %q: use HH:MM", q.From))
			}
		}
		if q.To != "" {
			if m, ok := ParseClock(q.To); ok {
				r.QuietTo = m
			} else {
				fail("quiet_hours/to", "hora_invalida", fmt.Sprintf("hora %q inválida: use HH:MM", q.To), fmt.Sprintf("invalid time %q: use HH:MM", q.To))
			}
		}
		if r.QuietFrom >= r.QuietTo {
			fail("quiet_hours", "janela_vazia", fmt.Sprintf("a janela de envio %s-%s está vazia: from deve ser antes de to", FormatClock(r.QuietFrom), FormatClock(r.QuietTo)),
				fmt.Sprintf("the sending window %s-%s is empty: from must be before to", FormatClock(r.QuietFrom), FormatClock(r.QuietTo)))
		}
	}
	if m := s.SMTP; m != nil {
		r.SMTP = &SMTPSettings{Host: strings.TrimSpace(m.Host), Port: m.Port, Username: m.Username, Password: m.Password, From: strings.TrimSpace(m.From), TLS: m.TLS, CAFile: m.CAFile}
		if r.SMTP.Port == 0 {
			r.SMTP.Port = 587
			if m.TLS == "tls" {
				r.SMTP.Port = 465
			}
		}
		if r.SMTP.TLS == "" {
			r.SMTP.TLS = "starttls"
		}
		if r.SMTP.Port < 1 || r.SMTP.Port > 65535 {
			fail("smtp/port", "fora_limite", fmt.Sprintf("porta %d fora do limite de 1 a 65535", m.Port), fmt.Sprintf("port %d out of range 1 to 65535", m.Port))
		}
		if r.SMTP.Host == "" {
			fail("smtp/host", "obrigatorio", "informe o servidor SMTP em smtp.host", "name the SMTP server in smtp.host")
		}
		if r.SMTP.TLS == "none" && r.SMTP.Host != "127.0.0.1" && r.SMTP.Host != "localhost" && r.SMTP.Host != "::1" {
			fail("smtp/tls", "tls_obrigatorio", fmt.Sprintf("tls: none só é aceito em 127.0.0.1 (senha e dados dos pagadores não trafegam sem criptografia); %s precisa de starttls ou tls", r.SMTP.Host),
				fmt.Sprintf("tls: none is only accepted on 127.0.0.1 (passwords and payers' data never travel unencrypted); %s needs starttls or tls", r.SMTP.Host))
		}
		if !validSender(r.SMTP.From) {
			fail("smtp/from", "email_invalido", fmt.Sprintf("remetente %q inválido: use \"Nome <endereco@dominio>\" ou um endereço", m.From),
				fmt.Sprintf("invalid sender %q: use \"Name <address@domain>\" or an address", m.From))
		}
	} else if needSMTP >= 0 {
		fail(fmt.Sprintf("steps/%d/channel", needSMTP), "smtp_ausente", "channel: smtp precisa da seção reminders.smtp (servidor, remetente, credenciais)",
			"channel: smtp needs the reminders.smtp section (server, sender, credentials)")
	}
	if m := s.Message; m != nil {
		if m.Subject != "" {
			r.Subject = m.Subject
		}
		if m.Body != "" {
			r.Body = m.Body
		}
	}
	for _, t := range []struct{ field, text string }{{"message/subject", r.Subject}, {"message/body", r.Body}} {
		if err := CheckReminderTemplate(t.text); err != nil {
			fail(t.field, "modelo_invalido", "modelo inválido: "+err.Error(), "invalid template: "+err.Error())
		}
	}
	return r, probs
}

// CheckReminderTemplate parses a message template and runs it on sample
// fields, so a misspelt field is an error when the régua is written, not
// when the first e-mail is due.
func CheckReminderTemplate(text string) error {
	_, err := RenderReminder(text, ReminderFields{Nome: "Maria", Valor: "R$ 1,00", Vencimento: "01/01/2027"})
	return err
}

// RenderReminder runs a message template (text/template; a field it does
// not know is an error) on f.
func RenderReminder(text string, f ReminderFields) (string, error) {
	t, err := template.New("m").Option("missingkey=error").Parse(text)
	if err != nil {
		return "", err
	}
	var b strings.Builder
	if err := t.Execute(&b, f); err != nil {
		return "", err
	}
	return b.String(), nil
}

// ExampleReminder is the reminder the desk's preview shows a message on:
// parcel 3 of a carnet, 2 days late, with a fine and interest.
var ExampleReminder = ReminderFields{Nome: "Maria Souza", Descricao: "a parcela 3 do carnê", Valor: "R$ 306,20",
	ValorOriginal: "R$ 300,00", Vencimento: "10/03/2027", DiasAtraso: 2, Vencida: true, Parcela: 3,
	PixCopiaECola:  "00020101021226830014br.gov.bcb.pix2561pix.example.com/qr/v2/cobv/exemplo5204000053039865802BR5913Escola Exemplo6009Sao Paulo62070503***6304ABCD",
	LinhaDigitavel: "00190.00009 01234.567893 01234.567899 1 97470000030620", Link: "https://pagamento.example.com/boleto/exemplo",
	PDF: "https://pagamento.example.com/boleto/exemplo.pdf", Chave: "A0001"}

// validSender accepts "address" or "Name <address>".
func validSender(s string) bool {
	if i := strings.LastIndexByte(s, '<'); i >= 0 && strings.HasSuffix(s, ">") {
		s = s[i+1 : len(s)-1]
	}
	return rules.ValidEmail(s)
}

// checkReminders resolves the job's reminders section into j.Reminders.
func (c *checker) checkReminders(s *RemindersSpec) {
	if s == nil {
		return
	}
	r, probs := ParseReminders(s, c.j.Kind)
	for _, p := range probs {
		c.fail("/reminders/"+p.Field, p.Code, p.Message, p.MessageEN)
	}
	if r.SMTP != nil && r.SMTP.CAFile != "" && !filepath.IsAbs(r.SMTP.CAFile) {
		r.SMTP.CAFile = filepath.Join(c.j.Dir, r.SMTP.CAFile)
	}
	c.j.Reminders = r
}
