package web

import (
	"os"
	"testing"

	"golang.org/x/crypto/bcrypt"

	"remessa/internal/pgtest"
	"remessa/pipeline/run/runtest"
)

// TestMain lowers the password hashing cost for the tests (the checks are
// the same at any cost; the default one under -race makes every sign-in
// take about a second).
func TestMain(m *testing.M) {
	bcryptCost = bcrypt.MinCost
	code := m.Run()
	stopChromium() // the browser the browser tests shared, if one started
	pgtest.Stop()  // the cluster of the --db tests (cluster_test.go), if one started
	runtest.RemoveBinary()
	os.Exit(code)
}
