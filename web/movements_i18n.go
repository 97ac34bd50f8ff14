package web

// movementsDict holds the texts of the plan page's section on a CNAB
// remessa's movements (runpages.go): key -> {Portuguese, English}. init
// copies it into dict.
var movementsDict = map[string][2]string{
	"plan.mov.title":      {"Movimentos do arquivo", "The file's movements"},
	"plan.mov.intro":      {"%d título(s) do arquivo não são entradas: depois da emissão, cada um é aplicado à cobrança que a execução indicada emitiu (baixa, novo vencimento, abatimento).", "%d title(s) of the file are not entries: after the issuance, each is applied to the charge the run named issued (write-off, new due date, rebate)."},
	"plan.mov.movement":   {"Movimento", "Movement"},
	"plan.mov.run":        {"Execução que emitiu", "Run that issued"},
	"plan.mov.titles":     {"Títulos", "Titles"},
	"plan.mov.refused":    {"Recusados (nada será alterado): %d", "Refused (nothing will change): %d"},
	"plan.mov.title1":     {"título", "title"},
	"plan.mov.movement1":  {"movimento", "movement"},
	"plan.mov.issuebtn":   {"Emitir %d cobrança(s) e aplicar %d movimento(s)", "Issue %d charge(s) and apply %d movement(s)"},
	"plan.mov.typeprompt": {"Para confirmar, digite o número de cobranças a emitir mais o de movimentos a aplicar (%d)", "To confirm, type the number of charges to issue plus the movements to apply (%d)"},
	"plan.mov.typecount":  {"Digite %d (cobranças a emitir mais movimentos a aplicar) para confirmar.", "Type %d (charges to issue plus movements to apply) to confirm."},
}

func init() {
	for k, v := range movementsDict {
		dict[k] = v
	}
}
