package pipeline

// ServiceName is the job's service (embedded, sandbox, production) as the
// messages for people say it, in lang ("en" or Portuguese): "embutido",
// "sandbox", "de produção" ("serviço embutido em …", never "serviço
// embedded"). Another value is returned as it is.
func ServiceName(service, lang string) string {
	if lang == "en" {
		return service
	}
	switch service {
	case "embedded":
		return "embutido"
	case "production":
		return "de produção"
	}
	return service
}
