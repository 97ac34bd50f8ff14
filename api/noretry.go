package api

// NoRetry returns a client for the same service, credentials and HTTP
// transport that makes every call exactly once: no retry after a 5xx, a
// 429 or a lost connection. Callers that journal each attempt (the
// follow-up actions) use it so that a PUT whose answer was lost is looked
// up before it is sent again, instead of being repeated inside the client.
// It shares c's ServiceClock.
func (c *Client) NoRetry() (*Client, error) {
	cfg := c.cfg
	cfg.MaxRetries = -1
	cfg.HTTPClient = c.hc // carries the certificates already loaded
	cfg.CertFile, cfg.KeyFile, cfg.P12File, cfg.P12Password, cfg.CAFile = "", "", "", "", ""
	nc, err := New(cfg)
	if err != nil {
		return nil, err
	}
	nc.clock = c.clock // one service, one clock
	return nc, nil
}
