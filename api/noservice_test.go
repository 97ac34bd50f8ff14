package api_test

import (
	"testing"

	"remessa/internal/depcheck"
)

// TestNoServiceImport fails if a package of the client (remessa/api and
// everything under it) depends on the service, remessa/sandbox or a package
// under it, directly or through other packages: the client's tree must build
// and be vendored without the service (the mirror of sandbox's
// TestNoClientImport). Test files are not part of the client and may start
// a sandbox to talk to.
func TestNoServiceImport(t *testing.T) {
	depcheck.Forbid(t, "remessa/sandbox", "remessa/api")
}
