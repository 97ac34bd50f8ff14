package main

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func pipeCmd(args ...string) (int, string, string) {
	var out, errb bytes.Buffer
	code := dispatch(args, &out, &errb)
	return code, out.String(), errb.String()
}

func TestValidateCommand(t *testing.T) {
	code, out, _ := pipeCmd("validate", "../../samples/escola/carnes.yaml")
	if code != exitOK || !strings.Contains(out, "40 linhas: 40 aceitas, 0 recusadas") {
		t.Fatalf("exit %d\n%s", code, out)
	}
	code, out, _ = pipeCmd("validate", "../../samples/mensal/cobv.yaml", "--format", "json", "--lang", "en")
	var rep struct {
		Rows, Accepted, Refused int
		ExitCode                int `json:"exit_code"`
	}
	if err := json.Unmarshal([]byte(out), &rep); err != nil || code != exitOK || rep.Rows != 2500 || rep.Accepted != 2500 {
		t.Fatalf("exit %d, %+v, %v", code, rep, err)
	}

	dir := t.TempDir()
	os.WriteFile(filepath.Join(dir, "in.csv"), []byte("Código;Nome;CPF;Valor;Vencimento\nA1;Ana;529.982.247-26;10,00;+10d\n"), 0o644)
	os.WriteFile(filepath.Join(dir, "job.yaml"), []byte("version: 1\ninput: {file: in.csv}\nissue:\n  boletos:\n    due: +10d\n"), 0o644)
	code, out, _ = pipeCmd("validate", filepath.Join(dir, "job.yaml"), "--lang", "en")
	if code != exitProblems || !strings.Contains(out, "row 2, column C (CPF)") || !strings.Contains(out, "[cpf_invalido]") {
		t.Errorf("exit %d\n%s", code, out)
	}
	os.WriteFile(filepath.Join(dir, "bad.yaml"), []byte("version: 1\ninput: {file: in.csv}\nissue:\n  boletos:\n    vencimento: +10d\n"), 0o644)
	code, out, _ = pipeCmd("validate", filepath.Join(dir, "bad.yaml"))
	if code != exitUsage || !strings.Contains(out, "bad.yaml:5:5") || !strings.Contains(out, `chave desconhecida "vencimento"`) {
		t.Errorf("exit %d\n%s", code, out)
	}
	if code, _, _ = pipeCmd("validate"); code != exitUsage {
		t.Errorf("no job: exit %d", code)
	}
}

func TestPlanCommand(t *testing.T) {
	code, out, _ := pipeCmd("plan", "../../samples/mensal/cobv.yaml")
	if code != exitOK || !strings.Contains(out, "2500 cobranças Pix com vencimento em 3 lotes") || !strings.Contains(out, "lote 3: 500 cobranças") {
		t.Fatalf("exit %d\n%s", code, out)
	}
	code, out, _ = pipeCmd("plan", "../../samples/escola/carnes.yaml", "--format", "json")
	var p struct {
		Issue struct{ Carnets, Parcels int }
		Days  int
	}
	if err := json.Unmarshal([]byte(out), &p); err != nil || code != exitOK || p.Issue.Carnets != 40 || p.Issue.Parcels != 480 || p.Days != 1 {
		t.Fatalf("exit %d %+v %v", code, p, err)
	}
}

func TestSchemaAndTemplateCommands(t *testing.T) {
	code, out, _ := pipeCmd("schema", "--lang", "en")
	var s map[string]any
	if err := json.Unmarshal([]byte(out), &s); err != nil || code != exitOK || s["$schema"] != "https://json-schema.org/draft/2020-12/schema" {
		t.Fatalf("exit %d, %v", code, err)
	}
	code, out, _ = pipeCmd("schema", "--action")
	s = nil
	if err := json.Unmarshal([]byte(out), &s); err != nil || code != exitOK || s["title"] != "remessa action job" {
		t.Fatalf("schema --action: exit %d, %v", code, err)
	}
	if props, _ := s["properties"].(map[string]any); props["action"] == nil || props["issue"] != nil {
		t.Fatalf("the action job's schema should have action and no issue: %v", props)
	}
	dir := t.TempDir()
	xlsx, job := filepath.Join(dir, "modelo.xlsx"), filepath.Join(dir, "job.yaml")
	if code, out, errs := pipeCmd("template", "carnets", "-o", xlsx, "--job", job); code != exitOK {
		t.Fatalf("template exit %d %s %s", code, out, errs)
	}
	// the template's example row is refused at its row until deleted
	if code, out, _ := pipeCmd("validate", job); code != 1 || !strings.Contains(out, "linha 2, coluna A (Código): é a linha de exemplo do modelo") || !strings.Contains(out, "[linha_exemplo]") {
		t.Errorf("validate of the template: exit %d\n%s", code, out)
	}
	if code, _, _ := pipeCmd("template", "faturas"); code != exitUsage {
		t.Errorf("unknown kind: exit %d", code)
	}
	if code, _, errs := pipeCmd("template", "cobv", "-o", filepath.Join(dir, "modelo.pdf")); code != exitUsage || !strings.Contains(errs, "modelo.pdf") {
		t.Errorf("unsupported extension: exit %d %s", code, errs)
	}
}
