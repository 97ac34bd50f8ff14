// Package control serves the tester's controls of the sandbox under
// /sandbox/... (loopback only, no token; not part of the real API): the
// clock, and payments as a bank or acquirer would report them.
//
//	GET  /sandbox/clock                              the sandbox's now and offset
//	POST /sandbox/clock/advance                      {"duration":"48h"|"3d"} or {"to":"2027-03-01"}
//	POST /sandbox/tick                               apply due dates and deliver due notifications now
//	POST /sandbox/charges/{id}/pay                   {"value"?: cents, "paid_at"?: "YYYY-MM-DD"}; no value: what is owed that day
//	POST /sandbox/carnets/{id}/parcels/{n}/pay       same body
//	POST /sandbox/cards/{id}/refund                  {"value"?: cents}
//	GET  /sandbox/resends?account=&after=            the e-mails the resend routes were asked to send
//
// Every route takes an optional ?payee_code= to name the account; by
// default the account that owns the charge or carnet is used. Pix charges
// are paid through POST /sandbox/pix/pay, served by the Pix module.
//
// Moving the clock only goes forward. After it moves, the charges module's
// Tick runs (slips past due go waiting → unpaid, payment links expire,
// write-off days run out, each change notified) and the outbox delivers
// whatever is now due, retries included.
package control

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"regexp"
	"strconv"
	"strings"
	"time"

	"github.com/rs/zerolog"

	"remessa/rules"
	"remessa/sandbox/auth"
	"remessa/sandbox/charges"
	"remessa/sandbox/clock"
	"remessa/sandbox/httpx"
	"remessa/sandbox/module"
	"remessa/sandbox/store"
)

func init() {
	module.Register("control", func(d module.Deps) (module.Module, error) {
		return New(d, chargesFrom(d)), nil
	})
}

// Charges is what the control routes need from the charges module
// (*charges.Module implements it).
type Charges interface {
	Tick(ctx context.Context) error
	// Pay records a payment of paidCents (0 = what the payer owes on
	// paidDate) and reports what came in and what was owed.
	Pay(ctx context.Context, account string, chargeID int64, paidCents int64, paidDate time.Time) (charges.SlipPayment, error)
	RefundCard(ctx context.Context, account string, chargeID int64, cents int64) error
	ChargeAccount(id int64) (string, bool)
}

// Advancer is a clock the control routes can move (clock.Adjustable,
// clock.Fake).
type Advancer interface {
	clock.Clock
	Advance(d time.Duration)
}

// Runner delivers what is due (the outbox).
type Runner interface {
	RunDue(ctx context.Context) (int, error)
}

// Module is the control routes.
type Module struct {
	st      *store.Store
	clk     clock.Clock
	auth    *auth.Service
	charges func() (Charges, bool)
	notify  module.Notifier
	log     zerolog.Logger
}

// New returns the control routes on d; charges is called at request time
// and reports false while there is no charges module.
func New(d module.Deps, charges func() (Charges, bool)) *Module {
	if charges == nil {
		charges = func() (Charges, bool) { return nil, false }
	}
	m := &Module{st: d.Store, clk: d.Clock, auth: d.Auth, charges: charges, notify: d.Notify, log: d.Logger}
	m.restoreOffset()
	return m
}

// offsetClock is an adjustable clock whose offset can be saved and set
// again after a restart (clock.Adjustable).
type offsetClock interface {
	Offset() time.Duration
	SetOffset(time.Duration)
}

// Where the clock's offset is kept, so a restart does not move the
// sandbox's time backwards: the due dates that passed, the retries the
// outbox scheduled and the tokens issued stay where the tester put them.
const (
	kindClock = "sandbox_clock"
	idOffset  = "offset"
)

// restoreOffset sets an adjustable clock to the offset saved by the last
// advance, when that is further ahead than it is now.
func (m *Module) restoreOffset() {
	oc, ok := m.clk.(offsetClock)
	if !ok || m.st == nil {
		return
	}
	var saved time.Duration
	found, err := m.st.Get(context.Background(), kindClock, "", idOffset, &saved)
	if err != nil {
		m.log.Error().Err(err).Msg("control: read the saved clock offset; the clock starts at the real time")
		return
	}
	if found && saved > oc.Offset() {
		oc.SetOffset(saved)
		m.log.Info().Dur("offset", saved).Msg("control: clock offset restored")
	}
}

// Run follows, on a shared store (several instances over one PostgreSQL),
// the clock offset another instance saved: the sandbox time is shared,
// each instance picking a change up within followEvery (module.Runner).
func (m *Module) Run(ctx context.Context) {
	oc, ok := m.clk.(offsetClock)
	if !ok || m.st == nil || !m.st.Shared() {
		return
	}
	t := time.NewTicker(followEvery)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		var saved time.Duration
		found, err := m.st.Get(ctx, kindClock, "", idOffset, &saved)
		if err == nil && found && saved != oc.Offset() {
			oc.SetOffset(saved)
		}
	}
}

// followEvery is how often an instance on a shared store reads the saved
// clock offset.
const followEvery = 500 * time.Millisecond

// saveOffset keeps the clock's offset for the next start.
func (m *Module) saveOffset(ctx context.Context) {
	oc, ok := m.clk.(offsetClock)
	if !ok || m.st == nil {
		return
	}
	off := oc.Offset()
	err := m.st.Tx(context.WithoutCancel(ctx), func(tx *store.Tx) error { return tx.Put(kindClock, "", idOffset, off) })
	if err != nil {
		m.log.Error().Err(err).Msg("control: save the clock offset; a restart would start at the real time")
	}
}

// StaticCharges adapts a Charges known at construction to New.
func StaticCharges(c Charges) func() (Charges, bool) {
	return func() (Charges, bool) { return c, c != nil }
}

// chargesFrom finds the charges module through the core's Deps.Lookup, at
// request time (modules are built in name order).
func chargesFrom(d module.Deps) func() (Charges, bool) {
	return func() (Charges, bool) {
		if d.Lookup == nil {
			return nil, false
		}
		m, ok := d.Lookup("charges")
		if !ok {
			return nil, false
		}
		c, ok := m.(Charges)
		return c, ok
	}
}

// Register mounts the control routes.
func (m *Module) Register(mux httpx.Mux) {
	mux.HandleFunc("GET /sandbox/clock", m.handleClock)
	mux.HandleFunc("POST /sandbox/clock/advance", m.handleAdvance)
	mux.HandleFunc("POST /sandbox/tick", m.handleTick)
	mux.HandleFunc("POST /sandbox/charges/{id}/pay", m.handlePayCharge)
	mux.HandleFunc("POST /sandbox/carnets/{id}/parcels/{n}/pay", m.handlePayParcel)
	mux.HandleFunc("POST /sandbox/cards/{id}/refund", m.handleRefund)
	mux.HandleFunc("GET /sandbox/resends", m.handleResends)
}

// ErrorBody is the answer of a refused control request.
type ErrorBody struct {
	Error    string `json:"error"`
	Property string `json:"property,omitempty"`
	Message  string `json:"message"`
}

func fail(w http.ResponseWriter, status int, slug, property, format string, args ...any) {
	httpx.WriteJSON(w, status, ErrorBody{Error: slug, Property: property, Message: fmt.Sprintf(format, args...)})
}

// ClockState is the answer of GET /sandbox/clock and of the advance.
type ClockState struct {
	Now        string `json:"now"`                 // RFC 3339, São Paulo time
	Today      string `json:"today"`               // civil date in São Paulo
	Offset     string `json:"offset,omitempty"`    // how far ahead of the real time (adjustable clock)
	Adjustable bool   `json:"adjustable"`          // whether /sandbox/clock/advance can move it
	Advanced   string `json:"advanced,omitempty"`  // what this call moved
	Delivered  *int   `json:"delivered,omitempty"` // notifications delivered by this call
	TickError  string `json:"tick_error,omitempty"`
}

func (m *Module) state() ClockState {
	now := m.clk.Now()
	s := ClockState{Now: now.In(rules.SaoPaulo).Format(time.RFC3339), Today: rules.Today(now).Format("2006-01-02")}
	_, s.Adjustable = m.clk.(Advancer)
	if a, ok := m.clk.(interface{ Offset() time.Duration }); ok {
		s.Offset = a.Offset().String()
	}
	return s
}

func (m *Module) handleClock(w http.ResponseWriter, r *http.Request) {
	httpx.WriteJSON(w, http.StatusOK, m.state())
}

// AdvanceRequest is the body of POST /sandbox/clock/advance: exactly one
// of Duration ("48h", "90m", "3d", "1d12h") and To (a date "2027-03-01",
// keeping the time of day, or an RFC 3339 instant).
type AdvanceRequest struct {
	Duration string `json:"duration,omitempty"`
	To       string `json:"to,omitempty"`
}

var reDays = regexp.MustCompile(`^(\d+)d(.*)$`)

// ParseDuration reads a Go duration ("48h", "90m") that may start with a
// number of days ("3d", "1d12h").
func ParseDuration(s string) (time.Duration, error) {
	s = strings.TrimSpace(s)
	var days time.Duration
	if mm := reDays.FindStringSubmatch(s); mm != nil {
		n, err := strconv.Atoi(mm[1])
		if err != nil || n > maxAdvanceDays {
			return 0, fmt.Errorf("duração %q: número de dias fora do intervalo", s)
		}
		days = time.Duration(n) * 24 * time.Hour
		s = mm[2]
		if s == "" {
			return days, nil
		}
	}
	d, err := time.ParseDuration(s)
	if err != nil {
		return 0, fmt.Errorf("duração %q: use por exemplo 48h, 90m, 3d ou 1d12h", s)
	}
	if d > maxAdvance || days+d > maxAdvance {
		return 0, fmt.Errorf("duração %q: no máximo %d dias (100 anos) de uma vez", s, maxAdvanceDays)
	}
	return days + d, nil
}

// maxAdvance bounds one move of the clock (100 years), and maxYear the
// sandbox's time: far beyond any test, well inside what the clock can
// hold (the offset of clock.Adjustable is a time.Duration, at most 292
// years; past it the clock would stop or, before the saturation, wrap
// backwards) and what JSON dates can carry (years up to 9999).
const (
	maxAdvanceDays = 36500
	maxAdvance     = maxAdvanceDays * 24 * time.Hour
	maxYear        = 2199
)

// checkTarget refuses a move of d from now that goes past the limits.
func checkTarget(now time.Time, d time.Duration, ptr, what string) (time.Duration, string, error) {
	if d > maxAdvance {
		return 0, ptr, fmt.Errorf("%s: no máximo %d dias (100 anos) de uma vez", what, maxAdvanceDays)
	}
	if now.Add(d).Year() > maxYear {
		return 0, ptr, fmt.Errorf("%s: o relógio do sandbox não passa do ano %d", what, maxYear)
	}
	return d, "", nil
}

// target returns how far the clock must move for req.
func (m *Module) target(req AdvanceRequest) (time.Duration, string, error) {
	switch {
	case req.Duration != "" && req.To != "":
		return 0, "", errors.New("informe duration ou to, não os dois")
	case req.Duration != "":
		d, err := ParseDuration(req.Duration)
		if err != nil {
			return 0, "/duration", err
		}
		if d <= 0 {
			return 0, "/duration", fmt.Errorf("duração %q: o relógio do sandbox só anda para a frente", req.Duration)
		}
		return checkTarget(m.clk.Now(), d, "/duration", fmt.Sprintf("duração %q", req.Duration))
	case req.To != "":
		now := m.clk.Now()
		var to time.Time
		if day, err := rules.ParseISODate(req.To); err == nil {
			today := rules.Today(now)
			to = now.Add(day.Sub(today)) // same time of day, that date
		} else if t, err := time.Parse(time.RFC3339, req.To); err == nil {
			to = t
		} else {
			return 0, "/to", fmt.Errorf("to %q: use uma data AAAA-MM-DD ou um instante RFC 3339", req.To)
		}
		if !to.After(now) {
			return 0, "/to", fmt.Errorf("to %q não está no futuro do sandbox (agora %s): o relógio só anda para a frente",
				req.To, now.In(rules.SaoPaulo).Format(time.RFC3339))
		}
		return checkTarget(now, to.Sub(now), "/to", fmt.Sprintf("to %q", req.To))
	}
	return 0, "", errors.New("informe duration (ex.: \"48h\", \"3d\") ou to (ex.: \"2027-03-01\")")
}

func (m *Module) handleAdvance(w http.ResponseWriter, r *http.Request) {
	var req AdvanceRequest
	if de := httpx.DecodeStrict(r, &req); de != nil {
		fail(w, de.Status(), "invalid_request", de.Pointer, "%s", de.Message)
		return
	}
	adv, ok := m.clk.(Advancer)
	if !ok {
		fail(w, http.StatusConflict, "clock_not_adjustable", "", "o relógio deste sandbox não pode ser movido")
		return
	}
	d, ptr, err := m.target(req)
	if err != nil {
		fail(w, http.StatusBadRequest, "invalid_request", ptr, "%s", err.Error())
		return
	}
	adv.Advance(d)
	m.saveOffset(r.Context())
	m.log.Info().Dur("by", d).Time("now", m.clk.Now()).Msg("control: clock advanced")
	s := m.settle(r.Context())
	s.Advanced = d.String()
	// the answer is dated by the clock as it now stands (httpx.Date dated
	// it when the request arrived)
	w.Header().Set("Date", m.clk.Now().UTC().Format(http.TimeFormat))
	httpx.WriteJSON(w, http.StatusOK, s)
}

func (m *Module) handleTick(w http.ResponseWriter, r *http.Request) {
	httpx.WriteJSON(w, http.StatusOK, m.settle(r.Context()))
}

// settleLimit bounds the deliveries a control call waits for.
const settleLimit = 10 * time.Second

// settle runs the charges module's time-based transitions and delivers
// what is due.
func (m *Module) settle(ctx context.Context) ClockState {
	s := m.state()
	if c, ok := m.charges(); ok {
		if err := c.Tick(ctx); err != nil {
			m.log.Error().Err(err).Msg("control: charges tick")
			s.TickError = "falha ao aplicar vencimentos; veja o log do sandbox"
		}
	}
	if rn, ok := m.notify.(Runner); ok {
		// A hanging receiver must not hang the tester's call: what is not
		// delivered within the limit is left to the background loop.
		rctx, cancel := context.WithTimeout(ctx, settleLimit)
		n, err := rn.RunDue(rctx)
		cancel()
		if err != nil {
			m.log.Warn().Err(err).Msg("control: outbox run cut short; the background loop delivers the rest")
		}
		s.Delivered = &n
	}
	return s
}
