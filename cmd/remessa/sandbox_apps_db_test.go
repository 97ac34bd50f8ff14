package main

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/rs/zerolog"

	"remessa/internal/pgtest"
	"remessa/sandbox"
	"remessa/sandbox/auth"
)

func TestMain(m *testing.M) { pgtest.Main(m) }

// TestSandboxAppsOverPostgres: remessa sandbox apps and apps add with
// --db (or REMESSA_DATABASE_URL) read and add the applications of
// sandbox instances over PostgreSQL; an empty database says the sandbox
// has not run there, a --db that is not postgres:// is a usage error,
// and the database's password never reaches the output.
func TestSandboxAppsOverPostgres(t *testing.T) {
	dsn := pgtest.DSN(t)
	code, out, errs := runCmd("sandbox", "apps", "--db", dsn)
	if code != exitUsage || !strings.Contains(errs, "remessa sandbox") {
		t.Fatalf("empty database: exit %d\n%s%s", code, out, errs)
	}
	code, _, errs = runCmd("sandbox", "apps", "add", "--db", "/tmp/s3gredo.db")
	if code != exitUsage || !strings.Contains(errs, "postgres://") || strings.Contains(errs, "s3gredo") {
		t.Fatalf("--db with a file: exit %d %q", code, errs)
	}
	srv, err := sandbox.New(sandbox.Config{DB: dsn, Addr: "127.0.0.1:0", ClientID: "Client_Id_pg", ClientSecret: "Client_Secret_pg", Logger: zerolog.Nop()})
	if err != nil {
		t.Fatal(err)
	}
	rn, err := srv.Start()
	if err != nil {
		t.Fatal(err)
	}
	defer rn.Close()
	code, out, errs = runCmd("sandbox", "apps", "add", "--db", dsn, "--account", rn.PayeeCode, "--client-id", "Client_Id_cli", "--format", "json")
	var creds auth.Credentials
	if code != exitOK || json.Unmarshal([]byte(out), &creds) != nil || creds.ClientID != "Client_Id_cli" || creds.PayeeCode != rn.PayeeCode || creds.ClientSecret == "" {
		t.Fatalf("apps add --db: exit %d\n%s%s", code, out, errs)
	}
	t.Setenv("REMESSA_DATABASE_URL", dsn)
	code, out, errs = runCmd("sandbox", "apps")
	if code != exitOK || !strings.Contains(out, "Client_Id_pg") || !strings.Contains(out, "Client_Id_cli") || strings.Contains(out, creds.ClientSecret) {
		t.Fatalf("apps from REMESSA_DATABASE_URL: exit %d\n%s%s", code, out, errs)
	}
	if pw := pgPassword(dsn); pw != "" && strings.Contains(out+errs, pw) {
		t.Fatal("the database's password in the output")
	}
}

// pgPassword is the password of a postgres:// URL ("" without one).
func pgPassword(dsn string) string {
	rest, ok := strings.CutPrefix(dsn, "postgres://")
	if !ok {
		return ""
	}
	user, _, ok := strings.Cut(rest, "@")
	if !ok {
		return ""
	}
	_, pw, _ := strings.Cut(user, ":")
	return pw
}
