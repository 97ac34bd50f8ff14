package pix

import (
	"crypto/sha256"
	"encoding/hex"
	"math/bits"
	"strconv"
	"strings"
	"time"

	"remessa/rules"
)

// batchDeriver is (*charge).derive for the charges a batch creates
// (buildCharges): one account, one creation time, one host, consecutive
// loc ids. What is the same for all of them is computed once: the
// creation time's text, the recebedor's CNPJ, the merchant name, and the
// BR Code but for its location's last 32 characters (brTemplate). A
// charge it cannot derive that way (another time, a location of another
// shape) is derived by (*charge).derive. derive_batch_test.go compares
// both on many charges.
type batchDeriver struct {
	ai          accountInfo
	orderedFrom int64
	created     time.Time
	createdTS   string // ts(created)
	cnpj        string // rules.CleanDocument(ai.CNPJ)
	merchant    string // merchantName(ai.Name)
	acct        []byte // ai.ID + "/": the start of a location's hash input
	tpl         *brTemplate
}

func newBatchDeriver(ai accountInfo, orderedFrom int64, created time.Time) *batchDeriver {
	return &batchDeriver{ai: ai, orderedFrom: orderedFrom, created: created, createdTS: ts(created),
		cnpj: rules.CleanDocument(ai.CNPJ), merchant: merchantName(ai.Name), acct: []byte(ai.ID + "/")}
}

// derive is c.derive(d.ai, txid, d.orderedFrom).
func (d *batchDeriver) derive(c *charge, txid string) error {
	if c.Created != d.created {
		return c.derive(d.ai, txid, d.orderedFrom)
	}
	b := &c.Body
	b.Txid = txid
	b.Calendario.Criacao = d.createdTS
	loc := d.location(c.Host, c.Kind, c.LocID)
	b.Loc = &Loc{ID: c.LocID, Location: loc, TipoCob: c.Kind, Criacao: d.createdTS}
	b.Location = loc
	if c.Kind == kindCobV {
		b.Recebedor = &Pessoa{CNPJ: d.cnpj, Nome: d.ai.Name, Logradouro: recebedorLogradouro,
			Cidade: recebedorCidade, UF: recebedorUF, CEP: recebedorCEP}
	}
	code, err := d.brCode(loc)
	if err != nil {
		return c.derive(d.ai, txid, d.orderedFrom) // (the same error, worded by derive)
	}
	b.PixCopiaECola = code
	return nil
}

// location is locationFor(host, d.ai.ID, kind, locID, ordered) without
// fmt.
func (d *batchDeriver) location(host, kind string, locID int64) string {
	if d.orderedFrom <= 0 || locID < d.orderedFrom {
		return locationFor(host, d.ai.ID, kind, locID, false)
	}
	var in [96]byte
	h := sha256.Sum256(strconv.AppendInt(append(in[:0], d.acct...), locID, 10))
	var last [32]byte // %016x of the loc id, then 8 bytes of the hash in hex
	const digits = "0123456789abcdef"
	for k := range 16 {
		last[k] = digits[uint64(locID)>>(60-4*k)&0xF]
	}
	hex.Encode(last[16:], h[:8])
	var out strings.Builder // one allocation: the location itself
	out.Grow(len(host) + len("/v2/") + len(kind) + 1 + len(last))
	out.WriteString(host)
	out.WriteString("/v2/")
	out.WriteString(kind)
	out.WriteByte('/')
	out.Write(last[:])
	loc := out.String()
	if len(loc) > 77 {
		loc = loc[len(loc)-77:]
	}
	return loc
}

// brCode is the BR Code of a dynamic charge at loc (derive's), from the
// template of the batch's locations when loc has its shape.
func (d *batchDeriver) brCode(loc string) (string, error) {
	if t := d.tpl; t != nil && len(loc) == t.n && loc[:t.n-brVar] == t.head {
		return t.code(loc[t.n-brVar:]), nil
	}
	code, err := rules.BRCode{Dynamic: true, URL: loc, MerchantName: d.merchant, MerchantCity: merchantCity}.Encode()
	if err != nil {
		return "", err
	}
	d.tpl = newBRTemplate(loc, code)
	return code, nil
}

// brVar is how many of a location's last characters differ from one
// charge of a batch to the next (the hex digits after kind/).
const brVar = 32

// brTemplate is a dynamic BR Code (rules.BRCode.Encode) of the locations
// of n characters that start with head: the code is pre, the location's
// last brVar characters, post, then the CRC of all that, whose state
// after pre is crcPre. Nothing else in the code depends on the location:
// the URL's length and its "https://" are in head.
type brTemplate struct {
	n         int
	head      string
	pre, post string
	crcPre    uint16
	// The CRC over post from a state x is postLin(x) ^ crcPost0, postLin
	// being linear in x (GF(2)), tabulated by its high and low bytes: a
	// CRC without a final XOR is linear in the state it starts from.
	postHi, postLo [256]uint16
	crcPost0       uint16
}

// newBRTemplate is the template of code, the BR Code of loc; nil when
// code does not have the layout it expects (then every code is encoded
// by rules.BRCode).
func newBRTemplate(loc, code string) *brTemplate {
	if len(loc) < brVar || len(code) < 4 {
		return nil
	}
	url := loc
	if strings.HasPrefix(strings.ToLower(url), "https://") {
		url = url[len("https://"):]
	}
	// 00 02 01, 01 02 12, 26 LL (00 14 br.gov.bcb.pix, 25 ll URL), ...
	start := len("000201010212") + 4 + 4 + len("br.gov.bcb.pix") + 4
	end := start + len(url)
	if len(url) < brVar || len(url) > 99 || end > len(code)-4 || code[start:end] != url ||
		code[start-4:start] != "25"+strconv.Itoa(len(url)/10)+strconv.Itoa(len(url)%10) {
		return nil
	}
	t := &brTemplate{n: len(loc), head: loc[:len(loc)-brVar], pre: code[:end-brVar], post: code[end : len(code)-4]}
	t.crcPre = rules.CRC16Update(0xFFFF, t.pre)
	t.crcPost0 = rules.CRC16Update(0, t.post)
	// postLin of each of the 16 bits of the state, then of every byte
	// value as the XOR of its bits' (16 passes over post, not 512).
	var bit [16]uint16
	for j := range bit {
		bit[j] = rules.CRC16Update(1<<j, t.post) ^ t.crcPost0
	}
	for i := 1; i < 256; i++ {
		low := bits.TrailingZeros(uint(i))
		t.postLo[i] = t.postLo[i&(i-1)] ^ bit[low]
		t.postHi[i] = t.postHi[i&(i-1)] ^ bit[8+low]
	}
	if t.code(loc[len(loc)-brVar:]) != code {
		return nil
	}
	return t
}

// code is the BR Code of the location ending with tail (brVar
// characters).
func (t *brTemplate) code(tail string) string {
	x := rules.CRC16Update(t.crcPre, tail)
	crc := t.postHi[x>>8] ^ t.postLo[x&0xFF] ^ t.crcPost0 // rules.CRC16Update(x, t.post)
	// One allocation: the code itself.
	var b strings.Builder
	b.Grow(len(t.pre) + len(tail) + len(t.post) + 4)
	b.WriteString(t.pre)
	b.WriteString(tail)
	b.WriteString(t.post)
	const digits = "0123456789ABCDEF"
	b.Write([]byte{digits[crc>>12], digits[crc>>8&0xF], digits[crc>>4&0xF], digits[crc&0xF]})
	return b.String()
}
