package remind

import (
	"sort"
	"time"

	"remessa/pipeline"
	"remessa/pipeline/status"
)

// Decision is what a pass does for one open charge: the step to send now
// (Offset, on Channels not journaled yet) and the earlier steps whose day
// passed without them (Superseded, journaled as skipped so they are never
// sent late).
type Decision struct {
	Charge     status.Charge
	Offset     int
	Channels   []string
	Superseded []pipeline.ReminderStep
	DaysLate   int // today − due (negative before the due date)
}

// epochDay is the civil date "YYYY-MM-DD" as days since 1970-01-01 (ok
// false when it is not one).
func epochDay(s string) (int, bool) {
	if len(s) != 10 || s[4] != '-' || s[7] != '-' {
		return 0, false
	}
	n := func(b string) (int, bool) {
		v := 0
		for i := 0; i < len(b); i++ {
			c := b[i]
			if c < '0' || c > '9' {
				return 0, false
			}
			v = v*10 + int(c-'0')
		}
		return v, true
	}
	y, ok1 := n(s[0:4])
	m, ok2 := n(s[5:7])
	d, ok3 := n(s[8:10])
	if !ok1 || !ok2 || !ok3 || m < 1 || m > 12 || d < 1 || d > 31 {
		return 0, false
	}
	return int(time.Date(y, time.Month(m), d, 0, 0, 0, 0, time.UTC).Unix() / 86400), true
}

// decider decides for one régua on one day. It is pure: the ledger's
// charges in, decisions out; the pass sends them.
type decider struct {
	steps    []pipeline.ReminderStep // sorted by offset
	today    int
	journal  map[stepKey]struct{}
	channels map[int][]string // offset → its channels
}

func newDecider(r *pipeline.Reminders, today time.Time, journaled map[stepKey]struct{}) *decider {
	d := &decider{steps: append([]pipeline.ReminderStep(nil), r.Steps...), journal: journaled, channels: map[int][]string{}}
	sort.SliceStable(d.steps, func(i, j int) bool { return d.steps[i].Offset < d.steps[j].Offset })
	for _, s := range d.steps {
		d.channels[s.Offset] = append(d.channels[s.Offset], s.Channel)
	}
	d.today, _ = epochDay(today.Format("2006-01-02"))
	return d
}

// decide is the decision for charge c, ok false when nothing is to be
// done for it: the latest step whose day has come (due + offset ≤ today)
// is sent on each of its channels not journaled yet; earlier steps never
// journaled are superseded. Only open charges are reminded: a paid,
// settled, cancelled or refunded one never is.
func (d *decider) decide(c *status.Charge) (Decision, bool) {
	if c.State != status.StateOpen {
		return Decision{}, false
	}
	due, ok := epochDay(c.Due)
	if !ok {
		return Decision{}, false
	}
	late := d.today - due
	latest, found := 0, false
	for _, s := range d.steps {
		if s.Offset <= late {
			latest, found = s.Offset, true
		}
	}
	if !found {
		return Decision{}, false
	}
	var dec Decision
	for _, ch := range d.channels[latest] {
		if _, done := d.journal[stepKey{c.Key, latest, ch}]; !done {
			dec.Channels = append(dec.Channels, ch)
		}
	}
	if len(dec.Channels) == 0 {
		return Decision{}, false
	}
	for _, s := range d.steps {
		if s.Offset >= latest {
			break
		}
		if _, done := d.journal[stepKey{c.Key, s.Offset, s.Channel}]; !done {
			dec.Superseded = append(dec.Superseded, s)
		}
	}
	dec.Charge, dec.Offset, dec.DaysLate = *c, latest, late
	return dec, true
}

// InWindow reports whether now (any zone) is inside the régua's sending
// window: between QuietFrom and QuietTo in São Paulo, on a business day
// unless Weekends.
func InWindow(r *pipeline.Reminders, now time.Time) bool {
	sp := now.In(saoPaulo)
	m := sp.Hour()*60 + sp.Minute()
	if m < r.QuietFrom || m >= r.QuietTo {
		return false
	}
	if !r.Weekends && !isBusinessDay(sp) {
		return false
	}
	return true
}
