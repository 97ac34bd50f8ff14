package web

import (
	"os"
	"testing"

	"golang.org/x/crypto/bcrypt"
)

// TestMain lowers the password hashing cost for the tests (the checks are
// the same at any cost; the default one under -race makes every sign-in
// take about a second).
func TestMain(m *testing.M) {
	bcryptCost = bcrypt.MinCost
	os.Exit(m.Run())
}
