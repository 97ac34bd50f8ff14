package store

import (
	"context"
	"errors"
	"fmt"
	"testing"
)

// InsertNew writes rows whose keys are free; at the first key taken (a
// document, or an index row alone) it removes the rows it inserted,
// leaves what was there as it was and names the key. A call that then
// refuses, committed with others after declaring Final, leaves the
// others' writes in place.
func TestInsertNew(t *testing.T) { forBackends(t, testInsertNew) }

func testInsertNew(t *testing.T, be testBackend) {
	s := openT(t, be.newDB(t))
	ctx := context.Background()
	c := NewCache[doc](s, "k", CacheOpts[doc]{})
	row := func(id, name string, n int64) DocRow[doc] {
		d := &doc{Name: name}
		raw, _ := c.Encode("a", id, d)
		return DocRow[doc]{ID: id, Raw: raw, V: d, Index: &Index{N: n, S1: name}}
	}
	if err := s.Tx(ctx, func(tx *Tx) error {
		if err := c.InsertNew(tx, "a", []DocRow[doc]{row("x", "old x", 1)}); err != nil {
			return err
		}
		return tx.PutIndex("k", "a", "onlyidx", Index{N: 2, S1: "index row alone"})
	}); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		rows  []DocRow[doc]
		taken string
	}{
		{[]DocRow[doc]{row("p", "new p", 3), row("x", "new x", 4), row("q", "new q", 5)}, "x"},
		{[]DocRow[doc]{row("p", "new p", 3), row("onlyidx", "new", 4)}, "onlyidx"},
		{[]DocRow[doc]{row("x", "new x", 4)}, "x"},
	} {
		// Another call of the same group commits; this one refuses.
		other := &txCall{ctx: ctx, done: make(chan struct{}), lead: make(chan struct{}), fn: func(tx *Tx) error {
			return tx.Put("k", "a", "other"+tc.taken, doc{Name: "other"})
		}}
		var got error
		wrote := true
		this := &txCall{ctx: ctx, done: make(chan struct{}), lead: make(chan struct{}), fn: func(tx *Tx) error {
			tx.Final()
			got = c.InsertNew(tx, "a", tc.rows)
			wrote = tx.wrote
			return errors.New("refused")
		}}
		s.runGroup([]*txCall{other, this})
		<-other.done
		<-this.done
		var te *TakenError
		if !errors.As(got, &te) || te.ID != tc.taken || te.Kind != "k" || te.Account != "a" || wrote {
			t.Fatalf("InsertNew = %v (wrote %v), want %s taken", got, wrote, tc.taken)
		}
		if other.err != nil {
			t.Fatalf("the other call of the group: %v", other.err)
		}
		if ok, err := s.Get(ctx, "k", "a", "other"+tc.taken, nil); !ok || err != nil {
			t.Fatalf("the other call's write: %v %v", ok, err)
		}
		for _, r := range tc.rows {
			if r.ID == tc.taken {
				continue
			}
			if ok, _ := s.Get(ctx, "k", "a", r.ID, nil); ok {
				t.Fatalf("%s stored", r.ID)
			}
			if _, ok, _ := s.GetIndex(ctx, "k", "a", r.ID); ok {
				t.Fatalf("index row %s stored", r.ID)
			}
		}
	}
	var x doc
	if ok, err := s.Get(ctx, "k", "a", "x", &x); !ok || err != nil || x.Name != "old x" {
		t.Fatalf("x: %v %v %+v", ok, err, x)
	}
	if ix, ok, err := s.GetIndex(ctx, "k", "a", "x"); !ok || err != nil || ix.N != 1 || ix.S1 != "old x" {
		t.Fatalf("index row x: %v %v %+v", ok, err, ix)
	}
	if ok, _ := s.Get(ctx, "k", "a", "onlyidx", nil); ok {
		t.Fatal("a document where an index row was alone")
	}
	if ix, ok, _ := s.GetIndex(ctx, "k", "a", "onlyidx"); !ok || ix.N != 2 {
		t.Fatalf("index row alone: %v %+v", ok, ix)
	}
	// All keys free: every row written, with its index row, and cached.
	if err := s.Tx(ctx, func(tx *Tx) error {
		return c.InsertNew(tx, "a", []DocRow[doc]{row("p", "new p", 3), row("q", "new q", 5)})
	}); err != nil {
		t.Fatal(err)
	}
	for _, id := range []string{"p", "q"} {
		v, err := c.Get(ctx, "a", id)
		if err != nil || v == nil || v.Name != "new "+id {
			t.Fatalf("%s: %v %+v", id, err, v)
		}
		if ix, ok, _ := s.GetIndex(ctx, "k", "a", id); !ok || ix.S1 != "new "+id {
			t.Fatalf("index row %s: %v %+v", id, ok, ix)
		}
	}
}

// PutAliases writes many rows of distinct keys (on SQLite aliasChunk a
// statement, the rest one by one) as PutAlias would each: an alias
// already there is replaced.
func TestPutAliasesMany(t *testing.T) { forBackends(t, testPutAliasesMany) }

func testPutAliasesMany(t *testing.T, be testBackend) {
	s := openT(t, be.newDB(t))
	ctx := context.Background()
	n := 2*aliasChunk + 7
	var rows []AliasRow
	want := map[string]Alias{}
	for i := range n {
		k := fmt.Sprintf("key%04d", i)
		rows = append(rows, AliasRow{Key: k, Owner: "owner" + k, Ref: "ref" + k})
		want[k] = Alias{Owner: "owner" + k, Ref: "ref" + k}
	}
	want["key0005"] = Alias{Owner: "ownerkey0005", Ref: "refkey0005"}
	// a key given twice in one call (within one statement's rows and
	// across two) keeps its last row, on both backends
	rows = append([]AliasRow{{Key: "key0001", Owner: "first", Ref: "first"}}, rows...)
	rows = append(rows, AliasRow{Key: "key0002", Owner: "again", Ref: "again"})
	want["key0002"] = Alias{Owner: "again", Ref: "again"}
	if err := s.Tx(ctx, func(tx *Tx) error {
		return tx.PutAlias("k", "a", "key0005", "before", "replaced")
	}); err != nil {
		t.Fatal(err)
	}
	if err := s.Tx(ctx, func(tx *Tx) error { return tx.PutAliases("k", "a", rows) }); err != nil {
		t.Fatal(err)
	}
	var keys []string
	for k := range want {
		keys = append(keys, k)
	}
	keys = append(keys, "nokey")
	var got map[string]Alias
	if err := s.Tx(ctx, func(tx *Tx) error {
		var err error
		got, err = tx.GetAliases("k", "a", keys)
		return err
	}); err != nil {
		t.Fatal(err)
	}
	if len(got) != len(want) || len(want) != n {
		t.Fatalf("%d aliases, want %d", len(got), len(want))
	}
	for k, w := range want {
		if got[k] != w {
			t.Fatalf("%s: %+v, want %+v", k, got[k], w)
		}
	}
}
