package main

import (
	"strings"
	"testing"

	"remessa/pipeline/cluster"
)

// TestWebBadDB: a --db (or REMESSA_DATABASE_URL) that is not a
// PostgreSQL URL, or one where no PostgreSQL answers, is a command-line
// error (exit 2) that says so and never prints the password.
func TestWebBadDB(t *testing.T) {
	const pw = "s3gredo-do-banco"
	cases := []struct {
		name string
		args []string
		env  string
		want string
	}{
		{"not postgres", []string{"--db", "mysql://u:" + pw + "@h/db"}, "", "esperado um endereço postgres://"},
		{"nobody listens", []string{"--db", "postgres://u:" + pw + "@127.0.0.1:1/db"}, "", "postgres://u:xxxxx@127.0.0.1:1/db"},
		{"from the environment", nil, "postgresql://u:" + pw + "@127.0.0.1:1/db", "postgresql://u:xxxxx@127.0.0.1:1/db"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Setenv(cluster.EnvDB, c.env)
			args := append([]string{"web", "--data", t.TempDir(), "--addr", "127.0.0.1:0"}, c.args...)
			code, out, errs := runCmd(args...)
			if code != exitUsage || !strings.Contains(errs, c.want) || strings.Contains(errs+out, pw) {
				t.Fatalf("exit %d, want 2 with %q and without the password; stdout %q stderr %q", code, c.want, out, errs)
			}
		})
	}
}
