package pgtest

import (
	"database/sql"
	"os"
	"strings"
	"syscall"
	"testing"
	"time"
)

func TestMain(m *testing.M) { Main(m) }

// TestFreshDatabases checks that each DSN is its own empty database on a
// working server: a table made in one is not in the other.
func TestFreshDatabases(t *testing.T) {
	a, b := DSN(t), DSN(t)
	if a == b {
		t.Fatalf("two calls gave the same database %s", a)
	}
	if !strings.HasPrefix(a, "postgres://"+Superuser+"@127.0.0.1:") {
		t.Fatalf("DSN %q is not a loopback URL for %s", a, Superuser)
	}
	da, err := sql.Open("pgx", a)
	if err != nil {
		t.Fatal(err)
	}
	defer da.Close()
	if _, err := da.Exec(`CREATE TABLE x (n int); INSERT INTO x VALUES (42)`); err != nil {
		t.Fatalf("create a table in %s: %v", a, err)
	}
	var n int
	if err := da.QueryRow(`SELECT n FROM x`).Scan(&n); err != nil || n != 42 {
		t.Fatalf("read back: n=%d err=%v", n, err)
	}
	db, err := sql.Open("pgx", b)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	var found bool
	if err := db.QueryRow(`SELECT EXISTS (SELECT 1 FROM pg_tables WHERE tablename = 'x')`).Scan(&found); err != nil {
		t.Fatal(err)
	}
	if found {
		t.Fatalf("table x of %s is visible in %s", a, b)
	}
	var v string
	if err := db.QueryRow(`SHOW server_version`).Scan(&v); err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(v, "1") {
		t.Fatalf("server_version %q", v)
	}
}

// TestStopRemovesCluster checks that Stop ends the server and removes its
// files, and that DSN then starts a new cluster.
func TestStopRemovesCluster(t *testing.T) {
	DSN(t)
	mu.Lock()
	c := started
	mu.Unlock()
	Stop()
	select {
	case <-c.done:
	case <-time.After(5 * time.Second):
		t.Fatal("postgres still running after Stop")
	}
	if err := c.cmd.Process.Signal(syscall.Signal(0)); err == nil {
		t.Fatalf("process %d still exists", c.cmd.Process.Pid)
	}
	if _, err := os.Stat(c.dir); !os.IsNotExist(err) {
		t.Fatalf("cluster directory %s not removed: %v", c.dir, err)
	}
	if DSN(t) == "" {
		t.Fatal("no DSN after a restart")
	}
}
