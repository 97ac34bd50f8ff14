package charges

import (
	"context"
	"fmt"
	"net/http"
	"strconv"
	"time"

	"remessa/rules"
	"remessa/sandbox/auth"
	"remessa/sandbox/httpx"
)

func (m *Module) hCarnetCreate(w http.ResponseWriter, r *http.Request, p *auth.Principal) *Error {
	var req carnetReq
	if e := decode(r, &req); e != nil {
		return e
	}
	cn, e := m.buildCarnet(&req, p, m.base(r))
	if e != nil {
		return e
	}
	u := &update{now: cn.CreatedAt, carnet: cn}
	u.setCarnetStatus(cn, CarnetUpToDate, "Carnê criado")
	for _, pc := range cn.Parcels {
		u.setStatus(pc, StatusNew, "Cobrança criada", nil)
		u.setStatus(pc, StatusWaiting, "Parcela "+itoa(pc.Parcel)+" do carnê aguardando pagamento", nil)
	}
	if e := m.commitNew(r.Context(), u, nil); e != nil {
		return e
	}
	v := carnetView(cn, m.base(r), true)
	writeCarnet(w, &v)
	return nil
}

// buildCarnet validates a carnet request and builds the carnet with its
// parcels (slip codes, BR Codes and QR images included), not yet stored.
func (m *Module) buildCarnet(req *carnetReq, p *auth.Principal, base string) (*Carnet, *Error) {
	now := m.now()
	today := rules.Today(now)
	items, e := validItems(req.Items, "/items")
	if e != nil {
		return nil, e
	}
	if req.Customer == nil {
		return nil, required("/customer")
	}
	cust := *req.Customer
	if cust.Address != nil {
		a := *cust.Address
		cust.Address = &a
	}
	if cust.JuridicalPerson != nil {
		j := *cust.JuridicalPerson
		cust.JuridicalPerson = &j
	}
	if e := validCustomer(&cust, "/customer", forBillet, today); e != nil {
		return nil, e
	}
	first, e := validDue(req.ExpireAt, "/expire_at", today)
	if e != nil {
		return nil, e
	}
	if req.Repeats == nil {
		return nil, required("/repeats")
	}
	repeats := *req.Repeats
	if repeats < rules.MinCarnetRepeats {
		return nil, errf(CodeMinRepeats, "invalid_repeats", "O carnê deve ter no mínimo %d parcelas (recebido %d)", rules.MinCarnetRepeats, repeats)
	}
	if repeats > rules.MaxCarnetRepeats {
		return nil, errf(CodeMaxRepeats, "invalid_repeats", "O carnê pode ter no máximo %d parcelas (recebido %d)", rules.MaxCarnetRepeats, repeats)
	}
	cid, nurl, e := validMetadata(req.Metadata, "/metadata")
	if e != nil {
		return nil, e
	}
	conf, e := validConfig(req.Configurations, "/configurations", false)
	if e != nil {
		return nil, e
	}
	msg := ""
	if req.Message != nil {
		if e := textLen("/message", *req.Message, 0, rules.MaxCarnetMessage); e != nil {
			return nil, e
		}
		msg = *req.Message
	}
	disc, e := validDiscount(req.Discount, "/discount")
	if e != nil {
		return nil, e
	}
	cond, e := validCondDiscount(req.ConditionalDiscount, "/conditional_discount")
	if e != nil {
		return nil, e
	}
	if e := checkSplit(items, nil, p.PayeeCode); e != nil {
		return nil, e
	}
	if (disc != nil || cond != nil) && isSplit(items, nil) {
		return nil, errf(CodeDiscountSplit, "discount_not_allowed", "Não é permitido desconto em cobrança com repasses (marketplace)")
	}
	total := itemsTotal(items, nil)
	if total > maxSlipCents {
		return nil, invalid("/items", "O valor total dos itens (%s) excede o máximo de um boleto", rules.FormatBRL(total))
	}
	split := req.SplitItems != nil && *req.SplitItems
	n := int(repeats)
	values := make([]int64, n)
	for i := range values {
		if split {
			values[i] = total / int64(n)
			if i == 0 {
				values[i] += total % int64(n)
			}
		} else {
			values[i] = total
		}
		values[i] -= discountCents(disc, values[i])
		if disc != nil && values[i] <= 0 {
			return nil, invalid("/discount/value", "O desconto não pode ser maior ou igual ao valor da parcela")
		}
		if e := minTotal(values[i]); e != nil {
			e.Desc = fmt.Sprintf("Parcela %d: valor %s abaixo do mínimo de R$ 5,00", i+1, rules.FormatBRL(values[i]))
			return nil, e
		}
	}
	last := rules.AddMonthsClamped(first, n-1)
	if last.Sub(today) > maxDueDays*24*time.Hour {
		return nil, errf(CodeDueTooFar, "invalid_expire_at", "O vencimento da última parcela (%s) está longe demais", last.Format(dateLayout))
	}
	if cond != nil {
		until, _ := rules.ParseISODate(cond.UntilDate)
		if until.After(first) {
			return nil, invalid("/conditional_discount/until_date", "until_date deve ser igual ou anterior ao vencimento da primeira parcela %s", first.Format(dateLayout))
		}
	}
	cnID, err := m.ids.take(context.Background(), &m.ids.carnet, 1)
	if err != nil {
		m.log.Error().Err(err).Msg("charges: carnet id")
		return nil, errInternal
	}
	id0, err := m.ids.take(context.Background(), &m.ids.charge, n)
	if err != nil {
		m.log.Error().Err(err).Msg("charges: charge ids")
		return nil, errInternal
	}
	cn := &Carnet{ID: cnID, Account: p.AccountID, Repeats: n, SplitItems: split, CustomID: cid,
		NotificationURL: nurl, Items: items, Customer: cust, ExpireAt: first.Format(dateLayout), Configurations: conf,
		Message: msg, Discount: disc, ConditionalDiscount: cond, CreatedAt: now,
		NotifToken: notificationToken(), DocToken: carnetDocToken()}
	for i := 0; i < n; i++ {
		due := rules.AddMonthsClamped(first, i)
		id := id0 + int64(i)
		b, err := m.makeBillet(p.AccountID, id, due, values[i], base, p.Name)
		if err != nil {
			m.log.Error().Err(err).Int64("charge_id", id).Msg("build parcel slip")
			return nil, errInternal
		}
		b.Customer, b.Configurations, b.Message, b.Discount = cust, conf, msg, disc
		b.ConditionalDiscount = parcelCondDiscount(cond, i+1)
		cn.Parcels = append(cn.Parcels, &Charge{ID: id, Account: p.AccountID, CarnetID: cn.ID, Parcel: i + 1,
			Total: values[i], Items: items, CreatedAt: now, DocToken: parcelDocToken(cn.DocToken, i+1),
			Payment: &Payment{Method: MethodBillet, CreatedAt: now, Message: msg, Billet: b}})
		cn.Value += values[i]
	}
	return cn, nil
}

// parcelCondDiscount is the conditional discount parcel n of a carnet whose
// conditional_discount is cond gets: rules.CarnetParcelDiscount, the
// carnet's one until_date for every parcel (docs/discounts.md).
func parcelCondDiscount(cond *ConditionalDiscount, n int) *ConditionalDiscount {
	if cond == nil {
		return nil
	}
	until, err := rules.ParseISODate(cond.UntilDate)
	if err != nil {
		return nil
	}
	d := rules.CarnetParcelDiscount(&rules.SlipConditionalDiscount{Type: cond.Type, Value: cond.Value, Until: until}, n)
	return &ConditionalDiscount{Type: d.Type, Value: d.Value, UntilDate: rules.FormatISODate(d.Until)}
}

func (m *Module) hCarnetGet(w http.ResponseWriter, r *http.Request, p *auth.Principal) *Error {
	id, e := pathID(r, "id")
	if e != nil {
		return e
	}
	cn, e := m.getCarnet(r.Context(), p.AccountID, id)
	if e != nil {
		return e
	}
	v := carnetView(cn, m.base(r), false)
	writeCarnet(w, &v)
	return nil
}

func (m *Module) hCarnetMetadata(w http.ResponseWriter, r *http.Request, p *auth.Principal) *Error {
	var md metadataUpdate
	return m.carnetCode(w, r, p, md.reader(r), func(u *update, cn *Carnet) *Error {
		md.apply(u, &cn.CustomID, &cn.NotificationURL)
		return nil
	})
}

// parcelOf finds parcel {parcel} of cn.
func parcelOf(r *http.Request, cn *Carnet) (*Charge, *Error) {
	s := r.PathValue("parcel")
	n, err := strconv.Atoi(s)
	if err != nil || n < 1 {
		return nil, invalid("/parcel", "parcel deve ser um inteiro positivo (recebido %q)", truncate(s, 40))
	}
	if n > len(cn.Parcels) {
		return nil, parcelNotFound(s)
	}
	return cn.Parcels[n-1], nil
}

func parcelError(n int, format string, args ...any) *Error {
	return errf(CodeUpdateParcels, "update_parcels", "Parcela %d: %s", n, fmt.Sprintf(format, args...))
}

// checkParcelDue applies the rules of a parcel due-date change.
func checkParcelDue(pc *Charge, due, today time.Time) *Error {
	if pc.Status != StatusWaiting && pc.Status != StatusUnpaid {
		return parcelError(pc.Parcel, "somente parcelas com status [waiting] ou [unpaid] podem ter o vencimento alterado (status atual [%s])", pc.Status)
	}
	if !due.After(today) {
		return parcelError(pc.Parcel, "a nova data de vencimento %s deve ser posterior à data atual %s", due.Format(dateLayout), today.Format(dateLayout))
	}
	cur, _ := rules.ParseISODate(pc.Payment.Billet.ExpireAt)
	if due.Before(cur) {
		return parcelError(pc.Parcel, "a nova data de vencimento %s é anterior ao vencimento atual %s (não é possível antecipar)", due.Format(dateLayout), pc.Payment.Billet.ExpireAt)
	}
	if due.Sub(today) > maxDueDays*24*time.Hour {
		return parcelError(pc.Parcel, "a nova data de vencimento %s está longe demais", due.Format(dateLayout))
	}
	return nil
}

func (m *Module) hParcelUpdate(w http.ResponseWriter, r *http.Request, p *auth.Principal) *Error {
	var due time.Time
	read := func() *Error {
		var req expireReq
		if e := decode(r, &req); e != nil {
			return e
		}
		if req.ExpireAt == nil {
			return required("/expire_at")
		}
		var e *Error
		due, e = parseDate("/expire_at", *req.ExpireAt)
		return e
	}
	return m.carnetCode(w, r, p, read, func(u *update, cn *Carnet) *Error {
		pc, e := parcelOf(r, cn)
		if e != nil {
			return e
		}
		if e := checkParcelDue(pc, due, rules.Today(u.now)); e != nil {
			return e
		}
		return setDue(u, pc, due)
	})
}

func (m *Module) hParcelsUpdate(w http.ResponseWriter, r *http.Request, p *auth.Principal) *Error {
	id, e := pathID(r, "id")
	if e != nil {
		return e
	}
	var req parcelsReq
	if e := decode(r, &req); e != nil {
		return e
	}
	if req.Parcels == nil {
		return required("/parcels")
	}
	if len(req.Parcels) == 0 {
		return invalid("/parcels", "Informe ao menos uma parcela")
	}
	type change struct {
		n   int
		due time.Time
	}
	var todo []change
	for i, x := range req.Parcels {
		pp := fmt.Sprintf("/parcels/%d", i)
		if x.Parcel == nil {
			return required(pp + "/parcel")
		}
		if x.ExpireAt == nil {
			return required(pp + "/expire_at")
		}
		due, e := parseDate(pp+"/expire_at", *x.ExpireAt)
		if e != nil {
			return e
		}
		if *x.Parcel < 1 || *x.Parcel > rules.MaxCarnetRepeats {
			return errf(CodeUpdateParcels, "update_parcels", "Parcela %d: não existe neste carnê", *x.Parcel)
		}
		todo = append(todo, change{int(*x.Parcel), due})
	}
	_, e = m.mutateCarnet(r.Context(), p.AccountID, id, func(u *update, cn *Carnet) *Error {
		today := rules.Today(u.now)
		seen := map[int]bool{}
		for _, t := range todo {
			if seen[t.n] {
				return errf(CodeUpdateParcels, "update_parcels", "Parcela %d: informada mais de uma vez", t.n)
			}
			seen[t.n] = true
			if t.n > len(cn.Parcels) {
				return errf(CodeUpdateParcels, "update_parcels", "Parcela %d: não existe neste carnê", t.n)
			}
			if e := checkParcelDue(cn.Parcels[t.n-1], t.due, today); e != nil {
				return e
			}
		}
		for _, t := range todo {
			if e := setDue(u, cn.Parcels[t.n-1], t.due); e != nil {
				return e
			}
		}
		return nil
	})
	if e != nil {
		return e
	}
	httpx.V1Code(w)
	return nil
}

func carnetClosed(cn *Carnet) *Error {
	if cn.Status == CarnetFinished || cn.Status == CarnetCanceled {
		return errf(CodeCarnetFinished, "carnet_finished", "O carnê %d está encerrado (status [%s])", cn.ID, cn.Status)
	}
	return nil
}

func (m *Module) hCarnetCancel(w http.ResponseWriter, r *http.Request, p *auth.Principal) *Error {
	return m.carnetCode(w, r, p, nil, func(u *update, cn *Carnet) *Error {
		if e := carnetClosed(cn); e != nil {
			return e
		}
		n := 0
		for _, pc := range cn.Parcels {
			if cancelable(pc.Status) {
				u.setStatus(pc, StatusCanceled, "Parcela cancelada com o carnê", nil)
				n++
			}
		}
		if n == 0 {
			return errf(CodeCancel, "invalid_status", "Nenhuma parcela do carnê pode ser cancelada")
		}
		u.setCarnetStatus(cn, CarnetCanceled, "Carnê cancelado")
		return nil
	})
}

func (m *Module) hParcelCancel(w http.ResponseWriter, r *http.Request, p *auth.Principal) *Error {
	return m.carnetCode(w, r, p, nil, func(u *update, cn *Carnet) *Error {
		pc, e := parcelOf(r, cn)
		if e != nil {
			return e
		}
		if !cancelable(pc.Status) {
			return errf(CodeCancel, "invalid_status", "Somente parcelas com status [new], [waiting] ou [unpaid] podem ser canceladas (status atual [%s])", pc.Status)
		}
		u.setStatus(pc, StatusCanceled, "Parcela cancelada", nil)
		return nil
	})
}

func (m *Module) hCarnetResend(w http.ResponseWriter, r *http.Request, p *auth.Principal) *Error {
	var email string
	read := func() (e *Error) { email, e = validEmailBody(r); return e }
	return m.carnetCode(w, r, p, read, func(u *update, cn *Carnet) *Error {
		for _, pc := range cn.Parcels {
			if pc.Status == StatusWaiting {
				cn.History = append(cn.History, HistoryEntry{Message: "Carnê reenviado para " + email, CreatedAt: u.now})
				return u.resent(p.AccountID, Resend{Route: "carnet", Email: email, CarnetID: cn.ID})
			}
		}
		return errf(CodeResend, "invalid_status", "O carnê não tem parcelas com status [waiting] para reenviar")
	})
}

func (m *Module) hParcelResend(w http.ResponseWriter, r *http.Request, p *auth.Principal) *Error {
	var email string
	read := func() (e *Error) { email, e = validEmailBody(r); return e }
	return m.carnetCode(w, r, p, read, func(u *update, cn *Carnet) *Error {
		pc, e := parcelOf(r, cn)
		if e != nil {
			return e
		}
		if pc.Status != StatusWaiting {
			return errf(CodeResend, "invalid_status", "Somente parcelas com status [waiting] podem ser reenviadas (status atual [%s])", pc.Status)
		}
		u.history(pc, "Parcela reenviada para "+email)
		return u.resent(p.AccountID, Resend{Route: "parcel", Email: email, CarnetID: cn.ID, Parcel: pc.Parcel, ChargeID: pc.ID})
	})
}

func (m *Module) hCarnetHistory(w http.ResponseWriter, r *http.Request, p *auth.Principal) *Error {
	var desc string
	read := func() (e *Error) { desc, e = historyBody(r); return e }
	return m.carnetCode(w, r, p, read, func(u *update, cn *Carnet) *Error {
		cn.History = append(cn.History, HistoryEntry{Message: desc, CreatedAt: u.now})
		return nil
	})
}

func (m *Module) hCarnetSettle(w http.ResponseWriter, r *http.Request, p *auth.Principal) *Error {
	return m.carnetCode(w, r, p, nil, func(u *update, cn *Carnet) *Error {
		if e := carnetClosed(cn); e != nil {
			return e
		}
		n := 0
		for _, pc := range cn.Parcels {
			if pc.Status == StatusNew || pc.Status == StatusWaiting || pc.Status == StatusUnpaid {
				if e := settle(u, pc); e != nil {
					return e
				}
				n++
			}
		}
		if n == 0 {
			return errf(CodeSettle, "invalid_status", "Nenhuma parcela do carnê tem status [new], [waiting] ou [unpaid]")
		}
		return nil
	})
}

func (m *Module) hParcelSettle(w http.ResponseWriter, r *http.Request, p *auth.Principal) *Error {
	return m.carnetCode(w, r, p, nil, func(u *update, cn *Carnet) *Error {
		pc, e := parcelOf(r, cn)
		if e != nil {
			return e
		}
		return settle(u, pc)
	})
}
