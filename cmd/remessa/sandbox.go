package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"path/filepath"
	"sort"
	"strings"
	"syscall"
	"text/tabwriter"
	"time"

	"github.com/rs/zerolog"

	"remessa/sandbox"
	_ "remessa/sandbox/all" // every route module
	"remessa/sandbox/auth"
	"remessa/sandbox/faults"
	"remessa/sandbox/store"
)

// sandboxSub is a subcommand of "remessa sandbox" (apps, and others added
// from their own files with registerSandboxSub).
type sandboxSub struct {
	Name, Summary string
	Run           func(args []string, stdout, stderr io.Writer) int
}

var sandboxSubs = map[string]*sandboxSub{}

// registerSandboxSub adds "remessa sandbox NAME"; call it from init.
func registerSandboxSub(name, summary string, run func(args []string, stdout, stderr io.Writer) int) {
	if _, dup := sandboxSubs[name]; dup {
		panic("remessa: sandbox subcommand registered twice: " + name)
	}
	sandboxSubs[name] = &sandboxSub{Name: name, Summary: summary, Run: run}
}

var sandboxCmd = &command{
	Name:    "sandbox",
	Summary: "serve localmente a API de cobranças (/v1) e Pix (/v2), com estado e dados persistentes",
	Usage:   "[--addr 127.0.0.1:8080] [--data DIR | --db postgres://...] [--client-id ID --client-secret SECRET] [flags] | apps [add] ...",
}

func init() {
	sandboxCmd.Run = runSandbox
	register(sandboxCmd)
	registerSandboxSub("apps", "lista contas e aplicações; \"apps add\" cria outra", runSandboxApps)
}

func runSandbox(args []string, stdout, stderr io.Writer) int {
	if len(args) > 0 && !strings.HasPrefix(args[0], "-") {
		sub, ok := sandboxSubs[args[0]]
		if !ok {
			fmt.Fprintf(stderr, "remessa sandbox: subcomando desconhecido %q (veja \"remessa sandbox --help\")\n", args[0])
			return exitUsage
		}
		return sub.Run(args[1:], stdout, stderr)
	}
	fs := newFlagSet(sandboxCmd, stdout, stderr)
	defaultUsage := fs.Usage
	fs.Usage = func() {
		defaultUsage()
		fmt.Fprintln(stdout, "\nSubcomandos:")
		names := make([]string, 0, len(sandboxSubs))
		for n := range sandboxSubs {
			names = append(names, n)
		}
		sort.Strings(names)
		for _, n := range names {
			fmt.Fprintf(stdout, "  remessa sandbox %-8s %s\n", n, sandboxSubs[n].Summary)
		}
	}
	var cfg sandbox.Config
	fs.StringVar(&cfg.Addr, "addr", "127.0.0.1:8080", "endereço da API de cobranças (e de tudo mais); porta 0 = qualquer livre")
	fs.StringVar(&cfg.PixAddr, "pix-addr", "", "endereço separado para a API Pix (padrão: o mesmo de --addr; com --tls, uma porta livre)")
	fs.StringVar(&cfg.DataDir, "data", "", "diretório dos dados (padrão: <cache do usuário>/remessa/sandbox; \":memory:\" não grava nada)")
	fs.StringVar(&cfg.DB, "db", "", "banco PostgreSQL (postgres://...; ou REMESSA_DATABASE_URL) em vez de <dados>/sandbox.db: várias instâncias sobre o mesmo banco servem um só estado")
	// The environment is read after parsing, not as a flag default: --help
	// prints defaults, and a secret must not appear there.
	fs.StringVar(&cfg.ClientID, "client-id", "", "fixa o Client_Id da primeira aplicação (ou REMESSA_SANDBOX_CLIENT_ID)")
	fs.StringVar(&cfg.ClientSecret, "client-secret", "", "fixa o Client_Secret da primeira aplicação (ou REMESSA_SANDBOX_CLIENT_SECRET)")
	fs.DurationVar(&cfg.TokenTTL, "token-ttl", 0, "validade dos tokens (padrão 600s em /v1/authorize, 3600s em /oauth/token; um valor menor vale para os dois)")
	fs.DurationVar(&cfg.BatchDelay, "batch-delay", 0, "tempo que os itens de um lote cobv ficam EM_PROCESSAMENTO")
	fs.BoolVar(&cfg.TLS, "tls", false, "serve a API Pix com mTLS numa porta própria (CA local no diretório de dados)")
	fs.IntVar(&cfg.NotifySpeedup, "notify-speedup", 1, "divide as esperas entre tentativas de notificação e webhook (60 = minutos viram segundos)")
	fsync := fs.Bool("fsync", false, "sincroniza cada gravação com o disco (sobrevive a queda de energia; mais lento)")
	logFormat := fs.String("log-format", "auto", "formato do log: auto (legível num terminal, JSON fora dele), console ou json")
	logLevel := fs.String("log-level", "info", "nível do log: debug, info, warn, error")
	cfg.Faults.BindFlags(fs)
	pos, code, ok := parseFlags(fs, args)
	if !ok {
		return code
	}
	if len(pos) > 0 {
		fmt.Fprintf(stderr, "remessa sandbox: argumento inesperado %q\n", pos[0])
		return exitUsage
	}
	credentialsFromEnv(&cfg)
	if cfg.DB == "" {
		cfg.DB = os.Getenv("REMESSA_DATABASE_URL")
	}
	if cfg.DB != "" && !store.IsPostgres(cfg.DB) {
		fmt.Fprintln(stderr, "remessa sandbox: --db (ou REMESSA_DATABASE_URL): use uma URL postgres:// (sem --db, os dados ficam em <dados>/sandbox.db)")
		return exitUsage
	}
	log, err := newLogger(stderr, *logFormat, *logLevel)
	if err != nil {
		fmt.Fprintln(stderr, "remessa sandbox:", err)
		return exitUsage
	}
	if cfg.NotifySpeedup < 1 {
		fmt.Fprintf(stderr, "remessa sandbox: --notify-speedup %d: use um inteiro de 1 em diante\n", cfg.NotifySpeedup)
		return exitUsage
	}
	if err := cfg.Faults.Validate(); err != nil {
		fmt.Fprintln(stderr, "remessa sandbox:", err)
		return exitUsage
	}
	cfg.Logger = log
	if *fsync {
		cfg.Sync = store.SyncFull
	}
	srv, err := sandbox.New(cfg)
	if err != nil {
		fmt.Fprintln(stderr, "remessa sandbox:", err)
		if errors.Is(err, sandbox.ErrBusy) {
			return exitUsage
		}
		return exitInternal
	}
	rn, err := srv.Start()
	if err != nil {
		srv.Close()
		fmt.Fprintln(stderr, "remessa sandbox:", err)
		return exitInternal
	}
	printBanner(stdout, rn, cfg.Faults, cfg.NotifySpeedup)
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	<-ctx.Done()
	stop()
	fmt.Fprintln(stdout, "parando o sandbox...")
	sctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := rn.Shutdown(sctx); err != nil {
		fmt.Fprintln(stderr, "remessa sandbox:", err)
		return exitInternal
	}
	return exitOK
}

// credentialsFromEnv fills the first application's credentials not given
// by flags from REMESSA_SANDBOX_CLIENT_ID and REMESSA_SANDBOX_CLIENT_SECRET.
func credentialsFromEnv(cfg *sandbox.Config) {
	if cfg.ClientID == "" {
		cfg.ClientID = os.Getenv("REMESSA_SANDBOX_CLIENT_ID")
	}
	if cfg.ClientSecret == "" {
		cfg.ClientSecret = os.Getenv("REMESSA_SANDBOX_CLIENT_SECRET")
	}
}

func newLogger(w io.Writer, format, level string) (zerolog.Logger, error) {
	lvl, err := zerolog.ParseLevel(level)
	if err != nil || level == "" {
		return zerolog.Logger{}, fmt.Errorf("--log-level %q: use debug, info, warn ou error", level)
	}
	switch format {
	case "auto":
		if f, ok := w.(*os.File); ok {
			if st, err := f.Stat(); err == nil && st.Mode()&os.ModeCharDevice != 0 {
				format = "console"
			}
		}
		if format == "auto" {
			format = "json"
		}
	case "console", "json":
	default:
		return zerolog.Logger{}, fmt.Errorf("--log-format %q: use auto, console ou json", format)
	}
	if format == "console" {
		w = zerolog.ConsoleWriter{Out: w, TimeFormat: "15:04:05"}
	}
	return zerolog.New(w).Level(lvl).With().Timestamp().Logger(), nil
}

func printBanner(w io.Writer, rn *sandbox.Running, fc faults.Config, speedup int) {
	fmt.Fprintln(w, "remessa sandbox no ar")
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintf(tw, "  API de cobranças\t%s/v1   (token: POST %s/v1/authorize)\n", rn.URL, rn.URL)
	fmt.Fprintf(tw, "  API Pix\t%s/v2   (token: POST %s/oauth/token)\n", rn.PixURL, rn.PixURL)
	if rn.CAFile != "" {
		fmt.Fprintf(tw, "  CA do TLS\t%s\n", rn.CAFile)
	}
	if rn.ClientP12File != "" {
		fmt.Fprintf(tw, "  Certificado cliente .p12\t%s (senha vazia)\n", rn.ClientP12File)
	}
	if rn.ClientCertFile != "" {
		fmt.Fprintf(tw, "  Certificado cliente PEM\t%s (chave %s)\n", rn.ClientCertFile, rn.ClientKeyFile)
	}
	if st := rn.Server.Store(); st != nil && st.Shared() {
		fmt.Fprintf(tw, "  Dados\tPostgreSQL %s (compartilhado com as outras instâncias sobre o mesmo banco)\n", st.Path())
	} else if rn.DataDir != "" {
		fmt.Fprintf(tw, "  Dados\t%s\n", filepath.Join(rn.DataDir, sandbox.DBFile))
	} else {
		fmt.Fprintf(tw, "  Dados\tsó em memória (nada é gravado)\n")
	}
	fmt.Fprintf(tw, "  Client_Id\t%s\n", rn.ClientID)
	if rn.ClientSecret != "" {
		fmt.Fprintf(tw, "  Client_Secret\t%s\n", rn.ClientSecret)
	} else {
		fmt.Fprintf(tw, "  Client_Secret\t(mostrado só na criação; fixe-o com --client-secret ou crie outra aplicação com \"remessa sandbox apps add\")\n")
	}
	fmt.Fprintf(tw, "  payee_code\t%s\n", rn.PayeeCode)
	fmt.Fprintf(tw, "  Chave Pix (EVP)\t%s\n", rn.PixKey)
	fmt.Fprintf(tw, "  Falhas injetadas\t%s\n", fc.Summary())
	if speedup > 1 {
		fmt.Fprintf(tw, "  Notificações\tesperas entre tentativas divididas por %d\n", speedup)
	}
	fmt.Fprintf(tw, "  Controle\t%s/sandbox/status, /sandbox/clock, /sandbox/outbox, /sandbox/faults, /sandbox/apps, /sandbox/pix/pay\n", rn.URL)
	fmt.Fprintf(tw, "  Linha de comando\tremessa sandbox pay|refund|clock|outbox|apps ... (--help em cada um)\n")
	tw.Flush()
	fmt.Fprintln(w, "Ctrl+C para parar.")
}

var sandboxAppsCmd = &command{
	Name:    "sandbox apps",
	Summary: "lista as contas e aplicações do sandbox (sem segredos), ou cria outra com \"add\"",
	Usage:   "[--data DIR | --db postgres://…] [--format text|json] | add [--data DIR | --db postgres://…] [--account new|PAYEE_CODE] [--name NOME] [--client-id ID] [--client-secret S] [--scopes \"cob.read cob.write\"] [--format text|json]",
}

func runSandboxApps(args []string, stdout, stderr io.Writer) int {
	if len(args) > 0 && args[0] == "add" {
		return runSandboxAppsAdd(args[1:], stdout, stderr)
	}
	fs := newFlagSet(sandboxAppsCmd, stdout, stderr)
	dataDir := fs.String("data", "", "diretório dos dados do sandbox (padrão: <cache do usuário>/remessa/sandbox)")
	db := fs.String("db", "", appsDBUsage)
	format := fs.String("format", "text", "text ou json")
	pos, code, ok := parseFlags(fs, args)
	if !ok {
		return code
	}
	if len(pos) > 0 {
		fmt.Fprintf(stderr, "remessa sandbox apps: argumento inesperado %q (subcomando: add)\n", pos[0])
		return exitUsage
	}
	if !checkFormat("sandbox apps", *format, stderr) {
		return exitUsage
	}
	a, closeFn, err := openApps(*dataDir, *db, false)
	if err != nil {
		return appsError(stderr, err)
	}
	defer closeFn()
	list := sandbox.ListApps(a)
	if *format == "json" {
		if err := printSandboxJSON(stdout, list); err != nil {
			fmt.Fprintln(stderr, "remessa sandbox apps:", err)
			return exitInternal
		}
		return exitOK
	}
	writeAppsText(stdout, list)
	return exitOK
}

// printSandboxJSON prints v as indented JSON (the --format json of the sandbox
// subcommands).
func printSandboxJSON(w io.Writer, v any) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(v)
}

const appsDBUsage = "banco PostgreSQL do sandbox (postgres://...; ou REMESSA_DATABASE_URL quando não há --data) em vez de <dados>/sandbox.db"

// errAppsDB is a --db (or REMESSA_DATABASE_URL) that is not a postgres:// URL.
var errAppsDB = errors.New("--db (ou REMESSA_DATABASE_URL): use uma URL postgres:// (sem --db, os dados ficam em <dados>/sandbox.db)")

// openApps opens the applications of the sandbox whose state is in the
// PostgreSQL database db or, without one, in dataDir; with neither given,
// REMESSA_DATABASE_URL names the database as it does for remessa sandbox.
func openApps(dataDir, db string, write bool) (*auth.Service, func() error, error) {
	if db == "" && dataDir == "" {
		db = os.Getenv("REMESSA_DATABASE_URL")
	}
	if db == "" {
		return sandbox.OpenAuth(dataDir, write)
	}
	if !store.IsPostgres(db) {
		return nil, nil, errAppsDB
	}
	return sandbox.OpenAuthDB(db, write)
}

func appsError(stderr io.Writer, err error) int {
	switch {
	case errors.Is(err, errAppsDB):
		fmt.Fprintln(stderr, "remessa sandbox apps:", err)
		return exitUsage
	case errors.Is(err, sandbox.ErrNoSandbox):
		fmt.Fprintf(stderr, "remessa sandbox apps: %v\n(o sandbox ainda não rodou com este --data; rode \"remessa sandbox\" uma vez)\n", err)
		return exitUsage
	case errors.Is(err, sandbox.ErrBusy):
		fmt.Fprintf(stderr, "remessa sandbox apps: %v\n(pare o sandbox, ou crie a aplicação com POST /sandbox/apps no sandbox em execução)\n", err)
		return exitUsage
	}
	fmt.Fprintln(stderr, "remessa sandbox apps:", err)
	return exitInternal
}

func writeAppsText(w io.Writer, list []sandbox.AccountListing) {
	if len(list) == 0 {
		fmt.Fprintln(w, "nenhuma conta")
		return
	}
	for i, acc := range list {
		if i > 0 {
			fmt.Fprintln(w)
		}
		fmt.Fprintf(w, "Conta %s — %s (CNPJ %s)\n", acc.ID, acc.Name, acc.CNPJ)
		tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
		fmt.Fprintf(tw, "  payee_code\t%s\n", acc.PayeeCode)
		fmt.Fprintf(tw, "  conta Pix\t%s\n", acc.Conta)
		fmt.Fprintf(tw, "  chaves Pix\t%s\n", strings.Join(acc.PixKeys, ", "))
		for _, app := range acc.Apps {
			fmt.Fprintf(tw, "  aplicação\t%s (%d escopos, criada em %s)\n", app.ClientID, len(app.Scopes), app.CreatedAt.UTC().Format("2006-01-02 15:04:05 UTC"))
		}
		if len(acc.Apps) == 0 {
			fmt.Fprintf(tw, "  aplicação\t(nenhuma)\n")
		}
		tw.Flush()
	}
}

var sandboxAppsAddCmd = &command{
	Name:    "sandbox apps add",
	Summary: "cria uma aplicação (numa conta nova ou existente) e mostra suas credenciais uma única vez",
	Usage:   "[--data DIR | --db postgres://…] [--account new|PAYEE_CODE] [--name NOME] [--client-id ID] [--client-secret S] [--scopes \"...\"] [--format text|json]",
}

func runSandboxAppsAdd(args []string, stdout, stderr io.Writer) int {
	fs := newFlagSet(sandboxAppsAddCmd, stdout, stderr)
	dataDir := fs.String("data", "", "diretório dos dados do sandbox (padrão: <cache do usuário>/remessa/sandbox)")
	db := fs.String("db", "", appsDBUsage)
	var req sandbox.AddAppRequest
	fs.StringVar(&req.Account, "account", "new", "\"new\" cria uma conta; ou o payee_code de uma conta existente")
	fs.StringVar(&req.Name, "name", "", "nome da conta nova")
	fs.StringVar(&req.ClientID, "client-id", "", "Client_Id desejado (padrão: aleatório)")
	fs.StringVar(&req.ClientSecret, "client-secret", "", "Client_Secret desejado (padrão: aleatório)")
	scopes := fs.String("scopes", "", "escopos Pix separados por espaço (padrão: todos)")
	format := fs.String("format", "text", "text ou json")
	pos, code, ok := parseFlags(fs, args)
	if !ok {
		return code
	}
	if len(pos) > 0 {
		fmt.Fprintf(stderr, "remessa sandbox apps add: argumento inesperado %q\n", pos[0])
		return exitUsage
	}
	if !checkFormat("sandbox apps add", *format, stderr) {
		return exitUsage
	}
	if *scopes != "" {
		req.Scopes = strings.Fields(*scopes)
	}
	a, closeFn, err := openApps(*dataDir, *db, true)
	if err != nil {
		return appsError(stderr, err)
	}
	defer closeFn()
	creds, err := sandbox.AddApp(context.Background(), a, req)
	if err != nil {
		fmt.Fprintln(stderr, "remessa sandbox apps add:", err)
		return exitUsage
	}
	if *format == "json" {
		_ = printSandboxJSON(stdout, creds)
		return exitOK
	}
	tw := tabwriter.NewWriter(stdout, 0, 0, 2, ' ', 0)
	fmt.Fprintf(tw, "Conta\t%s — %s (CNPJ %s)\n", creds.AccountID, creds.Name, creds.CNPJ)
	fmt.Fprintf(tw, "payee_code\t%s\n", creds.PayeeCode)
	fmt.Fprintf(tw, "Chave Pix (EVP)\t%s\n", creds.PixKey)
	fmt.Fprintf(tw, "Client_Id\t%s\n", creds.ClientID)
	fmt.Fprintf(tw, "Client_Secret\t%s\n", creds.ClientSecret)
	tw.Flush()
	fmt.Fprintln(stdout, "Guarde o Client_Secret: ele não será mostrado de novo.")
	return exitOK
}
