package outbox

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"remessa/sandbox/clock"
	"remessa/sandbox/store"
)

// pixBody is a Pix webhook's body of the size the sandbox queues.
var pixBody = []byte(`{"pix":[{"endToEndId":"E12345678202603101200abcdefghijk","txid":"remessa7f3a000000000000000000001234",` +
	`"valor":"150.00","chave":"financeiro@associacao.example.com","horario":"2026-03-10T12:00:00.000Z","infoPagador":"Mensalidade"}]}`)

// later queues n deliveries to target an hour after the clock's time, then
// sets the clock back: they wait while the tests and the benchmark work.
func later(tb testing.TB, st *store.Store, clk *clock.Fake, o *Outbox, target string, n int) {
	tb.Helper()
	now := clk.Now()
	clk.Set(now.Add(time.Hour))
	ctx := context.Background()
	for done := 0; done < n; {
		err := st.Tx(ctx, func(tx *store.Tx) error {
			for i := 0; i < 1000 && done+i < n; i++ {
				if err := o.Enqueue(ctx, tx, target, pixBody, "application/json"); err != nil {
					return err
				}
			}
			return nil
		})
		if err != nil {
			tb.Fatal(err)
		}
		done += min(1000, n-done)
	}
	clk.Set(now)
}

// TestRunDueReadsOnlyWhatIsDue: RunDue reads the deliveries whose time
// has come, not every pending one. A delivery queued an hour ahead whose
// stored document no longer decodes is not read while it waits (a RunDue
// that listed every pending delivery failed on it: "decode delivery"), the
// one due beside it is delivered; an hour later RunDue reaches it and says
// so.
func TestRunDueReadsOnlyWhatIsDue(t *testing.T) {
	st, clk := openMem(t), clock.NewFake(t0)
	o := New(st, clk, Options{})
	rc := newReceiver(t)
	later(t, st, clk, o, rc.URL, 1)
	p, err := o.Pending(context.Background())
	if err != nil || len(p) != 1 {
		t.Fatalf("pending %+v %v", p, err)
	}
	err = st.Tx(context.Background(), func(tx *store.Tx) error {
		return tx.PutRaw(KindPending, "", docID(p[0].ID), []byte(`{"id":`))
	})
	if err != nil {
		t.Fatal(err)
	}
	enqueue(t, st, o, rc.URL, "notification=due", "application/x-www-form-urlencoded")
	if n, err := o.RunDue(context.Background()); n != 1 || err != nil || rc.count() != 1 {
		t.Fatalf("RunDue = %d, %v with %d posts; want the due delivery delivered and the waiting one not read", n, err, rc.count())
	}
	clk.Advance(time.Hour)
	if _, err := o.RunDue(context.Background()); err == nil || !strings.Contains(err.Error(), fmt.Sprint("delivery ", p[0].ID)) {
		t.Fatalf("RunDue an hour later: %v; want the broken delivery %d named", err, p[0].ID)
	}
}

// TestRunDueOrderAndTimes: deliveries to one URL go in queue order, each
// at its own time: a retry scheduled later than a newer delivery goes
// after it, and nothing goes before its time.
func TestRunDueOrderAndTimes(t *testing.T) {
	st, clk := openMem(t), clock.NewFake(t0)
	o := New(st, clk, Options{})
	rc := newReceiver(t, 500) // the first post fails once
	enqueue(t, st, o, rc.URL, "n=1", "text/plain")
	enqueue(t, st, o, rc.URL, "n=2", "text/plain")
	if n := runDue(t, o); n != 0 || rc.count() != 1 {
		t.Fatalf("first run: %d delivered, %d posts; want 0 and 1 (the failing receiver stops the run)", n, rc.count())
	}
	clk.Advance(time.Minute)
	enqueue(t, st, o, rc.URL, "n=3", "text/plain")
	if n := runDue(t, o); n != 2 {
		t.Fatalf("a minute later: %d delivered, want n=2 and n=3 (n=1 waits its 5 minutes)", n)
	}
	clk.Advance(4*time.Minute - time.Second)
	if n := runDue(t, o); n != 0 {
		t.Fatalf("a second before the retry: %d delivered", n)
	}
	clk.Advance(time.Second)
	if n := runDue(t, o); n != 1 {
		t.Fatalf("at the retry's time: %d delivered, want 1", n)
	}
	if got := strings.Join(bodies(rc.hits), " "); got != "n=1 n=2 n=3 n=1" {
		t.Fatalf("posts %s", got)
	}
	if p, _ := o.Pending(context.Background()); len(p) != 0 {
		t.Fatalf("%d still pending", len(p))
	}
}

// BenchmarkRunDuePending times a RunDue that delivers the one delivery due
// (queued just before, as every Enqueue wakes the loop) while n others
// wait for their time, on a sandbox.db file: what a sandbox pays per
// enqueue when thousands of notifications wait for a failing receiver's
// retry.
func BenchmarkRunDuePending(b *testing.B) {
	for _, n := range []int{1000, 10000} {
		b.Run(fmt.Sprintf("pending=%d", n), func(b *testing.B) {
			st, err := store.Open(filepath.Join(b.TempDir(), "sandbox.db"))
			if err != nil {
				b.Fatal(err)
			}
			defer st.Close()
			clk := clock.NewFake(t0)
			o := New(st, clk, Options{})
			var posts atomic.Int64
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { posts.Add(1) }))
			defer srv.Close()
			later(b, st, clk, o, srv.URL+"/later", n)
			ctx := context.Background()
			if _, err := o.RunDue(ctx); err != nil {
				b.Fatal(err)
			}
			b.ResetTimer()
			for b.Loop() {
				if err := st.Tx(ctx, func(tx *store.Tx) error { return o.Enqueue(ctx, tx, srv.URL, pixBody, "application/json") }); err != nil {
					b.Fatal(err)
				}
				if d, err := o.RunDue(ctx); d != 1 || err != nil {
					b.Fatalf("RunDue = %d, %v", d, err)
				}
			}
			b.StopTimer()
			if p, _ := o.Pending(ctx); len(p) != n {
				b.Fatalf("%d pending, want the %d waiting", len(p), n)
			}
		})
	}
}

// TestPendingWithoutIndexRowIsSwept: deliveries a remessa before the index
// left pending (a document without its KindDue row) are indexed by the
// first RunDue and delivered, in queue order; an index row left without
// its delivery is removed.
func TestPendingWithoutIndexRowIsSwept(t *testing.T) {
	st, clk := openMem(t), clock.NewFake(t0)
	rc := newReceiver(t)
	ctx := context.Background()
	err := st.Tx(ctx, func(tx *store.Tx) error {
		for i, key := range []string{"", "charges/tok1"} {
			d := Delivery{ID: int64(7 + i), Key: key, URL: rc.URL, ContentType: "text/plain", Body: []byte(fmt.Sprint("old=", i)),
				State: StatePending, CreatedAt: t0.Add(-time.Hour), NextAt: t0.Add(-time.Minute)}
			if err := tx.Put(KindPending, key, docID(d.ID), d); err != nil {
				return err
			}
		}
		if err := tx.SetSeq(seqName, 8); err != nil {
			return err
		}
		return tx.PutIndex(KindDue, "", docID(3), store.Index{N: t0.Add(-time.Hour).UnixNano(), S2: rc.URL})
	})
	if err != nil {
		t.Fatal(err)
	}
	o := New(st, clk, Options{})
	enqueue(t, st, o, rc.URL, "new", "text/plain")
	if n := runDue(t, o); n != 3 {
		t.Fatalf("%d delivered, want the 2 old deliveries and the new one", n)
	}
	if got := strings.Join(bodies(rc.hits), " "); got != "old=0 old=1 new" {
		t.Fatalf("posts %s", got)
	}
	if _, found, err := st.GetIndex(ctx, KindDue, "", docID(3)); found || err != nil {
		t.Fatalf("the index row without a delivery is still there (%v)", err)
	}
	var rows int
	st.Find(ctx, store.Query{Kind: KindDue}, func(string, store.Index) error { rows++; return nil })
	if rows != 0 {
		t.Fatalf("%d index rows left with nothing pending", rows)
	}
}
