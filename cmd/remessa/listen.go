package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"sync"
	"syscall"

	"remessa/pipeline/listen"
	"remessa/pipeline/run"
)

func init() {
	register(&command{
		Name:    "listen",
		Summary: "recebe as notificações da API de cobranças e os webhooks Pix e atualiza a situação das execuções sem consultar o serviço",
		Usage:   "--runs-dir DIR [--addr 127.0.0.1:8090] [--base-url URL] [--pix-base-url URL] [--lang pt|en]",
		Run:     runListen,
	})
}

// listenContext is how `remessa listen` learns it must stop (tests replace
// it).
var listenContext = func() (context.Context, context.CancelFunc) {
	return signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
}

// lockedWriter serializes the listener's lines with the command's.
type lockedWriter struct {
	mu sync.Mutex
	w  io.Writer
}

func (l *lockedWriter) printf(format string, args ...any) {
	l.mu.Lock()
	defer l.mu.Unlock()
	fmt.Fprintf(l.w, format, args...)
}

func runListen(args []string, stdout, stderr io.Writer) int {
	c := commands["listen"]
	fs := newFlagSet(c, stdout, stderr)
	runsDir := fs.String("runs-dir", "", "pasta das execuções (as pastas com results.json); listen.db fica nela")
	addr := fs.String("addr", listen.DefaultAddr, "endereço em que escuta")
	baseURL := fs.String("base-url", "", "endereço da API de cobranças (ex.: um remessa sandbox servindo os dados das execuções)")
	pixURL := fs.String("pix-base-url", "", "endereço da API Pix (padrão: o de --base-url)")
	lang := fs.String("lang", "pt", "idioma do aviso de relógio: pt ou en")
	pos, code, ok := parseFlags(fs, args)
	if !ok {
		return code
	}
	if len(pos) != 0 || *runsDir == "" {
		fmt.Fprintf(stderr, "Uso: remessa listen %s\n", c.Usage)
		return exitUsage
	}
	ctx, stop := listenContext()
	defer stop()
	out, errw := &lockedWriter{w: stdout}, &lockedWriter{w: stderr}
	opts := listen.Options{RunsDir: *runsDir, Run: run.Options{BaseURL: *baseURL, PixBaseURL: *pixURL, Lang: *lang},
		Logf: func(format string, args ...any) { errw.printf(format+"\n", args...) }}
	st, err := listen.Serve(ctx, opts, *addr, func(u string) {
		out.printf("remessa listen: ouvindo em %s (Ctrl+C para parar)\n", u)
		out.printf("  notificações da API de cobranças: %s/notificacao   (notification_url do job)\n", u)
		out.printf("  webhook Pix: %s   (registre com PUT /v2/webhook/:chave; o serviço posta em %s/pix)\n", u, u)
	})
	if err != nil {
		errw.printf("remessa listen: %v\n", err)
		var ue *run.UsageError
		if errors.As(err, &ue) {
			return exitUsage
		}
		return exitInternal
	}
	out.printf("remessa listen: parado — %d entregas (%d repetidas), %d aplicadas, %d pendentes, %d órfãs, %d recusadas pelo serviço; %d cobranças mudaram\n",
		st.Deliveries, st.Duplicates, st.Applied, st.Pending, st.Orphans, st.Refused, st.Changed)
	return exitOK
}
