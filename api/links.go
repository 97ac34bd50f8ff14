package api

import "context"

// CreateOneStepLink creates a charge with a payment link in one call.
func (c *Client) CreateOneStepLink(ctx context.Context, req OneStepLinkRequest) (*LinkResult, error) {
	var out LinkResult
	if err := c.v1(ctx, "POST", "/v1/charge/one-step/link", req, &out); err != nil {
		return nil, err
	}
	return &out, nil
}

// CreateChargeLink gives a new charge a payment link (status link).
func (c *Client) CreateChargeLink(ctx context.Context, id int64, s LinkSettings) (*LinkResult, error) {
	var out LinkResult
	if err := c.v1(ctx, "POST", chargePath(id, "/link"), s, &out); err != nil {
		return nil, err
	}
	return &out, nil
}

// UpdateChargeLink changes the settings of a payment link not yet paid.
func (c *Client) UpdateChargeLink(ctx context.Context, id int64, s LinkSettings) (*LinkResult, error) {
	var out LinkResult
	if err := c.v1(ctx, "PUT", chargePath(id, "/link"), s, &out); err != nil {
		return nil, err
	}
	return &out, nil
}

// ResendChargeLink e-mails the payment link again.
func (c *Client) ResendChargeLink(ctx context.Context, id int64, email string) error {
	return c.v1(ctx, "POST", chargePath(id, "/link/resend"), emailBody{email}, nil)
}
