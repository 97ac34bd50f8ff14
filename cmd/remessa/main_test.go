package main

import (
	"strings"
	"testing"
)

// TestHelpAndExitCodes: "remessa help" lists every command and the exit
// codes on stdout; "remessa help <cmd>" and "<cmd> --help" give the
// command's usage; no command or an unknown one is a usage error (2).
func TestHelpAndExitCodes(t *testing.T) {
	code, out, _ := runCmd("help")
	if code != exitOK || !strings.Contains(out, "Códigos de saída:") || !strings.Contains(out, "  2  uso incorreto") {
		t.Fatalf("help: %d\n%s", code, out)
	}
	for name := range commands {
		if !strings.Contains(out, "  "+name+" ") {
			t.Errorf("help does not list %q", name)
		}
	}
	for _, args := range [][]string{{"help", "sandbox"}, {"sandbox", "--help"}, {"sandbox", "-h"}} {
		code, out, _ := runCmd(args...)
		if code != exitOK || !strings.HasPrefix(out, "Uso: remessa sandbox") || !strings.Contains(out, "Códigos de saída:") {
			t.Errorf("%v: %d\n%s", args, code, out)
		}
	}
	for _, args := range [][]string{nil, {"voar"}, {"help", "voar"}, {"sandbox", "--nao-existe"}} {
		if code, _, errs := runCmd(args...); code != exitUsage || errs == "" {
			t.Errorf("%v: %d %q, want exit 2 with a message", args, code, errs)
		}
	}
}
