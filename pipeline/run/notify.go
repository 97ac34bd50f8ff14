package run

import (
	"context"
	"errors"
	"fmt"

	"remessa/api"
	"remessa/pipeline"
	"remessa/pipeline/results"
)

// LocalListenerURL is where `remessa listen` receives notifications by
// default (pipeline/listen.DefaultAddr).
const LocalListenerURL = "http://127.0.0.1:8090/notificacao"

// withNotifications loads the job again with a default notification_url
// for its carnets or slips that name none: url (Options.NotificationURL:
// the desk gives its own endpoint) on any service, or, on the embedded
// service without one, the local listener, so the sample's whole cycle
// (issue, pay in the sandbox, `remessa listen`) works offline. The
// sandbox's outbox keeps a notification while nothing listens (it
// retries, as the real service does), so a listener started later still
// gets it. A job's own address is always kept.
func withNotifications(jobPath string, job *pipeline.Job, url string, lo pipeline.LoadOptions) (*pipeline.Job, error) {
	if job.Spec == nil {
		return job, nil
	}
	if url == "" {
		if job.Service != "embedded" {
			return job, nil
		}
		url = LocalListenerURL
	}
	c, b := job.Spec.Issue.Carnets, job.Spec.Issue.Boletos
	if (c == nil || c.NotificationURL.Set) && (b == nil || b.NotificationURL.Set) {
		return job, nil
	}
	lo.DefaultNotificationURL = url
	again, err := pipeline.Load(jobPath, lo)
	if err != nil {
		return nil, err
	}
	again.Service = job.Service
	return again, nil
}

// registerWebhooks registers url as the webhook of each Pix key of a cobv
// run (PUT /v2/webhook/:chave) and returns a warning per key it could
// not. The warnings name the key and the service's status, never url
// (it may carry a secret path).
func registerWebhooks(ctx context.Context, svc *Service, m Meta, url string) []string {
	if url == "" || m.Kind != results.Cobv {
		return nil
	}
	var out []string
	for _, k := range m.PixKeys {
		if _, err := svc.Client.PutWebhook(ctx, k, url); err != nil {
			why := "sem resposta do serviço"
			var ae *api.Error
			if errors.As(err, &ae) {
				why = fmt.Sprintf("o serviço respondeu %d", ae.Status)
			}
			out = append(out, fmt.Sprintf("o webhook Pix da chave %s não foi cadastrado (%s): os pagamentos dela chegam pela atualização da situação", k, why))
		}
	}
	return out
}
