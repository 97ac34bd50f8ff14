// Package sandboxclient helps tests talk to a sandbox started with
// remessa/sandbox/sandboxtest through api.Client. It is the one package
// that joins the two trees, so it lives in neither: no package of the
// service imports the client (sandbox's TestNoClientImport) and no package
// of the client needs the service (api's TestNoServiceImport); see
// docs/sandbox-core.md, "Wire types".
package sandboxclient

import (
	"context"
	"testing"
	"time"

	"remessa/api"
	"remessa/sandbox"
)

// Client returns an api.Client for rn's first application (rn must have
// been started with known credentials, i.e. created now or fixed in
// Config). edit may change the config before New. Waits between retries
// are skipped unless edit sets Sleep.
func Client(tb testing.TB, rn *sandbox.Running, edit func(*api.Config)) *api.Client {
	tb.Helper()
	cfg := api.Config{BaseURL: rn.URL, PixBaseURL: rn.PixURL, ClientID: rn.ClientID, ClientSecret: rn.ClientSecret,
		Sleep: func(ctx context.Context, d time.Duration) error { return ctx.Err() }}
	if edit != nil {
		edit(&cfg)
	}
	c, err := api.New(cfg)
	if err != nil {
		tb.Fatalf("api.New: %v", err)
	}
	return c
}
