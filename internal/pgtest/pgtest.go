// Package pgtest starts a throw-away PostgreSQL cluster for tests.
//
// The first call to DSN in a test binary runs initdb in a temporary directory
// and starts postgres on a free loopback port (TCP only, no Unix socket, no
// system service, fsync off: the cluster lives as long as the test binary).
// Each call to DSN then creates a fresh empty database on it and returns its
// URL. A package that uses DSN must stop the cluster when its tests end:
//
//	func TestMain(m *testing.M) { pgtest.Main(m) }
//
// PostgreSQL refuses to run as root; under root the cluster's files belong to
// the "postgres" user (or "nobody") and the server runs as that user.
//
// Outside CI, when no PostgreSQL server binaries are found, DSN skips the test
// saying why; when the environment variable CI is set it fails instead, since
// CI must run every Postgres test. REMESSA_PG_BIN names the directory holding
// initdb and postgres when they are not in /usr/lib/postgresql/*/bin or PATH.
package pgtest

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"runtime"
	"sort"
	"strconv"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	_ "github.com/jackc/pgx/v5/stdlib" // registers the "pgx" driver
)

// Superuser is the role initdb creates; it needs no password (trust on loopback).
const Superuser = "remessa"

type cluster struct {
	dir  string // temporary root: data/ and server.log
	port int
	cmd  *exec.Cmd
	done chan struct{} // closed when postgres exits
}

var (
	mu      sync.Mutex
	started *cluster
	failed  error
	dbSeq   atomic.Int64
)

// DSN returns the URL of a new, empty database on the test binary's cluster,
// starting the cluster on first use. It skips the test when PostgreSQL is not
// installed and CI is unset, and fails it in CI.
func DSN(tb testing.TB) string {
	tb.Helper()
	c, err := get()
	if err != nil {
		if os.Getenv("CI") != "" {
			tb.Fatalf("pgtest: PostgreSQL is needed and CI must run this test: %v", err)
		}
		tb.Skipf("pgtest: skipped outside CI: %v", err)
	}
	name := fmt.Sprintf("t%d_%d", os.Getpid(), dbSeq.Add(1))
	db, err := sql.Open("pgx", c.url("postgres"))
	if err != nil {
		tb.Fatalf("pgtest: connect to the cluster on port %d: %v", c.port, err)
	}
	defer db.Close()
	if _, err := db.Exec("CREATE DATABASE " + name); err != nil {
		tb.Fatalf("pgtest: create database %s: %v", name, err)
	}
	return c.url(name)
}

// Main runs the tests of m and then stops the cluster, if one was started.
func Main(m *testing.M) {
	code := m.Run()
	Stop()
	os.Exit(code)
}

// Stop stops the cluster (fast shutdown, then SIGKILL after 10 s) and removes
// its files. DSN starts a new one if it is called again.
func Stop() {
	mu.Lock()
	c := started
	started, failed = nil, nil
	mu.Unlock()
	if c == nil {
		return
	}
	_ = c.cmd.Process.Signal(syscall.SIGINT)
	select {
	case <-c.done:
	case <-time.After(10 * time.Second):
		_ = c.cmd.Process.Kill()
		<-c.done
	}
	_ = os.RemoveAll(c.dir)
}

func (c *cluster) url(db string) string {
	return fmt.Sprintf("postgres://%s@127.0.0.1:%d/%s?sslmode=disable", Superuser, c.port, db)
}

func get() (*cluster, error) {
	mu.Lock()
	defer mu.Unlock()
	if started != nil {
		return started, nil
	}
	if failed != nil {
		return nil, failed
	}
	c, err := start()
	if err != nil {
		failed = err
		return nil, err
	}
	started = c
	return c, nil
}

// BinDir returns the directory holding initdb and postgres.
func BinDir() (string, error) {
	if d := os.Getenv("REMESSA_PG_BIN"); d != "" {
		if _, err := os.Stat(filepath.Join(d, "postgres")); err != nil {
			return "", fmt.Errorf("REMESSA_PG_BIN=%s has no postgres: %w", d, err)
		}
		return d, nil
	}
	dirs, _ := filepath.Glob("/usr/lib/postgresql/*/bin")
	sort.Slice(dirs, func(i, j int) bool { return version(dirs[i]) > version(dirs[j]) })
	for _, d := range dirs {
		if _, err := os.Stat(filepath.Join(d, "postgres")); err == nil {
			if _, err := os.Stat(filepath.Join(d, "initdb")); err == nil {
				return d, nil
			}
		}
	}
	if p, err := exec.LookPath("postgres"); err == nil {
		p, _ = filepath.EvalSymlinks(p)
		return filepath.Dir(p), nil
	}
	return "", errors.New("no PostgreSQL server found (initdb and postgres in /usr/lib/postgresql/*/bin or PATH); install Debian's postgresql package")
}

func version(binDir string) int {
	n, _ := strconv.Atoi(filepath.Base(filepath.Dir(binDir)))
	return n
}

// runAs returns the credential to run PostgreSQL with: nil when not root.
func runAs() (*syscall.Credential, error) {
	if os.Geteuid() != 0 {
		return nil, nil
	}
	for _, name := range []string{"postgres", "nobody"} {
		u, err := user.Lookup(name)
		if err != nil {
			continue
		}
		uid, _ := strconv.Atoi(u.Uid)
		gid, _ := strconv.Atoi(u.Gid)
		return &syscall.Credential{Uid: uint32(uid), Gid: uint32(gid)}, nil
	}
	return nil, errors.New("running as root and there is neither a postgres nor a nobody user to run PostgreSQL as")
}

func start() (*cluster, error) {
	bin, err := BinDir()
	if err != nil {
		return nil, err
	}
	cred, err := runAs()
	if err != nil {
		return nil, err
	}
	dir, err := os.MkdirTemp("", "remessa-pgtest-")
	if err != nil {
		return nil, fmt.Errorf("temporary directory: %w", err)
	}
	if cred != nil {
		if err := os.Chown(dir, int(cred.Uid), int(cred.Gid)); err != nil {
			os.RemoveAll(dir)
			return nil, fmt.Errorf("chown %s: %w", dir, err)
		}
	}
	data := filepath.Join(dir, "data")
	initdb := exec.Command(filepath.Join(bin, "initdb"), "-D", data, "-U", Superuser,
		"--auth=trust", "-E", "UTF8", "--locale=C", "--no-sync", "--no-instructions")
	initdb.SysProcAttr = &syscall.SysProcAttr{Credential: cred}
	initdb.Dir = dir
	if out, err := initdb.CombinedOutput(); err != nil {
		os.RemoveAll(dir)
		return nil, fmt.Errorf("initdb in %s: %v: %s", data, err, tail(out))
	}
	var lastErr error
	for attempt := 0; attempt < 3; attempt++ {
		c, err := serve(bin, dir, data, cred)
		if err == nil {
			return c, nil
		}
		lastErr = err
	}
	os.RemoveAll(dir)
	return nil, lastErr
}

func serve(bin, dir, data string, cred *syscall.Credential) (*cluster, error) {
	port, err := freePort()
	if err != nil {
		return nil, err
	}
	logPath := filepath.Join(dir, "server.log")
	logf, err := os.OpenFile(logPath, os.O_CREATE|os.O_WRONLY|os.O_TRUNC, 0o644)
	if err != nil {
		return nil, fmt.Errorf("server log: %w", err)
	}
	cmd := exec.Command(filepath.Join(bin, "postgres"), "-D", data, "-p", strconv.Itoa(port),
		"-c", "listen_addresses=127.0.0.1", "-c", "unix_socket_directories=",
		"-c", "fsync=off", "-c", "synchronous_commit=off", "-c", "full_page_writes=off",
		"-c", "max_connections=300", "-c", "shared_buffers=64MB")
	cmd.Dir = dir
	cmd.Stdout, cmd.Stderr = logf, logf
	// Pdeathsig kills postgres if the test binary dies without Main's Stop
	// (a panic, a test timeout). It fires when the thread that started the
	// child exits, so that thread stays locked to this goroutine until the
	// server is gone.
	cmd.SysProcAttr = &syscall.SysProcAttr{Credential: cred, Pdeathsig: syscall.SIGKILL, Setpgid: true}
	c := &cluster{dir: dir, port: port, cmd: cmd, done: make(chan struct{})}
	startErr := make(chan error, 1)
	go func() {
		runtime.LockOSThread() // never unlocked: the thread ends with the server
		if err := cmd.Start(); err != nil {
			startErr <- err
			close(c.done)
			return
		}
		startErr <- nil
		_ = cmd.Wait()
		logf.Close()
		close(c.done)
	}()
	if err := <-startErr; err != nil {
		logf.Close()
		return nil, fmt.Errorf("start postgres: %w", err)
	}
	if err := c.waitReady(30 * time.Second); err != nil {
		_ = cmd.Process.Kill()
		<-c.done
		log, _ := os.ReadFile(logPath)
		return nil, fmt.Errorf("postgres on port %d: %v: %s", port, err, tail(log))
	}
	return c, nil
}

func (c *cluster) waitReady(limit time.Duration) error {
	deadline := time.Now().Add(limit)
	db, err := sql.Open("pgx", c.url("postgres"))
	if err != nil {
		return err
	}
	defer db.Close()
	for {
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		err = db.PingContext(ctx)
		cancel()
		if err == nil {
			return nil
		}
		select {
		case <-c.done:
			return errors.New("the server exited while starting")
		default:
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("not ready after %s: %w", limit, err)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

func freePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, fmt.Errorf("free loopback port: %w", err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}

func tail(b []byte) string {
	const max = 2000
	if len(b) > max {
		b = b[len(b)-max:]
	}
	return string(b)
}
