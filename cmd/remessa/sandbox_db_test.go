package main

import (
	"strings"
	"testing"
)

// TestSandboxDBFlag: --db takes a postgres:// URL (or REMESSA_DATABASE_URL);
// anything else is a usage error that does not echo the value, and the
// password of a URL never reaches a message.
func TestSandboxDBFlag(t *testing.T) {
	code, _, errs := runCmd("sandbox", "--db", "/tmp/segredo.db")
	if code != exitUsage || !strings.Contains(errs, "postgres://") || strings.Contains(errs, "segredo") {
		t.Fatalf("--db with a file: %d %q", code, errs)
	}
	const url = "postgres://u:s3gredo@127.0.0.1:1/sandbox?connect_timeout=1"
	code, out, errs := runCmd("sandbox", "--db", url, "--addr", "127.0.0.1:0")
	if code != exitInternal || strings.Contains(out+errs, "s3gredo") || !strings.Contains(errs, "xxxxx") {
		t.Fatalf("--db unreachable: %d\n%s%s", code, out, errs)
	}
	t.Setenv("REMESSA_DATABASE_URL", url)
	code, out, errs = runCmd("sandbox", "--addr", "127.0.0.1:0")
	if code != exitInternal || strings.Contains(out+errs, "s3gredo") || !strings.Contains(errs, "127.0.0.1:1") {
		t.Fatalf("REMESSA_DATABASE_URL unreachable: %d\n%s%s", code, out, errs)
	}
	code, out, _ = runCmd("sandbox", "--help")
	if code != exitOK || !strings.Contains(out, "-db") || !strings.Contains(out, "REMESSA_DATABASE_URL") {
		t.Fatalf("help: %d %s", code, out)
	}
}
