package sandbox_test

import (
	"testing"

	"remessa/internal/depcheck"
)

// TestNoClientImport fails if any package of the service (remessa/sandbox
// and everything under it) imports the client, remessa/api or a package
// under it, directly or through other packages. The service and the client
// share only the contract's shapes (remessa/wire); a server built on its
// own client's types cannot catch a field both spell wrong. Test files are
// not part of the service and may drive it through api.Client.
func TestNoClientImport(t *testing.T) {
	depcheck.Forbid(t, "remessa/api", "remessa/sandbox/pix")
}
