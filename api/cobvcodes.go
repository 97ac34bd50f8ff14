package api

import (
	"encoding/json"
	"errors"
	"strings"

	"remessa/internal/jsonscan"
)

// A page of GET /v2/cobv read in one pass for ListCobVCodes: a batch's
// listing is 1,000 charges of about 1 KB each, of which the run keeps five
// strings, and encoding/json reads it twice (it checks the whole text,
// then decodes it, skipping what it does not keep with the same checks).
// decodeCobVCodes reads exactly what json.Unmarshal reads into a
// CobVCodePage, with a jsonscan.Scanner (which checks the text as it goes
// and decodes strings as encoding/json does); this file holds only the
// mapping of members to fields. Anything it does not read the same way
// for certain (a key that differs only in case or holds an escape, a
// member repeated where decoding merges, null or a value of another type,
// nesting deeper than jsonscan.MaxDepth) is an error, and the caller
// decodes the answer with encoding/json then (TestDecodeCobVCodes,
// FuzzDecodeCobVCodes).

var errCodesSlow = errors.New("api: página de cobv a decodificar por encoding/json")

// decodeCobVCodes decodes b into p as json.Unmarshal would, or fails.
func decodeCobVCodes(b []byte, p *CobVCodePage) error {
	s := jsonscan.New(b)
	if err := readCodesPage(&s, p); err != nil {
		return err
	}
	return s.End()
}

// other reads a member the reader does not keep, after checking that
// encoding/json would not match its key with one of names (which the
// reader matches byte for byte) otherwise: by case or Unicode folding.
func other(s *jsonscan.Scanner, key []byte, names ...string) error {
	for _, c := range key {
		if c >= 0x80 {
			return errCodesSlow
		}
	}
	for _, n := range names {
		if len(n) == len(key) && strings.EqualFold(string(key), n) {
			return errCodesSlow
		}
	}
	return s.Skip()
}

// text reads a string value into *dst (null or another type is an error).
func text(s *jsonscan.Scanner, dst *string) error {
	v, err := s.Str()
	*dst = v
	return err
}

// readCodesPage reads the page.
func readCodesPage(s *jsonscan.Scanner, p *CobVCodePage) error {
	seenPar, seenCobs := false, false
	return s.Object(func(k []byte) error {
		switch string(k) {
		case "parametros":
			if seenPar {
				return errCodesSlow
			}
			seenPar = true
			v, err := s.Value()
			if err != nil {
				return err
			}
			return json.Unmarshal(v, &p.Parametros)
		case "cobs":
			if seenCobs || s.Peek() != '[' {
				return errCodesSlow // null, another type or repeated: encoding/json
			}
			seenCobs = true
			// As many as the page says it holds (the sandbox writes
			// parametros first), bounded by what the text can hold: [] is
			// an empty list, not nil.
			n := min(max(p.Parametros.Paginacao.ItensPorPagina, 0), (len(s.Rest())+31)/32)
			p.Cobs = make([]CobVCode, 0, n)
			return s.Array(func() error {
				p.Cobs = append(p.Cobs, CobVCode{})
				return readCodesCob(s, &p.Cobs[len(p.Cobs)-1])
			})
		}
		return other(s, k, "parametros", "cobs")
	})
}

// readCodesCob reads one charge of the page.
func readCodesCob(s *jsonscan.Scanner, c *CobVCode) error {
	return s.Object(func(k []byte) error {
		switch string(k) {
		case "txid":
			return text(s, &c.Txid)
		case "location":
			return text(s, &c.Location)
		case "pixCopiaECola":
			return text(s, &c.PixCopiaECola)
		case "calendario":
			return s.Object(func(k []byte) error {
				if string(k) == "dataDeVencimento" {
					return text(s, &c.Calendario.DataDeVencimento)
				}
				return other(s, k, "dataDeVencimento")
			})
		case "loc":
			if s.Peek() != '{' {
				return errCodesSlow // null: encoding/json
			}
			if c.Loc == nil {
				c.Loc = &struct {
					Location string `json:"location"`
				}{}
			}
			return s.Object(func(k []byte) error {
				if string(k) == "location" {
					return text(s, &c.Loc.Location)
				}
				return other(s, k, "location")
			})
		}
		return other(s, k, "txid", "location", "pixCopiaECola", "calendario", "loc")
	})
}
