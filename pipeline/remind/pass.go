// Package remind is the régua de cobrança (dunning schedule): reminders
// before and after each charge's due date, on the service's own e-mail
// (resend of carnet parcels and slips) or remessa's own over SMTP. Both
// faces call it: `remessa remind RUNS_DIR` (the job file's reminders:
// section) and the desk's periodic River job (a régua per run).
//
// A pass over one run: the run's ledger is synced first (pipeline/status),
// so a charge paid, settled or cancelled is never reminded; each open
// charge gets the latest step whose day has come (due date + offset ≤
// today, by the service's clock), once: the send is journaled in the run
// folder's lembretes.db and committed before it goes out and its result
// after, so a crash between the two leaves it "uncertain", never sent
// twice. Passes run only inside the sending window (quiet hours) and send
// at most MaxPerPass messages.
package remind

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"path/filepath"
	"sort"
	"time"

	"remessa/api"
	"remessa/internal/crashpoint"
	"remessa/internal/metrics"
	"remessa/pipeline"
	"remessa/pipeline/results"
	"remessa/pipeline/run"
	"remessa/pipeline/status"
	"remessa/rules"
)

// Options tune a pass.
type Options struct {
	// Run is how the run's service is reached (as for `remessa status`).
	Run run.Options
	// Now overrides the clock the days relative to the due dates and the
	// quiet hours are decided by. nil: the service's clock, learnt by the
	// sync from the Date of the service's answers (api.ServiceClock); with
	// NoSync and no Now, this machine's.
	Now func() time.Time
	// DryRun decides and reports without sending or journaling anything.
	DryRun bool
	// NoSync decides on the ledger as it is (the caller synced it).
	NoSync bool
	// Mailer sends the smtp channel; nil: an SMTPMailer of the régua's settings.
	Mailer Mailer
	// Progress gets one line per send; nil: none.
	Progress io.Writer
}

// Item is one decision of a pass and what became of it.
type Item struct {
	RowKey      string `json:"row_key"`
	Payer       string `json:"payer"`
	Parcel      int    `json:"parcel,omitempty"`
	ChargeKey   string `json:"charge_key"`
	Due         string `json:"due"`
	Step        string `json:"step"`
	Channel     string `json:"channel"`
	Email       string `json:"email"` // masked
	AmountCents int64  `json:"amount_cents"`
	State       string `json:"state"` // a journal state, or "planned" in a dry run
	Detail      string `json:"detail,omitempty"`
}

// Report is what a pass did over one run.
type Report struct {
	Dir        string `json:"dir"`
	RunID      string `json:"run_id"`
	ServiceNow string `json:"service_now"`
	Note       string `json:"note,omitempty"` // why nothing was sent (off, outside the window)
	DryRun     bool   `json:"dry_run,omitempty"`
	Recovered  int    `json:"recovered"` // sends a crashed pass left, now uncertain
	Planned    int    `json:"planned"`
	Sent       int    `json:"sent"`
	Skipped    int    `json:"skipped"`
	Uncertain  int    `json:"uncertain"`
	Failed     int    `json:"failed"`
	Deferred   int    `json:"deferred"` // over the per-pass cap: the next pass
	Retry      int    `json:"retry"`    // certainly not sent: the next pass tries again
	Items      []Item `json:"items"`
}

// ErrBusy is returned when another pass holds the run.
var ErrBusy = errors.New("lembretes: outra passada está em andamento nesta execução")

// Pass runs the régua r over the run in dir once.
func Pass(ctx context.Context, dir string, r *pipeline.Reminders, o Options) (*Report, error) {
	m, err := run.ReadMeta(ctx, dir)
	if err != nil {
		return nil, err
	}
	unlock, err := crashpoint.Lock(filepath.Join(dir, "lembretes.lock"))
	if errors.Is(err, crashpoint.ErrBusy) {
		return nil, fmt.Errorf("%w (%s)", ErrBusy, dir)
	}
	if err != nil {
		return nil, fmt.Errorf("lembretes: trava de %s: %w", dir, err)
	}
	defer unlock()
	jn, err := OpenJournal(dir)
	if err != nil {
		return nil, err
	}
	defer jn.Close()
	rep := &Report{Dir: dir, RunID: m.RunID, DryRun: o.DryRun, Items: []Item{}}
	if !o.DryRun {
		if rep.Recovered, err = jn.recoverSending(ctx, time.Now().UTC().Format(time.RFC3339)); err != nil {
			return nil, err
		}
	}
	switch {
	case r == nil || len(r.Steps) == 0:
		rep.Note = "sem régua"
		return rep, nil
	case !r.Enabled:
		rep.Note = "régua desligada"
		return rep, nil
	}
	// the ledger first (a paid charge is never reminded), and with it the
	// service's clock: the Date of its answers (status.Sync)
	var now time.Time
	if o.Now != nil {
		now = o.Now()
	}
	if !o.NoSync {
		sum, err := status.Sync(ctx, dir, status.Options{Run: o.Run, Now: o.Now})
		if err != nil {
			return nil, fmt.Errorf("lembretes: a situação de %s não pôde ser atualizada, nada enviado: %w", dir, err)
		}
		if t, err := time.Parse(time.RFC3339Nano, sum.SyncedAt); err == nil && o.Now == nil {
			now = t
		}
	}
	if now.IsZero() {
		now = time.Now()
	}
	rep.ServiceNow = now.In(saoPaulo).Format(time.RFC3339)
	at := now.UTC().Format(time.RFC3339)
	if !InWindow(r, now) && !o.DryRun {
		rep.Note = fmt.Sprintf("fora da janela de envio (%s-%s%s, hora de São Paulo); nada enviado", pipeline.FormatClock(r.QuietFrom), pipeline.FormatClock(r.QuietTo), map[bool]string{false: ", dias úteis", true: ""}[r.Weekends])
		return rep, nil
	}
	journaled, err := jn.journaled(ctx)
	if err != nil {
		return nil, err
	}
	decs, err := decideLedger(ctx, dir, r, now, journaled)
	if err != nil {
		return nil, err
	}
	// the cap counts messages; what is left waits for the next pass
	var todo []Decision
	n := 0
	for _, d := range decs {
		if n >= r.MaxPerPass {
			rep.Deferred += len(d.Channels)
			continue
		}
		if n+len(d.Channels) > r.MaxPerPass {
			rep.Deferred += n + len(d.Channels) - r.MaxPerPass
			d.Channels = d.Channels[:r.MaxPerPass-n]
		}
		n += len(d.Channels)
		todo = append(todo, d)
	}
	if len(todo) == 0 {
		return rep, nil
	}
	res, err := results.Load(filepath.Join(dir, "results.json"))
	if err != nil {
		return nil, err
	}
	rows, err := readRows(ctx, dir)
	if err != nil {
		return nil, err
	}
	s := &sender{o: &o, r: r, jn: jn, rep: rep, rows: rows, docs: docsOf(res), today: rules.Today(now), at: at, dir: dir}
	defer s.close()
	if !o.DryRun {
		if s.pass, err = jn.startPass(ctx, time.Now().UTC().Format(time.RFC3339), at); err != nil {
			return nil, err
		}
	}
	for i := range todo {
		if err := ctx.Err(); err != nil {
			return rep, err
		}
		if err := s.one(ctx, &todo[i]); err != nil {
			return rep, err
		}
	}
	if !o.DryRun {
		if err := jn.endPass(ctx, s.pass, rep, time.Now().UTC().Format(time.RFC3339)); err != nil {
			return rep, err
		}
	}
	return rep, nil
}

// Decide reads the run's ledger and reminder journal and decides, for the
// day of now, what each open charge is due, ordered by due date and
// charge. It sends and writes nothing (what --dry-run shows, without the
// sync).
func Decide(ctx context.Context, dir string, r *pipeline.Reminders, now time.Time) ([]Decision, error) {
	jn, err := OpenJournal(dir)
	if err != nil {
		return nil, err
	}
	defer jn.Close()
	journaled, err := jn.journaled(ctx)
	if err != nil {
		return nil, err
	}
	return decideLedger(ctx, dir, r, now, journaled)
}

// decideLedger is Decide with the journal's steps already read.
func decideLedger(ctx context.Context, dir string, r *pipeline.Reminders, now time.Time, journaled map[stepKey]struct{}) ([]Decision, error) {
	l, err := status.OpenLedger(dir)
	if err != nil {
		return nil, err
	}
	defer l.Close()
	d := newDecider(r, rules.Today(now), journaled)
	var out []Decision
	err = l.EachCharge(ctx, func(c *status.Charge) error {
		if dec, ok := d.decide(c); ok {
			out = append(out, dec)
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	sort.SliceStable(out, func(i, j int) bool {
		if out[i].Charge.Due != out[j].Charge.Due {
			return out[i].Charge.Due < out[j].Charge.Due
		}
		if out[i].Charge.RowIndex != out[j].Charge.RowIndex {
			return out[i].Charge.RowIndex < out[j].Charge.RowIndex
		}
		return out[i].Charge.Parcel < out[j].Charge.Parcel
	})
	return out, nil
}

// sender sends a pass's decisions.
type sender struct {
	o     *Options
	r     *pipeline.Reminders
	jn    *Journal
	rep   *Report
	rows  map[int]rowInfo
	docs  map[string]docs
	today time.Time
	at    string
	dir   string
	pass  int64

	svc    *run.Service
	cl     *api.Client
	mailer Mailer
}

func (s *sender) close() {
	if s.svc != nil {
		s.svc.Close()
	}
}

func (s *sender) one(ctx context.Context, d *Decision) error {
	c := &d.Charge
	ri := s.rows[c.RowIndex]
	owed := owedToday(c, ri, s.today)
	base := Send{ChargeKey: c.Key, RowKey: c.RowKey, Parcel: c.Parcel, Email: ri.email, AmountCents: owed, Due: c.Due, PassID: s.pass, IntendedAt: s.at}
	item := func(st pipeline.ReminderStep, state, detail string) Item {
		return Item{RowKey: c.RowKey, Payer: c.Payer, Parcel: c.Parcel, ChargeKey: c.Key, Due: c.Due, Step: st.Label(), Channel: st.Channel,
			Email: maskEmail(ri.email), AmountCents: owed, State: state, Detail: detail}
	}
	for _, st := range d.Superseded {
		if s.o.DryRun {
			continue
		}
		e := base
		e.Offset, e.Channel, e.State, e.FinishedAt = st.Offset, st.Channel, StateSkipped, s.at
		e.Detail = fmt.Sprintf("não enviado: o dia do passo passou sem passada; o passo %s o substitui", pipeline.OffsetLabel(d.Offset))
		if _, err := s.jn.intend(ctx, &e); err != nil {
			return err
		}
	}
	for _, ch := range d.Channels {
		st := pipeline.ReminderStep{Offset: d.Offset, Channel: ch}
		skip := ""
		switch {
		case ri.email == "":
			skip = "sem e-mail do pagador na execução"
		case ch == pipeline.ChannelService && c.Status != "waiting":
			skip = fmt.Sprintf("o serviço só reenvia cobranças em espera (status %s)", c.Status)
		}
		if s.o.DryRun {
			state := "planned"
			if skip != "" {
				state = StateSkipped
			}
			s.add(item(st, state, skip))
			continue
		}
		e := base
		e.Offset, e.Channel = st.Offset, ch
		if skip != "" {
			e.State, e.Detail, e.FinishedAt = StateSkipped, skip, s.at
			if _, err := s.jn.intend(ctx, &e); err != nil {
				return err
			}
			s.add(item(st, StateSkipped, skip))
			continue
		}
		e.State = StateSending
		ok, err := s.jn.intend(ctx, &e)
		if err != nil {
			return err
		}
		if !ok {
			continue // journaled by an earlier pass meanwhile
		}
		crashpoint.At("remind-intent")
		state, detail := s.send(ctx, d, ch, ri, owed)
		crashpoint.At("remind-sent")
		if state == "" {
			// certainly not sent: free the step for a later pass
			if err := s.jn.forget(ctx, e.ID); err != nil {
				return err
			}
			s.rep.Retry++
			s.add(item(st, "retry", detail))
			continue
		}
		if err := s.jn.finish(ctx, e.ID, state, detail, time.Now().UTC().Format(time.RFC3339)); err != nil {
			return err
		}
		switch state {
		case StateSent, StateFailed, StateUncertain:
			// the metric's channel label is the régua's channel name
			metrics.ReminderSent(ch, state)
		}
		s.add(item(st, state, detail))
	}
	return nil
}

func (s *sender) add(it Item) {
	s.rep.Items = append(s.rep.Items, it)
	switch it.State {
	case StateSent:
		s.rep.Sent++
	case StateSkipped:
		s.rep.Skipped++
	case StateUncertain:
		s.rep.Uncertain++
	case StateFailed:
		s.rep.Failed++
	case "planned":
		s.rep.Planned++
	}
	if w := s.o.Progress; w != nil {
		fmt.Fprintf(w, "%s %s parcela %d venc. %s passo %s %s para %s: %s %s\n", s.rep.RunID, it.RowKey, it.Parcel, brDate(it.Due), it.Step, it.Channel, it.Email, stateWord(it.State), it.Detail)
	}
}

func stateWord(s string) string {
	switch s {
	case StateSent:
		return "enviado"
	case StateSkipped:
		return "não enviado"
	case StateUncertain:
		return "incerto"
	case StateFailed:
		return "recusado"
	case "planned":
		return "seria enviado"
	case "retry":
		return "adiado"
	}
	return s
}

// send sends one reminder; state "" means it certainly did not go out.
func (s *sender) send(ctx context.Context, d *Decision, ch string, ri rowInfo, owed int64) (state, detail string) {
	c := &d.Charge
	if ch == pipeline.ChannelService {
		cl, err := s.client(ctx)
		if err != nil {
			return "", "serviço inacessível: " + err.Error()
		}
		if c.Parcel > 0 {
			err = cl.ResendParcel(ctx, c.CarnetID, c.Parcel, ri.email)
		} else {
			err = cl.ResendBillet(ctx, c.ChargeID, ri.email)
		}
		var ae *api.Error
		switch {
		case err == nil:
			return StateSent, ""
		case errors.As(err, &ae) && (ae.Status == http.StatusTooManyRequests || ae.Status == http.StatusServiceUnavailable):
			return "", fmt.Sprintf("não processado pelo serviço (HTTP %d); fica para a próxima passada", ae.Status)
		case errors.As(err, &ae) && ae.Status >= 400 && ae.Status < 500:
			return StateSkipped, "recusado pelo serviço: " + ae.Error()
		case api.IsAmbiguous(err) || (errors.As(err, &ae) && ae.Status >= 500):
			return StateUncertain, "incerto: a resposta se perdeu; o reenvio pode ter sido feito e não é repetido"
		default:
			return "", "não enviado: " + err.Error()
		}
	}
	f := fieldsOf(d, ri, s.docs[c.Key], owed)
	subject, err := render(s.r.Subject, f)
	if err == nil {
		var body string
		if body, err = render(s.r.Body, f); err == nil {
			err = s.mail().Send(ctx, Message{To: ri.email, Subject: subject, Body: body, QR: f.PixCopiaECola})
		}
	}
	switch {
	case err == nil:
		return StateSent, ""
	case errors.Is(err, ErrNotSent):
		return "", err.Error()
	case errors.Is(err, ErrRefused):
		return StateFailed, err.Error()
	}
	return StateUncertain, "incerto: " + err.Error()
}

func (s *sender) client(ctx context.Context) (*api.Client, error) {
	if s.cl != nil {
		return s.cl, nil
	}
	svc, _, err := run.Connect(ctx, s.dir, s.o.Run)
	if err != nil {
		return nil, err
	}
	cl, err := svc.Client.NoRetry()
	if err != nil {
		svc.Close()
		return nil, err
	}
	s.svc, s.cl = svc, cl
	return cl, nil
}

func (s *sender) mail() Mailer {
	if s.mailer == nil {
		s.mailer = s.o.Mailer
		if s.mailer == nil && s.r.SMTP != nil {
			s.mailer = &SMTPMailer{S: *s.r.SMTP}
		}
		if s.mailer == nil {
			s.mailer = noMailer{}
		}
	}
	return s.mailer
}

type noMailer struct{}

func (noMailer) Send(context.Context, Message) error {
	return fmt.Errorf("%w: a régua não tem servidor SMTP (reminders.smtp)", ErrNotSent)
}
