package sandbox_test

import (
	"context"
	"errors"
	"net/http"
	"strings"
	"testing"

	"github.com/rs/zerolog"

	"remessa/internal/pgtest"
	"remessa/sandbox"
)

// TestAddAppRefusesBadCredentialsFirst: a client id with ':' (unusable in
// HTTP Basic), control characters, over 255 characters or already taken
// is refused before any account is created.
func TestAddAppRefusesBadCredentialsFirst(t *testing.T) {
	srv, err := sandbox.New(sandbox.Config{DataDir: sandbox.Memory, ClientID: "Client_Id_taken", ClientSecret: "s"})
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	ctx := context.Background()
	before := len(srv.Auth().Accounts())
	for _, req := range []sandbox.AddAppRequest{
		{Account: "new", ClientID: "a:b"},
		{Account: "new", ClientID: "a b"},
		{Account: "new", ClientID: "a\x00b"},
		{Account: "new", ClientID: strings.Repeat("x", 256)},
		{Account: "new", ClientSecret: strings.Repeat("x", 5000)},
		{Account: "new", ClientSecret: "a\nb"},
		{Account: "new", Name: strings.Repeat("n", 300)},
		{Account: "new", ClientID: "Client_Id_taken"},
	} {
		if _, err := sandbox.AddApp(ctx, srv.Auth(), req); err == nil {
			t.Errorf("AddApp(%.40q, secret %.20q, name %.20q) accepted", req.ClientID, req.ClientSecret, req.Name)
		}
	}
	if n := len(srv.Auth().Accounts()); n != before {
		t.Fatalf("refused requests created %d accounts", n-before)
	}
	creds, err := sandbox.AddApp(ctx, srv.Auth(), sandbox.AddAppRequest{Account: "new", ClientID: strings.Repeat("x", 255), ClientSecret: "Segredo_ção"})
	if err != nil || creds.ClientID != strings.Repeat("x", 255) {
		t.Fatalf("255 characters: %v", err)
	}
}

func TestMain(m *testing.M) { pgtest.Main(m) }

// "remessa sandbox apps" over PostgreSQL: OpenAuthDB lists the accounts
// a sandbox made there and adds an application that a running instance
// over the same database then accepts; a database no sandbox started on
// is ErrNoSandbox.
func TestAppsOverPostgres(t *testing.T) {
	dsn := pgtest.DSN(t)
	if _, _, err := sandbox.OpenAuthDB(dsn, false); !errors.Is(err, sandbox.ErrNoSandbox) {
		t.Fatalf("empty database: %v", err)
	}
	srv, err := sandbox.New(sandbox.Config{DB: dsn, ClientID: "Client_Id_first", ClientSecret: "Client_Secret_first", Logger: zerolog.Nop()})
	if err != nil {
		t.Fatal(err)
	}
	rn, err := srv.Start()
	if err != nil {
		t.Fatal(err)
	}
	defer rn.Close()
	a, closeFn, err := sandbox.OpenAuthDB(dsn, true)
	if err != nil {
		t.Fatal(err)
	}
	list := sandbox.ListApps(a)
	if len(list) != 1 || list[0].PayeeCode != rn.PayeeCode || len(list[0].Apps) != 1 || list[0].Apps[0].ClientID != "Client_Id_first" {
		t.Fatalf("listed: %+v", list)
	}
	creds, err := sandbox.AddApp(context.Background(), a, sandbox.AddAppRequest{Account: rn.PayeeCode, ClientID: "Client_Id_second", ClientSecret: "Client_Secret_second"})
	if err != nil || !creds.Created || creds.PayeeCode != rn.PayeeCode {
		t.Fatalf("add: %+v %v", creds, err)
	}
	closeFn()
	a, closeFn, err = sandbox.OpenAuthDB(dsn, false)
	if err != nil {
		t.Fatal(err)
	}
	defer closeFn()
	if list := sandbox.ListApps(a); len(list) != 1 || len(list[0].Apps) != 2 {
		t.Fatalf("after add: %+v", list)
	}
	// The running instance accepts the new application.
	req, _ := http.NewRequest(http.MethodPost, rn.URL+"/oauth/token", strings.NewReader(`{"grant_type":"client_credentials"}`))
	req.SetBasicAuth("Client_Id_second", "Client_Secret_second")
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("token with the new application: %d", resp.StatusCode)
	}
}
