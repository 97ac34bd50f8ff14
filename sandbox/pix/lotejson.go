package pix

import (
	"encoding/json"
	"time"

	"remessa/internal/jsonw"
)

// marshalLote is json.Marshal(l) (the batches' cache encodes them with
// encoding/json) written by hand for a batch whose items carry no
// problema, request or revision (a batch its PUT created whole), the
// items' creation time written once when they share it; any other batch
// goes through encoding/json. lotejson_test.go compares both.
func marshalLote(l *lote) ([]byte, error) {
	if b, ok := appendLote(make([]byte, 0, 128+len(l.Descricao)+len(l.Host)+128*len(l.Items)), l); ok {
		return b, nil
	}
	return json.Marshal(l)
}

// appendLote appends l as encoding/json writes it; false when
// encoding/json must (see marshalLote).
func appendLote(b []byte, l *lote) ([]byte, bool) {
	if l == nil {
		return b, false
	}
	ok := true
	b = append(b, `{"id":`...)
	b = jsonw.AppendString(b, l.ID)
	if l.Descricao != "" {
		b = append(b, `,"descricao":`...)
		b = jsonw.AppendString(b, l.Descricao)
	}
	b = append(b, `,"created":`...)
	if b, ok = jsonw.AppendTime(b, l.Created); !ok {
		return b, false
	}
	b = append(b, `,"host":`...)
	b = jsonw.AppendString(b, l.Host)
	if l.Items == nil {
		return append(b, `,"items":null}`...), true
	}
	b = append(b, `,"items":[`...)
	var lastT time.Time
	var lastText []byte // lastT written (with its quotes)
	for i, it := range l.Items {
		if it == nil || it.Problema != nil || len(it.Req) > 0 || len(it.Patch) > 0 {
			return b, false
		}
		if i > 0 {
			b = append(b, ',')
		}
		b = append(b, `{"txid":`...)
		b = jsonw.AppendString(b, it.Txid)
		b = append(b, `,"status":`...)
		b = jsonw.AppendString(b, it.Status)
		b = append(b, `,"criacao":`...)
		if lastText == nil || it.Criacao != lastT {
			n := len(b)
			if b, ok = jsonw.AppendTime(b, it.Criacao); !ok {
				return b, false
			}
			lastT, lastText = it.Criacao, b[n:len(b):len(b)]
		} else {
			b = append(b, lastText...)
		}
		if it.Dev != "" {
			b = append(b, `,"dev":`...)
			b = jsonw.AppendString(b, it.Dev)
		}
		if it.Op != "" {
			b = append(b, `,"op":`...)
			b = jsonw.AppendString(b, it.Op)
		}
		b = append(b, '}')
	}
	return append(b, "]}"...), true
}
