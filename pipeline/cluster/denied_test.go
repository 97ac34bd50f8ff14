package cluster_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestClusterDeniedRowsNotRepeated: rows the service denied in a run over
// PostgreSQL (their Pix key is not the account's) leave the database's
// runs index when its results are written, so a later run sending the
// same rows is warned only of the ones that were issued.
func TestClusterDeniedRowsNotRepeated(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	e.startWorker(t, 1)
	foreignKeys := func(job string) {
		t.Helper()
		csv := filepath.Join(filepath.Dir(job), "pagadores.csv")
		b, err := os.ReadFile(csv)
		if err != nil {
			t.Fatal(err)
		}
		lines := strings.Split(string(b), "\n")
		for _, i := range []int{3, 8, 15} { // rows D00002, D00007, D00014
			lines[i] = strings.Replace(lines[i], e.chave, "alguem@nao-e-minha.example.com", 1)
		}
		if err := os.WriteFile(csv, []byte(strings.Join(lines, "\n")), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	first := e.job(t, "cobv", "D", 20, 10)
	foreignKeys(first)
	res, _ := e.runExit(t, first, 1)
	if res == nil {
		return
	}
	if res.Totals.Denied.Rows != 3 || res.Totals.Issued.Rows != 17 {
		t.Fatalf("first run: %d issued, %d denied; want 17 and 3", res.Totals.Issued.Rows, res.Totals.Denied.Rows)
	}
	again := e.jobIn(t, "D2", "cobv", "D", 20, 10)
	foreignKeys(again)
	res2, out := e.runExit(t, again, 1, "--again") // the same job on the same input
	if res2 == nil {
		return
	}
	if !strings.Contains(out, "17 da execução "+res.Run.ID) || strings.Contains(out, "20 da execução") {
		t.Errorf("the same 20 rows again: want a warning of 17 rows of run %s (its 3 denied ones left out):\n%s", res.Run.ID, out)
	}
}
