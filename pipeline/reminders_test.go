package pipeline

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

const remindersBase = `version: 1
input:
  file: alunos.csv
issue:
  %s
reminders:
%s`

func loadReminders(t *testing.T, issue, rem string, env map[string]string) (*Job, error) {
	t.Helper()
	dir := t.TempDir()
	p := filepath.Join(dir, "job.yaml")
	body := strings.Replace(strings.Replace(remindersBase, "%s", issue, 1), "%s", rem, 1)
	if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
	return Load(p, LoadOptions{Now: func() time.Time { return time.Date(2026, 11, 28, 12, 0, 0, 0, time.UTC) },
		Getenv: func(k string) (string, bool) { v, ok := env[k]; return v, ok }})
}

// TestRemindersLoad: a régua is resolved with its defaults; every mistake
// comes back at its line and column, credentials only by ${VAR}.
func TestRemindersLoad(t *testing.T) {
	carnets := "carnets: {repeats: 3, first_due: 2027-03-10}"
	j, err := loadReminders(t, carnets, `  steps:
    - {at: -3d, channel: service}
    - {at: +7d, channel: smtp}
  smtp:
    host: smtp.escola.example.com
    username: ${SMTP_USER}
    password: ${SMTP_PASS}
    from: "Escola <cobranca@escola.example.com>"
`, map[string]string{"SMTP_USER": "u", "SMTP_PASS": "segredo"})
	if err != nil {
		t.Fatal(err)
	}
	r := j.Reminders
	if !r.Enabled || len(r.Steps) != 2 || r.Steps[1] != (ReminderStep{Offset: 7, Channel: ChannelSMTP}) || r.QuietFrom != 8*60 || r.QuietTo != 20*60 ||
		r.Weekends || r.MaxPerPass != 500 || r.SMTP.Port != 587 || r.SMTP.TLS != "starttls" || r.SMTP.Password != "segredo" {
		t.Errorf("resolved régua: %+v %+v", r, r.SMTP)
	}
	if s := r.SMTP.String() + r.SMTP.GoString(); strings.Contains(s, "segredo") {
		t.Errorf("the SMTP settings print their password: %s", s)
	}
	cases := []struct{ issue, rem, want string }{
		{carnets, "  steps:\n    - {at: amanhã, channel: service}\n", `job.yaml:8:12: at "amanhã" inválido`},
		{carnets, "  steps:\n    - {at: +1d, channel: service}\n", `job.yaml:8:26: o serviço só reenvia cobranças em espera`},
		{carnets, "  steps:\n    - {at: +1d, channel: fax}\n", `job.yaml:8:26: valor "fax" não permitido`},
		{carnets, "  steps:\n    - {at: +1d, channel: smtp}\n", `job.yaml:8:26: channel: smtp precisa da seção reminders.smtp`},
		{"cobv: {chave: a@b.com, due: 2027-03-10}", "  steps:\n    - {at: -1d, channel: service}\n", `cobranças Pix (cobv) não têm reenvio pelo serviço`},
		{carnets, "  steps: []\n", `a régua precisa de ao menos um passo`},
		{carnets, "  steps:\n    - {at: 0d, channel: service}\n  quiet_hours: {from: \"21:00\", to: \"08:00\"}\n", `job.yaml:9:16: a janela de envio 21:00-08:00 está vazia`},
		{carnets, "  steps:\n    - {at: 0d, channel: smtp}\n  smtp: {host: smtp.example.com, from: x@y.com, password: abc}\n", `password não pode ser escrito no arquivo de job`},
		{carnets, "  steps:\n    - {at: 0d, channel: smtp}\n  smtp: {host: smtp.example.com, from: x@y.com, tls: none}\n", `tls: none só é aceito em 127.0.0.1`},
		{carnets, "  steps:\n    - {at: 0d, channel: service}\n  message: {body: \"{{ .Nomee }}\"}\n", `job.yaml:9:19: modelo inválido`},
		{carnets, "  steps:\n    - {at: 0d, channel: service}\n    - {at: 0d, channel: service}\n", `o passo 0d por service repete o passo 1`},
	}
	for _, c := range cases {
		_, err := loadReminders(t, c.issue, c.rem, nil)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%q: got %v, want %q", c.rem, err, c.want)
		}
	}
}

// TestParseClockAndOffset: the régua's small syntaxes.
func TestParseClockAndOffset(t *testing.T) {
	for s, want := range map[string]int{"-3d": -3, "0d": 0, "+7d": 7, "15d": 15, "-3": -3} {
		if n, ok := ParseOffset(s); !ok || n != want {
			t.Errorf("ParseOffset(%q) = %d %v, want %d", s, n, ok, want)
		}
	}
	for _, s := range []string{"", "d", "+", "3 dias", "x3d"} {
		if _, ok := ParseOffset(s); ok {
			t.Errorf("ParseOffset(%q) accepted", s)
		}
	}
	for s, want := range map[string]int{"08:00": 480, "8:30": 510, "20:00": 1200, "24:00": 1440} {
		if n, ok := ParseClock(s); !ok || n != want {
			t.Errorf("ParseClock(%q) = %d %v, want %d", s, n, ok, want)
		}
	}
	for _, s := range []string{"25:00", "08:60", "8", "08:0", "24:01"} {
		if _, ok := ParseClock(s); ok {
			t.Errorf("ParseClock(%q) accepted", s)
		}
	}
}
