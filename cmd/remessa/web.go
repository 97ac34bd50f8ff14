package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strings"
	"syscall"

	"remessa/pipeline/cluster"
	"remessa/web"
)

func init() {
	register(&command{
		Name:    "web",
		Summary: "a mesa de cobrança no navegador: enviar a planilha, corrigir, planejar, confirmar, acompanhar, baixar",
		Usage:   "[--addr 127.0.0.1:8070] [--data DIR] [--admin-password-file F] [--max-upload-mb 50] [--idle-timeout 30m] [--workers 2] [--sync-every 1h] [--public-url https://…] [--tls-cert F --tls-key F] [--db postgres://… [--units 2] [--unit-timeout 2m]]",
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
	db := fs.String("db", "", "banco Postgres: cada execução vai para as unidades do cluster, trabalhadas por este servidor e por remessa worker (padrão $"+cluster.EnvDB+")")
	units := fs.Int("units", 2, "com --db: unidades trabalhadas ao mesmo tempo por este servidor (0: só os remessa worker)")
	lease := fs.Duration("unit-timeout", cluster.DefaultUnitTimeout, "com --db: prazo de uma unidade; a de um processo morto vai para outro depois dele")
	syncEvery := fs.Duration("sync-every", web.DefaultSyncEvery, "de quanto em quanto tempo a situação das execuções com cobranças em aberto é atualizada e a régua de cobrança passa (0: nunca)")
	publicURL := fs.String("public-url", "", "endereço público em que o serviço alcança esta mesa (ex.: https://cobranca.example.com): as notificações e os webhooks Pix das contas de sandbox e produção vão para ele")
	pos, code, ok := parseFlags(fs, args)
	if !ok {
		return code
	}
	if *syncEvery < 0 {
		fmt.Fprintf(stderr, "remessa web: --sync-every %s: esperado um intervalo positivo (ex.: 30m, 1h) ou 0 para nunca\n", *syncEvery)
		return exitUsage
	}
	if len(pos) != 0 || *maxMB <= 0 || *workers <= 0 || *units < 0 || *lease <= 0 {
		fmt.Fprintf(stderr, "Uso: remessa web %s\n", c.Usage)
		return exitUsage
	}
	cfg := web.Config{Addr: *addr, DataDir: *data, MaxUpload: int64(*maxMB) << 20, IdleTimeout: *idle, TLSCert: *cert, TLSKey: *key,
		Log: stderr, Workers: *workers, DB: cluster.DSN(*db), Units: *units, UnitTimeout: *lease, SyncEvery: *syncEvery, PublicURL: *publicURL}
	if *syncEvery == 0 {
		cfg.SyncEvery = -1
	}
	if cfg.DB != "" && !cluster.IsPostgres(cfg.DB) {
		fmt.Fprintln(stderr, "remessa web: --db: esperado um endereço postgres://… ou postgresql://… (o recebido não é de um PostgreSQL)")
		return exitUsage
	}
	if cfg.Units == 0 {
		cfg.Units = -1 // no unit worker in this server
	}
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
	if cfg.DB != "" {
		fmt.Fprintf(stdout, "Execuções no PostgreSQL %s (remessa worker --db … trabalha as unidades em outras máquinas)\n", cluster.Mask(cfg.DB))
	}
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
