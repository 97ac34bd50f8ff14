package pipeline

import (
	"errors"
	"fmt"
	"hash/maphash"
	"strconv"
	"strings"
	"testing"
	"time"
)

func civilDate(y int, m time.Month, d int) time.Time { return time.Date(y, m, d, 0, 0, 0, 0, time.UTC) }

func TestParseDateExpr(t *testing.T) {
	today := civilDate(2026, 11, 22)
	jan31 := civilDate(2027, 1, 31)
	cases := []struct {
		in    string
		today time.Time
		want  time.Time
	}{
		{"2027-02-10", today, civilDate(2027, 2, 10)},
		{"10/02/2027", today, civilDate(2027, 2, 10)},
		{"hoje", today, today},
		{"Today", today, today},
		{"amanhã", today, civilDate(2026, 11, 23)},
		{"+30d", today, civilDate(2026, 12, 22)},
		{"+ 2 semanas", today, civilDate(2026, 12, 6)},
		{"+1m", today, civilDate(2026, 12, 22)},
		{"+3 meses", today, civilDate(2027, 2, 22)},
		{"+1 month", jan31, civilDate(2027, 2, 28)},
		{"dia 10 do próximo mês", today, civilDate(2026, 12, 10)},
		{"Dia 10 do Proximo Mes", today, civilDate(2026, 12, 10)},
		{"dia 10 do mês que vem", today, civilDate(2026, 12, 10)},
		{"próximo mês dia 5", today, civilDate(2026, 12, 5)},
		{"day 10 of next month", today, civilDate(2026, 12, 10)},
		{"next month day 10", today, civilDate(2026, 12, 10)},
		{"dia 31 do próximo mês", jan31, civilDate(2027, 2, 28)},
		{"dia 30 deste mês", today, civilDate(2026, 11, 30)},
		{"day 25 of this month", today, civilDate(2026, 11, 25)},
		{"dia 5 daqui a 2 meses", today, civilDate(2027, 1, 5)},
		{"day 5 in 3 months", today, civilDate(2027, 2, 5)},
		{"dia 25", today, civilDate(2026, 11, 25)}, // still ahead this month
		{"dia 22", today, civilDate(2026, 12, 22)}, // today is the 22nd: next month
		{"day 10", today, civilDate(2026, 12, 10)},
		{"dia 31", civilDate(2026, 11, 30), civilDate(2026, 12, 31)}, // Nov 30 is the clamped 31st = today
	}
	for _, c := range cases {
		got, err := ParseDateExpr(c.in, c.today)
		if err != nil {
			t.Errorf("ParseDateExpr(%q): %v", c.in, err)
			continue
		}
		if !got.Equal(c.want) {
			t.Errorf("ParseDateExpr(%q, %s) = %s, want %s", c.in, c.today.Format("2006-01-02"), got.Format("2006-01-02"), c.want.Format("2006-01-02"))
		}
	}
	for _, bad := range []string{"", "amanhã de manhã", "dia 32 do próximo mês", "31/02/2027", "+d", "next year", "2027-13-01"} {
		if got, err := ParseDateExpr(bad, today); err == nil {
			t.Errorf("ParseDateExpr(%q) = %s, want an error", bad, got)
		}
	}
}

func TestInterpolation(t *testing.T) {
	env := map[string]string{"HOOK": "https://h.example.com/n", "EMPTY": ""}
	job := "version: 1\nname: \"custa $${HOME} ${NOME:Padrão}\"\ninput: {file: in.csv}\nissue:\n  carnets:\n    repeats: 3\n    notification_url: ${HOOK}\n    message: \"x${EMPTY}y\"\n"
	j, err := LoadBytes("job.yaml", "/tmp/job.yaml", []byte(job), testOpts(env))
	if err != nil {
		t.Fatal(err)
	}
	if j.Name != "custa ${HOME} Padrão" {
		t.Errorf("name = %q", j.Name)
	}
	if got := j.Spec.Issue.Carnets.NotificationURL.Raw; got != "https://h.example.com/n" {
		t.Errorf("notification_url = %q", got)
	}
	if got := j.Spec.Issue.Carnets.Message.Raw; got != "xy" {
		t.Errorf("message = %q (a defined empty variable is empty, not the default)", got)
	}

	_, err = LoadBytes("job.yaml", "/tmp/job.yaml", []byte("version: 1\ninput:\n  file: ${ARQUIVO}\nissue:\n  carnets:\n    repeats: ${PARCELAS}\n"), testOpts(nil))
	je, ok := err.(*JobError)
	if !ok || len(je.Problems) != 2 {
		t.Fatalf("want 2 problems, got %v", err)
	}
	for i, want := range []struct {
		line int
		name string
	}{{3, "ARQUIVO"}, {6, "PARCELAS"}} {
		p := je.Problems[i]
		if p.Code != "variavel_indefinida" || p.Line != want.line || !strings.Contains(p.Message, want.name) || !strings.Contains(p.MessageEN, want.name) {
			t.Errorf("problem %d = %+v, want variavel_indefinida for %s on line %d", i, p, want.name, want.line)
		}
	}
}

func TestHumanValuesInJob(t *testing.T) {
	job := `version: 1
input: {file: in.csv}
issue:
  carnets:
    repeats: 12
    first_due: 10/02/2027
    items: [{name: Mensalidade, value: "R$ 1.234,56"}]
    fine: 2%
    interest_per_day: 0,033%
    discount: {type: currency, value: "R$ 10,50"}
`
	j, err := LoadBytes("job.yaml", "/tmp/job.yaml", []byte(job), testOpts(nil))
	if err != nil {
		t.Fatal(err)
	}
	c := j.Spec.Issue.Carnets
	checks := []struct {
		name string
		got  any
		want any
	}{
		{"repeats", c.Repeats.info.parsed, int64(12)},
		{"first_due", c.FirstDue.info.parsed, civilDate(2027, 2, 10)},
		{"value", c.Items[0].Value.info.parsed, int64(123456)},
		{"fine", c.Fine.info.parsed, int64(200)},
		{"interest", c.InterestPerDay.info.parsed, int64(33)},
		{"discount", c.Discount.Value.info.parsed, pm{false, 1050}},
	}
	for _, ch := range checks {
		if ch.got != ch.want {
			t.Errorf("%s = %v, want %v", ch.name, ch.got, ch.want)
		}
	}
}

func TestSeenSet(t *testing.T) {
	s := newSeenSet(newSeed(), 5000)
	for i := 0; i < 5000; i++ {
		if first := s.add(strings.Repeat("k", i%7)+string(rune('a'+i%26))+itoa(i), i, i+2); first != 0 {
			t.Fatalf("key %d reported as seen at row %d", i, first)
		}
	}
	if first := s.add("k"+"b"+itoa(1), 9997, 9999); first != 3 {
		t.Errorf("duplicate first seen at %d, want row 3", first)
	}
}

func newSeed() maphash.Seed { return maphash.MakeSeed() }

func itoa(i int) string { return strconv.Itoa(i) }

func TestFieldOrdinals(t *testing.T) {
	ids := []string{FKey, FName, FDocument, FEmail, FPhone, FBirth, FStreet, FNumber, FNeighborhood, FZipcode, FCity, FState, FComplement, FCorporateName, FValue, FDueDate, FDescription, FTxid, FMessage}
	ords := []int{iKey, iName, iDocument, iEmail, iPhone, iBirth, iStreet, iNumber, iNeighborhood, iZipcode, iCity, iState, iComplement, iCorporateName, iValue, iDueDate, iDescription, iTxid, iMessage}
	if len(Catalogue) != numFields {
		t.Fatalf("%d catalogue fields, %d ordinals", len(Catalogue), numFields)
	}
	for k, id := range ids {
		if Catalogue[ords[k]].ID != id {
			t.Errorf("ordinal %d is %s, want %s", ords[k], Catalogue[ords[k]].ID, id)
		}
	}
}

func TestSecretsNotPrinted(t *testing.T) {
	env := map[string]string{"CID": "client-id-123", "CSEC": "super-secret-456"}
	job := "version: 1\nendpoint:\n  client_id: ${CID}\n  client_secret: ${CSEC}\ninput: {file: in.csv}\nissue:\n  boletos: {}\n"
	j, err := LoadBytes("job.yaml", "/tmp/job.yaml", []byte(job), testOpts(env))
	if err != nil {
		t.Fatal(err)
	}
	if j.Endpoint.ClientSecret != "super-secret-456" {
		t.Fatalf("secret not loaded")
	}
	for _, s := range []string{fmt.Sprintf("%v", j), fmt.Sprintf("%+v", *j), fmt.Sprintf("%#v", j.Endpoint)} {
		if strings.Contains(s, "super-secret-456") || strings.Contains(s, "client-id-123") {
			t.Errorf("credentials printed: %s", s)
		}
	}
	_, err = LoadBytes("job.yaml", "/tmp/job.yaml", []byte(strings.Replace(job, "${CSEC}", "hunter2", 1)), testOpts(env))
	if err == nil || strings.Contains(err.Error(), "hunter2") || !strings.Contains(err.Error(), "client_secret") {
		t.Errorf("literal secret: %v", err)
	}
}

func TestPixKeyMessage(t *testing.T) {
	_, le := pPixKey("não é chave")
	if le == nil || le.code != "chave_pix_invalida" {
		t.Fatalf("got %+v", le)
	}
	if want := `chave Pix "não é chave" inválida: formato não reconhecido`; !strings.HasPrefix(le.pt, want) || strings.Count(le.pt, "chave Pix") != 1 {
		t.Errorf("pt %q, want it to start %q and name the key once", le.pt, want)
	}
	if !strings.HasPrefix(le.en, `invalid Pix key "não é chave": use a CPF`) || strings.Contains(le.en, "formato") {
		t.Errorf("en %q: want English only", le.en)
	}
	if v, le := pPixKey(" Financeiro@Example.com "); le != nil || v != "financeiro@example.com" {
		t.Errorf("valid key: %v %+v", v, le)
	}
}

func TestSplitKeyHint(t *testing.T) {
	job := "version: 1\ninput: {file: in.csv}\nissue:\n  carnets:\n    repeats: 3\n    split: {mode: 2}\n"
	_, err := LoadBytes("job.yaml", "/tmp/job.yaml", []byte(job), testOpts(nil))
	var je *JobError
	if !errors.As(err, &je) || len(je.Problems) != 1 {
		t.Fatalf("err %v", err)
	}
	p := je.Problems[0]
	if p.Code != "chave_desconhecida" || p.Line != 6 || !strings.Contains(p.Message, "items[].marketplace") || !strings.Contains(p.MessageEN, "items[].marketplace") {
		t.Errorf("problem %+v", p)
	}
}
