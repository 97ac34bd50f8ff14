package auth

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"

	"remessa/sandbox/store"
)

func newService(t *testing.T) *Service {
	t.Helper()
	st, err := store.Open(store.Memory)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	s, err := New(context.Background(), st, Options{})
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// validCNPJ checks a formatted numeric CNPJ independently (weights from
// the Receita Federal algorithm).
func validCNPJ(s string) bool {
	d := strings.NewReplacer(".", "", "/", "", "-", "").Replace(s)
	if len(d) != 14 {
		return false
	}
	check := func(n int, w []int) byte {
		sum := 0
		for i := 0; i < n; i++ {
			sum += int(d[i]-'0') * w[i]
		}
		if r := sum % 11; r >= 2 {
			return byte('0' + 11 - r)
		}
		return '0'
	}
	return check(12, []int{5, 4, 3, 2, 9, 8, 7, 6, 5, 4, 3, 2}) == d[12] &&
		check(13, []int{6, 5, 4, 3, 2, 9, 8, 7, 6, 5, 4, 3, 2}) == d[13]
}

func TestCNPJCheckDigits(t *testing.T) {
	// Efí's own CNPJ, 09.089.356/0001-18, must come out of cnpjDV.
	d := []byte("090893560001")
	d = append(d, cnpjDV(d))
	d = append(d, cnpjDV(d))
	if string(d) != "09089356000118" {
		t.Fatalf("cnpjDV on Efí's CNPJ gives %s", d)
	}
	for range 200 {
		c := randomCNPJ()
		if !validCNPJ(c) || !regexp.MustCompile(`^\d{2}\.\d{3}\.\d{3}/0001-\d{2}$`).MatchString(c) {
			t.Fatalf("random CNPJ %s invalid", c)
		}
	}
}

func TestBootstrapAndAccounts(t *testing.T) {
	s := newService(t)
	ctx := context.Background()
	c, err := s.Bootstrap(ctx, "", "")
	if err != nil {
		t.Fatal(err)
	}
	if !c.Created || !regexp.MustCompile(`^Client_Id_[0-9a-f]{40}$`).MatchString(c.ClientID) ||
		!regexp.MustCompile(`^Client_Secret_[0-9a-f]{40}$`).MatchString(c.ClientSecret) ||
		!regexp.MustCompile(`^[0-9a-f]{32}$`).MatchString(c.PayeeCode) ||
		!regexp.MustCompile(`^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$`).MatchString(c.PixKey) ||
		!regexp.MustCompile(`^[1-9]\d{6}$`).MatchString(c.Conta) || !validCNPJ(c.CNPJ) {
		t.Fatalf("bootstrap credentials %+v", c)
	}
	again, err := s.Bootstrap(ctx, "", "")
	if err != nil || again.Created || again.ClientSecret != "" || again.ClientID != c.ClientID {
		t.Fatalf("second bootstrap %+v %v", again, err)
	}
	if _, err := s.Bootstrap(ctx, "", "só o segredo"); err == nil {
		t.Fatal("secret without id accepted")
	}
	if a, ok := s.AccountByPayeeCode(strings.ToUpper(c.PayeeCode)); !ok || a.ID != c.AccountID {
		t.Fatal("AccountByPayeeCode")
	}
	if a, ok := s.AccountByConta(c.Conta); !ok || a.ID != c.AccountID {
		t.Fatal("AccountByConta")
	}
	if a, ok := s.AccountByKey(strings.ToUpper(c.PixKey)); !ok || a.ID != c.AccountID {
		t.Fatal("AccountByKey with uppercase EVP")
	}
	// The secret is stored hashed, never in clear.
	var app App
	if ok, _ := s.st.Get(ctx, KindApp, c.AccountID, c.ClientID, &app); !ok || strings.Contains(app.SecretHash, c.ClientSecret) || app.SecretHash == "" {
		t.Fatalf("stored app %+v", app)
	}
	if _, ok := s.authenticate(c.ClientID, c.ClientSecret); !ok {
		t.Fatal("right secret refused")
	}
	if _, ok := s.authenticate(c.ClientID, c.ClientSecret[:len(c.ClientSecret)-1]); ok {
		t.Fatal("wrong secret accepted")
	}
	if _, _, err := s.CreateApp(ctx, c.AccountID, c.ClientID, "x", nil); err == nil {
		t.Fatal("duplicate client id accepted")
	}
	if _, _, err := s.CreateApp(ctx, "acc999", "", "", nil); err == nil {
		t.Fatal("app in a missing account accepted")
	}
}

func TestPixKeys(t *testing.T) {
	s := newService(t)
	ctx := context.Background()
	a, _ := s.CreateAccount(ctx, "A")
	b, _ := s.CreateAccount(ctx, "B")
	if err := s.AddKey(ctx, a.ID, "fulano@Example.com"); err != nil {
		t.Fatal(err)
	}
	if err := s.AddKey(ctx, a.ID, "FULANO@example.com"); err != nil {
		t.Fatal("re-adding an own key should be a no-op:", err)
	}
	if err := s.AddKey(ctx, b.ID, "fulano@example.com"); err == nil {
		t.Fatal("another account's key accepted")
	}
	if err := s.AddKey(ctx, b.ID, "+55 (11) 99999-0000"); err != nil {
		t.Fatal(err)
	}
	if acc, ok := s.AccountByKey("+5511999990000"); !ok || acc.ID != b.ID {
		t.Fatal("phone key lookup")
	}
	if got, _ := s.Account(a.ID); len(got.Keys) != 2 {
		t.Fatalf("keys %v", got.Keys)
	}
	if err := s.RemoveKey(ctx, a.ID, "fulano@example.com"); err != nil {
		t.Fatal(err)
	}
	if _, ok := s.AccountByKey("fulano@example.com"); ok {
		t.Fatal("removed key still found")
	}
	if err := s.RemoveKey(ctx, a.ID, "fulano@example.com"); err == nil {
		t.Fatal("removing a missing key accepted")
	}
	// Reload from the store: same state.
	s2, err := New(ctx, s.st, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if acc, ok := s2.AccountByKey("+5511999990000"); !ok || acc.ID != b.ID {
		t.Fatal("keys not persisted")
	}
	if n := len(s2.Accounts()); n != 2 {
		t.Fatalf("%d accounts after reload", n)
	}
}

// Key changes and account creation at once must not deadlock (lock order).
func TestConcurrentAccountChanges(t *testing.T) {
	s := newService(t)
	ctx := context.Background()
	a, _ := s.CreateAccount(ctx, "")
	var wg sync.WaitGroup
	for i := range 20 {
		wg.Add(2)
		go func() { defer wg.Done(); s.CreateAccount(ctx, "") }()
		go func() { defer wg.Done(); s.AddKey(ctx, a.ID, NewEVP()); _ = i }()
	}
	wg.Wait()
	if n := len(s.Accounts()); n != 21 {
		t.Fatalf("%d accounts", n)
	}
	if acc, _ := s.Account(a.ID); len(acc.Keys) != 21 {
		t.Fatalf("%d keys", len(acc.Keys))
	}
}

func TestEnsureAccount(t *testing.T) {
	s := newService(t)
	ctx := context.Background()
	a, err := s.EnsureAccount(ctx, "Federação", "7654321")
	if err != nil || a.Conta != "7654321" || a.Name != "Federação" || len(a.Keys) != 1 {
		t.Fatalf("EnsureAccount: %+v %v", a, err)
	}
	if got, ok := s.AccountByConta("7654321"); !ok || got.ID != a.ID {
		t.Fatalf("AccountByConta after EnsureAccount: %+v %v", got, ok)
	}
	again, err := s.EnsureAccount(ctx, "Outra", "7654321")
	if err != nil || again.ID != a.ID || again.Name != "Federação" {
		t.Fatalf("second EnsureAccount created another account: %+v %v", again, err)
	}
	if n := len(s.Accounts()); n != 1 {
		t.Fatalf("%d accounts, want 1", n)
	}
	if _, err := s.EnsureAccount(ctx, "x", ""); err == nil {
		t.Fatal("empty conta accepted")
	}
	if _, err := s.EnsureAccount(ctx, "x", "12 34"); err == nil {
		t.Fatal("conta with a space accepted")
	}
}

// TestSecretsNeverReachTheDisk: no client secret, generated or fixed, is
// in clear in any file of the data directory (database, WAL).
func TestSecretsNeverReachTheDisk(t *testing.T) {
	dir := t.TempDir()
	st, err := store.Open(filepath.Join(dir, "sandbox.db"))
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	s, err := New(ctx, st, Options{})
	if err != nil {
		t.Fatal(err)
	}
	first, err := s.Bootstrap(ctx, "", "")
	if err != nil {
		t.Fatal(err)
	}
	acc, err := s.CreateAccount(ctx, "Outra LTDA")
	if err != nil {
		t.Fatal(err)
	}
	const fixed = "Client_Secret_fixo_no_disco"
	if _, _, err := s.CreateApp(ctx, acc.ID, "Client_Id_fixo", fixed, nil); err != nil {
		t.Fatal(err)
	}
	if err := st.Close(); err != nil {
		t.Fatal(err)
	}
	files, _ := filepath.Glob(filepath.Join(dir, "*"))
	if len(files) == 0 {
		t.Fatal("no data files")
	}
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		for _, secret := range []string{first.ClientSecret, fixed} {
			if secret == "" || bytes.Contains(b, []byte(secret)) {
				t.Fatalf("%s holds the secret %q in clear", filepath.Base(f), secret)
			}
		}
	}
}
