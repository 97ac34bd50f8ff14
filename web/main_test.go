package web

import (
	"flag"
	"os"
	"runtime"
	"strconv"
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
// told, and go test itself kills the binary a minute after it: this
// package's tests take minutes on a 2-core machine under -race, longer
// when it is busy, so the README's command gives -timeout 30m (a slow
// machine then reports a slow test, not a kill of the whole package). A
// binary run by hand with the default gets 30 minutes here too. Any other
// -timeout given stays.
//
// Most of the package's tests run with t.Parallel: they wait on a
// Chromium tab, a `remessa` child process, latency the sandbox was told
// to add or a run's next unit, and one test's waiting is another's time
// on the cores. go test runs GOMAXPROCS parallel tests at a time unless
// -parallel says otherwise; here that default becomes webParallel
// (twice the cores, at least 4), and a -parallel given stays. The tests
// that must run alone (they read the process's metrics or time the
// machine) do not call t.Parallel: go test runs them first.
func TestMain(m *testing.M) {
	flag.Parse()
	if f := flag.Lookup("test.timeout"); f != nil && f.Value.String() == (10*time.Minute).String() {
		f.Value.Set((30 * time.Minute).String())
	}
	given := map[string]bool{}
	flag.Visit(func(f *flag.Flag) { given[f.Name] = true })
	if f := flag.Lookup("test.parallel"); f != nil && !given["test.parallel"] {
		f.Value.Set(strconv.Itoa(webParallel()))
	}
	bcryptCost = bcrypt.MinCost
	code := m.Run()
	stopChromium() // the browser the browser tests shared, if one started
	pgtest.Stop()  // the cluster of the --db tests (cluster_test.go), if one started
	runtest.RemoveBinary()
	os.Exit(code)
}

// webParallel is how many of the package's parallel tests run at once
// when -parallel is not given: twice the cores, at least 4.
func webParallel() int { return max(4, 2*runtime.GOMAXPROCS(0)) }
