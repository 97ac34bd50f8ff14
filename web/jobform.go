package web

import (
	"fmt"
	"net/url"
	"strconv"
	"strings"

	"go.yaml.in/yaml/v3"

	"remessa/pipeline/results"
)

// Settings is what the settings form says for a remessa: everything the
// job file can say for its kind that a billing desk sets by hand. It is
// turned into a job file (jobYAML) that the pipeline loads like any other,
// so the form is checked by the job loader itself and "Baixar job.yaml"
// gives the same file `remessa run` accepts.
type Settings struct {
	Name      string `json:"name"`
	OnInvalid string `json:"on_invalid"` // stop or skip
	// Due: "" = the sheet's due date column; else a date (10/02/2027) or a
	// relative date (dia 10 do próximo mês).
	Due             string `json:"due"`
	Repeats         string `json:"repeats"` // carnets, 2 to 12
	Fine            string `json:"fine"`    // 2%
	Interest        string `json:"interest"`
	Message         string `json:"message"`
	ItemName        string `json:"item_name"` // carnets and slips: item name (text or template)
	DiscountType    string `json:"discount_type"`
	DiscountValue   string `json:"discount_value"`
	DiscountDays    string `json:"discount_days"` // conditional discount: days before the due date
	WriteOffDays    string `json:"write_off_days"`
	NotificationURL string `json:"notification_url"`
	// cobv
	Chave        string `json:"chave"`
	Solicitacao  string `json:"solicitacao"`
	Validade     string `json:"validade"`
	Multa        string `json:"multa"`    // % (modalidade 2)
	Juros        string `json:"juros"`    // % ao mês (modalidade 3)
	Desconto     string `json:"desconto"` // R$ until DescontoDias before the due date (modalidade 1)
	DescontoDias string `json:"desconto_dias"`
	// Split recipients: carnets and slips by payee_code (marketplace),
	// cobv by Pix account (conta) with the favorecido's CPF or CNPJ.
	Split []SplitRecipient `json:"split,omitempty"`
}

// SplitRecipient is one row of the split table.
type SplitRecipient struct {
	Account  string `json:"account"`  // payee_code (charges) or conta (Pix)
	Document string `json:"document"` // Pix: CPF or CNPJ of the favorecido
	Type     string `json:"type"`     // percent or fixed
	Value    string `json:"value"`    // 10% or R$ 5,00
}

// maxSplitRows is how many recipient rows the form offers.
const maxSplitRows = 5

// defaultSettings are a new remessa's settings for kind.
func defaultSettings(kind results.Kind, name string) Settings {
	s := Settings{Name: name, OnInvalid: "stop"}
	switch kind {
	case results.Carnets:
		s.Repeats, s.Fine, s.Interest = "12", "2%", "0,033%"
	case results.Boletos:
		s.Fine, s.Interest = "2%", "0,033%"
	case results.Cobv:
		s.Validade, s.Solicitacao = "30", ""
	}
	return s
}

// settingsFromForm reads the settings form.
func settingsFromForm(f url.Values) Settings {
	g := func(k string) string { return strings.TrimSpace(f.Get(k)) }
	s := Settings{Name: g("name"), OnInvalid: g("on_invalid"), Due: g("due"), Repeats: g("repeats"), Fine: g("fine"),
		Interest: g("interest"), Message: strings.TrimSpace(strings.ReplaceAll(f.Get("message"), "\r\n", "\n")), ItemName: g("item_name"),
		DiscountType: g("discount_type"), DiscountValue: g("discount_value"), DiscountDays: g("discount_days"),
		WriteOffDays: g("write_off_days"), NotificationURL: g("notification_url"), Chave: g("chave"), Solicitacao: g("solicitacao"),
		Validade: g("validade"), Multa: g("multa"), Juros: g("juros"), Desconto: g("desconto"), DescontoDias: g("desconto_dias")}
	for i := 0; i < maxSplitRows; i++ {
		n := strconv.Itoa(i)
		r := SplitRecipient{Account: g("split_account_" + n), Document: g("split_document_" + n), Type: g("split_type_" + n), Value: g("split_value_" + n)}
		if r.Account != "" || r.Value != "" || r.Document != "" {
			s.Split = append(s.Split, r)
		}
	}
	return s
}

// SplitRows pads the split table to the form's rows.
func (s Settings) SplitRows() []SplitRecipient {
	rows := append([]SplitRecipient(nil), s.Split...)
	for len(rows) < maxSplitRows {
		rows = append(rows, SplitRecipient{Type: "percent"})
	}
	return rows
}

// jobFile mirrors the parts of the job file the form writes (pipeline's
// JobSpec holds parsed values; this holds the text a person would write).
type jobFile struct {
	Version   int         `yaml:"version"`
	Name      string      `yaml:"name,omitempty"`
	Service   string      `yaml:"service"`
	Input     jobInput    `yaml:"input"`
	Issue     yaml.Node   `yaml:"issue"`
	OnInvalid string      `yaml:"on_invalid,omitempty"`
	Reports   *jobReports `yaml:"reports,omitempty"`
}

type jobInput struct {
	File    string            `yaml:"file"`
	Sheet   string            `yaml:"sheet,omitempty"`
	Columns map[string]string `yaml:"columns,omitempty"`
}

type jobReports struct {
	Formats []string `yaml:"formats,omitempty"`
	Lang    string   `yaml:"lang,omitempty"`
}

// jobYAML writes the job file for kind with settings s over the input
// file (relative to the job) and the column choices (field -> header).
// The service is embedded: the account a run uses decides where it issues.
func jobYAML(kind results.Kind, s Settings, input, sheet string, columns map[string]string) ([]byte, error) {
	issue := map[string]any{}
	body := map[string]any{}
	set := func(k, v string) {
		if v != "" {
			body[k] = v
		}
	}
	money := func(v string) string { return v }
	switch kind {
	case results.Carnets, results.Boletos:
		if kind == results.Carnets {
			body["repeats"] = intOrText(s.Repeats)
			set("first_due", s.Due)
		} else {
			set("due", s.Due)
			if s.WriteOffDays != "" {
				body["days_to_write_off"] = intOrText(s.WriteOffDays)
			}
		}
		set("fine", s.Fine)
		set("interest_per_day", s.Interest)
		set("message", s.Message)
		set("notification_url", s.NotificationURL)
		if s.DiscountValue != "" {
			d := map[string]any{"type": s.DiscountType, "value": s.DiscountValue}
			if s.DiscountType == "" {
				d["type"] = "percentage"
			}
			if s.DiscountDays != "" {
				d["days_before_due"] = intOrText(s.DiscountDays)
				body["conditional_discount"] = d
			} else {
				body["discount"] = d
			}
		}
		if len(s.Split) > 0 || s.ItemName != "" {
			name := s.ItemName
			if name == "" {
				name = "{{ .description }}"
				if _, ok := columns["description"]; !ok {
					name = s.Name
				}
			}
			item := map[string]any{"name": name, "value": "{{ .value }}"}
			if len(s.Split) > 0 {
				mode := 2
				var reps []map[string]any
				for _, r := range s.Split {
					rep := map[string]any{"payee_code": r.Account}
					if r.Type == "fixed" {
						rep["fixed"] = money(r.Value)
						mode = 1
					} else {
						rep["percentage"] = r.Value
					}
					reps = append(reps, rep)
				}
				item["marketplace"] = map[string]any{"mode": mode, "repasses": reps}
			}
			body["items"] = []any{item}
		}
		if kind == results.Carnets {
			issue["carnets"] = body
		} else {
			issue["boletos"] = body
		}
	case results.Cobv:
		set("due", s.Due)
		if s.Validade != "" {
			body["validade_apos_vencimento"] = intOrText(s.Validade)
		}
		set("chave", s.Chave)
		if s.Chave == "" {
			body["chave"] = ""
		}
		set("solicitacao", s.Solicitacao)
		if s.Multa != "" {
			body["multa"] = map[string]any{"modalidade": 2, "valor": s.Multa}
		}
		if s.Juros != "" {
			body["juros"] = map[string]any{"modalidade": 3, "valor": s.Juros}
		}
		if s.Desconto != "" {
			days := s.DescontoDias
			if days == "" {
				days = "0"
			}
			body["desconto"] = map[string]any{"modalidade": 1, "datas": []any{map[string]any{"data": "-" + days + "d", "valor": s.Desconto}}}
		}
		if len(s.Split) > 0 {
			var reps []map[string]any
			mine := 100.0
			for _, r := range s.Split {
				rep := map[string]any{"tipo": "porcentagem", "valor": r.Value, "conta": r.Account}
				if r.Type == "fixed" {
					rep["tipo"] = "fixo"
				} else if p, err := parsePercent(r.Value); err == nil {
					mine -= p
				}
				if d := digitsOf(r.Document); len(d) == 11 {
					rep["cpf"] = r.Document
				} else if r.Document != "" {
					rep["cnpj"] = r.Document
				}
				reps = append(reps, rep)
			}
			body["split"] = map[string]any{"minha_parte": map[string]any{"tipo": "porcentagem", "valor": strings.ReplaceAll(strconv.FormatFloat(mine, 'f', -1, 64), ".", ",") + "%"},
				"repasses": reps}
		}
		issue["cobv"] = body
	default:
		return nil, fmt.Errorf("tipo de remessa desconhecido: %q", kind)
	}
	var node yaml.Node
	if err := node.Encode(issue); err != nil {
		return nil, err
	}
	jf := jobFile{Version: 1, Name: s.Name, Service: "embedded", Input: jobInput{File: input, Sheet: sheet, Columns: columns},
		Issue: node, OnInvalid: s.OnInvalid, Reports: &jobReports{Formats: []string{"xlsx", "html", "csv", "json"}, Lang: "pt"}}
	head := "# Gerado por remessa web. Confira com: remessa validate <este arquivo>\n"
	b, err := yaml.Marshal(&jf)
	if err != nil {
		return nil, err
	}
	return append([]byte(head), b...), nil
}

// intOrText keeps a number a number in the YAML (so the loader's type
// check sees what a person would write) and anything else as text (so the
// loader names what is wrong with it).
func intOrText(s string) any {
	if n, err := strconv.Atoi(s); err == nil {
		return n
	}
	return s
}

func parsePercent(s string) (float64, error) {
	s = strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(s), "%"))
	return strconv.ParseFloat(strings.ReplaceAll(s, ",", "."), 64)
}

func digitsOf(s string) string {
	var b strings.Builder
	for _, r := range s {
		if r >= '0' && r <= '9' {
			b.WriteRune(r)
		}
	}
	return b.String()
}

// fieldOfPointer maps a job problem's JSON pointer to the form field it
// is about ("" when it is about no field of the form).
func fieldOfPointer(ptr string) string {
	parts := strings.Split(strings.TrimPrefix(ptr, "/"), "/")
	if len(parts) == 0 {
		return ""
	}
	switch parts[0] {
	case "name":
		return "name"
	case "on_invalid":
		return "on_invalid"
	case "input":
		return "columns"
	case "issue":
	default:
		return ""
	}
	if len(parts) < 3 {
		return ""
	}
	switch k := parts[2]; k {
	case "repeats", "fine", "message", "notification_url", "chave", "solicitacao", "multa", "juros":
		return k
	case "first_due", "due":
		return "due"
	case "interest_per_day":
		return "interest"
	case "days_to_write_off":
		return "write_off_days"
	case "discount", "conditional_discount":
		return "discount_value"
	case "validade_apos_vencimento":
		return "validade"
	case "desconto":
		return "desconto"
	case "items", "split":
		if len(parts) > 3 && (parts[3] == "0" || k == "split") {
			return "split"
		}
		return "split"
	}
	return ""
}
