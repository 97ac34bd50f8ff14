package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"syscall"

	"remessa/pipeline/retorno"
	"remessa/pipeline/run"
	"remessa/pipeline/status"
)

func init() {
	register(&command{
		Name:    "retorno",
		Summary: "escreve o arquivo de retorno CNAB de uma execução (entradas confirmadas e rejeitadas, liquidações, baixas, vencimentos alterados) para o ERP importar; cada evento vai em um só retorno",
		Usage:   "RUN_DIR [--layout cnab240|cnab400-237|cnab400-341] [-o ARQUIVO] [--no-sync] [--nsa N] [--bank 001] [--format text|json] [--base-url URL] [--pix-base-url URL] [--lang pt|en]",
		Run:     runRetorno,
	})
}

func runRetorno(args []string, stdout, stderr io.Writer) int {
	c := commands["retorno"]
	fs := newFlagSet(c, stdout, stderr)
	layout := fs.String("layout", "", "leiaute do retorno: cnab240, cnab400-237 (Bradesco) ou cnab400-341 (Itaú); padrão: o da remessa que a execução leu")
	output := fs.String("o", "", "arquivo a escrever (padrão: RUN_DIR/retornos/RETORNO-<NSA>.RET); nunca sobrescreve")
	noSync := fs.Bool("no-sync", false, "não consulta o serviço antes: usa a situação que o ledger já tem")
	nsa := fs.Int("nsa", 0, "escreve de novo o retorno de NSA N desta execução, igual ao primeiro (nada novo é informado)")
	bank := fs.String("bank", "", "código do banco nos cabeçalhos do CNAB 240 quando a entrada não o diz (planilha); padrão 000")
	format := fs.String("format", "text", "saída: text ou json")
	baseURL := fs.String("base-url", "", "endereço da API de cobranças (ex.: um remessa sandbox servindo os dados da execução)")
	pixURL := fs.String("pix-base-url", "", "endereço da API Pix (padrão: o de --base-url)")
	lang := fs.String("lang", "pt", "idioma: pt ou en")
	pos, code, ok := parseFlags(fs, args)
	if !ok {
		return code
	}
	if len(pos) != 1 || (*format != "text" && *format != "json") || *nsa < 0 {
		fmt.Fprintf(stderr, "Uso: remessa retorno %s\n", c.Usage)
		return exitUsage
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if *nsa > 0 {
		if *output == "" {
			fmt.Fprintln(stderr, "remessa retorno: --nsa precisa de -o ARQUIVO (o retorno é escrito de novo em outro arquivo)")
			return exitUsage
		}
		f, err := retorno.Rewrite(ctx, pos[0], *nsa, *output)
		if err != nil {
			fmt.Fprintln(stderr, "remessa retorno:", err)
			return retornoExit(err)
		}
		fmt.Fprintf(stdout, "Retorno NSA %d escrito de novo em %s (%d ocorrência(s)).\n", f.NSA, f.Path, f.Titles)
		return exitOK
	}
	res, err := retorno.Write(ctx, pos[0], retorno.Options{Layout: *layout, Output: *output, Bank: *bank, Sync: !*noSync,
		Status: status.Options{Run: run.Options{BaseURL: *baseURL, PixBaseURL: *pixURL}}, Lang: *lang})
	if err != nil {
		fmt.Fprintln(stderr, "remessa retorno:", err)
		return retornoExit(err)
	}
	if *format == "json" {
		b, _ := json.Marshal(res)
		fmt.Fprintln(stdout, string(b))
	} else {
		fmt.Fprint(stdout, res.Text(*lang))
	}
	if !res.Empty && !res.Check.OK {
		return exitProblems
	}
	return exitOK
}

func retornoExit(err error) int {
	var le *retorno.LayoutError
	var ue *run.UsageError
	if errors.As(err, &le) || errors.As(err, &ue) || errors.Is(err, retorno.ErrNoSuchRetorno) {
		return exitUsage
	}
	return exitInternal
}
