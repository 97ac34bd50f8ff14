package rules

import (
	"fmt"
	"strconv"
	"strings"
	"unicode"

	"golang.org/x/text/unicode/norm"
)

// pixGUI is the globally unique identifier of the Pix arrangement in
// template 26 (compared case-insensitively when parsing).
const pixGUI = "br.gov.bcb.pix"

// BRCode is a Pix BR Code ("copia e cola" / QR payload), static or dynamic.
//
// Static codes carry Key (26-01), an optional Info (26-02), an optional
// AmountCents (54) and Txid (62-05, up to 25 alphanumerics; empty means
// "***"). Dynamic codes carry URL (26-25, the payload location without
// scheme), 01=12 and 62-05 "***"; they never carry 54.
type BRCode struct {
	Key, Info, URL, MerchantName, MerchantCity, PostalCode, Txid string
	AmountCents                                                  int64
	Dynamic                                                      bool
}

// CRC16 returns the CRC-16/CCITT-FALSE (poly 0x1021, init 0xFFFF, no
// reflection, no final XOR) of s as 4 uppercase hex digits.
func CRC16(s string) string {
	crc := CRC16Update(0xFFFF, s)
	const hex = "0123456789ABCDEF"
	return string([]byte{hex[crc>>12], hex[crc>>8&0xF], hex[crc>>4&0xF], hex[crc&0xF]})
}

// CRC16Update continues CRC16's CRC from crc over s: CRC16Update(0xFFFF, a+b)
// is CRC16Update(CRC16Update(0xFFFF, a), b).
func CRC16Update(crc uint16, s string) uint16 {
	for i := 0; i < len(s); i++ {
		crc = crc<<8 ^ crcTable[byte(crc>>8)^s[i]]
	}
	return crc
}

var crcTable = func() (t [256]uint16) {
	for i := range 256 {
		c := uint16(i) << 8
		for range 8 {
			if c&0x8000 != 0 {
				c = c<<1 ^ 0x1021
			} else {
				c <<= 1
			}
		}
		t[i] = c
	}
	return t
}()

// asciiText strips accents (NFD, combining marks dropped) and reports an
// error naming the field when something non-printable-ASCII remains.
func asciiText(field, v string) (string, error) {
	plain := true
	for i := 0; i < len(v); i++ {
		if v[i] < 0x20 || v[i] > 0x7E {
			plain = false
			break
		}
	}
	if plain {
		return v, nil
	}
	var b strings.Builder
	for _, r := range norm.NFD.String(v) {
		if unicode.Is(unicode.Mn, r) {
			continue
		}
		if r < 0x20 || r > 0x7E {
			return "", fmt.Errorf("BR Code: campo %s %q contém caractere %q sem equivalente ASCII", field, v, r)
		}
		b.WriteRune(r)
	}
	return b.String(), nil
}

func tlv(id, v string) string {
	n := len(v)
	return id + string([]byte{byte('0' + n/10%10), byte('0' + n%10)}) + v
}

func isAlnum(s string) bool {
	for i := 0; i < len(s); i++ {
		if !isAlnumByte(s[i]) {
			return false
		}
	}
	return true
}

// Encode renders the BR Code: IDs in ascending order, CRC (63) last.
// Merchant name and city are reduced to ASCII (accents stripped). Length
// limits are enforced: 59 up to 25, 60 up to 15, template 26 up to 99, URL
// up to 77, key up to 77, 62-05 txid up to 25 alphanumerics. The error
// names the field and the value.
func (b BRCode) Encode() (string, error) {
	name, err := asciiText("59 (nome do recebedor)", b.MerchantName)
	if err != nil {
		return "", err
	}
	city, err := asciiText("60 (cidade)", b.MerchantCity)
	if err != nil {
		return "", err
	}
	if name == "" || len(name) > 25 {
		return "", fmt.Errorf("BR Code: campo 59 (nome do recebedor) %q deve ter de 1 a 25 caracteres, tem %d", name, len(name))
	}
	if city == "" || len(city) > 15 {
		return "", fmt.Errorf("BR Code: campo 60 (cidade) %q deve ter de 1 a 15 caracteres, tem %d", city, len(city))
	}
	var acct string
	if b.Dynamic {
		url := b.URL
		if strings.HasPrefix(strings.ToLower(url), "https://") {
			url = url[len("https://"):]
		}
		if url == "" || len(url) > 77 {
			return "", fmt.Errorf("BR Code: campo 26-25 (URL) %q deve ter de 1 a 77 caracteres, sem https://", b.URL)
		}
		if _, err := asciiText("26-25 (URL)", url); err != nil {
			return "", err
		}
		if b.AmountCents != 0 {
			return "", fmt.Errorf("BR Code dinâmico: campo 54 (valor) %s não é permitido; o valor vai no payload JSON", FormatPixAmount(b.AmountCents))
		}
		if b.Key != "" || b.Info != "" {
			return "", fmt.Errorf("BR Code dinâmico: campos 26-01 (chave) %q e 26-02 (informação) %q não são permitidos; a chave vai no payload JSON", b.Key, b.Info)
		}
		if b.Txid != "" && b.Txid != "***" {
			return "", fmt.Errorf("BR Code dinâmico: campo 62-05 (txid) %q não é permitido; o dinâmico usa ***", b.Txid)
		}
		acct = tlv("00", pixGUI) + tlv("25", url)
	} else {
		if b.URL != "" {
			return "", fmt.Errorf("BR Code estático: campo 26-25 (URL) %q só existe no dinâmico (Dynamic)", b.URL)
		}
		if b.Key == "" || len(b.Key) > MaxPixKey {
			return "", fmt.Errorf("BR Code: campo 26-01 (chave) %q deve ter de 1 a %d caracteres", b.Key, MaxPixKey)
		}
		if _, err := asciiText("26-01 (chave)", b.Key); err != nil {
			return "", err
		}
		acct = tlv("00", pixGUI) + tlv("01", b.Key)
		if b.Info != "" {
			info, err := asciiText("26-02 (informação adicional)", b.Info)
			if err != nil {
				return "", err
			}
			acct += tlv("02", info)
		}
	}
	if len(acct) > 99 {
		return "", fmt.Errorf("BR Code: campo 26 (conta do recebedor) tem %d caracteres, máximo 99 (chave %q, informação %q)", len(acct), b.Key, b.Info)
	}
	txid := "***"
	if !b.Dynamic && b.Txid != "" && b.Txid != "***" {
		if len(b.Txid) > 25 || !isAlnum(b.Txid) {
			return "", fmt.Errorf("BR Code: campo 62-05 (txid) %q deve ter até 25 caracteres alfanuméricos", b.Txid)
		}
		txid = b.Txid
	}
	var s strings.Builder
	s.WriteString(tlv("00", "01"))
	if b.Dynamic {
		s.WriteString(tlv("01", "12"))
	}
	s.WriteString(tlv("26", acct))
	s.WriteString(tlv("52", "0000"))
	s.WriteString(tlv("53", "986"))
	if b.AmountCents < 0 {
		return "", fmt.Errorf("BR Code: campo 54 (valor) %d centavos é negativo", b.AmountCents)
	}
	if b.AmountCents > 0 {
		amt := FormatPixAmount(b.AmountCents)
		if len(amt) > 13 {
			return "", fmt.Errorf("BR Code: campo 54 (valor) %q tem mais de 13 caracteres", amt)
		}
		s.WriteString(tlv("54", amt))
	}
	s.WriteString(tlv("58", "BR"))
	s.WriteString(tlv("59", name))
	s.WriteString(tlv("60", city))
	if b.PostalCode != "" {
		cep := strings.ReplaceAll(b.PostalCode, "-", "")
		if len(cep) != 8 || !allDigits(cep) {
			return "", fmt.Errorf("BR Code: campo 61 (CEP) %q deve ter 8 dígitos", b.PostalCode)
		}
		s.WriteString(tlv("61", cep))
	}
	s.WriteString(tlv("62", tlv("05", txid)))
	s.WriteString("6304")
	out := s.String()
	return out + CRC16(out), nil
}

type tlvItem struct {
	id, val string
}

func parseTLV(s, where string) ([]tlvItem, error) {
	var items []tlvItem
	for i := 0; i < len(s); {
		if len(s)-i < 4 {
			return nil, fmt.Errorf("BR Code: %s: objeto incompleto na posição %d", where, i+1)
		}
		id, ls := s[i:i+2], s[i+2:i+4]
		if !allDigits(id) || !allDigits(ls) {
			return nil, fmt.Errorf("BR Code: %s: ID/tamanho %q inválido na posição %d", where, s[i:i+4], i+1)
		}
		n, _ := strconv.Atoi(ls)
		if n == 0 {
			return nil, fmt.Errorf("BR Code: %s: objeto %s com tamanho 00 na posição %d", where, id, i+1)
		}
		if i+4+n > len(s) {
			return nil, fmt.Errorf("BR Code: %s: objeto %s declara %d caracteres mas restam %d", where, id, n, len(s)-i-4)
		}
		if len(items) > 0 && id <= items[len(items)-1].id {
			return nil, fmt.Errorf("BR Code: %s: objeto %s fora de ordem ou repetido (depois de %s)", where, id, items[len(items)-1].id)
		}
		items = append(items, tlvItem{id, s[i+4 : i+4+n]})
		i += 4 + n
	}
	return items, nil
}

// ParseBRCode parses a Pix BR Code, checking the TLV structure (ascending
// IDs, lengths), the CRC (which must be the last object), the payload
// format indicator, the Pix GUI (case-insensitive) and the currency.
func ParseBRCode(s string) (BRCode, error) {
	var b BRCode
	for i := 0; i < len(s); i++ {
		if s[i] < 0x20 || s[i] > 0x7E {
			return b, fmt.Errorf("BR Code: caractere não ASCII na posição %d", i+1)
		}
	}
	n := len(s)
	if n < 8 || s[n-8:n-4] != "6304" {
		return b, fmt.Errorf("BR Code: o último objeto deve ser o CRC (6304XXXX)")
	}
	if got, want := strings.ToUpper(s[n-4:]), CRC16(s[:n-4]); got != want {
		return b, fmt.Errorf("BR Code: CRC %s não confere, esperado %s", s[n-4:], want)
	}
	items, err := parseTLV(s[:n-8], "raiz")
	if err != nil {
		return b, err
	}
	if len(items) == 0 || items[0].id != "00" || items[0].val != "01" {
		return b, fmt.Errorf("BR Code: o primeiro objeto deve ser 00 = 01")
	}
	var sawPix, saw58, saw53 bool
	for _, it := range items {
		switch it.id {
		case "01":
			if it.val != "11" && it.val != "12" {
				return b, fmt.Errorf("BR Code: objeto 01 %q deve ser 11 ou 12", it.val)
			}
		case "53":
			if it.val != "986" {
				return b, fmt.Errorf("BR Code: moeda (53) %q, esperado 986", it.val)
			}
			saw53 = true
		case "54":
			if len(it.val) > 13 {
				return b, fmt.Errorf("BR Code: valor (54) %q tem mais de 13 caracteres", it.val)
			}
			v, err := ParseDecimal(it.val, 2)
			if err != nil || v < 0 || it.val[0] == '+' || it.val[0] == '-' {
				return b, fmt.Errorf("BR Code: valor (54) %q inválido", it.val)
			}
			b.AmountCents = v
		case "58":
			saw58 = true
		case "59":
			b.MerchantName = it.val
		case "60":
			b.MerchantCity = it.val
		case "61":
			b.PostalCode = it.val
		case "62":
			sub, err := parseTLV(it.val, "objeto 62")
			if err != nil {
				return b, err
			}
			for _, x := range sub {
				if x.id == "05" && x.val != "***" {
					b.Txid = x.val
				}
			}
		default:
			if it.id >= "26" && it.id <= "51" {
				sub, err := parseTLV(it.val, "objeto "+it.id)
				if err != nil {
					return b, err
				}
				if len(sub) == 0 || sub[0].id != "00" || !strings.EqualFold(sub[0].val, pixGUI) {
					continue // another arrangement
				}
				if sawPix {
					return b, fmt.Errorf("BR Code: mais de um objeto com GUI %s", pixGUI)
				}
				sawPix = true
				for _, x := range sub {
					switch x.id {
					case "01":
						b.Key = x.val
					case "02":
						b.Info = x.val
					case "25":
						b.URL = x.val
					}
				}
			}
		}
	}
	switch {
	case !sawPix:
		return b, fmt.Errorf("BR Code: nenhum objeto de conta com GUI %s", pixGUI)
	case b.Key == "" && b.URL == "":
		return b, fmt.Errorf("BR Code: objeto de conta Pix sem chave (01) nem URL (25)")
	case !saw53:
		return b, fmt.Errorf("BR Code: moeda (53) ausente")
	case !saw58:
		return b, fmt.Errorf("BR Code: país (58) ausente")
	case b.MerchantName == "":
		return b, fmt.Errorf("BR Code: nome do recebedor (59) ausente")
	case b.MerchantCity == "":
		return b, fmt.Errorf("BR Code: cidade (60) ausente")
	}
	b.Dynamic = b.URL != ""
	return b, nil
}
