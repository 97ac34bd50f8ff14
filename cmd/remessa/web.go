package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strings"
	"syscall"

	"remessa/web"
)

func init() {
	register(&command{
		Name:    "web",
		Summary: "a mesa de cobrança no navegador: enviar a planilha, corrigir, planejar, confirmar, acompanhar, baixar",
		Usage:   "[--addr 127.0.0.1:8070] [--data DIR] [--admin-password-file F] [--max-upload-mb 50] [--idle-timeout 30m] [--workers 2] [--tls-cert F --tls-key F]",
		Run:     runWeb,
	})
}

func runWeb(args []string, stdout, stderr io.Writer) int {
	c := commands["web"]
	fs := newFlagSet(c, stdout, stderr)
	addr := fs.String("addr", web.DefaultAddr, "endereço em que o servidor escuta")
	data := fs.String("data", "", "pasta de todos os dados (padrão "+web.DefaultDataDir()+")")
	pwFile := fs.String("admin-password-file", "", "arquivo com a senha do primeiro administrador (padrão: uma senha aleatória, mostrada uma vez)")
	maxMB := fs.Int("max-upload-mb", 50, "tamanho máximo de uma planilha enviada, em MB")
	idle := fs.Duration("idle-timeout", 0, "sessão encerrada após este tempo sem uso (padrão 30m)")
	cert := fs.String("tls-cert", "", "certificado para servir HTTPS")
	key := fs.String("tls-key", "", "chave do certificado")
	workers := fs.Int("workers", 2, "execuções simultâneas")
	pos, code, ok := parseFlags(fs, args)
	if !ok {
		return code
	}
	if len(pos) != 0 || *maxMB <= 0 || *workers <= 0 {
		fmt.Fprintf(stderr, "Uso: remessa web %s\n", c.Usage)
		return exitUsage
	}
	cfg := web.Config{Addr: *addr, DataDir: *data, MaxUpload: int64(*maxMB) << 20, IdleTimeout: *idle, TLSCert: *cert, TLSKey: *key,
		Log: stderr, Workers: *workers}
	if *pwFile != "" {
		b, err := os.ReadFile(*pwFile)
		if err != nil {
			fmt.Fprintln(stderr, "remessa web: --admin-password-file:", err)
			return exitUsage
		}
		cfg.AdminPassword = strings.TrimRight(string(b), "\r\n")
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	srv, err := web.New(ctx, cfg)
	if err != nil {
		fmt.Fprintln(stderr, "remessa web:", err)
		return exitUsage
	}
	if err := srv.Start(); err != nil {
		srv.Close()
		fmt.Fprintln(stderr, "remessa web:", err)
		return exitUsage
	}
	fmt.Fprintf(stdout, "remessa web em %s (dados em %s)\n", srv.URL, srv.DataDir())
	if srv.AdminCreated {
		if *pwFile != "" {
			fmt.Fprintln(stdout, "Administrador criado: usuário admin, senha a do arquivo --admin-password-file.")
		} else {
			fmt.Fprintf(stdout, "Administrador criado: usuário admin, senha %s\n(anote agora: ela não será mostrada de novo; só o hash fica guardado)\n", srv.AdminPassword)
		}
	}
	fmt.Fprintln(stdout, "Abra o endereço acima no navegador. Ctrl+C para parar (as execuções em andamento continuam no próximo início).")
	<-ctx.Done()
	fmt.Fprintln(stderr, "remessa web: parando…")
	srv.Close()
	return exitOK
}
