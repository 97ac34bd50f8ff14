package rules

import (
	"crypto/sha256"
	"encoding/binary"
	"fmt"
	"io"
	"math/bits"
	"regexp"
	"strconv"
	"strings"
	"time"
)

// EfiISPB is the ISPB of Efí S.A. (the CNPJ root of 09.089.356/0001-18).
const EfiISPB = "09089356"

var (
	reE2E     = regexp.MustCompile(`^E[0-9A-Z]{8}\d{12}[a-zA-Z0-9]{11}$`)
	reRtr     = regexp.MustCompile(`^D[0-9A-Z]{8}\d{12}[a-zA-Z0-9]{11}$`)
	reKeyPh   = regexp.MustCompile(`^\+[1-9][0-9]\d{1,14}$`)
	reKeyEm   = regexp.MustCompile("^[a-z0-9.!#$&'*+/=?^_`{|}~-]+@[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?(?:\\.[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?)*$")
	reCNPJKey = regexp.MustCompile(`^[0-9A-Z]{12}[0-9]{2}$`)
	reKeyEV   = regexp.MustCompile(`^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$`)
)

// ValidTxid reports whether s is a txid for cob/cobv: ^[a-zA-Z0-9]{26,35}$.
func ValidTxid(s string) bool { return len(s) >= 26 && len(s) <= 35 && isAlnum(s) }

const base62 = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"

// DeriveTxid returns a deterministic 35-character [0-9A-Za-z] txid: the
// SHA-256 of the parts (each length-prefixed, so ("ab","c") and ("a","bc")
// differ) written in base 62 and left-padded with '0'. 62^35 > 2^256, so
// the whole hash is kept.
func DeriveTxid(parts ...string) string {
	h := sha256.New()
	var buf [64]byte
	for _, p := range parts {
		b := strconv.AppendInt(buf[:0], int64(len(p)), 10)
		b = append(b, ':')
		h.Write(b)
		io.WriteString(h, p)
		h.Write([]byte{';'})
	}
	var sum [sha256.Size]byte
	h.Sum(sum[:0])
	// the hash as a 256-bit number in four 64-bit words, most significant
	// first, divided by 62 once per digit (a word at a time, carrying the
	// remainder: math/bits.Div64)
	var w [4]uint64
	for i := range w {
		w[i] = binary.BigEndian.Uint64(sum[i*8:])
	}
	out := make([]byte, 35)
	for i := 34; i >= 0; i-- {
		var rem uint64
		for k := range w {
			w[k], rem = bits.Div64(rem, w[k], 62)
		}
		out[i] = base62[rem]
	}
	return string(out)
}

// RunTxid returns the txid of row n (0-based) of a run: 28 characters of
// DeriveTxid(runID), the same for every row of the run, then n in 7
// base-62 digits. A run's txids sort in the order of its rows, so a
// service keeping them in a b-tree (the sandbox's SQLite index, a
// PostgreSQL one) writes a batch's 1,000 new keys into a few adjacent
// pages instead of 1,000 scattered ones. Rows past 62^7 (3.5 × 10^12)
// get DeriveTxid(runID, "row", n) instead: still deterministic and unique.
func RunTxid(runID string, n int) string { return NewRunTxids(runID).Txid(n) }

// RunTxids makes the txids of one run's rows (RunTxid), its prefix
// hashed once.
type RunTxids struct{ runID, prefix string }

// NewRunTxids returns the maker of run runID's txids.
func NewRunTxids(runID string) RunTxids {
	return RunTxids{runID: runID, prefix: DeriveTxid(runID)[:35-runTxidDigits]}
}

const runTxidDigits = 7

// Txid is RunTxid(runID, n) for the maker's run.
func (t RunTxids) Txid(n int) string {
	if n < 0 || n >= 3_521_614_606_208 { // 62^7
		return DeriveTxid(t.runID, "row", strconv.Itoa(n))
	}
	var b [35]byte
	copy(b[:], t.prefix)
	for i := 34; i >= 35-runTxidDigits; i-- {
		b[i] = base62[n%62]
		n /= 62
	}
	return string(b[:])
}

// ValidEndToEndID reports whether s is a Pix endToEndId: E + ISPB (8,
// [0-9A-Z]) + yyyyMMddHHmm (UTC) + 11 alphanumerics, with a real date.
func ValidEndToEndID(s string) bool { return reE2E.MatchString(s) && validIDTime(s) }

// ValidRtrID reports whether s is a Pix return id (rtrId): same layout as
// the endToEndId with prefix D.
func ValidRtrID(s string) bool { return reRtr.MatchString(s) && validIDTime(s) }

func validIDTime(s string) bool {
	_, err := time.Parse("200601021504", s[9:21])
	return err == nil
}

// NewEndToEndID builds an endToEndId (prefix 'E') or rtrId (prefix 'D'):
// prefix + ISPB + t in UTC as yyyyMMddHHmm + seq. seq is reduced to its
// alphanumeric characters and then left-padded with '0' or trimmed (keeping
// the rightmost characters) to exactly 11.
func NewEndToEndID(prefix byte, ispb string, t time.Time, seq string) string {
	var b strings.Builder
	for i := 0; i < len(seq); i++ {
		if isAlnum(seq[i : i+1]) {
			b.WriteByte(seq[i])
		}
	}
	q := b.String()
	if len(q) > 11 {
		q = q[len(q)-11:]
	}
	q = strings.Repeat("0", 11-len(q)) + q
	return string(prefix) + ispb + t.UTC().Format("200601021504") + q
}

// ValidDevolucaoID reports whether s is a devolução id chosen by the
// client: ^[a-zA-Z0-9]{1,35}$.
func ValidDevolucaoID(s string) bool { return len(s) >= 1 && len(s) <= 35 && isAlnum(s) }

// ValidIdEnvio reports whether s is a Pix send id (idEnvio):
// ^[a-zA-Z0-9]{1,35}$.
func ValidIdEnvio(s string) bool { return len(s) >= 1 && len(s) <= 35 && isAlnum(s) }

// KeyType is the type of a Pix (DICT) key.
type KeyType string

// Pix key types.
const (
	KeyCPF   KeyType = "cpf"
	KeyCNPJ  KeyType = "cnpj"
	KeyPhone KeyType = "phone"
	KeyEmail KeyType = "email"
	KeyEVP   KeyType = "evp"
)

// PixKeyType classifies key exactly as given (no normalisation) by the DICT
// formats: CPF 11 digits (check digits verified), CNPJ 14 characters
// [0-9A-Z] (check digits verified), phone E.164 (+55...), e-mail in
// lowercase, EVP a lowercase UUID; at most 77 characters. The error says
// why the key was refused.
func PixKeyType(key string) (KeyType, error) {
	switch {
	case key == "":
		return "", fmt.Errorf("chave Pix vazia")
	case len(key) > MaxPixKey:
		return "", fmt.Errorf("chave Pix %q: mais de %d caracteres", key, MaxPixKey)
	case reKeyEV.MatchString(key):
		return KeyEVP, nil
	case strings.HasPrefix(key, "+"):
		if !reKeyPh.MatchString(key) {
			return "", fmt.Errorf("chave Pix %q: telefone deve estar no formato E.164, como +5511987654321, sem espaços nem traços", key)
		}
		return KeyPhone, nil
	case strings.Contains(key, "@"):
		if !reKeyEm.MatchString(key) {
			return "", fmt.Errorf("chave Pix %q: e-mail inválido (use letras minúsculas)", key)
		}
		return KeyEmail, nil
	case len(key) == 11 && allDigits(key):
		if !ValidCPF(key) {
			return "", fmt.Errorf("chave Pix %q: CPF com dígitos verificadores inválidos", key)
		}
		return KeyCPF, nil
	case reCNPJKey.MatchString(key):
		if !ValidCNPJ(key) {
			return "", fmt.Errorf("chave Pix %q: CNPJ com dígitos verificadores inválidos", key)
		}
		return KeyCNPJ, nil
	case len(key) == 36 && strings.Count(key, "-") == 4:
		return "", fmt.Errorf("chave Pix %q: chave aleatória deve ser um UUID em letras minúsculas", key)
	}
	return "", fmt.Errorf("chave Pix %q: formato não reconhecido (CPF, CNPJ, telefone +55..., e-mail ou chave aleatória)", key)
}

// NormalizePixKey brings a key typed by a person into DICT form: trims
// spaces, lowercases e-mails and EVPs, strips spaces, dashes, dots and
// parentheses from phones (keeping the +), turns "(11) 98765-4321" into
// "+5511987654321", and strips masks from CPF/CNPJ (uppercasing a CNPJ).
// Eleven bare digits stay as they are (a CPF; a phone needs its + or
// parentheses). It does not validate; call PixKeyType on the result.
func NormalizePixKey(key string) string {
	k := strings.TrimSpace(key)
	switch {
	case strings.Contains(k, "@"):
		return strings.ToLower(k)
	case len(k) == 36 && strings.Count(k, "-") == 4:
		return strings.ToLower(k)
	case strings.HasPrefix(k, "+"):
		var b strings.Builder
		b.WriteByte('+')
		for _, r := range k[1:] {
			switch r {
			case ' ', '-', '.', '(', ')', '\u00a0':
				continue
			}
			b.WriteRune(r)
		}
		return b.String()
	}
	if strings.HasPrefix(k, "(") {
		// "(11) 98765-4321": a Brazilian phone typed with its DDD in parentheses.
		if p := CleanPhone(k); ValidPhone(p) {
			return "+55" + p
		}
	}
	c := CleanDocument(k)
	if len(c) == 11 || len(c) == 14 {
		return c
	}
	return k
}
