package rules

import "time"

// Compile-time check of the exported API promised in contracts.md: if a
// signature drifts, this file stops compiling.
var (
	_ func(string) string                                    = CleanDocument
	_ func(string) bool                                      = ValidCPF
	_ func(string) bool                                      = ValidCNPJ
	_ func(string) string                                    = FormatCPF
	_ func(string) string                                    = FormatCNPJ
	_ func(string) string                                    = MaskDocument
	_ func(string, int) (int64, error)                       = ParseDecimal
	_ func(int64) string                                     = FormatPixAmount
	_ func(string) (int64, error)                            = ParsePixAmount
	_ func(int64) string                                     = FormatBRL
	_ *time.Location                                         = SaoPaulo
	_ func(time.Time) time.Time                              = Today
	_ func(string) (time.Time, error)                        = ParseISODate
	_ func(time.Time, int) time.Time                         = AddMonthsClamped
	_ string                                                 = BankEfi
	_ func(time.Time) (int, error)                           = DueFactor
	_ func(int, time.Time) (time.Time, error)                = DateFromFactor
	_ func(string, time.Time, int64, string) (string, error) = BuildBarcode
	_ func(string) (string, error)                           = TypedLine
	_ func(string) (string, error)                           = BarcodeFromTypedLine
	_ func(string) error                                     = CheckBarcode
	_ func(string) int                                       = Mod10
	_ func(string) int                                       = Mod11Boleto
	_ func(BRCode) (string, error)                           = BRCode.Encode
	_ func(string) (BRCode, error)                           = ParseBRCode
	_ func(string) string                                    = CRC16
	_ func(string) bool                                      = ValidTxid
	_ func(...string) string                                 = DeriveTxid
	_ func(string) bool                                      = ValidEndToEndID
	_ func(string) bool                                      = ValidRtrID
	_ func(byte, string, time.Time, string) string           = NewEndToEndID
	_ func(string) bool                                      = ValidDevolucaoID
	_ func(string) bool                                      = ValidIdEnvio
	_ func(string) (KeyType, error)                          = PixKeyType
	_ func(string) string                                    = NormalizePixKey
	_ string                                                 = EfiISPB
	_ func(string) bool                                      = ValidUF
	_ func(string) bool                                      = ValidCEP
	_ func(string) bool                                      = ValidEmail
	_ func(string) bool                                      = ValidPhone
	_ func(string) bool                                      = ValidPayeeCode
	_ func([]SplitItem, []SplitShipping, string) []Violation = CheckMarketplace
	_ func([]SplitItem, []SplitShipping) []Share             = SplitShares
	_ func(PixSplit, string) []Violation                     = CheckPixSplit
	_                                                        = BRCode{Key: "", Info: "", URL: "", MerchantName: "", MerchantCity: "", PostalCode: "", Txid: "", AmountCents: 0, Dynamic: false}
	_                                                        = Repasse{PayeeCode: "", Percentage: 0, Fixed: 0}
	_                                                        = Marketplace{Mode: 0, Repasses: []Repasse{}}
	_                                                        = SplitItem{Name: "", ValueCents: 0, Amount: 0, Marketplace: &Marketplace{}}
	_                                                        = SplitShipping{Name: "", ValueCents: 0, PayeeCode: ""}
	_                                                        = Violation{Rule: "", Pointer: "", Message: "", MessageEN: ""}
	_                                                        = Share{PayeeCode: "", Own: false, Cents: 0}
	_                                                        = PixSplitPart{Tipo: "", Valor: 0, CPF: "", CNPJ: "", Conta: ""}
	_                                                        = PixSplit{DivisaoTarifa: "", MinhaParte: PixSplitPart{}, Repasses: []PixSplitPart{}}
	_ KeyType                                                = "evp"
	_                                                        = [...]int{MaxBatchItems, MaxSlipMessageLines, MaxSlipMessageLine, MaxCarnetMessage, MaxLinkMessage,
		MaxHistoryDescription, MaxPixSplitAccounts, TokenLifetimeSeconds, PixTokenLifetimeSeconds,
		DailyQuotaPerRoute, MinCarnetRepeats, MaxCarnetRepeats, MaxFine, MaxInterest, MaxDaysToWriteOff,
		MaxSolicitacaoPagador, MaxPixKey, DefaultPageSize, MaxPageSize}
	// Payment arithmetic (payments.go, calendar.go).
	_ func(int) time.Time                                                   = Easter
	_ func(int) []Holiday                                                   = NationalHolidays
	_ func(time.Time) bool                                                  = IsHoliday
	_ func(time.Time) bool                                                  = IsBusinessDay
	_ func(time.Time) time.Time                                             = NextBusinessDay
	_ func(time.Time, time.Time) int                                        = DaysBetween
	_ func(time.Time, time.Time) int                                        = BusinessDaysBetween
	_ func(int64, SlipTerms, time.Time, time.Time) (SlipCharge, error)      = SlipAmountDue
	_ func(int64, CobvTerms, time.Time, time.Time, int) (CobvCharge, error) = CobvAmountDue
	_ func(int64, int64, int64, int64) PaymentAllocation                    = AllocatePayment
	_ error                                                                 = ErrNotPayable
	_                                                                       = SlipTerms{Fine: 0, Interest: 0, DaysToWriteOff: nil, Discount: &SlipDiscount{Type: DiscountCurrency, Value: 0},
		ConditionalDiscount: &SlipConditionalDiscount{Type: DiscountPercentage, Value: 0, Until: time.Time{}}}
	_ = SlipCharge{Base: 0, Discount: 0, Fine: 0, Interest: 0, Total: 0, DaysLate: 0, Due: time.Time{}, LastPayable: time.Time{}}
	_ = CobvTerms{Multa: &CobvRule{Modalidade: 0, ValorPerc: 0}, Juros: nil, Abatimento: nil,
		Desconto: &CobvDesconto{Modalidade: 0, ValorPerc: 0, DataFixa: []CobvDiscountDate{{Data: time.Time{}, ValorPerc: 0}}}}
	_ = CobvCharge{Original: 0, Abatimento: 0, Desconto: 0, Juros: 0, Multa: 0, Final: 0, DaysLate: 0, DaysEarly: 0,
		Due: time.Time{}, LastPayable: time.Time{}}
	_ = PaymentAllocation{Interest: 0, Fine: 0, Principal: 0, Shortfall: 0, Excess: 0}
	_ = Holiday{Date: time.Time{}, Name: ""}
)
