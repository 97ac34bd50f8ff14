package run

import (
	"encoding/json"

	"remessa/api"
	"remessa/internal/jsonscan"
)

// unmarshalLote decodes the answer of GET /v2/lotecobv/{id} into *l,
// which must be zero, as json.Unmarshal does. A batch's every poll
// answers with all of its items (1,000), and json.Unmarshal took about a
// microsecond an item; this reads the names the service writes in one
// pass with a jsonscan.Scanner (its strings substrings of one copy of the
// text) and leaves anything else (another name or one that differs in
// case, null, an item's problem, a list given twice, text the Scanner
// refuses) to json.Unmarshal, from a zero batch again
// (TestUnmarshalLote).
func unmarshalLote(b []byte, l *api.LoteCobV) error {
	s := jsonscan.NewShared(b)
	if readLote(&s, l) == nil && s.End() == nil {
		return nil
	}
	*l = api.LoteCobV{}
	return json.Unmarshal(b, l)
}

func readLote(s *jsonscan.Scanner, l *api.LoteCobV) error {
	return s.Object(func(name []byte) error {
		switch string(name) {
		case "id":
			return int64To(s, &l.ID)
		case "descricao":
			return strTo(s, &l.Descricao)
		case "criacao":
			return strTo(s, &l.Criacao)
		case "cobsv":
			if l.Cobsv != nil {
				return errRowSlow
			}
			l.Cobsv = make([]api.LoteCobVStatus, 0, 1000)
			return s.Array(func() error {
				l.Cobsv = append(l.Cobsv, api.LoteCobVStatus{})
				return readLoteItem(s, &l.Cobsv[len(l.Cobsv)-1])
			})
		}
		return errRowSlow
	})
}

func readLoteItem(s *jsonscan.Scanner, it *api.LoteCobVStatus) error {
	return s.Object(func(name []byte) error {
		switch string(name) {
		case "criacao":
			return strTo(s, &it.Criacao)
		case "txid":
			return strTo(s, &it.Txid)
		case "status":
			return strTo(s, &it.Status)
		}
		return errRowSlow // a problem (an item denied) among them
	})
}
