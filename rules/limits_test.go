package rules

import "testing"

// Values from service-spec "Limits" and real-service §1.6, §1.8, §2.2, §2.6.
func TestLimits(t *testing.T) {
	cases := map[string][2]int{
		"MaxBatchItems":           {MaxBatchItems, 1000},
		"MaxSlipMessageLines":     {MaxSlipMessageLines, 4},
		"MaxSlipMessageLine":      {MaxSlipMessageLine, 100},
		"MaxCarnetMessage":        {MaxCarnetMessage, 80},
		"MaxLinkMessage":          {MaxLinkMessage, 80},
		"MaxHistoryDescription":   {MaxHistoryDescription, 255},
		"MaxPixSplitAccounts":     {MaxPixSplitAccounts, 20},
		"TokenLifetimeSeconds":    {TokenLifetimeSeconds, 600},
		"PixTokenLifetimeSeconds": {PixTokenLifetimeSeconds, 3600},
		"DailyQuotaPerRoute":      {DailyQuotaPerRoute, 15000},
		"MinCarnetRepeats":        {MinCarnetRepeats, 2},
		"MaxCarnetRepeats":        {MaxCarnetRepeats, 12},
		"MaxFine":                 {MaxFine, 1000},
		"MaxInterest":             {MaxInterest, 330},
		"MaxDaysToWriteOff":       {MaxDaysToWriteOff, 120},
		"MaxSolicitacaoPagador":   {MaxSolicitacaoPagador, 140},
		"MaxPixKey":               {MaxPixKey, 77},
		"DefaultPageSize":         {DefaultPageSize, 100},
		"MaxPageSize":             {MaxPageSize, 1000},
	}
	for name, c := range cases {
		if c[0] != c[1] {
			t.Errorf("%s = %d, want %d", name, c[0], c[1])
		}
	}
}
