package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"

	"remessa/internal/backup"
)

func init() {
	register(&command{
		Name:    "backup",
		Summary: "copia uma pasta de dados (a da mesa, uma de execuções, a de um sandbox) num só arquivo, mesmo com a mesa ou uma execução trabalhando",
		Usage:   "--data DIR -o ARQUIVO.tar.gz",
		Run:     runBackup,
	})
	register(&command{
		Name:    "restore",
		Summary: "traz de volta um arquivo de remessa backup para uma pasta vazia (ou por cima, com --force)",
		Usage:   "ARQUIVO.tar.gz --data DIR [--force]",
		Run:     runRestore,
	})
}

func runBackup(args []string, stdout, stderr io.Writer) int {
	c := commands["backup"]
	flags := newFlagSet(c, stdout, stderr)
	data := flags.String("data", "", "pasta de dados: a --data da mesa, uma --runs-dir, a --data de um sandbox")
	out := flags.String("o", "", "arquivo do backup (.tar.gz)")
	pos, code, ok := parseFlags(flags, args)
	if !ok {
		return code
	}
	if *data == "" || *out == "" || len(pos) != 0 {
		fmt.Fprintln(stderr, "remessa backup: informe --data DIR e -o ARQUIVO")
		flags.Usage()
		return exitUsage
	}
	if st, err := os.Stat(*data); err != nil || !st.IsDir() {
		fmt.Fprintf(stderr, "remessa backup: --data %s não é uma pasta\n", *data)
		return exitUsage
	}
	m, err := backup.WriteFile(context.Background(), *data, *out, backup.Options{Remessa: version()})
	if err != nil {
		fmt.Fprintln(stderr, "remessa backup:", err)
		return exitInternal
	}
	fmt.Fprintf(stdout, "backup de %s em %s: %d arquivos (%d bancos), %d bytes; gravações esperaram %s\n",
		m.Source, *out, m.Files, len(m.Databases), m.Bytes, m.Paused.Round(1e6))
	return exitOK
}

func runRestore(args []string, stdout, stderr io.Writer) int {
	c := commands["restore"]
	flags := newFlagSet(c, stdout, stderr)
	data := flags.String("data", "", "pasta onde restaurar (criada se não existir; vazia, a menos que --force)")
	force := flags.Bool("force", false, "restaura numa pasta que já tem arquivos: os do backup substituem os de mesmo nome")
	pos, code, ok := parseFlags(flags, args)
	if !ok {
		return code
	}
	if *data == "" || len(pos) != 1 {
		fmt.Fprintln(stderr, "remessa restore: informe o ARQUIVO do backup e --data DIR")
		flags.Usage()
		return exitUsage
	}
	m, err := backup.RestoreFile(context.Background(), pos[0], *data, backup.RestoreOptions{Force: *force})
	if err != nil {
		fmt.Fprintln(stderr, "remessa restore:", err)
		if errors.Is(err, backup.ErrNotEmpty) || errors.Is(err, os.ErrNotExist) {
			return exitUsage
		}
		return exitInternal
	}
	fmt.Fprintf(stdout, "restaurado em %s: %d arquivos (%d bancos) de %s, backup de %s feito por remessa %s\n",
		*data, m.Files, len(m.Databases), m.Source, m.Created.Format("02/01/2006 15:04:05 UTC"), m.Remessa)
	return exitOK
}
