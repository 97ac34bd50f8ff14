package pipeline

import "testing"

// Messages in Portuguese name the service in Portuguese ("serviço
// embutido"), in English as the job file does.
func TestServiceName(t *testing.T) {
	for _, c := range []struct{ svc, lang, want string }{
		{"embedded", "pt", "embutido"}, {"production", "pt", "de produção"}, {"sandbox", "pt", "sandbox"},
		{"embedded", "en", "embedded"}, {"production", "en", "production"}, {"other", "pt", "other"},
	} {
		if got := ServiceName(c.svc, c.lang); got != c.want {
			t.Errorf("ServiceName(%q, %q) = %q, want %q", c.svc, c.lang, got, c.want)
		}
	}
}
