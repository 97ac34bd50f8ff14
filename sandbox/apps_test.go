package sandbox_test

import (
	"context"
	"strings"
	"testing"

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
