package main

import (
	"strings"
	"testing"
)

// TestWorkerRefusesANonPostgresDB checks that a --db that is not a
// PostgreSQL URL is a command-line error (exit 2) that does not echo it.
func TestWorkerRefusesANonPostgresDB(t *testing.T) {
	code, _, errs := runCmd("worker", "--db", "mysql://u:s3gredo@h/db")
	if code != exitUsage || !strings.Contains(errs, "postgres://") || strings.Contains(errs, "s3gredo") {
		t.Fatalf("worker --db mysql://…: exit %d, %q", code, errs)
	}
}
