package web

import (
	"context"
	"crypto/x509"
	"encoding/json"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"unicode"

	"remessa/pipeline"
	"remessa/pipeline/results"
)

// The régua's pages: the admin's (the desk default, the SMTP server, the
// message) and each run's (default, its own or none), an operator's.

func (s *Server) reguaRoutes() []route {
	return []route{
		{"GET /admin/regua", RoleAdmin, s.adminReguaPage},
		{"POST /admin/regua", RoleAdmin, s.adminSaveRegua},
		{"POST /admin/regua/smtp", RoleAdmin, s.adminSaveSMTP},
		{"POST /admin/regua/mensagem", RoleAdmin, s.adminSaveMessage},
		{"GET /execucoes/{id}/regua", RoleOperator, s.runReguaPage},
		{"POST /execucoes/{id}/regua", RoleOperator, s.saveRunRegua},
	}
}

// Limits of the forms.
const (
	maxMessageSubject = 300
	maxMessageBody    = 10000
	maxCAPEM          = 20000
)

// reguaForm is a régua's form: one row per step (filled, then empty ones
// to add steps), the quiet hours and the cap.
type reguaForm struct {
	Enabled    bool
	Rows       []reguaRow
	QuietFrom  string
	QuietTo    string
	Weekends   bool
	MaxPerPass string
}

// reguaRow is one step's row: Days before or after the due date (When
// "antes", "no_dia", "depois") on Channel.
type reguaRow struct {
	Days, When, Channel string
}

// formOf is the form showing c, with empty rows to add steps.
func formOf(c reguaConfig) reguaForm {
	f := reguaForm{Enabled: c.Enabled, QuietFrom: c.QuietFrom, QuietTo: c.QuietTo, Weekends: c.Weekends, MaxPerPass: strconv.Itoa(c.MaxPerPass)}
	if f.QuietFrom == "" {
		f.QuietFrom = pipeline.FormatClock(pipeline.DefaultQuietFrom)
	}
	if f.QuietTo == "" {
		f.QuietTo = pipeline.FormatClock(pipeline.DefaultQuietTo)
	}
	if c.MaxPerPass == 0 {
		f.MaxPerPass = strconv.Itoa(pipeline.DefaultMaxPerPass)
	}
	for _, st := range c.Steps {
		n, ok := pipeline.ParseOffset(st.At)
		row := reguaRow{Channel: st.Channel}
		switch {
		case !ok:
			row.Days, row.When = st.At, "depois"
		case n < 0:
			row.Days, row.When = strconv.Itoa(-n), "antes"
		case n == 0:
			row.When = "no_dia"
		default:
			row.Days, row.When = strconv.Itoa(n), "depois"
		}
		f.Rows = append(f.Rows, row)
	}
	return f.padded()
}

// padded drops the empty rows at the end and adds two (after the due
// date, own e-mail), so the form offers two more steps and at least five
// rows, up to the most a régua has.
func (f reguaForm) padded() reguaForm {
	for len(f.Rows) > 0 {
		last := f.Rows[len(f.Rows)-1]
		if last.Days != "" || last.When == "no_dia" {
			break
		}
		f.Rows = f.Rows[:len(f.Rows)-1]
	}
	for n := 0; len(f.Rows) < pipeline.MaxReminderSteps && (n < 2 || len(f.Rows) < 5); n++ {
		f.Rows = append(f.Rows, reguaRow{When: "depois", Channel: pipeline.ChannelSMTP})
	}
	return f
}

// readReguaForm reads a régua's form into a reguaConfig; errs gets what
// is wrong with the rows themselves (keyed "passo.N", N from 0). rowOf maps
// each step of the config to its row.
func readReguaForm(r *http.Request, lang string, errs map[string]string) (reguaForm, reguaConfig, []int) {
	f := reguaForm{Enabled: r.PostFormValue("ligada") == "1", QuietFrom: strings.TrimSpace(r.PostFormValue("de")),
		QuietTo: strings.TrimSpace(r.PostFormValue("ate")), Weekends: r.PostFormValue("fins_de_semana") == "1",
		MaxPerPass: strings.TrimSpace(r.PostFormValue("maximo"))}
	days, when, chans := r.PostForm["passo_dias"], r.PostForm["passo_quando"], r.PostForm["passo_canal"]
	c := reguaConfig{Enabled: f.Enabled, QuietFrom: f.QuietFrom, QuietTo: f.QuietTo, Weekends: f.Weekends}
	var rowOf []int
	for i := 0; i < len(days) && i < len(when) && i < len(chans) && i < 3*pipeline.MaxReminderSteps; i++ {
		row := reguaRow{Days: strings.TrimSpace(days[i]), When: when[i], Channel: chans[i]}
		f.Rows = append(f.Rows, row)
		if row.Days == "" && row.When != "no_dia" {
			continue // an empty row
		}
		n := 0
		if row.When != "no_dia" {
			v, err := strconv.Atoi(row.Days)
			if err != nil || v < 0 || v > 999 {
				errs[fmt.Sprintf("passo.%d", i)] = fmt.Sprintf(tr(lang, "regua.err.days"), row.Days)
				continue
			}
			n = v
			switch row.When {
			case "antes":
				n = -v
			case "depois":
			default:
				errs[fmt.Sprintf("passo.%d", i)] = tr(lang, "regua.err.when")
				continue
			}
		}
		c.Steps = append(c.Steps, reguaStep{At: pipeline.OffsetLabel(n), Channel: row.Channel})
		rowOf = append(rowOf, i)
	}
	if f.MaxPerPass == "" {
		c.MaxPerPass = pipeline.DefaultMaxPerPass
	} else if v, err := strconv.Atoi(strings.ReplaceAll(f.MaxPerPass, ".", "")); err != nil {
		errs["maximo"] = tr(lang, "regua.err.max")
	} else {
		c.MaxPerPass = v
	}
	return f.padded(), c, rowOf
}

// reguaProblems puts the problems pipeline.ParseReminders found into errs,
// each under its form field.
func reguaProblems(probs []pipeline.ReminderProblem, rowOf []int, lang string, errs map[string]string) {
	for _, p := range probs {
		msg := deskWords(p, lang)
		key := "passos"
		switch {
		case strings.HasPrefix(p.Field, "steps/"):
			var k int
			if _, err := fmt.Sscanf(p.Field, "steps/%d", &k); err == nil && k >= 0 && k < len(rowOf) {
				key = fmt.Sprintf("passo.%d", rowOf[k])
			}
		case p.Field == "quiet_hours/from":
			key = "de"
		case strings.HasPrefix(p.Field, "quiet_hours"):
			key = "ate"
		case p.Field == "max_per_pass":
			key = "maximo"
		}
		if errs[key] == "" {
			errs[key] = msg
		} else {
			errs[key] += "; " + msg
		}
	}
}

// deskWords is a problem of pipeline.ParseReminders in the desk's words:
// the form's fields instead of the job file's keys (at, channel: smtp,
// from, to).
func deskWords(p pipeline.ReminderProblem, lang string) string {
	key := ""
	switch {
	case p.Code == "canal_invalido" && strings.Contains(p.Message, "cobv"):
		key = "regua.p.cobv"
	case p.Code == "canal_invalido":
		key = "regua.p.after"
	case p.Code == "janela_vazia":
		key = "regua.p.window"
	case p.Code == "fora_limite" && p.Field == "max_per_pass":
		key = "regua.p.max"
	case p.Code == "fora_limite" && strings.HasSuffix(p.Field, "/at"):
		key = "regua.p.range"
	case p.Code == "passo_repetido":
		key = "regua.p.repeated"
	case p.Code == "regua_vazia":
		key = "regua.err.nosteps"
	}
	if key != "" {
		return tr(lang, key)
	}
	if lang == "en" && p.MessageEN != "" {
		return p.MessageEN
	}
	return p.Message
}

// checkRegua checks c as the job loader checks a reminders: section, for a
// run of kind with the desk's SMTP server and message. A régua turned off
// with no step is fine (nothing to run).
func (s *Server) checkRegua(c reguaConfig, kind results.Kind, desk *deskRegua, rowOf []int, lang string, errs map[string]string) error {
	if !c.Enabled && len(c.Steps) == 0 {
		return nil
	}
	_, probs, err := s.buildRegua(c, kind, desk)
	if err != nil {
		return err
	}
	reguaProblems(probs, rowOf, lang, errs)
	return nil
}

// stepsText says a régua's steps in words ("3 dias antes · e-mail do
// serviço").
func stepsText(c reguaConfig, lang string) []string {
	var out []string
	for _, st := range c.Steps {
		if n, ok := pipeline.ParseOffset(st.At); ok {
			out = append(out, stepWords(n, lang)+" · "+tr(lang, "rem.ch."+st.Channel))
		}
	}
	return out
}

// ---- the admin's page ----

// smtpForm is the SMTP server's form (never its credentials).
type smtpForm struct {
	Host, Port, TLS, From, CA string
}

type adminReguaData struct {
	Form       reguaForm
	Errs       map[string]string
	SMTP       smtpForm
	SMTPErrs   map[string]string
	SMTPSet    bool // a server is set
	HasSecrets bool
	Subject    string
	Body       string
	MsgErrs    map[string]string
	Preview    struct{ Subject, Body string }
	Fields     []reminderField
	Channels   []string
	Saved      bool
	// CobvNote: the default is on but there is no SMTP server, so cobv
	// runs (no resend by the service) get no reminder
	CobvNote bool
}

// reminderField is one field the message may use, and what it holds.
type reminderField struct{ Name, What string }

var reminderFields = []string{"Nome", "Descricao", "Valor", "ValorOriginal", "Vencimento", "Vencida", "DiasAtraso", "Parcela",
	"PixCopiaECola", "LinhaDigitavel", "Link", "PDF", "Chave"}

func (s *Server) adminReguaData(ctx context.Context, lang string) (*adminReguaData, *deskRegua, error) {
	desk, err := s.loadDeskRegua(ctx)
	if err != nil {
		return nil, nil, err
	}
	d := &adminReguaData{Form: formOf(desk.Config), Errs: map[string]string{}, SMTPErrs: map[string]string{}, MsgErrs: map[string]string{},
		SMTPSet: desk.SMTP.Host != "", HasSecrets: desk.HasSecrets, Subject: desk.Subject, Body: desk.Body, Saved: desk.Saved,
		Channels: []string{pipeline.ChannelService, pipeline.ChannelSMTP}}
	d.CobvNote = desk.Saved && desk.Config.Enabled && desk.SMTP.Host == ""
	d.SMTP = smtpForm{Host: desk.SMTP.Host, TLS: desk.SMTP.TLS, From: desk.SMTP.From, CA: desk.SMTP.CAPEM}
	if desk.SMTP.Port != 0 {
		d.SMTP.Port = strconv.Itoa(desk.SMTP.Port)
	}
	if d.SMTP.TLS == "" {
		d.SMTP.TLS = "starttls"
	}
	if d.Subject == "" {
		d.Subject = pipeline.DefaultReminderSubject
	}
	if d.Body == "" {
		d.Body = pipeline.DefaultReminderBody
	}
	for _, f := range reminderFields {
		d.Fields = append(d.Fields, reminderField{Name: "{{ ." + f + " }}", What: tr(lang, "regua.field."+f)})
	}
	d.preview()
	return d, desk, nil
}

// preview renders the message on pipeline.ExampleReminder.
func (d *adminReguaData) preview() {
	d.Preview.Subject, _ = pipeline.RenderReminder(d.Subject, pipeline.ExampleReminder)
	d.Preview.Body, _ = pipeline.RenderReminder(d.Body, pipeline.ExampleReminder)
}

func (s *Server) renderAdminRegua(w http.ResponseWriter, r *http.Request, ss *session, d *adminReguaData, status int) {
	p := s.page(r, ss, tr(langOf(r), "regua.admin.title"), d)
	p.Status = status
	if len(d.Errs)+len(d.SMTPErrs)+len(d.MsgErrs) > 0 {
		p.Error = tr(p.Lang, "admin.err.form")
	}
	s.render(w, "admin_regua", p)
}

func (s *Server) adminReguaPage(w http.ResponseWriter, r *http.Request, ss *session) {
	d, _, err := s.adminReguaData(r.Context(), langOf(r))
	if err != nil {
		s.adminFail(w, r, err)
		return
	}
	s.renderAdminRegua(w, r, ss, d, http.StatusOK)
}

// adminSaveRegua saves the desk's default régua, checked as a carnet
// run's (a cobv run gets it with its service steps on the own e-mail:
// cobvSteps).
func (s *Server) adminSaveRegua(w http.ResponseWriter, r *http.Request, ss *session) {
	ctx, lang := r.Context(), langOf(r)
	d, desk, err := s.adminReguaData(ctx, lang)
	if err != nil {
		s.adminFail(w, r, err)
		return
	}
	form, c, rowOf := readReguaForm(r, lang, d.Errs)
	d.Form = form
	if len(d.Errs) == 0 {
		if err := s.checkRegua(c, results.Carnets, desk, rowOf, lang, d.Errs); err != nil {
			s.adminFail(w, r, err)
			return
		}
	}
	if len(d.Errs) > 0 {
		s.renderAdminRegua(w, r, ss, d, http.StatusBadRequest)
		return
	}
	cfg, _ := json.Marshal(c)
	if _, err := s.db.ExecContext(ctx, `INSERT INTO regua_desk (id, config, updated_by, updated_at) VALUES (1, ?, ?, ?)
		ON CONFLICT (id) DO UPDATE SET config = excluded.config, updated_by = excluded.updated_by, updated_at = excluded.updated_at`,
		string(cfg), ss.User.ID, nowText()); err != nil {
		s.adminFail(w, r, err)
		return
	}
	s.audit(ctx, ss.User.ID, "regua.padrao", fmt.Sprintf("ligada=%t passos=%s janela=%s-%s fins_de_semana=%t maximo=%d",
		c.Enabled, stepList(c), c.QuietFrom, c.QuietTo, c.Weekends, c.MaxPerPass))
	http.Redirect(w, r, "/admin/regua?ok=saved#padrao", http.StatusSeeOther)
}

func stepList(c reguaConfig) string {
	var b []string
	for _, st := range c.Steps {
		b = append(b, st.At+":"+st.Channel)
	}
	return strings.Join(b, ",")
}

// adminSaveSMTP saves the desk's mail server: an empty host removes it;
// the user and password are sealed, an empty field keeps what is stored.
func (s *Server) adminSaveSMTP(w http.ResponseWriter, r *http.Request, ss *session) {
	ctx, lang := r.Context(), langOf(r)
	d, desk, err := s.adminReguaData(ctx, lang)
	if err != nil {
		s.adminFail(w, r, err)
		return
	}
	f := smtpForm{Host: strings.TrimSpace(r.PostFormValue("host")), Port: strings.TrimSpace(r.PostFormValue("porta")),
		TLS: r.PostFormValue("seguranca"), From: strings.TrimSpace(r.PostFormValue("remetente")), CA: strings.TrimSpace(r.PostFormValue("ca"))}
	d.SMTP = f
	sec, err := s.smtpSecretsOf(desk)
	if err != nil {
		// unreadable (the key changed): counts as none, asked again
		sec = smtpSecrets{}
	}
	if v := strings.TrimSpace(r.PostFormValue("usuario")); v != "" {
		sec.Username = v
	}
	if v := r.PostFormValue("senha"); v != "" {
		sec.Password = v
	}
	if r.PostFormValue("remover_credenciais") == "1" {
		sec = smtpSecrets{}
	}
	var port int
	if f.Host != "" {
		switch f.TLS {
		case "starttls", "tls", "none":
		default:
			d.SMTPErrs["seguranca"] = tr(lang, "regua.err.tls")
		}
		if f.Port != "" {
			if v, err := strconv.Atoi(f.Port); err != nil {
				d.SMTPErrs["porta"] = fmt.Sprintf(tr(lang, "regua.err.port"), f.Port)
			} else {
				port = v
			}
		}
		if len(f.Host) > 255 || strings.IndexFunc(f.Host, func(r rune) bool { return unicode.IsSpace(r) || unicode.IsControl(r) || r == '/' }) >= 0 {
			d.SMTPErrs["host"] = tr(lang, "regua.err.host")
		}
		if f.CA != "" && (len(f.CA) > maxCAPEM || !x509.NewCertPool().AppendCertsFromPEM([]byte(f.CA))) {
			d.SMTPErrs["ca"] = tr(lang, "regua.err.ca")
		}
		if sec.Password != "" && sec.Username == "" {
			d.SMTPErrs["usuario"] = tr(lang, "regua.err.user")
		}
		if len(d.SMTPErrs) == 0 {
			// the job loader's checks of a reminders.smtp section
			spec := &pipeline.RemindersSpec{Steps: []pipeline.ReminderStepIn{{At: "0d", Channel: pipeline.ChannelSMTP}},
				SMTP: &pipeline.SMTPSpec{Host: f.Host, Port: port, Username: sec.Username, Password: sec.Password, From: f.From, TLS: f.TLS}}
			rr, probs := pipeline.ParseReminders(spec, results.Carnets)
			for _, p := range probs {
				msg := p.Message
				if lang == "en" && p.MessageEN != "" {
					msg = p.MessageEN
				}
				key := map[string]string{"smtp/host": "host", "smtp/port": "porta", "smtp/tls": "seguranca", "smtp/from": "remetente"}[p.Field]
				if key == "" {
					key = "host"
				}
				d.SMTPErrs[key] = msg
			}
			if rr.SMTP != nil {
				port, f.TLS = rr.SMTP.Port, rr.SMTP.TLS
			}
		}
	}
	if len(d.SMTPErrs) > 0 {
		s.renderAdminRegua(w, r, ss, d, http.StatusBadRequest)
		return
	}
	var sealed []byte
	if f.Host != "" && (sec.Username != "" || sec.Password != "") {
		plain, _ := json.Marshal(sec)
		if sealed, err = seal(s.key, plain, reguaSealAAD); err != nil {
			s.adminFail(w, r, err)
			return
		}
	}
	if f.Host == "" {
		f, port = smtpForm{}, 0
	}
	if _, err := s.db.ExecContext(ctx, `INSERT INTO regua_desk (id, smtp_host, smtp_port, smtp_tls, smtp_from, smtp_ca, smtp_secrets, updated_by, updated_at)
		VALUES (1, ?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT (id) DO UPDATE SET smtp_host = excluded.smtp_host, smtp_port = excluded.smtp_port,
		smtp_tls = excluded.smtp_tls, smtp_from = excluded.smtp_from, smtp_ca = excluded.smtp_ca, smtp_secrets = excluded.smtp_secrets,
		updated_by = excluded.updated_by, updated_at = excluded.updated_at`,
		f.Host, port, f.TLS, f.From, f.CA, sealed, ss.User.ID, nowText()); err != nil {
		s.adminFail(w, r, err)
		return
	}
	s.audit(ctx, ss.User.ID, "regua.smtp", fmt.Sprintf("servidor=%q porta=%d seguranca=%s remetente=%q credenciais=%t", f.Host, port, f.TLS, f.From, len(sealed) > 0))
	http.Redirect(w, r, "/admin/regua?ok=saved#smtp", http.StatusSeeOther)
}

// adminSaveMessage saves the own e-mail's message ("padrao" restores the
// default text); a template that does not run on a sample is refused.
func (s *Server) adminSaveMessage(w http.ResponseWriter, r *http.Request, ss *session) {
	ctx, lang := r.Context(), langOf(r)
	d, _, err := s.adminReguaData(ctx, lang)
	if err != nil {
		s.adminFail(w, r, err)
		return
	}
	subject, body := strings.TrimSpace(r.PostFormValue("assunto")), strings.ReplaceAll(r.PostFormValue("texto"), "\r\n", "\n")
	if r.PostFormValue("padrao") == "1" {
		subject, body = "", ""
	} else {
		d.Subject, d.Body = subject, body
		switch {
		case subject == "":
			d.MsgErrs["assunto"] = tr(lang, "admin.err.required")
		case len(subject) > maxMessageSubject || strings.ContainsAny(subject, "\r\n"):
			d.MsgErrs["assunto"] = fmt.Sprintf(tr(lang, "regua.err.subject"), maxMessageSubject)
		default:
			if err := pipeline.CheckReminderTemplate(subject); err != nil {
				d.MsgErrs["assunto"] = tr(lang, "regua.err.template") + " " + err.Error()
			}
		}
		switch {
		case strings.TrimSpace(body) == "":
			d.MsgErrs["texto"] = tr(lang, "admin.err.required")
		case len(body) > maxMessageBody:
			d.MsgErrs["texto"] = fmt.Sprintf(tr(lang, "regua.err.body"), maxMessageBody)
		default:
			if err := pipeline.CheckReminderTemplate(body); err != nil {
				d.MsgErrs["texto"] = tr(lang, "regua.err.template") + " " + err.Error()
			}
		}
		if len(d.MsgErrs) > 0 {
			d.preview()
			s.renderAdminRegua(w, r, ss, d, http.StatusBadRequest)
			return
		}
		if subject == pipeline.DefaultReminderSubject && body == pipeline.DefaultReminderBody {
			subject, body = "", ""
		}
	}
	if _, err := s.db.ExecContext(ctx, `INSERT INTO regua_desk (id, subject, body, updated_by, updated_at) VALUES (1, ?, ?, ?, ?)
		ON CONFLICT (id) DO UPDATE SET subject = excluded.subject, body = excluded.body, updated_by = excluded.updated_by, updated_at = excluded.updated_at`,
		subject, body, ss.User.ID, nowText()); err != nil {
		s.adminFail(w, r, err)
		return
	}
	s.audit(ctx, ss.User.ID, "regua.mensagem", fmt.Sprintf("padrao=%t", subject == ""))
	http.Redirect(w, r, "/admin/regua?ok=saved#mensagem", http.StatusSeeOther)
}

// ---- a run's page ----

type runReguaData struct {
	Run       *runRecord
	Mode      string
	Form      reguaForm
	Errs      map[string]string
	Source    string   // where the régua that applies now comes from
	Problem   string   // why it cannot be used, if so
	Steps     []string // the steps that apply now
	DeskSteps []string // the desk default's, when it is on
	DeskOn    bool
	SMTPSet   bool
	Cobv      bool
	Channels  []string
}

// runReguaFor loads the run of the request (one the user may see), only
// once it is finished.
func (s *Server) runReguaFor(w http.ResponseWriter, r *http.Request, ss *session) *runRecord {
	rec := s.runFor(w, r, ss)
	if rec == nil {
		return nil
	}
	if !runFinished(rec.Status) {
		s.fail(w, r, http.StatusConflict, tr(langOf(r), "regua.err.running"))
		return nil
	}
	return rec
}

func (s *Server) runReguaData(ctx context.Context, rec *runRecord, lang string) (*runReguaData, *deskRegua, error) {
	rr, err := s.loadRunRegua(ctx, rec.ID)
	if err != nil {
		return nil, nil, err
	}
	desk, err := s.loadDeskRegua(ctx)
	if err != nil {
		return nil, nil, err
	}
	d := &runReguaData{Run: rec, Mode: rr.Mode, Errs: map[string]string{}, SMTPSet: desk.SMTP.Host != "", Cobv: rec.Kind == string(results.Cobv),
		DeskOn: desk.Saved && desk.Config.Enabled && len(desk.Config.Steps) > 0, Channels: []string{pipeline.ChannelService, pipeline.ChannelSMTP}}
	if d.Cobv {
		d.Channels = []string{pipeline.ChannelSMTP}
	}
	if d.DeskOn {
		c := desk.Config
		if d.Cobv {
			c = cobvSteps(c)
		}
		d.DeskSteps = stepsText(c, lang)
	}
	own := rr.Config
	if rr.Mode != reguaModeOwn || len(own.Steps) == 0 {
		// a new régua of its own starts from the desk's
		own = desk.Config
		if d.Cobv {
			own = cobvSteps(own)
		}
		own.Enabled = true
	}
	d.Form = formOf(own)
	d.status(ctx, s, rec, lang)
	return d, desk, nil
}

// status fills what applies now.
func (d *runReguaData) status(ctx context.Context, s *Server, rec *runRecord, lang string) {
	r, src, err := s.reguaFor(ctx, rec, noEnv)
	d.Source, d.Steps, d.Problem = src, nil, ""
	if err != nil {
		d.Problem = err.Error()
	}
	if r != nil {
		for _, st := range r.Steps {
			d.Steps = append(d.Steps, stepWords(st.Offset, lang)+" · "+tr(lang, "rem.ch."+st.Channel))
		}
		if !r.Enabled {
			d.Source = reguaFromOff
		}
	}
}

func (s *Server) renderRunRegua(w http.ResponseWriter, r *http.Request, ss *session, d *runReguaData, status int) {
	p := s.page(r, ss, fmt.Sprintf(tr(langOf(r), "regua.run.title"), d.Run.Name), d)
	p.Status = status
	if len(d.Errs) > 0 {
		p.Error = tr(p.Lang, "admin.err.form")
	}
	s.render(w, "regua", p)
}

func (s *Server) runReguaPage(w http.ResponseWriter, r *http.Request, ss *session) {
	rec := s.runReguaFor(w, r, ss)
	if rec == nil {
		return
	}
	d, _, err := s.runReguaData(r.Context(), rec, langOf(r))
	if err != nil {
		s.adminFail(w, r, err)
		return
	}
	s.renderRunRegua(w, r, ss, d, http.StatusOK)
}

// saveRunRegua saves a run's choice: the desk's default, a régua of its
// own (checked as the job loader checks one, for the run's kind) or none.
func (s *Server) saveRunRegua(w http.ResponseWriter, r *http.Request, ss *session) {
	rec := s.runReguaFor(w, r, ss)
	if rec == nil {
		return
	}
	ctx, lang := r.Context(), langOf(r)
	d, desk, err := s.runReguaData(ctx, rec, lang)
	if err != nil {
		s.adminFail(w, r, err)
		return
	}
	mode := r.PostFormValue("modo")
	var cfg string
	switch mode {
	case reguaModeDefault, reguaModeOff:
	case reguaModeOwn:
		form, c, rowOf := readReguaForm(r, lang, d.Errs)
		c.Enabled = true
		d.Form, d.Mode = form, mode
		if len(d.Errs) == 0 {
			if len(c.Steps) == 0 {
				d.Errs["passos"] = tr(lang, "regua.err.nosteps")
			} else if err := s.checkRegua(c, results.Kind(rec.Kind), desk, rowOf, lang, d.Errs); err != nil {
				s.adminFail(w, r, err)
				return
			}
		}
		b, _ := json.Marshal(c)
		cfg = string(b)
	default:
		d.Errs["modo"] = tr(lang, "regua.err.mode")
	}
	if len(d.Errs) > 0 {
		s.renderRunRegua(w, r, ss, d, http.StatusBadRequest)
		return
	}
	if _, err := s.db.ExecContext(ctx, `INSERT INTO regua_runs (run_id, mode, config, updated_by, updated_at) VALUES (?, ?, ?, ?, ?)
		ON CONFLICT (run_id) DO UPDATE SET mode = excluded.mode, config = excluded.config, updated_by = excluded.updated_by, updated_at = excluded.updated_at`,
		rec.ID, mode, cfg, ss.User.ID, nowText()); err != nil {
		s.adminFail(w, r, err)
		return
	}
	detail := fmt.Sprintf("execução %s modo=%s", rec.RunID, mode)
	if mode == reguaModeOwn {
		var c reguaConfig
		json.Unmarshal([]byte(cfg), &c)
		detail += fmt.Sprintf(" passos=%s janela=%s-%s fins_de_semana=%t maximo=%d", stepList(c), c.QuietFrom, c.QuietTo, c.Weekends, c.MaxPerPass)
	}
	s.audit(ctx, ss.User.ID, "regua.execucao", detail)
	http.Redirect(w, r, fmt.Sprintf("/execucoes/%d?ok=saved#lembretes", rec.ID), http.StatusSeeOther)
}
