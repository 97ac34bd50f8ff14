package store

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"testing"
)

// The index rows: listing order (N, id), filters, counts and paging by
// offset, with the remembered page cursors invalidated by a write.
func TestIndexFindCountAndPages(t *testing.T) { forBackends(t, testIndexFind) }

func testIndexFind(t *testing.T, be testBackend) {
	s := openT(t, be.newDB(t))
	ctx := context.Background()
	err := s.Tx(ctx, func(tx *Tx) error {
		for i := range 250 {
			st := "A"
			if i%5 == 0 {
				st = "B"
			}
			id := fmt.Sprintf("c%03d", 249-i) // ids against the order of N
			if err := tx.PutIndex("k", "acc", id, Index{N: int64(i / 2), S1: st, I1: int64(i)}); err != nil {
				return err
			}
		}
		return tx.PutIndex("k", "other", "x", Index{N: 1, S1: "A"})
	})
	if err != nil {
		t.Fatal(err)
	}
	all := Query{Kind: "k", Account: "acc", Where: []Cond{Between(ColN, 0, 1000)}}
	if n, err := s.Count(ctx, all); n != 250 || err != nil {
		t.Fatalf("Count = %d, %v", n, err)
	}
	b := all
	b.Where = append(b.Where, Eq(ColS1, "B"))
	if n, _ := s.Count(ctx, b); n != 50 {
		t.Fatalf("Count(S1=B) = %d, want 50", n)
	}
	// Every row exactly once, in (N, id) order, page by page (twice: the
	// second pass runs on the remembered cursors).
	for pass := range 2 {
		var got []string
		for off := 0; off < 260; off += 40 {
			q := all
			q.Offset, q.Limit = off, 40
			err := s.Find(ctx, q, func(id string, ix Index) error {
				got = append(got, fmt.Sprintf("%d/%s", ix.N, id))
				return nil
			})
			if err != nil {
				t.Fatal(err)
			}
		}
		if len(got) != 250 {
			t.Fatalf("pass %d: %d rows", pass, len(got))
		}
		for i := 1; i < len(got); i++ {
			var n0, n1 int
			var id0, id1 string
			fmt.Sscanf(strings.Replace(got[i-1], "/", " ", 1), "%d %s", &n0, &id0)
			fmt.Sscanf(strings.Replace(got[i], "/", " ", 1), "%d %s", &n1, &id1)
			if n1 < n0 || n1 == n0 && id1 <= id0 {
				t.Fatalf("pass %d: out of order at %d: %s then %s", pass, i, got[i-1], got[i])
			}
		}
	}
	// Keys: the same rows and order, pages on the same cursors, only id
	// and N read.
	for pass := range 2 {
		var got []string
		for off := 0; off < 260; off += 40 {
			q := all
			q.Where = append(append([]Cond(nil), all.Where...), Eq(ColS1, "B"))
			q.Offset, q.Limit, q.Keys = off, 40, true
			err := s.Find(ctx, q, func(id string, ix Index) error {
				if ix.S1 != "" || ix.I1 != 0 || ix.Owner != id {
					t.Fatalf("Keys: row %s read whole: %+v", id, ix)
				}
				got = append(got, fmt.Sprintf("%d/%s", ix.N, id))
				return nil
			})
			if err != nil {
				t.Fatal(err)
			}
		}
		if len(got) != 50 || got[0] != "0/c249" || got[49] != "122/c004" {
			t.Fatalf("Keys pass %d: %d rows, %v", pass, len(got), got)
		}
	}
	// A write between pages is seen: the cursors and counts of before are
	// not used.
	if err := s.Tx(ctx, func(tx *Tx) error { return tx.PutIndex("k", "acc", "a-first", Index{N: -1}) }); err != nil {
		t.Fatal(err)
	}
	q := all
	q.Where = []Cond{Between(ColN, -5, 1000)}
	if n, _ := s.Count(ctx, q); n != 251 {
		t.Fatalf("Count after a write = %d", n)
	}
	q.Offset, q.Limit = 40, 1
	var second string
	s.Find(ctx, q, func(id string, ix Index) error { second = id; return nil })
	q.Offset = 0
	var first string
	s.Find(ctx, q, func(id string, ix Index) error { first = id; return nil })
	if first != "a-first" || second == "" {
		t.Fatalf("after a write: first %q, row 40 %q", first, second)
	}
	// Ranges on integer columns, a row read back, a row deleted.
	r := Query{Kind: "k", Account: "acc", Where: []Cond{Between(ColI1, 10, 19)}}
	if n, _ := s.Count(ctx, r); n != 10 {
		t.Fatalf("Count(10 <= I1 <= 19) = %d", n)
	}
	ix, ok, err := s.GetIndex(ctx, "k", "acc", "c249")
	if !ok || err != nil || ix.Owner != "c249" || ix.S1 != "B" {
		t.Fatalf("GetIndex = %+v %v %v", ix, ok, err)
	}
	s.Tx(ctx, func(tx *Tx) error { return tx.DeleteIndexes("k", "acc", []string{"c249", "c248", "missing"}) })
	if n, _ := s.Count(ctx, all); n != 248 {
		t.Fatalf("Count after deleting 2 = %d", n)
	}
	if _, err := s.Count(ctx, Query{Kind: "k", Where: []Cond{Eq("json; DROP TABLE doc", 1)}}); err == nil {
		t.Fatal("a query on an unknown column was run")
	}
}

func TestAliases(t *testing.T) { forBackends(t, testAliases) }

func testAliases(t *testing.T, be testBackend) {
	s := openT(t, be.newDB(t))
	ctx := context.Background()
	err := s.Tx(ctx, func(tx *Tx) error {
		for i := range 600 { // more than one IN (...) query
			if err := tx.PutAlias("tok", "a", "k"+strconv.Itoa(i), "doc"+strconv.Itoa(i), "ref"); err != nil {
				return err
			}
		}
		return tx.PutAlias("tok", "a", "k1", "replaced", "")
	})
	if err != nil {
		t.Fatal(err)
	}
	if a, ok, err := s.GetAlias(ctx, "tok", "a", "k1"); !ok || err != nil || a.Owner != "replaced" {
		t.Fatalf("GetAlias = %+v %v %v", a, ok, err)
	}
	if _, ok, _ := s.GetAlias(ctx, "tok", "b", "k1"); ok {
		t.Fatal("an alias of another account was found")
	}
	err = s.Tx(ctx, func(tx *Tx) error {
		keys := []string{"missing"}
		for i := range 600 {
			keys = append(keys, "k"+strconv.Itoa(i))
		}
		m, err := tx.GetAliases("tok", "a", keys)
		if err != nil || len(m) != 600 || m["k599"].Owner != "doc599" || m["k599"].Ref != "ref" {
			return fmt.Errorf("GetAliases: %d %v", len(m), err)
		}
		if err := tx.DeleteAliases("tok", "a", keys[:301]); err != nil {
			return err
		}
		return tx.DeleteAlias("tok", "a", "k599")
	})
	if err != nil {
		t.Fatal(err)
	}
	for k, want := range map[string]bool{"k0": false, "k299": false, "k300": true, "k599": false} {
		if _, ok, _ := s.GetAlias(ctx, "tok", "a", k); ok != want {
			t.Fatalf("alias %s present = %v, want %v", k, ok, want)
		}
	}
}

// The cache serves committed documents; a transaction sees its own
// writes; a rolled back write is never served; on a shared store (another
// instance may write) nothing is cached.
func TestCache(t *testing.T) { forBackends(t, testCache) }

func testCache(t *testing.T, be testBackend) {
	path := be.newDB(t)
	s := openT(t, path)
	ctx := context.Background()
	c := NewCache(s, "d", CacheOpts[doc]{Size: 4})
	if v, err := c.Get(ctx, "a", "1"); v != nil || err != nil {
		t.Fatalf("Get of nothing = %+v %v", v, err)
	}
	err := s.Tx(ctx, func(tx *Tx) error {
		if err := c.Put(tx, "a", "1", &doc{Name: "one"}); err != nil {
			return err
		}
		v, err := c.TxGet(tx, "a", "1")
		if err != nil || v == nil || v.Name != "one" {
			return fmt.Errorf("TxGet of own write = %+v %v", v, err)
		}
		if out, _ := c.Get(ctx, "a", "1"); out != nil {
			return fmt.Errorf("an uncommitted write is served outside its transaction: %+v", out)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	boom := fmt.Errorf("boom")
	s.Tx(ctx, func(tx *Tx) error {
		c.Put(tx, "a", "1", &doc{Name: "rolled back"})
		return boom
	})
	if v, _ := c.Get(ctx, "a", "1"); v == nil || v.Name != "one" {
		t.Fatalf("after a rollback: %+v", v)
	}
	for i := range 20 {
		s.Tx(ctx, func(tx *Tx) error { return c.Put(tx, "a", strconv.Itoa(i+2), &doc{Cents: int64(i)}) })
		c.Get(ctx, "a", strconv.Itoa(i+2))
	}
	if n := c.Len(); n > 4 {
		t.Fatalf("cache of size 4 holds %d", n)
	}
	m, err := c.GetMany(ctx, "a", []string{"1", "5", "21", "nope"})
	if err != nil || len(m) != 3 || m["1"].Name != "one" || m["21"].Cents != 19 {
		t.Fatalf("GetMany = %v %v", m, err)
	}
	s.Tx(ctx, func(tx *Tx) error { return c.Delete(tx, "a", "1") })
	if v, _ := c.Get(ctx, "a", "1"); v != nil {
		t.Fatalf("deleted document served: %+v", v)
	}
	// A second handle on the same database: another instance.
	other := openT(t, path)
	oc := NewCache(other, "d", CacheOpts[doc]{})
	other.Tx(ctx, func(tx *Tx) error { return oc.Put(tx, "a", "5", &doc{Name: "from the other"}) })
	v, _ := c.Get(ctx, "a", "5")
	if s.Shared() {
		if v == nil || v.Name != "from the other" || c.Len() != 0 {
			t.Fatalf("shared store: %+v, %d cached", v, c.Len())
		}
	} else if v == nil {
		t.Fatal("document lost")
	}
}

// Two handles over one database behave as one store: read-modify-write
// transactions from both never lose an update, and a create-if-absent
// from both creates once (the way a txid stays unique per account when two
// sandbox instances take the same PUT).
func TestTwoHandlesSerialiseWriters(t *testing.T) { forBackends(t, testTwoHandles) }

func testTwoHandles(t *testing.T, be testBackend) {
	path := be.newDB(t)
	a, b := openT(t, path), openT(t, path)
	ctx := context.Background()
	var wg sync.WaitGroup
	var mu sync.Mutex
	created := 0
	for g := range 8 {
		st := a
		if g%2 == 1 {
			st = b
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range 20 {
				err := st.Tx(ctx, func(tx *Tx) error {
					var d doc
					if _, err := tx.Get("counter", "", "c", &d); err != nil {
						return err
					}
					d.Cents++
					return tx.Put("counter", "", "c", d)
				})
				if err != nil {
					t.Error(err)
					return
				}
			}
			err := st.Tx(ctx, func(tx *Tx) error {
				found, err := tx.Get("charge", "acc", "same-txid", nil)
				if err != nil || found {
					return err
				}
				mu.Lock()
				created++
				mu.Unlock()
				return tx.Put("charge", "acc", "same-txid", doc{Name: fmt.Sprint(g)})
			})
			if err != nil {
				t.Error(err)
			}
		}()
	}
	wg.Wait()
	var d doc
	if _, err := b.Get(ctx, "counter", "", "c", &d); err != nil || d.Cents != 160 {
		t.Fatalf("counter = %d (%v), want 160: an update was lost", d.Cents, err)
	}
	if created != 1 {
		t.Fatalf("the same id was created %d times", created)
	}
}

func TestRedact(t *testing.T) {
	for in, want := range map[string]string{
		"postgres://u:s3cret@h:5432/db?sslmode=disable": "postgres://u:xxxxx@h:5432/db?sslmode=disable",
		"postgresql://h/db?password=s3cret":             "postgresql://h/db?password=xxxxx",
		"/var/lib/sandbox.db":                           "/var/lib/sandbox.db",
	} {
		if got := Redact(in); got != want || strings.Contains(got, "s3cret") {
			t.Errorf("Redact(%q) = %q, want %q", in, got, want)
		}
	}
	if _, err := Open("postgres://u:s3cret@127.0.0.1:1/db?connect_timeout=1"); err == nil || strings.Contains(err.Error(), "s3cret") {
		t.Fatalf("Open of an unreachable database: %v", err)
	}
}

// Concurrent Tx calls are committed in groups: a call that fails or
// panics is rolled back alone, its neighbours' writes stay, and a call
// sees what an earlier call of its group wrote.
func TestGroupCommitIsolatesFailures(t *testing.T) { forBackends(t, testGroupCommit) }

func testGroupCommit(t *testing.T, be testBackend) {
	s := openT(t, be.newDB(t))
	ctx := context.Background()
	c := NewCache(s, "g", CacheOpts[doc]{})
	var wg sync.WaitGroup
	const n = 60
	errs := make([]error, n)
	panics := make([]any, n)
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			defer func() { panics[i] = recover() }()
			errs[i] = s.Tx(ctx, func(tx *Tx) error {
				if err := c.Put(tx, "a", strconv.Itoa(i), &doc{Cents: int64(i)}); err != nil {
					return err
				}
				// The shared counter: read-modify-write under the group.
				var cnt doc
				if _, err := tx.Get("cnt", "", "c", &cnt); err != nil {
					return err
				}
				cnt.Cents++
				if err := tx.Put("cnt", "", "c", cnt); err != nil {
					return err
				}
				switch i % 10 {
				case 3:
					return fmt.Errorf("refused %d", i)
				case 7:
					panic(fmt.Sprintf("panic %d", i))
				}
				return nil
			})
		}()
	}
	wg.Wait()
	good := 0
	for i := range n {
		v, err := c.Get(ctx, "a", strconv.Itoa(i))
		switch i % 10 {
		case 3:
			if errs[i] == nil || v != nil {
				t.Errorf("call %d: err %v, doc %+v", i, errs[i], v)
			}
		case 7:
			if panics[i] == nil || v != nil {
				t.Errorf("call %d: panic %v, doc %+v", i, panics[i], v)
			}
		default:
			good++
			if errs[i] != nil || err != nil || v == nil || v.Cents != int64(i) {
				t.Errorf("call %d: err %v, doc %+v (%v)", i, errs[i], v, err)
			}
		}
	}
	var cnt doc
	s.Get(ctx, "cnt", "", "c", &cnt)
	if cnt.Cents != int64(good) {
		t.Fatalf("counter %d after %d committed calls", cnt.Cents, good)
	}
}

// A group's calls before its first success run without a savepoint: one
// that fails rolls the database transaction back whole and the next call
// starts a new one. Failures first, between and last: each failing call's
// writes are gone, every other call's stay, and a later call sees an
// earlier successful one's writes.
func TestGroupFailuresBeforeFirstSuccess(t *testing.T) { forBackends(t, testGroupFirstFails) }

func testGroupFirstFails(t *testing.T, be testBackend) {
	s := openT(t, be.newDB(t))
	ctx := context.Background()
	for _, plan := range []string{"fpoofo", "ffo", "off", "ppp", "o"} {
		call := func(i int, what byte) *txCall {
			id := plan + strconv.Itoa(i)
			return &txCall{ctx: ctx, done: make(chan struct{}), lead: make(chan struct{}), fn: func(tx *Tx) error {
				if err := tx.Put("g", plan, id, doc{Name: id}); err != nil {
					return err
				}
				var cnt doc
				if _, err := tx.Get("cnt", plan, "c", &cnt); err != nil {
					return err
				}
				cnt.Cents++
				if err := tx.Put("cnt", plan, "c", cnt); err != nil {
					return err
				}
				switch what {
				case 'f':
					return errors.New("refused " + id)
				case 'p':
					panic("panic " + id)
				}
				return nil
			}}
		}
		var batch []*txCall
		for i := range len(plan) {
			batch = append(batch, call(i, plan[i]))
		}
		s.runGroup(batch)
		good := 0
		for i, c := range batch {
			<-c.done
			ok, err := s.Get(ctx, "g", plan, plan+strconv.Itoa(i), nil)
			if err != nil {
				t.Fatal(err)
			}
			switch plan[i] {
			case 'o':
				good++
				if c.err != nil || c.panic != nil || !ok {
					t.Errorf("%s call %d: err %v, panic %v, stored %v", plan, i, c.err, c.panic, ok)
				}
			case 'f':
				if c.err == nil || ok {
					t.Errorf("%s call %d: err %v, stored %v", plan, i, c.err, ok)
				}
			case 'p':
				if c.panic == nil || ok {
					t.Errorf("%s call %d: panic %v, stored %v", plan, i, c.panic, ok)
				}
			}
		}
		var cnt doc
		if _, err := s.Get(ctx, "cnt", plan, "c", &cnt); err != nil {
			t.Fatal(err)
		}
		if cnt.Cents != int64(good) {
			t.Errorf("%s: counter %d after %d committed calls", plan, cnt.Cents, good)
		}
	}
}

// A call's savepoint is taken at its first write: a call that fails
// before writing ('r') leaves the others alone; a Final call writes
// without one, and when it fails after writing ('F') the whole
// transaction goes: the calls committed in it before fail too, the later
// ones commit in a new one. A Final call that succeeds ('S') commits with
// the others.
func TestGroupFinal(t *testing.T) { forBackends(t, testGroupFinal) }

func testGroupFinal(t *testing.T, be testBackend) {
	s := openT(t, be.newDB(t))
	ctx := context.Background()
	for _, plan := range []struct{ calls, stored string }{
		{"oro", "o.o"}, {"oFo", "..o"}, {"SoS", "ooo"}, {"oSFo", "...o"}, {"roFro", "....o"},
		{"Fo", ".o"}, {"oSoF", "...."}, {"ofSo", "o.oo"},
	} {
		p := plan.calls
		call := func(i int, what byte) *txCall {
			id := p + strconv.Itoa(i)
			return &txCall{ctx: ctx, done: make(chan struct{}), lead: make(chan struct{}), fn: func(tx *Tx) error {
				var cnt doc
				if _, err := tx.Get("cnt", p, "c", &cnt); err != nil {
					return err
				}
				if what == 'r' {
					return errors.New("refused before writing " + id)
				}
				if what == 'F' || what == 'S' {
					tx.Final()
				}
				if err := tx.Put("g", p, id, doc{Name: id}); err != nil {
					return err
				}
				cnt.Cents++
				if err := tx.Put("cnt", p, "c", cnt); err != nil {
					return err
				}
				if what == 'F' || what == 'f' {
					return errors.New("failed after writing " + id)
				}
				return nil
			}}
		}
		var batch []*txCall
		for i := range len(p) {
			batch = append(batch, call(i, p[i]))
		}
		s.runGroup(batch)
		good := 0
		for i, c := range batch {
			<-c.done
			ok, err := s.Get(ctx, "g", p, p+strconv.Itoa(i), nil)
			if err != nil {
				t.Fatal(err)
			}
			want := plan.stored[i] == 'o'
			if want {
				good++
			}
			if ok != want || (c.err == nil) != want || c.panic != nil {
				t.Errorf("%s call %d: stored %v (want %v), err %v, panic %v", p, i, ok, want, c.err, c.panic)
			}
		}
		var cnt doc
		if _, err := s.Get(ctx, "cnt", p, "c", &cnt); err != nil {
			t.Fatal(err)
		}
		if cnt.Cents != int64(good) {
			t.Errorf("%s: counter %d after %d committed calls", p, cnt.Cents, good)
		}
	}
}
