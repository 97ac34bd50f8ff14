package run

import "remessa/pipeline"

// LocalListenerURL is where `remessa listen` receives notifications by
// default (pipeline/listen.DefaultAddr).
const LocalListenerURL = "http://127.0.0.1:8090/notificacao"

// withLocalNotifications loads the job again with the local listener as
// the notification_url of its carnets or slips when it runs on the
// embedded service and names none, so the sample's whole cycle (issue,
// pay in the sandbox, `remessa listen`) works offline. The sandbox's
// outbox keeps a notification while nothing listens (it retries, as the
// real service does), so a listener started later still gets it. A job
// for the real service names its own public address.
func withLocalNotifications(jobPath string, job *pipeline.Job, lo pipeline.LoadOptions) (*pipeline.Job, error) {
	if job.Service != "embedded" || job.Spec == nil {
		return job, nil
	}
	c, b := job.Spec.Issue.Carnets, job.Spec.Issue.Boletos
	if (c == nil || c.NotificationURL.Set) && (b == nil || b.NotificationURL.Set) {
		return job, nil
	}
	lo.DefaultNotificationURL = LocalListenerURL
	again, err := pipeline.Load(jobPath, lo)
	if err != nil {
		return nil, err
	}
	again.Service = job.Service
	return again, nil
}
