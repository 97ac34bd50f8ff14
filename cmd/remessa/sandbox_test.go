package main

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"remessa/sandbox"
	"remessa/sandbox/faults"
	"remessa/sandbox/sandboxtest"
)

func runCmd(args ...string) (int, string, string) {
	var out, errb bytes.Buffer
	code := dispatch(args, &out, &errb)
	return code, out.String(), errb.String()
}

func TestSandboxAppsListAndAdd(t *testing.T) {
	dir := t.TempDir()
	srv, err := sandbox.New(sandbox.Config{DataDir: dir, Addr: "127.0.0.1:0"})
	if err != nil {
		t.Fatal(err)
	}
	first := srv.Credentials()
	// While a sandbox holds the dir, listing works and adding is refused.
	if code, out, _ := runCmd("sandbox", "apps", "--data", dir); code != exitOK || !strings.Contains(out, first.PayeeCode) {
		t.Fatalf("list while running: %d %s", code, out)
	}
	if code, _, errs := runCmd("sandbox", "apps", "add", "--data", dir); code != exitUsage || !strings.Contains(errs, "POST /sandbox/apps") {
		t.Fatalf("add while running: %d %s", code, errs)
	}
	srv.Close()

	code, out, errs := runCmd("sandbox", "apps", "--data", dir, "--format", "json")
	if code != exitOK {
		t.Fatalf("apps json: %d %s", code, errs)
	}
	var list []sandbox.AccountListing
	if err := json.Unmarshal([]byte(out), &list); err != nil {
		t.Fatalf("apps json output: %v\n%s", err, out)
	}
	if len(list) != 1 || list[0].PayeeCode != first.PayeeCode || len(list[0].Apps) != 1 || list[0].Apps[0].ClientID != first.ClientID ||
		len(list[0].PixKeys) != 1 || list[0].PixKeys[0] != first.PixKey || list[0].Conta != first.Conta {
		t.Fatalf("apps json %+v, first %+v", list, first)
	}
	if strings.Contains(out, "Client_Secret") || strings.Contains(out, "secret") {
		t.Fatalf("listing shows secrets: %s", out)
	}

	code, out, _ = runCmd("sandbox", "apps", "--data", dir)
	for _, want := range []string{"Conta acc000001", "payee_code  " + first.PayeeCode, first.ClientID, first.PixKey, "conta Pix   " + first.Conta} {
		if code != exitOK || !strings.Contains(out, want) {
			t.Fatalf("apps text lacks %q:\n%s", want, out)
		}
	}
	if strings.Contains(out, "Client_Secret") {
		t.Fatalf("text listing shows a secret:\n%s", out)
	}

	// add: a new account, then an app in the first account.
	code, out, errs = runCmd("sandbox", "apps", "add", "--data", dir, "--format", "json")
	if code != exitOK {
		t.Fatalf("add: %d %s", code, errs)
	}
	var created struct {
		PayeeCode, ClientID, ClientSecret string `json:""`
	}
	var raw map[string]any
	json.Unmarshal([]byte(out), &raw)
	created.PayeeCode, _ = raw["payee_code"].(string)
	created.ClientSecret, _ = raw["client_secret"].(string)
	if !strings.HasPrefix(created.ClientSecret, "Client_Secret_") || created.PayeeCode == first.PayeeCode {
		t.Fatalf("add output %s", out)
	}
	code, out, _ = runCmd("sandbox", "apps", "add", "--data", dir, "--account", first.PayeeCode, "--client-id", "Client_Id_meu", "--scopes", "cob.read cob.write")
	if code != exitOK || !strings.Contains(out, "Client_Id_meu") || !strings.Contains(out, "Client_Secret_") || !strings.Contains(out, first.PayeeCode) {
		t.Fatalf("add to existing: %d %s", code, out)
	}
	code, out, _ = runCmd("sandbox", "apps", "--data", dir, "--format", "json")
	list = nil
	json.Unmarshal([]byte(out), &list)
	if code != exitOK || len(list) != 2 || len(list[0].Apps) != 2 || len(list[1].Apps) != 1 {
		t.Fatalf("after adds: %s", out)
	}
	if code, _, errs := runCmd("sandbox", "apps", "add", "--data", dir, "--account", "0123456789abcdef0123456789abcdef"); code != exitUsage || !strings.Contains(errs, "não existe") {
		t.Fatalf("add to unknown account: %d %s", code, errs)
	}

	// The restarted sandbox sees the added applications.
	srv, err = sandbox.New(sandbox.Config{DataDir: dir})
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	if n := len(srv.Auth().Apps()); n != 3 {
		t.Fatalf("%d apps after restart", n)
	}
}

func TestSandboxUsageErrors(t *testing.T) {
	empty := filepath.Join(t.TempDir(), "nada")
	for _, tc := range []struct {
		args []string
		code int
		msg  string
	}{
		{[]string{"sandbox", "apps", "--data", empty}, exitUsage, "rode \"remessa sandbox\""},
		{[]string{"sandbox", "apps", "--format", "xml"}, exitUsage, "--format"},
		{[]string{"sandbox", "voar"}, exitUsage, "subcomando desconhecido"},
		{[]string{"sandbox", "--fault-500", "2"}, exitUsage, "fração inválida"},
		{[]string{"sandbox", "--fault-500", "0.7", "--fault-503", "0.7", "--data", sandbox.Memory}, exitUsage, "soma"},
		{[]string{"sandbox", "--log-format", "xml", "--data", sandbox.Memory}, exitUsage, "--log-format"},
		{[]string{"sandbox", "extra"}, exitUsage, "subcomando desconhecido"},
		{[]string{"sandbox", "--batch-delay", "1x", "--data", sandbox.Memory}, exitUsage, "-batch-delay"},
		// --pix-addr reaches the server: its second listener is opened there.
		{[]string{"sandbox", "--data", sandbox.Memory, "--addr", "127.0.0.1:0", "--pix-addr", "256.0.0.1:1"}, exitInternal, "256.0.0.1:1 (Pix)"},
	} {
		code, _, errs := runCmd(tc.args...)
		if code != tc.code || !strings.Contains(errs, tc.msg) {
			t.Errorf("%v: %d %q; want %d with %q", tc.args, code, errs, tc.code, tc.msg)
		}
	}
	code, out, _ := runCmd("sandbox", "--help")
	if code != exitOK || !strings.Contains(out, "-client-id") || !strings.Contains(out, "remessa sandbox apps") || !strings.Contains(out, "-fault-drop") {
		t.Fatalf("help: %d %s", code, out)
	}
}

// TestBannerWithTLS: with --tls the banner names the CA, the client .p12
// and the PEM pair (files that exist), the control routes and the CLI.
func TestBannerWithTLS(t *testing.T) {
	dir := t.TempDir()
	rn := sandboxtest.Start(t, sandbox.Config{DataDir: dir, TLS: true})
	var out bytes.Buffer
	printBanner(&out, rn, faults.Config{}, 60)
	b := out.String()
	for _, f := range []string{rn.CAFile, rn.ClientP12File, rn.ClientCertFile, rn.ClientKeyFile} {
		if f == "" || !strings.Contains(b, f) {
			t.Errorf("banner misses file %q:\n%s", f, b)
		}
		if _, err := os.Stat(f); err != nil {
			t.Errorf("announced file: %v", err)
		}
	}
	if filepath.Ext(rn.ClientP12File) != ".p12" {
		t.Errorf("p12 file %q", rn.ClientP12File)
	}
	// The account's random key is printed beside the credentials, and
	// the Pix API at its own https address.
	keyLine := regexp.MustCompile(`(?m)^  Chave Pix \(EVP\) +` + regexp.QuoteMeta(rn.PixKey) + `$`)
	pixLine := regexp.MustCompile(`(?m)^  API Pix +` + regexp.QuoteMeta(rn.PixURL) + `/v2 `)
	if rn.PixKey == "" || !keyLine.MatchString(b) || !strings.Contains(b, rn.ClientID) || !pixLine.MatchString(b) || !strings.HasPrefix(rn.PixURL, "https://") {
		t.Errorf("banner misses the Pix key %q or the Pix URL %q:\n%s", rn.PixKey, rn.PixURL, b)
	}
	for _, s := range []string{"/sandbox/clock", "/sandbox/outbox", "/sandbox/faults", "remessa sandbox pay|refund|clock", "divididas por 60"} {
		if !strings.Contains(b, s) {
			t.Errorf("banner misses %q:\n%s", s, b)
		}
	}
}

func TestNotifySpeedupFlagRefusesZero(t *testing.T) {
	code, _, errs := runCmd("sandbox", "--data", ":memory:", "--notify-speedup", "0")
	if code != exitUsage || !strings.Contains(errs, "--notify-speedup") {
		t.Fatalf("%d %s", code, errs)
	}
}

// TestSandboxCredentialsFromEnv: the environment fixes the first
// application's credentials, flags win over it, and --help never shows the
// secret.
func TestSandboxCredentialsFromEnv(t *testing.T) {
	t.Setenv("REMESSA_SANDBOX_CLIENT_ID", "Client_Id_env")
	t.Setenv("REMESSA_SANDBOX_CLIENT_SECRET", "Client_Secret_env_segredo")
	var cfg sandbox.Config
	credentialsFromEnv(&cfg)
	if cfg.ClientID != "Client_Id_env" || cfg.ClientSecret != "Client_Secret_env_segredo" {
		t.Fatalf("from env: %q %q", cfg.ClientID, cfg.ClientSecret)
	}
	cfg = sandbox.Config{ClientID: "Client_Id_flag", ClientSecret: "Client_Secret_flag"}
	credentialsFromEnv(&cfg)
	if cfg.ClientID != "Client_Id_flag" || cfg.ClientSecret != "Client_Secret_flag" {
		t.Fatalf("flags overridden by env: %q %q", cfg.ClientID, cfg.ClientSecret)
	}
	code, out, errs := runCmd("sandbox", "--help")
	if code != exitOK || strings.Contains(out+errs, "segredo") {
		t.Fatalf("help shows the secret from the environment: %d\n%s%s", code, out, errs)
	}
}

// TestBannerShowsFirstCredentials: the first start prints Client_Id,
// Client_Secret and payee_code; a restart cannot (the secret is hashed)
// and says so.
func TestBannerShowsFirstCredentials(t *testing.T) {
	dir := t.TempDir()
	start := func(cfg sandbox.Config) string {
		cfg.DataDir, cfg.Addr = dir, "127.0.0.1:0"
		srv, err := sandbox.New(cfg)
		if err != nil {
			t.Fatal(err)
		}
		rn, err := srv.Start()
		if err != nil {
			srv.Close()
			t.Fatal(err)
		}
		defer rn.Close()
		var out bytes.Buffer
		printBanner(&out, rn, faults.Config{}, 1)
		for _, want := range []string{rn.ClientID, rn.PayeeCode, rn.URL + "/v1/authorize"} {
			if want == "" || !strings.Contains(out.String(), want) {
				t.Fatalf("banner lacks %q:\n%s", want, out.String())
			}
		}
		return out.String()
	}
	b := start(sandbox.Config{ClientID: "Client_Id_banner", ClientSecret: "Client_Secret_banner"})
	if !strings.Contains(b, "Client_Id_banner") || !strings.Contains(b, "Client_Secret_banner") {
		t.Fatalf("first banner:\n%s", b)
	}
	b = start(sandbox.Config{})
	if strings.Contains(b, "Client_Secret_banner") || !strings.Contains(b, "mostrado só na criação") {
		t.Fatalf("banner after restart:\n%s", b)
	}
}
