package pix

import (
	"context"
	"path/filepath"
	"testing"

	"remessa/sandbox/module"
	"remessa/sandbox/store"
)

// A database that already has loc ids keeps their locations: ordered ones
// start at the next loc id, set once, the same at every later start.
func TestLocOrderedThreshold(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "s.db")
	st, err := store.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := st.Tx(ctx, func(tx *store.Tx) error { return tx.SetSeq("pix.loc", 41) }); err != nil {
		t.Fatal(err)
	}
	m, err := New(module.Deps{Store: st})
	if err != nil {
		t.Fatal(err)
	}
	if m.locOrderedFrom != 42 {
		t.Fatalf("first ordered loc id %d, want 42", m.locOrderedFrom)
	}
	m2, err := New(module.Deps{Store: st})
	if err != nil {
		t.Fatal(err)
	}
	if m2.locOrderedFrom != 42 {
		t.Fatalf("second start: %d, want 42", m2.locOrderedFrom)
	}
	st.Close()
	st, err = store.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	m3, err := New(module.Deps{Store: st})
	if err != nil {
		t.Fatal(err)
	}
	if m3.locOrderedFrom != 42 {
		t.Fatalf("after reopening: %d, want 42", m3.locOrderedFrom)
	}
	// a fresh database: every location ordered
	fresh, err := store.Open(filepath.Join(t.TempDir(), "f.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer fresh.Close()
	m4, err := New(module.Deps{Store: fresh})
	if err != nil {
		t.Fatal(err)
	}
	if m4.locOrderedFrom != 1 {
		t.Fatalf("fresh database: %d, want 1", m4.locOrderedFrom)
	}
}
