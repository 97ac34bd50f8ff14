package store

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"

	"remessa/internal/pgtest"
)

type doc struct {
	Name  string `json:"name"`
	Cents int64  `json:"cents"`
}

func TestMain(m *testing.M) { pgtest.Main(m) }

// backend is one implementation of the store: newDB returns the path of a
// fresh database (a SQLite file, or a PostgreSQL database on the test
// binary's throw-away cluster). Every test below that takes a backend runs
// against both: one suite, two implementations.
type testBackend struct {
	name  string
	newDB func(t testing.TB) string
}

var backends = []testBackend{
	{"sqlite", func(t testing.TB) string { return filepath.Join(t.TempDir(), "s.db") }},
	{"postgres", func(t testing.TB) string { return pgtest.DSN(t) }},
}

// forBackends runs f once per backend, as subtests named after it.
func forBackends(t *testing.T, f func(t *testing.T, be testBackend)) {
	for _, be := range backends {
		t.Run(be.name, func(t *testing.T) { f(t, be) })
	}
}

func openT(t testing.TB, path string) *Store {
	t.Helper()
	s, err := Open(path)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

func TestPutGetEachDelete(t *testing.T) {
	for _, be := range append(backends, testBackend{"memory", func(testing.TB) string { return Memory }}) {
		t.Run(be.name, func(t *testing.T) {
			s := openT(t, be.newDB(t))
			ctx := context.Background()
			err := s.Tx(ctx, func(tx *Tx) error {
				for _, k := range []struct{ acc, id string }{{"b", "2"}, {"a", "1"}, {"a", "3"}} {
					if err := tx.Put("charge", k.acc, k.id, doc{Name: k.acc + k.id, Cents: 100}); err != nil {
						return err
					}
				}
				// Reads inside the transaction see its own writes.
				var d doc
				ok, err := tx.Get("charge", "a", "3", &d)
				if !ok || err != nil || d.Name != "a3" {
					return fmt.Errorf("tx.Get: %v %v %+v", ok, err, d)
				}
				var in []string
				if err := tx.EachIn("charge", "a", func(id string, raw []byte) error {
					in = append(in, id+"="+string(raw))
					return nil
				}); err != nil {
					return err
				}
				if got := strings.Join(in, " "); got != `1={"name":"a1","cents":100} 3={"name":"a3","cents":100}` {
					return fmt.Errorf("tx.EachIn(charge, a) = %s, want a's two uncommitted documents in id order", got)
				}
				return tx.Put("carnet", "a", "1", doc{Name: "other kind"})
			})
			if err != nil {
				t.Fatal(err)
			}
			var d doc
			if ok, err := s.Get(ctx, "charge", "a", "1", &d); !ok || err != nil || d != (doc{"a1", 100}) {
				t.Fatalf("Get: %v %v %+v", ok, err, d)
			}
			if ok, err := s.Get(ctx, "charge", "b", "1", &d); ok || err != nil {
				t.Fatalf("foreign account: found=%v err=%v", ok, err)
			}
			var seen []string
			if err := s.Each(ctx, "charge", func(acc, id string, raw []byte) error {
				seen = append(seen, acc+"/"+id+"="+string(raw))
				return nil
			}); err != nil {
				t.Fatal(err)
			}
			want := []string{`a/1={"name":"a1","cents":100}`, `a/3={"name":"a3","cents":100}`, `b/2={"name":"b2","cents":100}`}
			if strings.Join(seen, " ") != strings.Join(want, " ") {
				t.Fatalf("Each: %v", seen)
			}
			var ids []string
			s.EachIn(ctx, "charge", "a", func(id string, raw []byte) error { ids = append(ids, id); return nil })
			if strings.Join(ids, ",") != "1,3" {
				t.Fatalf("EachIn: %v", ids)
			}
			stop := errors.New("stop")
			n := 0
			if err := s.Each(ctx, "charge", func(string, string, []byte) error { n++; return stop }); err != stop || n != 1 {
				t.Fatalf("Each stop: %v after %d", err, n)
			}
			if err := s.Tx(ctx, func(tx *Tx) error {
				if err := tx.Delete("charge", "a", "1"); err != nil {
					return err
				}
				return tx.Delete("charge", "a", "missing")
			}); err != nil {
				t.Fatal(err)
			}
			if ok, _ := s.Get(ctx, "charge", "a", "1", nil); ok {
				t.Fatal("deleted document still there")
			}
		})
	}
}

func TestTxRollsBackOnErrorAndPanic(t *testing.T) { forBackends(t, testTxRollsBack) }

func testTxRollsBack(t *testing.T, be testBackend) {
	s := openT(t, be.newDB(t))
	ctx := context.Background()
	boom := errors.New("boom")
	err := s.Tx(ctx, func(tx *Tx) error {
		tx.Put("k", "a", "1", doc{})
		tx.NextSeq("n")
		return boom
	})
	if err != boom {
		t.Fatalf("Tx returned %v", err)
	}
	func() {
		defer func() { recover() }()
		s.Tx(ctx, func(tx *Tx) error {
			tx.Put("k", "a", "2", doc{})
			panic("x")
		})
	}()
	for _, id := range []string{"1", "2"} {
		if ok, _ := s.Get(ctx, "k", "a", id, nil); ok {
			t.Fatalf("document %s survived a rolled back transaction", id)
		}
	}
	if v, _ := s.Seq(ctx, "n"); v != 0 {
		t.Fatalf("sequence %d after rollback", v)
	}
	// The store still works after a panic inside Tx.
	if err := s.Tx(ctx, func(tx *Tx) error { return tx.Put("k", "a", "3", doc{}) }); err != nil {
		t.Fatal(err)
	}
}

func TestSequencesAreDenseUnderConcurrency(t *testing.T) { forBackends(t, testSequencesDense) }

func testSequencesDense(t *testing.T, be testBackend) {
	s := openT(t, be.newDB(t))
	ctx := context.Background()
	var mu sync.Mutex
	got := map[int64]bool{}
	var wg sync.WaitGroup
	for g := 0; g < 8; g++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; i < 25; i++ {
				var v int64
				err := s.Tx(ctx, func(tx *Tx) error {
					var err error
					v, err = tx.NextSeq("charge")
					if err != nil {
						return err
					}
					return tx.Put("charge", "a", strconv.FormatInt(v, 10), doc{Cents: v})
				})
				if err != nil {
					t.Error(err)
					return
				}
				// Concurrent reads while writing.
				if ok, err := s.Get(ctx, "charge", "a", strconv.FormatInt(v, 10), nil); !ok || err != nil {
					t.Errorf("read own write %d: %v %v", v, ok, err)
				}
				mu.Lock()
				got[v] = true
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	for i := int64(1); i <= 200; i++ {
		if !got[i] {
			t.Fatalf("sequence value %d missing (%d values)", i, len(got))
		}
	}
	s.Tx(ctx, func(tx *Tx) error { return tx.SetSeq("charge", 100) }) // never goes back
	if v, _ := s.Seq(ctx, "charge"); v != 200 {
		t.Fatalf("SetSeq lowered the sequence to %d", v)
	}
}

func TestReopenKeepsData(t *testing.T) { forBackends(t, testReopenKeepsData) }

func testReopenKeepsData(t *testing.T, be testBackend) {
	path := be.newDB(t)
	if be.name == "sqlite" {
		path = filepath.Join(filepath.Dir(path), "nested", "dir", "s.db")
	}
	s, err := Open(path)
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	s.Tx(ctx, func(tx *Tx) error { tx.NextSeq("x"); return tx.Put("k", "a", "1", doc{Name: "ç"}) })
	s.Close()
	s, err = Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	var d doc
	if ok, _ := s.Get(ctx, "k", "a", "1", &d); !ok || d.Name != "ç" {
		t.Fatalf("after reopen: %v %+v", ok, d)
	}
	if v, _ := s.Seq(ctx, "x"); v != 1 {
		t.Fatalf("sequence after reopen %d", v)
	}
}

func TestMemoryStoresAreSeparate(t *testing.T) {
	a, _ := Open(Memory)
	b, _ := Open(Memory)
	defer a.Close()
	defer b.Close()
	ctx := context.Background()
	a.Tx(ctx, func(tx *Tx) error { return tx.Put("k", "a", "1", doc{}) })
	if ok, _ := b.Get(ctx, "k", "a", "1", nil); ok {
		t.Fatal("two :memory: stores share data")
	}
}

func TestOpenRejectsBadSync(t *testing.T) {
	if _, err := OpenWith(Memory, Options{Sync: "OFF"}); err == nil {
		t.Fatal("synchronous OFF accepted")
	}
}

// TestKillDashNineLosesNoAcknowledgedWrite runs a child process that
// commits documents and prints "ack N" after each commit returned, kills
// it with SIGKILL mid-stream, and checks every acknowledged document is
// in the database.
func TestKillDashNineLosesNoAcknowledgedWrite(t *testing.T) {
	if path := os.Getenv("REMESSA_STORE_CHILD"); path != "" {
		childWriter(path)
		return
	}
	if testing.Short() {
		t.Skip("spawns a process")
	}
	forBackends(t, testKillDashNine)
}

func testKillDashNine(t *testing.T, be testBackend) {
	path := be.newDB(t)
	cmd := exec.Command(os.Args[0], "-test.run=^TestKillDashNineLosesNoAcknowledgedWrite$")
	cmd.Env = append(os.Environ(), "REMESSA_STORE_CHILD="+path)
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	sc := bufio.NewScanner(out)
	acked := 0
	for sc.Scan() {
		var n int
		if _, err := fmt.Sscanf(sc.Text(), "ack %d", &n); err == nil {
			acked = n
			if n == 300 {
				cmd.Process.Signal(syscall.SIGKILL)
				break
			}
		}
	}
	for sc.Scan() { // acks printed before the kill landed
		var n int
		if _, err := fmt.Sscanf(sc.Text(), "ack %d", &n); err == nil {
			acked = n
		}
	}
	cmd.Wait()
	if acked < 300 {
		t.Fatalf("child acknowledged only %d writes", acked)
	}
	s, err := Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	ctx := context.Background()
	for i := 1; i <= acked; i++ {
		if ok, err := s.Get(ctx, "k", "a", strconv.Itoa(i), nil); !ok || err != nil {
			t.Fatalf("acknowledged write %d of %d lost after kill -9 (%v)", i, acked, err)
		}
	}
	if v, _ := s.Seq(ctx, "n"); v < int64(acked) {
		t.Fatalf("sequence %d < %d acknowledged", v, acked)
	}
}

func childWriter(path string) {
	s, err := Open(path)
	if err != nil {
		fmt.Println("error", err)
		os.Exit(1)
	}
	ctx := context.Background()
	w := bufio.NewWriter(os.Stdout)
	for i := 1; ; i++ {
		err := s.Tx(ctx, func(tx *Tx) error {
			if _, err := tx.NextSeq("n"); err != nil {
				return err
			}
			return tx.Put("k", "a", strconv.Itoa(i), doc{Cents: int64(i)})
		})
		if err != nil {
			fmt.Println("error", err)
			os.Exit(1)
		}
		fmt.Fprintf(w, "ack %d\n", i)
		w.Flush()
	}
}

func benchTx(b *testing.B, sync Sync) {
	s, err := OpenWith(filepath.Join(b.TempDir(), "b.db"), Options{Sync: sync})
	if err != nil {
		b.Fatal(err)
	}
	defer s.Close()
	ctx := context.Background()
	d := doc{Name: strings.Repeat("x", 800), Cents: 1}
	b.ResetTimer()
	for i := 0; b.Loop(); i++ {
		err := s.Tx(ctx, func(tx *Tx) error {
			v, err := tx.NextSeq("n")
			if err != nil {
				return err
			}
			return tx.Put("k", "a", strconv.FormatInt(v, 10), d)
		})
		if err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkTxNormal and BenchmarkTxFull measure one small write
// transaction (a sequence and a 0.8 KB document) with each setting.
func BenchmarkTxNormal(b *testing.B) { benchTx(b, SyncNormal) }
func BenchmarkTxFull(b *testing.B)   { benchTx(b, SyncFull) }

func BenchmarkGet(b *testing.B) {
	s, _ := Open(filepath.Join(b.TempDir(), "b.db"))
	defer s.Close()
	ctx := context.Background()
	s.Tx(ctx, func(tx *Tx) error { return tx.Put("k", "a", "1", doc{Name: "x"}) })
	var d doc
	for b.Loop() {
		if ok, err := s.Get(ctx, "k", "a", "1", &d); !ok || err != nil {
			b.Fatal(err)
		}
	}
}

// A read through the store inside a write transaction must not wait for
// the transaction (it sees the committed state), memory store included.
func TestReadInsideTxDoesNotDeadlock(t *testing.T) {
	for _, be := range append(backends, testBackend{"memory", func(testing.TB) string { return Memory }}) {
		s, err := Open(be.newDB(t))
		if err != nil {
			t.Fatal(err)
		}
		ctx := context.Background()
		s.Tx(ctx, func(tx *Tx) error { return tx.Put("k", "a", "1", doc{Name: "old"}) })
		err = s.Tx(ctx, func(tx *Tx) error {
			if err := tx.Put("k", "a", "1", doc{Name: "new"}); err != nil {
				return err
			}
			var d doc
			if ok, err := s.Get(ctx, "k", "a", "1", &d); !ok || err != nil || d.Name != "old" {
				return fmt.Errorf("outside read in tx: %v %v %+v", ok, err, d)
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
		err = s.Each(ctx, "k", func(acc, id string, raw []byte) error {
			return s.Tx(ctx, func(tx *Tx) error { return tx.Put("k2", acc, id, doc{}) })
		})
		if err != nil {
			t.Fatal(err)
		}
		s.Close()
	}
}

func TestMemoryStoreLeavesNoFiles(t *testing.T) {
	s, err := Open(Memory)
	if err != nil {
		t.Fatal(err)
	}
	dir := s.tmpDir
	if _, err := os.Stat(dir); err != nil {
		t.Fatal(err)
	}
	s.Close()
	if _, err := os.Stat(dir); !os.IsNotExist(err) {
		t.Fatalf("temporary dir %s left behind: %v", dir, err)
	}
}

// A cancelled request context does not roll back a transaction.
func TestTxIgnoresCancellation(t *testing.T) { forBackends(t, testTxIgnoresCancellation) }

func testTxIgnoresCancellation(t *testing.T, be testBackend) {
	s := openT(t, be.newDB(t))
	ctx, cancel := context.WithCancel(context.Background())
	err := s.Tx(ctx, func(tx *Tx) error {
		cancel()
		return tx.Put("k", "a", "1", doc{})
	})
	if err != nil {
		t.Fatal(err)
	}
	if ok, _ := s.Get(context.Background(), "k", "a", "1", nil); !ok {
		t.Fatal("write lost after cancellation")
	}
}
