package rules

// Service limits (service-spec "Limits" and real-service).
const (
	MaxBatchItems           = 1000  // cobs per PUT /v2/lotecobv/:id
	MaxSlipMessageLines     = 4     // lines in a slip message
	MaxSlipMessageLine      = 100   // characters per slip message line
	MaxCarnetMessage        = 80    // characters in a carnet message
	MaxLinkMessage          = 80    // characters in a payment link message
	MaxHistoryDescription   = 255   // characters in a history description
	MaxPixSplitAccounts     = 20    // repasses in a Pix split configuration
	TokenLifetimeSeconds    = 600   // charges API access token
	PixTokenLifetimeSeconds = 3600  // Pix API access token
	DailyQuotaPerRoute      = 15000 // requests per day per route and application
	MinCarnetRepeats        = 2     // parcels in a carnet, minimum
	MaxCarnetRepeats        = 12    // parcels in a carnet, maximum
	MaxFine                 = 1000  // fine in hundredths of a percent (10%)
	MaxInterest             = 330   // daily interest in thousandths of a percent (0.33%)
	MaxDaysToWriteOff       = 120   // days after due date until write-off
	MaxSolicitacaoPagador   = 140   // characters in solicitacaoPagador
	MaxPixKey               = 77    // characters in a Pix key
	DefaultPageSize         = 100   // Pix list default itensPorPagina
	MaxPageSize             = 1000  // Pix list maximum itensPorPagina
)
