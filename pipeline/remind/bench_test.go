package remind_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"remessa/pipeline"
	"remessa/pipeline/remind"
	"remessa/pipeline/results"
	"remessa/pipeline/status"
)

// BenchmarkDecide100k: a régua pass's decision over a ledger of 100,000
// slips (due dates spread over 100 days, every fifth paid), ledger and
// journal only: the target is under 5 s.
func BenchmarkDecide100k(b *testing.B) {
	ctx := context.Background()
	dir := b.TempDir()
	const n = 100000
	res := &results.Results{Rows: make([]results.Row, n)}
	base := time.Date(2027, 3, 1, 0, 0, 0, 0, time.UTC)
	for i := range res.Rows {
		res.Rows[i] = results.Row{Index: i, SourceRow: i + 2, Key: fmt.Sprintf("K%06d", i), PayerName: "Pagador", Outcome: results.Issued,
			AmountCents: 10000, DueDate: base.AddDate(0, 0, i%100).Format("2006-01-02"), ChargeIDs: []int64{int64(1000000 + i)}}
	}
	l, err := status.OpenLedger(dir)
	if err != nil {
		b.Fatal(err)
	}
	if _, err := l.Seed(ctx, res, base); err != nil {
		b.Fatal(err)
	}
	var paid []status.Observation
	for i := 0; i < n; i += 5 {
		paid = append(paid, status.Observation{Key: status.KeyOfCharge(int64(1000000 + i)), Status: "paid", State: status.StatePaid, PaidCents: 10000, PaidAt: "2027-03-01", Method: status.MethodBoleto})
	}
	if _, err := l.Apply(ctx, paid, base, "bench"); err != nil {
		b.Fatal(err)
	}
	l.Close()
	r := &pipeline.Reminders{Enabled: true, MaxPerPass: 500, QuietFrom: 480, QuietTo: 1200, Steps: []pipeline.ReminderStep{
		{Offset: -3, Channel: pipeline.ChannelService}, {Offset: 0, Channel: pipeline.ChannelService}, {Offset: 1, Channel: pipeline.ChannelSMTP},
		{Offset: 7, Channel: pipeline.ChannelSMTP}, {Offset: 15, Channel: pipeline.ChannelSMTP}}}
	now := time.Date(2027, 4, 10, 13, 0, 0, 0, time.UTC)
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		decs, err := remind.Decide(ctx, dir, r, now)
		if err != nil {
			b.Fatal(err)
		}
		// due 01/03 + k days (k = i mod 100), today 10/04: charges due up
		// to 13/04 (k ≤ 43, the -3d step) are due a step; k a multiple of 5
		// (9 of those 44 days) were paid: 35 days × 1,000 charges
		if len(decs) != 35000 {
			b.Fatalf("%d decisions, want 35000", len(decs))
		}
	}
}
