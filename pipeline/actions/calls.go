package actions

// The calls an action makes, and how a call whose outcome is unknown is
// looked up before anything is sent again.

import (
	"context"
	"fmt"
	"strconv"

	"remessa/api"
	"remessa/pipeline/status"
	"remessa/rules"
)

func alreadyReason(kind string) string {
	switch kind {
	case Cancel:
		return "não se aplica: já cancelada"
	case Settle:
		return "não se aplica: já paga"
	case ChangeDueDate:
		return "não se aplica: já vence na nova data"
	case Abatimento:
		return "não se aplica: já tem esse abatimento"
	}
	return "não se aplica"
}

func target(it Item) string {
	switch it.Target {
	case TargetCobv:
		return it.Txid
	case TargetCharge:
		return strconv.FormatInt(it.ChargeID, 10)
	case TargetParcel:
		return fmt.Sprintf("%d/%d", it.CarnetID, it.Parcel)
	}
	return strconv.FormatInt(it.CarnetID, 10)
}

// call sends the item's one request.
func (e *executor) call(ctx context.Context, it Item) error {
	c := e.send
	switch it.Kind {
	case Cancel:
		switch it.Target {
		case TargetCarnet:
			return c.CancelCarnet(ctx, it.CarnetID)
		case TargetParcel:
			return c.CancelParcel(ctx, it.CarnetID, it.Parcel)
		case TargetCharge:
			return c.CancelCharge(ctx, it.ChargeID)
		case TargetCobv:
			_, err := c.PatchCobV(ctx, it.Txid, api.CobPatch{Status: "REMOVIDA_PELO_USUARIO_RECEBEDOR"})
			return err
		}
	case Settle:
		switch it.Target {
		case TargetCarnet:
			return c.SettleCarnet(ctx, it.CarnetID)
		case TargetParcel:
			return c.SettleParcel(ctx, it.CarnetID, it.Parcel)
		case TargetCharge:
			return c.SettleCharge(ctx, it.ChargeID)
		}
	case ChangeDueDate:
		switch it.Target {
		case TargetParcel:
			return c.UpdateParcel(ctx, it.CarnetID, it.Parcel, it.Charges[0].NewDue)
		case TargetParcels:
			ps := make([]api.ParcelDue, len(it.Charges))
			for i, ch := range it.Charges {
				ps[i] = api.ParcelDue{Parcel: ch.Parcel, ExpireAt: ch.NewDue}
			}
			return c.UpdateParcels(ctx, it.CarnetID, ps)
		case TargetCharge:
			return c.UpdateBillet(ctx, it.ChargeID, it.Charges[0].NewDue)
		case TargetCobv:
			_, err := c.PatchCobV(ctx, it.Txid, api.CobPatch{Calendario: &api.PixCalendario{DataDeVencimento: it.Charges[0].NewDue}})
			return err
		}
	case Abatimento:
		if it.Target == TargetCobv {
			_, err := c.PatchCobVAbatimento(ctx, it.Txid, it.Charges[0].NewRebate)
			return err
		}
	case Resend:
		switch it.Target {
		case TargetCarnet:
			return c.ResendCarnet(ctx, it.CarnetID, it.Email)
		case TargetParcel:
			return c.ResendParcel(ctx, it.CarnetID, it.Parcel, it.Email)
		case TargetCharge:
			return c.ResendBillet(ctx, it.ChargeID, it.Email)
		}
	}
	return fmt.Errorf("ação %s sobre %s não suportada", it.Kind, it.Target)
}

// look is what a lookup found.
type look struct {
	applied bool   // the item's change is in place
	reason  string // it no longer applies (and why)
	obs     []status.Observation
}

// chargeNow is one charge as the service shows it now.
type chargeNow struct {
	status, due string
	rebate      int64 // a cobv's abatimento in cents (0 none, -1 a percentage)
	obs         status.Observation
}

// lookup asks the service how the item's charges stand now.
func (e *executor) lookup(ctx context.Context, it Item) (look, error) {
	now := map[string]chargeNow{}
	switch it.Target {
	case TargetCarnet, TargetParcel, TargetParcels:
		cn, err := e.cl.GetCarnet(ctx, it.CarnetID)
		if err != nil {
			return look{}, err
		}
		for _, p := range cn.Charges {
			key := status.KeyOfCharge(p.ChargeID)
			o := status.ChargeObservation(&api.ChargeSummary{ID: p.ChargeID, Status: p.Status, Total: p.Value})
			now[key] = chargeNow{status: p.Status, due: p.ExpireAt, obs: o}
		}
	case TargetCharge:
		ch, err := e.cl.GetCharge(ctx, it.ChargeID)
		if err != nil {
			return look{}, err
		}
		due := ""
		if ch.Payment != nil && ch.Payment.BankingBillet != nil {
			due = ch.Payment.BankingBillet.ExpireAt
		}
		cs := &api.ChargeSummary{ID: ch.ChargeID, Status: ch.Status, Total: ch.Total}
		now[status.KeyOfCharge(ch.ChargeID)] = chargeNow{status: ch.Status, due: due, obs: status.ChargeObservation(cs)}
	case TargetCobv:
		cb, err := e.cl.GetCobV(ctx, it.Txid)
		if err != nil {
			return look{}, err
		}
		now[status.KeyOfCobv(it.Txid)] = chargeNow{status: cb.Status, due: cb.Calendario.DataDeVencimento, rebate: rebateOf(cb),
			obs: status.CobvObservation(it.Txid, cb.Status, cb.Pix)}
	}
	var lk look
	open, applied := 0, 0
	for _, ref := range it.Charges {
		cur, ok := now[ref.Key]
		if !ok {
			continue
		}
		o := cur.obs
		o.Key = ref.Key
		state := o.State
		switch {
		case it.Kind == ChangeDueDate && state == status.StateOpen && cur.due == ref.NewDue:
			applied++
			lk.obs = append(lk.obs, status.Observation{Key: ref.Key, Due: ref.NewDue})
			continue
		case it.Kind == ChangeDueDate && state == status.StateOpen:
			open++
		case it.Kind == Abatimento && state == status.StateOpen && cur.rebate == ref.NewRebate:
			applied++
			lk.obs = append(lk.obs, rebateObservation(ref))
			continue
		case it.Kind == Abatimento && state == status.StateOpen:
			open++
		case it.Kind == Cancel && state == status.StateCancelled, it.Kind == Settle && state == status.StateSettled:
			applied++
		case state == status.StateOpen:
			open++
		default:
			if lk.reason == "" {
				lk.reason = notApplicable(it.Kind, &status.Charge{State: state})
			}
		}
		lk.obs = append(lk.obs, o)
	}
	switch {
	case open > 0:
		lk.reason, lk.obs = "", nil // still to do: send it
	case applied > 0:
		lk.applied = true
	case lk.reason == "":
		lk.reason = "não se aplica: a cobrança não foi encontrada"
	}
	return lk, nil
}

// expected is the effect of an applied item when it could not be read
// back from the service.
func expected(it Item) []status.Observation {
	var obs []status.Observation
	for _, ref := range it.Charges {
		switch it.Kind {
		case ChangeDueDate:
			obs = append(obs, status.Observation{Key: ref.Key, Due: ref.NewDue})
		case Abatimento:
			obs = append(obs, rebateObservation(ref))
		case Cancel:
			st := "canceled"
			if ref.Txid != "" {
				st = "REMOVIDA_PELO_USUARIO_RECEBEDOR"
			}
			obs = append(obs, status.Observation{Key: ref.Key, Status: st, State: status.StateCancelled})
		case Settle:
			obs = append(obs, status.Observation{Key: ref.Key, Status: "settled", State: status.StateSettled, PaidCents: ref.ValueCents, Method: status.MethodManual})
		}
	}
	return obs
}

// rebateOf is a cobv's abatimento in cents: 0 none, -1 a percentage (or
// a value that does not read).
func rebateOf(cb *api.Cob) int64 {
	a := cb.Valor.Abatimento
	if a == nil {
		return 0
	}
	if a.Modalidade != 1 {
		return -1
	}
	n, err := rules.ParsePixAmount(a.ValorPerc)
	if err != nil {
		return -1
	}
	return n
}

// rebateObservation is the ledger's record of an abatimento item done.
func rebateObservation(ref ChargeRef) status.Observation {
	return status.Observation{Key: ref.Key, Rebate: &status.Rebate{Before: ref.RebateBefore, Cents: ref.NewRebate}}
}

// apply records observations in the source run's ledger.
func (e *executor) apply(ctx context.Context, obs []status.Observation) error {
	if len(obs) == 0 {
		return nil
	}
	e.lmu.Lock()
	defer e.lmu.Unlock()
	_, err := e.ledger.Apply(ctx, obs, e.seenAt(), "acao:"+e.meta.Kind)
	return err
}
