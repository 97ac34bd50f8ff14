package status_test

import (
	"context"
	"path/filepath"
	"testing"

	"remessa/internal/sqlitedb"
	"remessa/pipeline/status"
)

// TestLedgerStep2KeepsStep1Charges: a situacao.db written at step 1 (the
// schema of 8e335f2, before the abatimento columns) opens at step 2 with
// its charges and events as they were, and no abatimento changed.
func TestLedgerStep2KeepsStep1Charges(t *testing.T) {
	dir := t.TempDir()
	v1 := status.LedgerSchema
	v1.Steps = v1.Steps[:1]
	db, err := sqlitedb.Open(filepath.Join(dir, status.FileName), &v1)
	if err != nil {
		t.Fatal(err)
	}
	for _, q := range []string{
		`INSERT INTO charges (key, row_index, source_row, row_key, payer, txid, due, value_cents, status, state, paid_cents, paid_at, method, updated_at)
		 VALUES ('cobv:abc', 0, 2, 'A1', 'Ana', 'abc', '2027-01-10', 15000, 'CONCLUIDA', 'paid', 13766, '2027-01-05T10:00:00-03:00', 'pix', '2027-01-05T10:00:01-03:00')`,
		`INSERT INTO events (key, status, state, paid_cents, paid_at, method, refund_cents, seen_at, source)
		 VALUES ('cobv:abc', 'CONCLUIDA', 'paid', 13766, '2027-01-05T10:00:00-03:00', 'pix', 0, '2027-01-05T10:00:01-03:00', 'status')`,
	} {
		if _, err := db.Exec(q); err != nil {
			t.Fatal(err)
		}
	}
	db.Close()

	l, err := status.OpenLedger(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	cs, err := l.Charges(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if len(cs) != 1 || cs[0].Key != "cobv:abc" || cs[0].ValueCents != 15000 || cs[0].PaidCents != 13766 || cs[0].Status != "CONCLUIDA" || cs[0].RebateSet {
		t.Fatalf("charges after step 2: %+v", cs)
	}
	if n, err := l.Events(context.Background()); err != nil || n != 1 {
		t.Errorf("events after step 2: %d %v, want 1", n, err)
	}
	if ev, err := l.RebateEvents(context.Background()); err != nil || len(ev) != 0 {
		t.Errorf("abatimento changes after step 2: %v %v, want none", ev, err)
	}
}
