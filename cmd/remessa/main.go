// Command remessa issues charges in bulk (carnets, due-date Pix charges and
// slips) from a spreadsheet, and serves a local stand-in of the charge-issuing
// and Pix service.
//
// Each subcommand lives in its own file and registers itself with register;
// this file only dispatches. Exit codes are listed in exitCodesHelp.
package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"sort"
	"strings"

	"remessa/pipeline/run"
)

// Exit codes shared by every subcommand.
const (
	exitOK       = 0 // success (warnings allowed)
	exitProblems = 1 // the command ran and found problems (invalid rows, denied charges, failed run)
	exitUsage    = 2 // the command line, the job file or the input file cannot be used
	exitInternal = 3 // an unexpected failure (I/O, service unreachable)
)

const exitCodesHelp = `Códigos de saída:
  0  sucesso (avisos permitidos)
  1  problemas encontrados: linhas inválidas, cobranças negadas ou incertas
  2  uso incorreto: comando ou opção desconhecidos, job ou planilha inutilizáveis
  3  falha inesperada: erro de E/S, serviço inacessível, execução interrompida`

// command is one subcommand of remessa.
type command struct {
	Name    string
	Summary string // one line, shown by "remessa help"
	Usage   string // synopsis after the command name, e.g. "JOB [--format text|json]"
	// Run executes the command with its arguments (everything after the
	// command name) and returns the process exit code.
	Run func(args []string, stdout, stderr io.Writer) int
}

var commands = map[string]*command{}

// register adds a subcommand; it is called from init functions.
func register(c *command) {
	if _, dup := commands[c.Name]; dup {
		panic("remessa: command registered twice: " + c.Name)
	}
	commands[c.Name] = c
}

func main() {
	os.Exit(dispatch(os.Args[1:], os.Stdout, os.Stderr))
}

func dispatch(args []string, stdout, stderr io.Writer) int {
	if len(args) == 0 {
		usage(stderr)
		return exitUsage
	}
	name := args[0]
	switch name {
	case "help", "-h", "--help", "-help":
		if len(args) > 1 && !isHelpFlag(args[1]) {
			if c, ok := commands[args[1]]; ok {
				return c.Run([]string{"--help"}, stdout, stderr)
			}
			fmt.Fprintf(stderr, "remessa: comando desconhecido %q\n", args[1])
			return exitUsage
		}
		usage(stdout)
		return exitOK
	case "version", "--version":
		fmt.Fprintln(stdout, "remessa", version())
		return exitOK
	}
	if code, ok := redirectAction(name, args[1:], stdout, stderr); ok {
		return code // an action job or an action folder (action.go)
	}
	c, ok := commands[name]
	if !ok {
		fmt.Fprintf(stderr, "remessa: comando desconhecido %q (veja \"remessa help\")\n", name)
		return exitUsage
	}
	return c.Run(args[1:], stdout, stderr)
}

// Version is a release's version, set at build time with
// -ldflags "-X main.Version=..."; empty, the build's own says which build
// this is (run.BuildVersion: run.Release or the module version, VCS revision
// and time, -dirty).
var Version = ""

// version is the version remessa reports and writes into results.
func version() string {
	if Version != "" {
		return Version
	}
	return run.Version
}

// isHelpFlag reports whether arg asks for help ("remessa help --help").
func isHelpFlag(arg string) bool {
	switch arg {
	case "-h", "--help", "-help", "help":
		return true
	}
	return false
}

func usage(w io.Writer) {
	fmt.Fprintln(w, "remessa: emissão de cobranças em lote (carnês, Pix com vencimento, boletos)")
	fmt.Fprintln(w, "\nUso: remessa <comando> [argumentos]\n\nComandos:")
	names := make([]string, 0, len(commands))
	for n := range commands {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		fmt.Fprintf(w, "  %-10s %s\n", n, commands[n].Summary)
	}
	fmt.Fprintln(w, "  help       mostra esta ajuda; \"remessa help <comando>\" mostra a de um comando")
	fmt.Fprintln(w, "  version    mostra a versão")
	fmt.Fprintln(w)
	fmt.Fprintln(w, exitCodesHelp)
}

// newFlagSet returns a flag set for the command whose -h/--help prints the
// command's usage and flags to stdout.
func newFlagSet(c *command, stdout, stderr io.Writer) *flag.FlagSet {
	fs := flag.NewFlagSet("remessa "+c.Name, flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = func() {
		fmt.Fprintf(stdout, "Uso: remessa %s %s\n\n%s\n\n", c.Name, c.Usage, c.Summary)
		fs.SetOutput(stdout)
		fs.PrintDefaults()
		fs.SetOutput(stderr)
		fmt.Fprintln(stdout)
		fmt.Fprintln(stdout, exitCodesHelp)
	}
	return fs
}

// parseFlags parses args and reports whether the command should go on; when
// it should not, code is the exit code (0 after --help, 2 after a bad flag).
// Flags may come before or after positional arguments.
func parseFlags(fs *flag.FlagSet, args []string) (positional []string, code int, ok bool) {
	rest := args
	for {
		if err := fs.Parse(rest); err != nil {
			if errors.Is(err, flag.ErrHelp) {
				return nil, exitOK, false
			}
			return nil, exitUsage, false
		}
		rest = fs.Args()
		if len(rest) == 0 {
			return positional, 0, true
		}
		if rest[0] == "--" {
			return append(positional, rest[1:]...), 0, true
		}
		positional = append(positional, rest[0])
		rest = rest[1:]
		if len(rest) == 0 || !strings.HasPrefix(rest[0], "-") {
			// keep consuming positionals one at a time
			if len(rest) == 0 {
				return positional, 0, true
			}
		}
	}
}
