package actions

// What an action run writes: resultado.json and relatorio.txt.

import (
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
)

// write saves resultado.json and relatorio.txt in the action folder.
func (o *Outcome) write() error {
	b, _ := json.MarshalIndent(o, "", "  ")
	if err := os.WriteFile(filepath.Join(o.Dir, "resultado.json"), append(b, '\n'), 0o644); err != nil {
		return err
	}
	f, err := os.Create(filepath.Join(o.Dir, "relatorio.txt"))
	if err != nil {
		return err
	}
	defer f.Close()
	o.WriteReport(f)
	return nil
}

var stateWord = map[string]string{StateDone: "feito", StateSkipped: "não se aplica", StateUncertain: "incerto", StateAmbiguous: "incerto",
	StateFailed: "recusado", StatePending: "pendente", StateSending: "pendente"}

// WriteReport writes one line per item and the totals.
func (o *Outcome) WriteReport(w io.Writer) {
	if o.Plan != nil {
		fmt.Fprintf(w, "Ação %s (%s) sobre a execução %s — pasta %s\n", o.Plan.Name, o.Plan.Kind, o.Plan.SourceRunID, o.Dir)
	}
	for _, it := range o.Items {
		line := fmt.Sprintf("  [%s] %s", stateWord[it.State], it.Text)
		if it.Reason != "" {
			line += " — " + it.Reason
		}
		fmt.Fprintln(w, line)
	}
	if o.Plan != nil && len(o.Plan.Skipped) > 0 {
		fmt.Fprintf(w, "Não se aplica já no plano (%d):\n", len(o.Plan.Skipped))
		for _, s := range o.Plan.Skipped {
			fmt.Fprintf(w, "  %s de %s: %s\n", s.What, s.RowKey, s.Reason)
		}
	}
	if o.Plan != nil && len(o.Plan.UnknownKeys) > 0 {
		fmt.Fprintf(w, "Chaves que não estão na execução (%d): %s\n", len(o.Plan.UnknownKeys), strings.Join(o.Plan.UnknownKeys, ", "))
	}
	o.WriteSummary(w)
}

// WriteSummary writes the totals line.
func (o *Outcome) WriteSummary(w io.Writer) {
	fmt.Fprintf(w, "%d feitas, %d não se aplicam, %d incertas, %d recusadas, %d pendentes", o.Done, o.Skipped, o.Uncertain, o.Failed, o.Pending)
	if o.Zip != "" {
		fmt.Fprintf(w, "; zip: %s", filepath.Join(o.Dir, o.Zip))
	}
	fmt.Fprintln(w)
}
