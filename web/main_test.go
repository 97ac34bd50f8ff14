package web

import (
	"flag"
	"os"
	"testing"
	"time"

	"golang.org/x/crypto/bcrypt"

	"remessa/internal/pgtest"
	"remessa/pipeline/run/runtest"
)

// TestMain lowers the password hashing cost for the tests (the checks are
// the same at any cost; the default one under -race makes every sign-in
// take about a second).
//
// go test's -timeout is for the whole test binary, 10 minutes unless
// told: this package's tests take 6–8 minutes on a 2-core machine under
// -race, longer when it is busy, so that default becomes 30 minutes here
// (a slow machine then reports a slow test, not a panic of the whole
// package). Any other -timeout given stays.
func TestMain(m *testing.M) {
	flag.Parse()
	if f := flag.Lookup("test.timeout"); f != nil && f.Value.String() == (10*time.Minute).String() {
		f.Value.Set((30 * time.Minute).String())
	}
	bcryptCost = bcrypt.MinCost
	code := m.Run()
	stopChromium() // the browser the browser tests shared, if one started
	pgtest.Stop()  // the cluster of the --db tests (cluster_test.go), if one started
	runtest.RemoveBinary()
	os.Exit(code)
}
