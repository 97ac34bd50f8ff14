package run

import (
	"bufio"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"remessa/pipeline/journal"
	"remessa/pipeline/results"
	"remessa/reports"
)

// IndexFile is the runs index in the runs folder: one JSON line per run
// with the SHA-256 of its job and input and its rows' keys and due dates.
const IndexFile = "runs.jsonl"

// Entry is one run in the index.
type Entry struct {
	RunID       string   `json:"run_id"`
	Dir         string   `json:"dir"`
	JobName     string   `json:"job_name,omitempty"`
	JobSHA256   string   `json:"job_sha256"`
	InputSHA256 string   `json:"input_sha256"`
	Service     string   `json:"service"`
	StartedAt   string   `json:"started_at"`
	Keys        []string `json:"keys"` // "key|due date" of each accepted row
	// Complete is filled on load from the run's results.json.
	Complete bool `json:"-"`
	// notSent are the rows ("key|due") the service denied in that run:
	// sending them again is not a repetition.
	notSent map[string]bool
}

// Index is the runs index of a runs folder.
type Index struct{ Path string }

// Load reads every entry (a missing index is empty).
func (x *Index) Load() ([]Entry, error) {
	f, err := os.Open(x.Path)
	if os.IsNotExist(err) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("índice de execuções: %w", err)
	}
	defer f.Close()
	var out []Entry
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 1<<30)
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		if line == "" {
			continue
		}
		var e Entry
		if json.Unmarshal([]byte(line), &e) != nil {
			continue // a line cut by a crash
		}
		if _, err := os.Stat(filepath.Join(e.Dir, journal.FileName)); err != nil {
			continue // run folder removed: forget it
		}
		if r, err := results.Load(filepath.Join(e.Dir, reports.FileJSON)); err == nil {
			e.Complete = r.Run.Complete
			for _, row := range r.Rows {
				if row.Outcome == results.Denied {
					if e.notSent == nil {
						e.notSent = map[string]bool{}
					}
					e.notSent[row.Key+"|"+row.DueDate] = true
				}
			}
		}
		out = append(out, e)
	}
	return out, sc.Err()
}

// Append adds an entry (one line, synced).
func (x *Index) Append(e Entry) error {
	if err := os.MkdirAll(filepath.Dir(x.Path), 0o755); err != nil {
		return err
	}
	f, err := os.OpenFile(x.Path, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return fmt.Errorf("índice de execuções: %w", err)
	}
	defer f.Close()
	b, _ := json.Marshal(e)
	if _, err := f.Write(append(b, '\n')); err != nil {
		return fmt.Errorf("índice de execuções: %w", err)
	}
	return f.Sync()
}

// overlaps describes rows (same key and due date) that earlier runs on the
// same service already sent; "" when none.
func overlaps(entries []Entry, keys []string, service string) string {
	if len(entries) == 0 || len(keys) == 0 {
		return ""
	}
	mine := make(map[string]bool, len(keys))
	for _, k := range keys {
		mine[k] = true
	}
	var parts []string
	total := 0
	for _, e := range entries {
		if e.Service != service {
			continue
		}
		n := 0
		var ex []string
		for _, k := range e.Keys {
			if mine[k] && !e.notSent[k] {
				n++
				if len(ex) < 3 {
					ex = append(ex, strings.Replace(k, "|", " vencimento ", 1))
				}
			}
		}
		if n > 0 {
			total += n
			parts = append(parts, fmt.Sprintf("%d na execução %s (ex.: %s)", n, e.RunID, strings.Join(ex, "; ")))
		}
	}
	if total == 0 {
		return ""
	}
	return fmt.Sprintf("atenção: %d linha(s) repetem chave e vencimento de execuções anteriores: %s. Verifique se não são cobranças em duplicidade.",
		total, strings.Join(parts, "; "))
}
