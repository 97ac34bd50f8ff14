package web

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"remessa/pipeline"
	"remessa/pipeline/remind"
	"remessa/pipeline/results"
)

// The régua de cobrança as the desk sets it: a desk default (the admin's)
// and, per run, the default, a régua of its own or none (an operator's),
// with the desk's SMTP server and message. Each is turned into the same
// pipeline.Reminders a job file's reminders: section gives (through
// pipeline.ParseReminders, so the desk checks a régua exactly as the job
// loader does) and run by pipeline/remind; a run whose job file has a
// régua keeps it. The tables are web.db's step 4 (regua_schema.go).

// reguaConfig is a régua as the desk keeps it (JSON in web.db): the desk's
// default or one run's own.
type reguaConfig struct {
	Enabled    bool        `json:"enabled"`
	Steps      []reguaStep `json:"steps"`
	QuietFrom  string      `json:"quiet_from"` // HH:MM, São Paulo
	QuietTo    string      `json:"quiet_to"`
	Weekends   bool        `json:"weekends"`
	MaxPerPass int         `json:"max_per_pass"`
}

// reguaStep is one step as written: "-3d", and a channel.
type reguaStep struct {
	At      string `json:"at"`
	Channel string `json:"channel"`
}

// suggestedRegua is what the admin's page offers before a default is
// saved: reminders before and on the due date by the service's own
// e-mail, then the desk's own after it (off until the admin turns it on).
var suggestedRegua = reguaConfig{Steps: []reguaStep{{"-3d", pipeline.ChannelService}, {"0d", pipeline.ChannelService},
	{"+1d", pipeline.ChannelSMTP}, {"+7d", pipeline.ChannelSMTP}, {"+15d", pipeline.ChannelSMTP}},
	QuietFrom: "08:00", QuietTo: "20:00", MaxPerPass: pipeline.DefaultMaxPerPass}

// smtpConfig is the desk's mail server without its credentials.
type smtpConfig struct {
	Host  string
	Port  int
	TLS   string // starttls, tls, none
	From  string
	CAPEM string // the server's own certificate authority, when not a public one
}

// smtpSecrets are the server's credentials: sealed in web.db, never shown.
type smtpSecrets struct {
	Username string `json:"username"`
	Password string `json:"password"`
}

// deskRegua is the desk's régua settings (the one row of regua_desk).
type deskRegua struct {
	Saved      bool // a default was saved (else the suggestion is shown, off)
	Config     reguaConfig
	Subject    string // "" = pipeline.DefaultReminderSubject
	Body       string
	SMTP       smtpConfig
	HasSecrets bool
	sealed     []byte
}

// reguaSealAAD binds the sealed SMTP credentials to their row.
var reguaSealAAD = []byte("regua:smtp")

// loadDeskRegua reads the desk's régua settings (the suggestion, off,
// when none were saved).
func (s *Server) loadDeskRegua(ctx context.Context) (*deskRegua, error) {
	d := &deskRegua{Config: suggestedRegua}
	var cfg string
	err := s.db.QueryRowContext(ctx, `SELECT config, subject, body, smtp_host, smtp_port, smtp_tls, smtp_from, smtp_ca, smtp_secrets FROM regua_desk WHERE id = 1`).
		Scan(&cfg, &d.Subject, &d.Body, &d.SMTP.Host, &d.SMTP.Port, &d.SMTP.TLS, &d.SMTP.From, &d.SMTP.CAPEM, &d.sealed)
	if errors.Is(err, sql.ErrNoRows) {
		return d, nil
	}
	if err != nil {
		return nil, fmt.Errorf("régua da mesa: %w", err)
	}
	if cfg != "" {
		var c reguaConfig
		if err := json.Unmarshal([]byte(cfg), &c); err != nil {
			return nil, fmt.Errorf("régua da mesa ilegível: %w", err)
		}
		d.Config, d.Saved = c, true
	}
	d.HasSecrets = len(d.sealed) > 0
	return d, nil
}

// smtpSecretsOf opens the sealed SMTP credentials (zero when none).
func (s *Server) smtpSecretsOf(d *deskRegua) (smtpSecrets, error) {
	var sec smtpSecrets
	if len(d.sealed) == 0 {
		return sec, nil
	}
	plain, err := unseal(s.key, d.sealed, reguaSealAAD)
	if err != nil {
		return sec, err
	}
	if err := json.Unmarshal(plain, &sec); err != nil {
		return sec, errors.New("credenciais do SMTP ilegíveis")
	}
	return sec, nil
}

// Per-run modes.
const (
	reguaModeDefault = "default" // the desk's default
	reguaModeOwn     = "own"     // a régua of the run's own
	reguaModeOff     = "off"     // no reminders for this run
)

// runRegua is one run's setting (regua_runs; mode default when no row).
type runRegua struct {
	Mode   string
	Config reguaConfig
}

func (s *Server) loadRunRegua(ctx context.Context, runID int64) (*runRegua, error) {
	rr := &runRegua{Mode: reguaModeDefault}
	var cfg string
	err := s.db.QueryRowContext(ctx, `SELECT mode, config FROM regua_runs WHERE run_id = ?`, runID).Scan(&rr.Mode, &cfg)
	if errors.Is(err, sql.ErrNoRows) {
		return rr, nil
	}
	if err != nil {
		return nil, fmt.Errorf("régua da execução %d: %w", runID, err)
	}
	if cfg != "" {
		if err := json.Unmarshal([]byte(cfg), &rr.Config); err != nil {
			return nil, fmt.Errorf("régua da execução %d ilegível: %w", runID, err)
		}
	}
	return rr, nil
}

// Where a run's régua comes from.
const (
	reguaFromJob     = "job"     // the job file's reminders: section
	reguaFromOwn     = "own"     // the run's own, set in the desk
	reguaFromDefault = "default" // the desk's default
	reguaFromOff     = "off"     // turned off for this run
	reguaFromNone    = "none"    // no régua: the default is off or empty
	reguaFromCluster = "cluster" // a run on PostgreSQL (--db): no régua runs over it
)

// reguaFor is the régua the desk runs for rec and where it comes from:
// the run's setting "off" turns every régua off (the job file's too); a
// run on PostgreSQL has none (reguaFromCluster);
// else the job file's reminders: section when it has one; else the run's
// own; else the desk's default when it is on. nil when none applies. An
// error says why the régua that applies cannot be used (shown on the run
// page, logged by the follow job).
func (s *Server) reguaFor(ctx context.Context, rec *runRecord, getenv func(string) (string, bool)) (*pipeline.Reminders, string, error) {
	rr, err := s.loadRunRegua(ctx, rec.ID)
	if err != nil {
		return nil, "", err
	}
	if rr.Mode == reguaModeOff {
		return nil, reguaFromOff, nil
	}
	if rec.Cluster {
		// a run on PostgreSQL keeps its journal in the database, and the
		// régua (pipeline/remind), like the ledger's sync it starts with,
		// reads the run folder's: no pass runs over it (queueFollows
		// leaves it out), which the run page says as it is
		return nil, reguaFromCluster, nil
	}
	if r, err := remind.JobReminders(ctx, rec.Dir, getenv); err != nil {
		return nil, reguaFromJob, err
	} else if r != nil {
		return r, reguaFromJob, nil
	}
	desk, err := s.loadDeskRegua(ctx)
	if err != nil {
		return nil, "", err
	}
	kind := results.Kind(rec.Kind)
	switch {
	case rr.Mode == reguaModeOwn:
		r, probs, err := s.buildRegua(rr.Config, kind, desk)
		if err != nil {
			return nil, reguaFromOwn, err
		}
		if len(probs) > 0 {
			return nil, reguaFromOwn, problemsError(probs)
		}
		return r, reguaFromOwn, nil
	case !desk.Saved || !desk.Config.Enabled || len(desk.Config.Steps) == 0:
		return nil, reguaFromNone, nil
	}
	cfg := desk.Config
	if kind == results.Cobv {
		cfg = cobvSteps(cfg)
	}
	r, probs, err := s.buildRegua(cfg, kind, desk)
	if err != nil {
		return nil, reguaFromDefault, err
	}
	if len(probs) > 0 {
		return nil, reguaFromDefault, problemsError(probs)
	}
	return r, reguaFromDefault, nil
}

// cobvSteps is the desk default for a cobv run: the service has no resend
// of a due-date Pix charge, so its steps on the service's e-mail go by the
// desk's own (one step a day).
func cobvSteps(c reguaConfig) reguaConfig {
	out := c
	out.Steps = nil
	seen := map[string]bool{}
	for _, st := range c.Steps {
		n, ok := pipeline.ParseOffset(st.At)
		if !ok {
			out.Steps = append(out.Steps, st)
			continue
		}
		at := pipeline.OffsetLabel(n)
		if seen[at] {
			continue
		}
		seen[at] = true
		out.Steps = append(out.Steps, reguaStep{At: at, Channel: pipeline.ChannelSMTP})
	}
	return out
}

// problemsError joins a régua's problems into one error (pt-BR).
func problemsError(probs []pipeline.ReminderProblem) error {
	var b []string
	for _, p := range probs {
		b = append(b, p.Message)
	}
	return errors.New(strings.Join(b, "; "))
}

// buildRegua turns a régua of the desk into what pipeline/remind runs,
// with the desk's SMTP server and message, checked by
// pipeline.ParseReminders for a run of kind.
func (s *Server) buildRegua(c reguaConfig, kind results.Kind, desk *deskRegua) (*pipeline.Reminders, []pipeline.ReminderProblem, error) {
	enabled := c.Enabled
	spec := &pipeline.RemindersSpec{Enabled: &enabled, MaxPerPass: c.MaxPerPass,
		QuietHours: &pipeline.QuietHoursSpec{From: c.QuietFrom, To: c.QuietTo, Weekends: c.Weekends},
		Message:    &pipeline.MessageSpec{Subject: desk.Subject, Body: desk.Body}}
	for _, st := range c.Steps {
		spec.Steps = append(spec.Steps, pipeline.ReminderStepIn{At: st.At, Channel: st.Channel})
	}
	if desk.SMTP.Host != "" {
		sec, err := s.smtpSecretsOf(desk)
		if err != nil {
			return nil, nil, fmt.Errorf("servidor de e-mail da mesa: %w", err)
		}
		spec.SMTP = &pipeline.SMTPSpec{Host: desk.SMTP.Host, Port: desk.SMTP.Port, Username: sec.Username, Password: sec.Password,
			From: desk.SMTP.From, TLS: desk.SMTP.TLS}
	}
	r, probs := pipeline.ParseReminders(spec, kind)
	for i := range probs {
		if strings.HasPrefix(probs[i].Field, "steps/") && probs[i].Code == "smtp_ausente" {
			probs[i].Message = "o e-mail próprio precisa do servidor de e-mail (SMTP) da mesa, que um administrador configura em Régua de cobrança"
			probs[i].MessageEN = "the own e-mail needs the desk's mail server (SMTP), which an administrator sets in Payment reminders"
		}
	}
	if r.SMTP != nil {
		r.SMTP.CAPEM = desk.SMTP.CAPEM
	}
	return r, probs, nil
}
