package status_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"remessa/api"
	"remessa/pipeline/run"
	"remessa/pipeline/run/runtest"
	"remessa/pipeline/status"
	"remessa/reports/conciliacao"
	"remessa/rules"
	"remessa/sandbox/control"
)

func isoDay(t *testing.T, s string) time.Time {
	t.Helper()
	d, err := rules.ParseISODate(s)
	if err != nil {
		t.Fatalf("date %q: %v", s, err)
	}
	return d
}

// TestSyncFollowsTheServiceClock is issue 22's scenario 1 on the school
// sample: the sandbox's clock moved to 11 days after the first parcels'
// due date (the 10th of next month, 23 days or so ahead of this machine),
// parcel 1 of carnet A paid, status; parcel 1 of carnet B paid the same
// service day, status again: the second payment is found by the
// incremental sync (the old windows, by this machine's clock, said "0
// mudaram"), the reconciliation's as_of is the service's day, and the
// first parcels still unpaid are overdue, not "a vencer".
func TestSyncFollowsTheServiceClock(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	dir, rn, res := issueEscola(t)
	ctl := &control.Client{BaseURL: rn.URL}
	opts := status.Options{Run: run.Options{Embedded: rn}}
	if s, err := status.Sync(ctx, dir, opts); err != nil || s.Open.Count != 480 {
		t.Fatalf("first sync: %+v %v", s, err)
	}
	a, b := res.Rows[0], res.Rows[1]
	if a.Parcels[0].ValueCents != 98000 || b.Parcels[0].ValueCents != 85000 {
		t.Fatalf("the sample changed: parcel 1 of %s is %d, of %s %d (want 98000 and 85000)", a.Key, a.Parcels[0].ValueCents, b.Key, b.Parcels[0].ValueCents)
	}
	due1 := isoDay(t, a.Parcels[0].DueDate)
	payDay := due1.AddDate(0, 0, 11)
	if _, err := ctl.Advance(ctx, control.AdvanceRequest{To: payDay.Format("2006-01-02")}); err != nil {
		t.Fatal(err)
	}
	// 11 days late: R$ 980,00 + 2 % (19,60) + 0,033 % a day for 11 days
	// (3,5574 → 3,56) = R$ 1.003,16; R$ 850,00 + 17,00 + 3,0855 → 3,09 =
	// R$ 870,09
	payA, payB := int64(100316), int64(87009)
	if _, err := ctl.PayParcel(ctx, a.CarnetID, 1, control.PayRequest{Value: &payA}, rn.PayeeCode); err != nil {
		t.Fatal(err)
	}
	s1, err := status.Sync(ctx, dir, opts)
	if err != nil {
		t.Fatal(err)
	}
	if s1.Changed < 1 || s1.Received.Count != 1 || s1.Received.Cents != 100316 {
		t.Fatalf("after carnet A's payment: %d changed, received %+v; want 1 of 100316", s1.Changed, s1.Received)
	}
	if got := s1.Today(); !got.Equal(payDay) {
		t.Errorf("the sync's day is %s, want the service's %s (this machine's is %s)", got.Format("2006-01-02"), payDay.Format("2006-01-02"), rules.Today(time.Now()).Format("2006-01-02"))
	}
	if s1.Clock != status.ClockService || s1.SkewSeconds < 10*24*3600 {
		t.Errorf("clock %q, skew %d s: want the service's, at least 10 days ahead", s1.Clock, s1.SkewSeconds)
	}
	if _, err := ctl.PayParcel(ctx, b.CarnetID, 1, control.PayRequest{Value: &payB}, rn.PayeeCode); err != nil {
		t.Fatal(err)
	}
	s2, err := status.Sync(ctx, dir, opts)
	if err != nil {
		t.Fatal(err)
	}
	// the 40 monthly fees add up to R$ 42.327,75; the 38 first parcels
	// left unpaid are R$ 42.327,75 − 980,00 − 850,00 = R$ 40.497,75; the
	// 11 later parcels of each carnet R$ 465.605,25
	if s2.Changed != 1 || s2.Received.Count != 2 || s2.Received.Cents != 187325 {
		t.Errorf("after carnet B's payment the same service day: %d changed, received %+v; want 1 changed, 2 of 187325", s2.Changed, s2.Received)
	}
	if s2.Overdue.Count != 38 || s2.Overdue.Cents != 4049775 || s2.Open.Count != 440 || s2.Open.Cents != 46560525 {
		t.Errorf("overdue %+v, open %+v; want 38 of 4049775 and 440 of 46560525", s2.Overdue, s2.Open)
	}
	_, rc, err := conciliacao.WriteRun(ctx, dir, s2.Today(), "pt")
	if err != nil {
		t.Fatal(err)
	}
	if rc.AsOf != payDay.Format("2006-01-02") {
		t.Errorf("as_of %s, want the service's day %s", rc.AsOf, payDay.Format("2006-01-02"))
	}
	if rc.Totals.Overdue != 4049775 || rc.Totals.Open != 46560525 || rc.Totals.Received != 187325 {
		t.Errorf("reconciliation: overdue %d, a vencer %d, received %d; want 4049775, 46560525, 187325", rc.Totals.Overdue, rc.Totals.Open, rc.Totals.Received)
	}
	note := status.ClockNote(s2.ClockReading(), "pt")
	if !strings.Contains(note, "relógio do serviço ("+payDay.Format("02/01/2006")) || !strings.Contains(note, "à frente do") {
		t.Errorf("clock warning %q: want the service's date and \"à frente do\"", note)
	}
	if full, err := status.Sync(ctx, dir, status.Options{Run: opts.Run, Full: true}); err != nil || full.Changed != 0 {
		t.Errorf("a full sync after the incremental ones changed %v charges (%v)", full, err)
	}
	// a report written later without the network counts from the
	// service's time the ledger kept
	if got := rules.Today(status.ServiceNow(ctx, dir, time.Now())); !got.Equal(payDay) {
		t.Errorf("the ledger's service day %s, want %s", got.Format("2006-01-02"), payDay.Format("2006-01-02"))
	}
}

// ledgerRows is every charge of a ledger as a comparable line (without
// when it was seen).
func ledgerRows(t *testing.T, dir string) []status.Charge {
	t.Helper()
	cs := runtest.Ledger(t, dir)
	for i := range cs {
		cs[i].UpdatedAt = ""
	}
	return cs
}

// TestIncrementalEqualsFullAfterClockMoves: the sandbox's clock moves
// forward several times (13 days, 1 day, 30 days, 95 days; it never goes
// back), with payments, a manual settlement and a cancellation between
// the moves; after each, an incremental sync of one copy of the run and a
// full sync of another leave the two ledgers equal, charge by charge.
// Then the ledger's last sync is put 10 days ahead of the service (an
// older ledger that kept this machine's clock, ahead of the service's):
// the incremental sync still finds the next payment.
func TestIncrementalEqualsFullAfterClockMoves(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	dir, rn, res := issueEscola(t)
	other := runtest.CopyRun(t, dir)
	ctl := &control.Client{BaseURL: rn.URL}
	cl := runtest.Client(t, rn)
	inc := status.Options{Run: run.Options{Embedded: rn}}
	full := status.Options{Run: run.Options{Embedded: rn}, Full: true}
	compare := func(step string) {
		t.Helper()
		a, err := status.Sync(ctx, dir, inc)
		if err != nil {
			t.Fatalf("%s: incremental: %v", step, err)
		}
		b, err := status.Sync(ctx, other, full)
		if err != nil {
			t.Fatalf("%s: full: %v", step, err)
		}
		if a.Received != b.Received || a.Overdue != b.Overdue || a.Open != b.Open || a.Cancel != b.Cancel || a.Settled != b.Settled {
			t.Errorf("%s: incremental %+v\nfull %+v", step, a, b)
		}
		ra, rb := ledgerRows(t, dir), ledgerRows(t, other)
		// the sync's sums (made by SQLite) are Summarize's of the charges
		if s := status.Summarize(ra, a.Today()); s.Charges != a.Charges || s.Issued != a.Issued || s.Received != a.Received || s.Open != a.Open ||
			s.Overdue != a.Overdue || s.Settled != a.Settled || s.Cancel != a.Cancel || s.Refunded != a.Refunded || s.Rebate != a.Rebate {
			t.Errorf("%s: the sync's summary %+v\nSummarize of its ledger %+v", step, a, s)
		}
		if len(ra) != len(rb) {
			t.Fatalf("%s: %d charges against %d", step, len(ra), len(rb))
		}
		diff := 0
		for i := range ra {
			if ra[i] != rb[i] {
				if diff < 5 {
					t.Errorf("%s: incremental %+v\nfull        %+v", step, ra[i], rb[i])
				}
				diff++
			}
		}
		if diff > 0 {
			t.Errorf("%s: %d charges differ between the incremental and the full sync", step, diff)
		}
	}
	compare("before any move")
	pay := func(row, parcel int) {
		t.Helper()
		if _, err := ctl.PayParcel(ctx, res.Rows[row].CarnetID, parcel, control.PayRequest{}, rn.PayeeCode); err != nil {
			t.Fatalf("pay row %d parcel %d: %v", row, parcel, err)
		}
	}
	steps := []struct {
		move string
		do   func()
	}{
		{"13d", func() { pay(0, 1); pay(1, 1) }},
		{"1d", func() {
			pay(2, 1)
			if err := cl.SettleParcel(ctx, res.Rows[3].CarnetID, 1); err != nil {
				t.Fatal(err)
			}
		}},
		{"30d", func() {
			pay(0, 2)
			pay(4, 1)
			if err := cl.CancelCarnet(ctx, res.Rows[5].CarnetID); err != nil {
				t.Fatal(err)
			}
		}},
		{"95d", func() { pay(0, 3); pay(6, 2); pay(7, 5) }},
	}
	for _, st := range steps {
		if _, err := ctl.Advance(ctx, control.AdvanceRequest{Duration: st.move}); err != nil {
			t.Fatal(err)
		}
		st.do()
		compare("+" + st.move)
	}
	// the ledger's last sync 10 days ahead of the service
	l, err := status.OpenLedger(dir)
	if err != nil {
		t.Fatal(err)
	}
	ahead := status.ServiceNow(ctx, dir, time.Now()).Add(10 * 24 * time.Hour)
	status.SetLastSyncForTest(ctx, l, ahead)
	l.Close()
	pay(8, 1)
	compare("last sync ahead of the service")
	if got := ledgerRows(t, dir); got[8*12].State != status.StatePaid {
		t.Errorf("row 8 parcel 1: %+v, want paid", got[8*12])
	}
}

// TestClockNote: the warning says both times (São Paulo) and the
// difference, in Portuguese and English; nothing within a minute; a
// service that gave no Date is named as such.
func TestClockNote(t *testing.T) {
	t.Parallel()
	local := time.Date(2026, 11, 28, 13, 0, 0, 0, time.UTC) // 10:00 in São Paulo
	for _, c := range []struct {
		skew     time.Duration
		known    bool
		lang     string
		want     string
		wantNone bool
	}{
		{23*24*time.Hour + 2*time.Hour + 5*time.Minute, true, "pt", "Aviso: o relógio do serviço (21/12/2026 12:05:00) está 23 dias, 2 horas e 5 minutos à frente do desta máquina (28/11/2026 10:00:00)", false},
		{-80 * time.Second, true, "pt", "está 1 minuto atrás do desta máquina (28/11/2026 10:00:00)", false},
		{26 * time.Hour, true, "en", "Warning: the service's clock (29/11/2026 12:00:00) is 1 day and 2 hours ahead of this machine's (28/11/2026 10:00:00)", false},
		{59 * time.Second, true, "pt", "", true},
		{-59 * time.Second, true, "en", "", true},
		{0, false, "pt", "sem o cabeçalho Date); as datas seguem o relógio desta máquina (28/11/2026 10:00:00)", false},
		{0, false, "en", "(no Date header); dates follow this machine's clock (28/11/2026 10:00:00)", false},
	} {
		got := status.ClockNote(api.ClockReading{Service: local.Add(c.skew), Local: local, Known: c.known}, c.lang)
		if c.wantNone {
			if got != "" {
				t.Errorf("skew %v: %q, want no warning", c.skew, got)
			}
			continue
		}
		if !strings.Contains(got, c.want) {
			t.Errorf("skew %v %s:\n%q\nwant it to contain\n%q", c.skew, c.lang, got, c.want)
		}
	}
}

// TestIncrementalEqualsFullAfterClockMovesPix is the same for 30 due-date
// Pix charges (due in 20 days): Pix paid after moves of 13 days, 1 day
// and 30 days (one late), a charge removed, and a move of 95 days; after
// each, the incremental sync (Pix received since the last one, refunds,
// removed) and a full listing leave the two ledgers equal.
func TestIncrementalEqualsFullAfterClockMovesPix(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	is := cobv30.Issue(t)
	rn, dir, rows := is.Sandbox, is.Outcome.Dir, is.Outcome.Results.Rows
	other := runtest.CopyRun(t, dir)
	ctl := &control.Client{BaseURL: rn.URL}
	cl := runtest.Client(t, rn)
	inc := status.Options{Run: run.Options{Embedded: rn}}
	full := status.Options{Run: run.Options{Embedded: rn}, Full: true}
	compare := func(step string) *status.Summary {
		t.Helper()
		a, err := status.Sync(ctx, dir, inc)
		if err != nil {
			t.Fatalf("%s: incremental: %v", step, err)
		}
		if _, err := status.Sync(ctx, other, full); err != nil {
			t.Fatalf("%s: full: %v", step, err)
		}
		ra, rb := ledgerRows(t, dir), ledgerRows(t, other)
		for i := range ra {
			if ra[i] != rb[i] {
				t.Errorf("%s: incremental %+v\nfull        %+v", step, ra[i], rb[i])
			}
		}
		return a
	}
	compare("before any move")
	pay := func(i int) {
		t.Helper()
		if _, err := ctl.PayPix(ctx, rows[i].Txid, ""); err != nil {
			t.Fatalf("pay %s: %v", rows[i].Txid, err)
		}
	}
	for _, st := range []struct {
		move string
		do   func()
	}{
		{"13d", func() { pay(0); pay(1) }},
		{"1d", func() { pay(2) }},
		{"30d", func() {
			pay(3) // 24 days late
			if _, err := cl.PatchCobV(ctx, rows[4].Txid, api.CobPatch{Status: "REMOVIDA_PELO_USUARIO_RECEBEDOR"}); err != nil {
				t.Fatal(err)
			}
		}},
		{"95d", func() {}},
	} {
		if _, err := ctl.Advance(ctx, control.AdvanceRequest{Duration: st.move}); err != nil {
			t.Fatal(err)
		}
		st.do()
		s := compare("+" + st.move)
		if st.move == "95d" && (s.Received.Count != 4 || s.Cancel.Count != 1 || s.Overdue.Count != 25) {
			t.Errorf("after 139 days: received %+v, removed %+v, overdue %+v; want 4, 1 and 25", s.Received, s.Cancel, s.Overdue)
		}
	}
}
