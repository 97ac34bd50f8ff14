package run_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"remessa/pipeline/run"
	"remessa/sandbox"
	"remessa/sandbox/faults"
)

// TestRunLogMasksDocuments: a slip job keyed by the payers' CPFs (so every
// custom_id carries one) whose POSTs are all dropped after processing, so
// run.log has a line per row naming its custom_id. No CPF appears in
// clear, only masked, and neither the client secret nor a token does.
func TestRunLogMasksDocuments(t *testing.T) {
	dir := t.TempDir()
	one := 1.0
	rn := startSandbox(t, sandbox.Memory, func(c *sandbox.Config) {
		c.Faults = faults.Config{Routes: map[string]faults.Override{"POST /v1/charge/one-step": {Drop: &one}}}
	})
	ps := payers(4, 21)
	job := writeJob(t, dir, "boletos", ps, "service: sandbox")
	s, _ := readFile(job)
	writeFileT(t, job, strings.Replace(s, "key: Código", "key: CPF", 1))
	out, err := run.Run(context.Background(), job, run.Options{BaseURL: rn.URL, Getenv: remoteEnv, SettleDelay: -1})
	if err != nil {
		t.Fatal(err)
	}
	if out.ExitCode() != 0 {
		t.Fatalf("exit %d stop %v", out.ExitCode(), out.Stop)
	}
	b, err := os.ReadFile(filepath.Join(out.Dir, "run.log"))
	if err != nil {
		t.Fatal(err)
	}
	log := string(b)
	if n := strings.Count(log, `"custom_id"`); n < len(ps) {
		t.Fatalf("run.log names %d custom_ids, want at least %d (one per adopted row):\n%s", n, len(ps), log)
	}
	for _, p := range ps {
		if strings.Contains(log, p.CPF) {
			t.Errorf("run.log shows CPF %s in clear", p.CPF)
		}
		masked := "***." + p.CPF[3:6] + "." + p.CPF[6:9] + "-**"
		if !strings.Contains(log, masked) {
			t.Errorf("run.log lacks the masked CPF %s", masked)
		}
	}
	for _, secret := range []string{testClientSecret, "Bearer ", "access_token", "eyJ"} {
		if strings.Contains(log, secret) {
			t.Errorf("run.log contains %q", secret)
		}
	}
}
