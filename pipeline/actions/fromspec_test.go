package actions_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"remessa/pipeline/actions"
	"remessa/pipeline/run"
	"remessa/rules"
	"remessa/sandbox/control"
)

// TestFromSpecSelection: an action given as a Spec (the desk's selection)
// is checked as a job file is, writes a job.yaml that Load reads back as
// the same job (same identity, same plan), and the same selection run
// twice moves a due date by days once only.
func TestFromSpecSelection(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	src, rn, res := issueEscola(t)
	opts := actions.Options{Run: run.Options{Embedded: rn, Getenv: noEnv}}
	r := res.Rows[6]
	if _, err := (&control.Client{BaseURL: rn.URL}).PayParcel(ctx, r.CarnetID, 1, control.PayRequest{}, rn.PayeeCode); err != nil {
		t.Fatal(err)
	}
	spec := &actions.Spec{Version: 1, Name: "mover", FromRun: src,
		Filter: &actions.FilterSpec{Keys: []string{r.Key}, Parcels: []int{1, 2}},
		Action: actions.ActionSpec{ChangeDueDate: &actions.DueSpec{Days: 7}}}
	j, err := actions.FromSpec(spec, t.TempDir(), actions.LoadOptions{Getenv: noEnv})
	if err != nil {
		t.Fatal(err)
	}
	if j.Kind != actions.ChangeDueDate || j.Days != 7 || !j.Keys[r.Key] {
		t.Fatalf("job: kind %s, days %d, keys %v", j.Kind, j.Days, j.Keys)
	}
	y, err := actions.SpecYAML(spec)
	if err != nil {
		t.Fatal(err)
	}
	for _, unwanted := range []string{"null", "cancel", "resend", "input"} {
		if strings.Contains(string(y), unwanted) {
			t.Errorf("job.yaml names %q:\n%s", unwanted, y)
		}
	}
	p := filepath.Join(t.TempDir(), "acao.yaml")
	os.WriteFile(p, y, 0o644)
	lj, err := actions.Load(p, actions.LoadOptions{Getenv: noEnv})
	if err != nil {
		t.Fatalf("Load of the selection's job.yaml: %v\n%s", err, y)
	}
	if lj.SHA256 != j.SHA256 || lj.Kind != j.Kind || lj.Days != 7 {
		t.Errorf("loaded back: sha %s kind %s days %d; from the spec: sha %s", lj.SHA256, lj.Kind, lj.Days, j.SHA256)
	}

	out, err := actions.RunJob(ctx, j, opts)
	if err != nil {
		t.Fatal(err)
	}
	// parcel 1 is paid: not applicable; parcel 2 moves by 7 days
	if out.Done != 1 || len(out.Plan.Items) != 1 || len(out.Plan.Skipped) != 1 || out.Plan.Skipped[0].Reason != "não se aplica: já paga" {
		t.Fatalf("first run: %d done, plan %+v", out.Done, out.Plan)
	}
	due, _ := rules.ParseISODate(r.Parcels[1].DueDate)
	want := rules.FormatISODate(due.AddDate(0, 0, 7))
	if got := out.Plan.Items[0].Charges[0].NewDue; got != want {
		t.Errorf("new due %s, want %s", got, want)
	}
	if b, err := os.ReadFile(filepath.Join(out.Dir, "job.yaml")); err != nil || string(b) != string(y) {
		t.Errorf("the action folder's job.yaml: %v\n%s", err, b)
	}
	// the same selection again (a second confirm): nothing moves again
	j2, err := actions.FromSpec(spec, t.TempDir(), actions.LoadOptions{Getenv: noEnv})
	if err != nil {
		t.Fatal(err)
	}
	again, err := actions.RunJob(ctx, j2, opts)
	if err != nil {
		t.Fatal(err)
	}
	if len(again.Plan.Items) != 0 || calls(t, again.Dir) != 0 {
		t.Fatalf("second run of the same selection: %d items, %d calls", len(again.Plan.Items), calls(t, again.Dir))
	}
	found := false
	for _, s := range again.Plan.Skipped {
		found = found || strings.Contains(s.Reason, "já feito pela ação "+out.ID)
	}
	if !found {
		t.Errorf("the second plan does not say the first did it: %+v", again.Plan.Skipped)
	}
	cn, err := client(t, rn).GetCarnet(ctx, r.CarnetID)
	if err != nil {
		t.Fatal(err)
	}
	if cn.Charges[1].ExpireAt != want {
		t.Errorf("parcel 2 due %s in the service, want %s (moved once)", cn.Charges[1].ExpireAt, want)
	}

	// a bad selection gets the loader's messages
	_, err = actions.FromSpec(&actions.Spec{Version: 1, FromRun: src, Action: actions.ActionSpec{ChangeDueDate: &actions.DueSpec{}}}, t.TempDir(), actions.LoadOptions{Getenv: noEnv})
	if err == nil || !strings.Contains(err.Error(), "change_due_date deve ter date") {
		t.Errorf("empty change_due_date: %v", err)
	}
}
