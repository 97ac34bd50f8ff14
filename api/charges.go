package api

import (
	"context"
	"encoding/json"
	"fmt"
	"net/url"
	"strconv"
)

func chargePath(id int64, suffix string) string {
	return "/v1/charge/" + strconv.FormatInt(id, 10) + suffix
}

type emailBody struct {
	Email string `json:"email"`
}

type descriptionBody struct {
	Description string `json:"description"`
}

type expireBody struct {
	ExpireAt string `json:"expire_at"`
}

// CreateCharge creates a charge without a payment form (status new).
func (c *Client) CreateCharge(ctx context.Context, req ChargeRequest) (*ChargeCreated, error) {
	var out ChargeCreated
	if err := c.v1(ctx, "POST", "/v1/charge", req, &out); err != nil {
		return nil, err
	}
	return &out, nil
}

// PayCharge attaches a payment form (slip or card) to a new charge.
func (c *Client) PayCharge(ctx context.Context, id int64, p Payment) (*PaymentResult, error) {
	var out PaymentResult
	if err := c.v1(ctx, "POST", chargePath(id, "/pay"), struct {
		Payment Payment `json:"payment"`
	}{p}, &out); err != nil {
		return nil, err
	}
	return &out, nil
}

// CreateOneStepCharge creates a charge and attaches its payment form.
func (c *Client) CreateOneStepCharge(ctx context.Context, req OneStepRequest) (*PaymentResult, error) {
	var out PaymentResult
	if err := c.v1(ctx, "POST", "/v1/charge/one-step", req, &out); err != nil {
		return nil, err
	}
	return &out, nil
}

// GetCharge returns a charge (standalone or carnet parcel).
func (c *Client) GetCharge(ctx context.Context, id int64) (*Charge, error) {
	var out Charge
	if err := c.v1(ctx, "GET", chargePath(id, ""), nil, &out); err != nil {
		return nil, err
	}
	return &out, nil
}

// ListCharges lists charges (GET /v1/charges), e.g. to find by custom_id
// the charge whose creation answer was lost.
func (c *Client) ListCharges(ctx context.Context, q ChargeListQuery) (*ChargeList, error) {
	v := url.Values{}
	set := func(k, s string) {
		if s != "" {
			v.Set(k, s)
		}
	}
	set("charge_type", q.ChargeType)
	set("begin_date", q.BeginDate)
	set("end_date", q.EndDate)
	set("status", q.Status)
	set("date_of", q.DateOf)
	set("customer_document", q.CustomerDocument)
	set("custom_id", q.CustomID)
	if q.Value != nil {
		v.Set("value", strconv.FormatInt(*q.Value, 10))
	}
	if q.Limit > 0 {
		v.Set("limit", strconv.Itoa(q.Limit))
	}
	if q.Page > 0 {
		v.Set("page", strconv.Itoa(q.Page))
	}
	resp, err := c.Do(ctx, V1, "GET", "/v1/charges?"+v.Encode(), nil)
	if err != nil {
		return nil, err
	}
	var out ChargeList
	if err := json.Unmarshal(resp.Body, &out); err != nil {
		return nil, fmt.Errorf("api: GET /v1/charges: decode answer: %w", err)
	}
	return &out, nil
}

// UpdateChargeMetadata changes custom_id and/or notification_url.
func (c *Client) UpdateChargeMetadata(ctx context.Context, id int64, m MetadataUpdate) error {
	return c.v1(ctx, "PUT", chargePath(id, "/metadata"), m, nil)
}

// UpdateBillet changes the due date of a slip (waiting or unpaid).
func (c *Client) UpdateBillet(ctx context.Context, id int64, expireAt string) error {
	return c.v1(ctx, "PUT", chargePath(id, "/billet"), expireBody{expireAt}, nil)
}

// ResendBillet e-mails a waiting slip again.
func (c *Client) ResendBillet(ctx context.Context, id int64, email string) error {
	return c.v1(ctx, "POST", chargePath(id, "/billet/resend"), emailBody{email}, nil)
}

// CancelCharge cancels a charge (new, link, waiting or unpaid).
func (c *Client) CancelCharge(ctx context.Context, id int64) error {
	return c.v1(ctx, "PUT", chargePath(id, "/cancel"), nil, nil)
}

// SettleCharge marks a slip charge as paid manually (status settled).
func (c *Client) SettleCharge(ctx context.Context, id int64) error {
	return c.v1(ctx, "PUT", chargePath(id, "/settle"), nil, nil)
}

// AddChargeHistory adds a line (1 to 255 characters) to a charge's history.
func (c *Client) AddChargeHistory(ctx context.Context, id int64, description string) error {
	return c.v1(ctx, "POST", chargePath(id, "/history"), descriptionBody{description}, nil)
}

// RetryCardCharge sends new card data for a refused (unpaid) card charge.
func (c *Client) RetryCardCharge(ctx context.Context, id int64, r CardRetry) (*PaymentResult, error) {
	var out PaymentResult
	body := struct {
		Payment struct {
			CreditCard CardRetry `json:"credit_card"`
		} `json:"payment"`
	}{}
	body.Payment.CreditCard = r
	if err := c.v1(ctx, "POST", chargePath(id, "/retry"), body, &out); err != nil {
		return nil, err
	}
	return &out, nil
}

// RefundCard refunds amount cents of a paid card charge (0 = all).
func (c *Client) RefundCard(ctx context.Context, id int64, amount int64) error {
	var body any
	if amount > 0 {
		body = struct {
			Amount int64 `json:"amount"`
		}{amount}
	}
	return c.v1(ctx, "POST", "/v1/charge/card/"+strconv.FormatInt(id, 10)+"/refund", body, nil)
}

// GetNotification returns the status changes behind a notification token.
func (c *Client) GetNotification(ctx context.Context, token string) ([]NotificationChange, error) {
	var out []NotificationChange
	if err := c.v1(ctx, "GET", "/v1/notification/"+url.PathEscape(token), nil, &out); err != nil {
		return nil, err
	}
	return out, nil
}
