package web

import (
	"context"
	"fmt"
	"sort"

	"remessa/pipeline/remind"
)

// reminderView is what the run page shows of the run's régua: the régua
// that applies (reguaFor: the job file's, the run's own, the desk's
// default, or none) and every reminder decided for its charges
// (remind.ReadHistory), grouped by charge.
type reminderView struct {
	Has     bool   // a régua applies
	Source  string // reguaFrom*
	Problem string // why the régua that applies cannot be used
	Enabled bool
	Steps   []string
	Sends   []reminderRow
	Sent    int
}

type reminderRow struct {
	First   bool // the first line of its charge
	RowKey  string
	Parcel  int
	Due     string
	Step    string
	Channel string
	State   string
	Email   string
	Cents   int64
	Detail  string
	At      string
}

// reminders reads the run's régua and its history.
func (s *Server) reminders(ctx context.Context, rec *runRecord, lang string) *reminderView {
	hist, err := remind.ReadHistory(ctx, rec.Dir)
	if err != nil {
		return nil
	}
	v := &reminderView{}
	r, src, err := s.reguaFor(ctx, rec, noEnv)
	v.Source = src
	if err != nil {
		v.Problem = err.Error()
	}
	if r != nil && len(r.Steps) > 0 {
		v.Has, v.Enabled = true, r.Enabled
		for _, st := range r.Steps {
			v.Steps = append(v.Steps, stepWords(st.Offset, lang)+" · "+tr(lang, "rem.ch."+st.Channel))
		}
	}
	sort.SliceStable(hist, func(i, j int) bool {
		a, b := hist[i], hist[j]
		if a.RowKey != b.RowKey {
			return a.RowKey < b.RowKey
		}
		if a.Parcel != b.Parcel {
			return a.Parcel < b.Parcel
		}
		return a.ID < b.ID
	})
	for i, s := range hist {
		// when it was decided, by the service's clock (finished_at is
		// this machine's)
		at := s.IntendedAt
		if s.State == remind.StateSent {
			v.Sent++
		}
		v.Sends = append(v.Sends, reminderRow{First: i == 0 || hist[i-1].ChargeKey != s.ChargeKey, RowKey: s.RowKey, Parcel: s.Parcel, Due: s.Due,
			Step: stepWords(s.Offset, lang), Channel: tr(lang, "rem.ch."+s.Channel), State: s.State, Email: s.Email, Cents: s.AmountCents,
			Detail: s.Detail, At: at})
	}
	return v
}

// stepWords says a step's day in words: "3 dias antes", "no vencimento",
// "7 dias depois".
func stepWords(offset int, lang string) string {
	switch {
	case offset == 0:
		return tr(lang, "rem.onday")
	case offset == -1:
		return tr(lang, "rem.daybefore")
	case offset == 1:
		return tr(lang, "rem.dayafter")
	case offset < 0:
		return fmt.Sprintf(tr(lang, "rem.before"), -offset)
	}
	return fmt.Sprintf(tr(lang, "rem.after"), offset)
}

func init() {
	for k, v := range remindDict {
		dict[k] = v
	}
}

// remindDict holds the texts of the run page's reminders block.
var remindDict = map[string][2]string{
	"rem.title":           {"Lembretes de cobrança", "Payment reminders"},
	"rem.steps":           {"Régua desta execução:", "This run's schedule:"},
	"rem.off":             {"A régua está desligada (reminders.enabled: false no arquivo de job).", "The schedule is off (reminders.enabled: false in the job file)."},
	"rem.auto":            {"A mesa atualiza a situação e passa a régua sozinha, dentro da janela de envio.", "The desk refreshes the status and runs the schedule by itself, within the sending window."},
	"rem.none":            {"Nenhum lembrete enviado ainda.", "No reminder sent yet."},
	"rem.sent":            {"Lembretes enviados: %d.", "Reminders sent: %d."},
	"rem.charge":          {"Cobrança", "Charge"},
	"rem.step":            {"Passo", "Step"},
	"rem.channel":         {"Canal", "Channel"},
	"rem.state":           {"Situação", "Outcome"},
	"rem.email":           {"E-mail", "E-mail"},
	"rem.amount":          {"Valor", "Amount"},
	"rem.when":            {"Quando", "When"},
	"rem.parcel":          {"parcela", "parcel"},
	"rem.due":             {"venc.", "due"},
	"rem.onday":           {"no vencimento", "on the due date"},
	"rem.daybefore":       {"1 dia antes", "1 day before"},
	"rem.dayafter":        {"1 dia depois", "1 day after"},
	"rem.before":          {"%d dias antes", "%d days before"},
	"rem.after":           {"%d dias depois", "%d days after"},
	"rem.ch.service":      {"e-mail do serviço", "the service's e-mail"},
	"rem.ch.smtp":         {"e-mail próprio", "own e-mail"},
	"rem.state.sent":      {"enviado", "sent"},
	"rem.state.sending":   {"enviando", "sending"},
	"rem.state.skipped":   {"não enviado", "not sent"},
	"rem.state.uncertain": {"incerto", "uncertain"},
	"rem.state.failed":    {"recusado", "refused"},
}
