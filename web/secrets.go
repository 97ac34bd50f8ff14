package web

import (
	"crypto/aes"
	"crypto/cipher"
	"crypto/rand"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
)

// KeyFile is the name of the credentials key created under the data folder
// when REMESSA_WEB_KEY does not give one.
const KeyFile = "chave"

// loadKey returns the 32-byte key that encrypts service credentials at
// rest: the one given, else REMESSA_WEB_KEY (64 hex digits or base64),
// else <dir>/chave, created (0600) on first start.
func loadKey(dir string, given []byte) ([]byte, error) {
	if len(given) > 0 {
		if len(given) != 32 {
			return nil, errors.New("a chave de criptografia precisa ter 32 bytes")
		}
		return given, nil
	}
	if env := strings.TrimSpace(os.Getenv("REMESSA_WEB_KEY")); env != "" {
		k, err := parseKey(env)
		if err != nil {
			return nil, fmt.Errorf("REMESSA_WEB_KEY: %w", err)
		}
		return k, nil
	}
	path := filepath.Join(dir, KeyFile)
	b, err := os.ReadFile(path)
	if err == nil {
		k, err := parseKey(strings.TrimSpace(string(b)))
		if err != nil {
			return nil, fmt.Errorf("%s: %w", path, err)
		}
		return k, nil
	}
	if !errors.Is(err, os.ErrNotExist) {
		return nil, fmt.Errorf("ler a chave %s: %w", path, err)
	}
	k := make([]byte, 32)
	if _, err := rand.Read(k); err != nil {
		return nil, err
	}
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		return nil, fmt.Errorf("criar a chave %s: %w", path, err)
	}
	if _, err := f.WriteString(hex.EncodeToString(k) + "\n"); err != nil {
		f.Close()
		return nil, err
	}
	if err := f.Sync(); err != nil {
		f.Close()
		return nil, err
	}
	return k, f.Close()
}

func parseKey(s string) ([]byte, error) {
	if k, err := hex.DecodeString(s); err == nil && len(k) == 32 {
		return k, nil
	}
	if k, err := base64.StdEncoding.DecodeString(s); err == nil && len(k) == 32 {
		return k, nil
	}
	return nil, errors.New("a chave precisa ser 32 bytes em hexadecimal (64 dígitos) ou base64")
}

// seal encrypts plain with AES-256-GCM; the nonce leads the result.
// aad binds the ciphertext to its row (an account's id), so a sealed value
// copied to another row does not open.
func seal(key, plain, aad []byte) ([]byte, error) {
	blk, err := aes.NewCipher(key)
	if err != nil {
		return nil, err
	}
	g, err := cipher.NewGCM(blk)
	if err != nil {
		return nil, err
	}
	nonce := make([]byte, g.NonceSize())
	if _, err := rand.Read(nonce); err != nil {
		return nil, err
	}
	return g.Seal(nonce, nonce, plain, aad), nil
}

// unseal opens what seal made.
func unseal(key, sealed, aad []byte) ([]byte, error) {
	blk, err := aes.NewCipher(key)
	if err != nil {
		return nil, err
	}
	g, err := cipher.NewGCM(blk)
	if err != nil {
		return nil, err
	}
	if len(sealed) < g.NonceSize() {
		return nil, errors.New("credenciais cifradas corrompidas")
	}
	p, err := g.Open(nil, sealed[:g.NonceSize()], sealed[g.NonceSize():], aad)
	if err != nil {
		return nil, errors.New("não foi possível abrir as credenciais cifradas (a chave mudou?)")
	}
	return p, nil
}

// lockDir takes an exclusive lock on the data folder, so two servers never
// share one database and one embedded sandbox.
func lockDir(dir string) (*os.File, error) {
	f, err := os.OpenFile(filepath.Join(dir, ".lock"), os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		return nil, fmt.Errorf("pasta de dados %s: %w", dir, err)
	}
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
		f.Close()
		return nil, fmt.Errorf("a pasta de dados %s já está em uso por outro \"remessa web\"", dir)
	}
	return f, nil
}
