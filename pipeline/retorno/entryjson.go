package retorno

import (
	"strconv"

	"remessa/internal/jsonw"
)

// appendEntry appends e as json.Marshal writes it, byte for byte
// (TestAppendEntry): retornos.db keeps every entry of a retorno, and
// json.Marshal's reflection took a tenth of a 100,000-title retorno's
// CPU. Entries are read back by json.Unmarshal (eachStored).
func appendEntry(b []byte, e *Entry) []byte {
	str := func(b []byte, name, v string, omit bool) []byte {
		if omit && v == "" {
			return b
		}
		b = append(b, name...)
		return jsonw.AppendString(b, v)
	}
	num := func(b []byte, name string, v int64, omit bool) []byte {
		if omit && v == 0 {
			return b
		}
		b = append(b, name...)
		return strconv.AppendInt(b, v, 10)
	}
	b = str(b, `{"key":`, e.Key, false)
	b = str(b, `,"event":`, e.Event, false)
	b = str(b, `,"code":`, e.Code, false)
	if len(e.Motivos) > 0 {
		b = append(b, `,"motivos":[`...)
		for i, m := range e.Motivos {
			if i > 0 {
				b = append(b, ',')
			}
			b = jsonw.AppendString(b, m)
		}
		b = append(b, ']')
	}
	b = str(b, `,"text":`, e.Text, true)
	b = num(b, `,"row":`, int64(e.Row), false)
	b = num(b, `,"source_row":`, int64(e.SourceRow), false)
	b = num(b, `,"parcel":`, int64(e.Parcel), true)
	b = str(b, `,"seu_numero":`, e.SeuNumero, false)
	b = str(b, `,"uso_empresa":`, e.UsoEmpresa, true)
	b = str(b, `,"nosso_numero":`, e.NossoNumero, true)
	b = str(b, `,"erp_nosso_numero":`, e.ERPNosso, true)
	b = num(b, `,"charge_id":`, e.ChargeID, true)
	b = str(b, `,"txid":`, e.Txid, true)
	b = str(b, `,"payer":`, e.Payer, true)
	b = str(b, `,"payer_document":`, e.PayerDoc, true)
	b = str(b, `,"due":`, e.Due, true)
	b = num(b, `,"value_cents":`, e.Value, false)
	b = num(b, `,"paid_cents":`, e.Paid, true)
	b = num(b, `,"fine_interest_cents":`, e.FineInterest, true)
	b = num(b, `,"discount_cents":`, e.Discount, true)
	b = num(b, `,"abatimento_cents":`, e.Abatimento, true)
	b = num(b, `,"over_cents":`, e.Over, true)
	b = num(b, `,"short_cents":`, e.Short, true)
	b = num(b, `,"refunded_cents":`, e.Refunded, true)
	b = str(b, `,"method":`, e.Method, true)
	b = str(b, `,"occurred":`, e.Occurred, true)
	b = str(b, `,"credit":`, e.Credit, true)
	return append(b, '}')
}
