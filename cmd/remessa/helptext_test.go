package main

import (
	"regexp"
	"sort"
	"strings"
	"testing"
)

// internalsInHelp matches what a person reading a command's help should
// never see: a Go source file ("worker.go"), a Go package path or
// identifier ("pipeline/run", "run.Options", "cluster.DB"), a TODO.
var internalsInHelp = regexp.MustCompile(`\b\w+\.go\b|\b(pipeline|sandbox|internal|cmd|api|web|rules|formats|reports|wire)/\w+|\b(run|pipeline|journal|cluster|sandbox|api|rules|formats|web|results)\.[A-Z]\w*|\bTODO\b|\bFIXME\b`)

// TestHelpHasNoInternals walks every command's --help (and "remessa help")
// and refuses source file names, package paths and Go identifiers: help is
// for the people who run remessa.
func TestHelpHasNoInternals(t *testing.T) {
	names := []string{}
	for n := range commands {
		names = append(names, n)
	}
	sort.Strings(names)
	_, out, _ := runCmd("help")
	texts := map[string]string{"help": out}
	for _, n := range names {
		code, out, errs := runCmd(n, "--help")
		if code != exitOK || !strings.HasPrefix(out, "Uso: remessa "+n) {
			t.Errorf("%s --help: exit %d\n%s%s", n, code, out, errs)
		}
		texts[n] = out + errs
		if code, hout, _ := runCmd("help", n); code != exitOK || hout != out {
			t.Errorf("remessa help %s: exit %d, not what %s --help says", n, code, n)
		}
	}
	subs := [][]string{{"apps", "add"}}
	for n := range sandboxSubs {
		subs = append(subs, []string{n})
	}
	for _, sub := range subs {
		args := append(append([]string{"sandbox"}, sub...), "--help")
		code, out, errs := runCmd(args...)
		if code != exitOK || !strings.HasPrefix(out, "Uso: remessa sandbox "+strings.Join(sub, " ")) {
			t.Errorf("%v: exit %d\n%s%s", args, code, out, errs)
		}
		texts["sandbox "+strings.Join(sub, " ")] = out + errs
	}
	for _, args := range [][]string{{"help", "--help"}, {"--help"}, {"help", "-h"}} {
		if code, out, errs := runCmd(args...); code != exitOK || !strings.Contains(out, "Comandos:") {
			t.Errorf("%v: exit %d\n%s%s", args, code, out, errs)
		}
	}
	for n, text := range texts {
		for _, line := range strings.Split(text, "\n") {
			if m := internalsInHelp.FindString(line); m != "" {
				t.Errorf("remessa %s --help shows %q: %s", n, m, strings.TrimSpace(line))
			}
		}
	}
}
