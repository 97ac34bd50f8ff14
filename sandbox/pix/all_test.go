package pix_test

import (
	"slices"
	"testing"

	"remessa/sandbox"
	_ "remessa/sandbox/all" // links the outbox: its notifier and the pix tests' recorder must coexist
)

// TestLinksWithEveryModule is the proof that this test binary, which links
// every module (the outbox's notifier included) next to the pix tests'
// delivery recorder, starts without "notifier registered twice": the
// recorder is passed as sandbox.Config.Notify, not registered.
func TestLinksWithEveryModule(t *testing.T) {
	srv, err := sandbox.New(sandbox.Config{DataDir: sandbox.Memory})
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	for _, name := range []string{"charges", "pix", "outbox", "documents", "control"} {
		if !slices.Contains(srv.Modules(), name) {
			t.Errorf("module %s missing from %v", name, srv.Modules())
		}
	}
}
