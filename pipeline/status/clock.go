package status

import (
	"context"
	"database/sql"
	"fmt"
	"time"

	"remessa/api"
	"remessa/rules"
)

// The ledger's meta keys of the last sync's clocks: the service's time
// (last_sync, what the incremental windows start from), this machine's
// time at that moment, and whether the service's time came from its
// answers' Date ("service") or this machine's clock stood in ("local").
const (
	metaLastSync      = "last_sync"
	metaLastSyncLocal = "last_sync_local"
	metaClock         = "clock"
)

// Clock sources.
const (
	ClockService = "service" // the Date of the service's answers
	ClockLocal   = "local"   // this machine's clock: no answer carried a Date
)

// SyncClock is the service's time as a sync read it: Service at Local on
// this machine. A report written later without the network (or a plan
// made on the ledger as it is) counts days from it: Now.
type SyncClock struct {
	Service time.Time
	Local   time.Time
	Source  string // ClockService or ClockLocal
}

// Now is the service's time when this machine's clock says local: the
// last sync's service time plus the time elapsed here since.
func (c SyncClock) Now(local time.Time) time.Time { return c.Service.Add(local.Sub(c.Local)) }

// Reading is c as an api.ClockReading (for ClockNote).
func (c SyncClock) Reading() api.ClockReading {
	return api.ClockReading{Service: c.Service, Local: c.Local, Known: c.Source == ClockService}
}

// LastClock returns the clocks of the ledger's last sync; false when it
// was never synced. A ledger written before the service's clock was
// recorded gives its last sync as both times (ClockLocal).
func (l *Ledger) LastClock(ctx context.Context) (SyncClock, bool) {
	svc, err := time.Parse(time.RFC3339Nano, l.Meta(ctx, metaLastSync))
	if err != nil {
		return SyncClock{}, false
	}
	c := SyncClock{Service: svc, Local: svc, Source: ClockLocal}
	if t, err := time.Parse(time.RFC3339Nano, l.Meta(ctx, metaLastSyncLocal)); err == nil {
		c.Local = t
	}
	if l.Meta(ctx, metaClock) == ClockService {
		c.Source = ClockService
	}
	return c, true
}

// setClock records a sync's clocks.
func (l *Ledger) setClock(ctx context.Context, tx *sql.Tx, c SyncClock) error {
	for k, v := range map[string]string{metaLastSync: stamp(c.Service), metaLastSyncLocal: stamp(c.Local), metaClock: c.Source} {
		if err := l.setMeta(ctx, tx, k, v); err != nil {
			return err
		}
	}
	return nil
}

func stamp(t time.Time) string { return t.UTC().Format(time.RFC3339Nano) }

// ServiceNow returns the service's time now as the ledger of the run in
// dir last saw it (its last sync's service time plus the time elapsed on
// this machine since), with local as this machine's time; local itself
// when the run was never synced.
func ServiceNow(ctx context.Context, dir string, local time.Time) time.Time {
	l, err := OpenLedger(dir)
	if err != nil {
		return local
	}
	defer l.Close()
	if c, ok := l.LastClock(ctx); ok {
		return c.Now(local)
	}
	return local
}

// ClockNote is the warning a command prints about the service's clock:
// when the service's time and this machine's differ by more than
// api.MaxSkew (both times, São Paulo), or when no answer carried a Date
// (this machine's clock then stands in); "" otherwise. lang is "pt" or
// "en".
func ClockNote(r api.ClockReading, lang string) string {
	at := func(t time.Time) string { return t.In(rules.SaoPaulo).Format("02/01/2006 15:04:05") }
	switch {
	case !r.Known:
		if lang == "en" {
			return fmt.Sprintf("Warning: the service's answers did not say its time (no Date header); dates follow this machine's clock (%s).", at(r.Local))
		}
		return fmt.Sprintf("Aviso: as respostas do serviço não informaram a hora dele (sem o cabeçalho Date); as datas seguem o relógio desta máquina (%s).", at(r.Local))
	case !r.Skewed():
		return ""
	}
	skew := r.Skew()
	ahead := skew > 0
	if skew < 0 {
		skew = -skew
	}
	if lang == "en" {
		dir := "behind"
		if ahead {
			dir = "ahead of"
		}
		return fmt.Sprintf("Warning: the service's clock (%s) is %s %s this machine's (%s); due dates, days late and the position follow the service's.",
			at(r.Service), span(skew, "en"), dir, at(r.Local))
	}
	dir := "atrás do"
	if ahead {
		dir = "à frente do"
	}
	return fmt.Sprintf("Aviso: o relógio do serviço (%s) está %s %s desta máquina (%s); vencimentos, atrasos e a posição seguem o do serviço.",
		at(r.Service), span(skew, "pt"), dir, at(r.Local))
}

// span says a duration of a minute or more in days, hours and minutes,
// to the nearest minute (the Date header counts whole seconds).
func span(d time.Duration, lang string) string {
	d = d.Round(time.Minute)
	days, h, m := int(d/(24*time.Hour)), int(d%(24*time.Hour)/time.Hour), int(d%time.Hour/time.Minute)
	unit := func(n int, pt1, ptN, en1, enN string) string {
		switch {
		case lang == "en" && n == 1:
			return "1 " + en1
		case lang == "en":
			return fmt.Sprintf("%d %s", n, enN)
		case n == 1:
			return "1 " + pt1
		}
		return fmt.Sprintf("%d %s", n, ptN)
	}
	var parts []string
	if days > 0 {
		parts = append(parts, unit(days, "dia", "dias", "day", "days"))
	}
	if h > 0 {
		parts = append(parts, unit(h, "hora", "horas", "hour", "hours"))
	}
	if m > 0 || len(parts) == 0 {
		parts = append(parts, unit(m, "minuto", "minutos", "minute", "minutes"))
	}
	and := " e "
	if lang == "en" {
		and = " and "
	}
	switch len(parts) {
	case 1:
		return parts[0]
	case 2:
		return parts[0] + and + parts[1]
	}
	return parts[0] + ", " + parts[1] + and + parts[2]
}
