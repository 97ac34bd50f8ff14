package api

import (
	"context"
	"strconv"
)

func carnetPath(id int64, suffix string) string {
	return "/v1/carnet/" + strconv.FormatInt(id, 10) + suffix
}

func parcelPath(id int64, parcel int, suffix string) string {
	return carnetPath(id, "/parcel/"+strconv.Itoa(parcel)+suffix)
}

// CreateCarnet creates a carnet (2 to 12 monthly slips).
func (c *Client) CreateCarnet(ctx context.Context, req CarnetRequest) (*Carnet, error) {
	var out Carnet
	if err := c.v1(ctx, "POST", "/v1/carnet", req, &out); err != nil {
		return nil, err
	}
	return &out, nil
}

// GetCarnet returns a carnet with its parcels.
func (c *Client) GetCarnet(ctx context.Context, id int64) (*Carnet, error) {
	var out Carnet
	if err := c.v1(ctx, "GET", carnetPath(id, ""), nil, &out); err != nil {
		return nil, err
	}
	return &out, nil
}

// UpdateCarnetMetadata changes custom_id and/or notification_url.
func (c *Client) UpdateCarnetMetadata(ctx context.Context, id int64, m MetadataUpdate) error {
	return c.v1(ctx, "PUT", carnetPath(id, "/metadata"), m, nil)
}

// UpdateParcel changes one parcel's due date (after today, not earlier
// than the current one).
func (c *Client) UpdateParcel(ctx context.Context, id int64, parcel int, expireAt string) error {
	return c.v1(ctx, "PUT", parcelPath(id, parcel, ""), expireBody{expireAt}, nil)
}

// UpdateParcels changes several parcels' due dates, all or none.
func (c *Client) UpdateParcels(ctx context.Context, id int64, parcels []ParcelDue) error {
	return c.v1(ctx, "PUT", carnetPath(id, "/parcels"), struct {
		Parcels []ParcelDue `json:"parcels"`
	}{parcels}, nil)
}

// CancelCarnet cancels every open parcel of a carnet.
func (c *Client) CancelCarnet(ctx context.Context, id int64) error {
	return c.v1(ctx, "PUT", carnetPath(id, "/cancel"), nil, nil)
}

// CancelParcel cancels one parcel.
func (c *Client) CancelParcel(ctx context.Context, id int64, parcel int) error {
	return c.v1(ctx, "PUT", parcelPath(id, parcel, "/cancel"), nil, nil)
}

// ResendCarnet e-mails the carnet again.
func (c *Client) ResendCarnet(ctx context.Context, id int64, email string) error {
	return c.v1(ctx, "POST", carnetPath(id, "/resend"), emailBody{email}, nil)
}

// ResendParcel e-mails one waiting parcel again.
func (c *Client) ResendParcel(ctx context.Context, id int64, parcel int, email string) error {
	return c.v1(ctx, "POST", parcelPath(id, parcel, "/resend"), emailBody{email}, nil)
}

// AddCarnetHistory adds a line to a carnet's history.
func (c *Client) AddCarnetHistory(ctx context.Context, id int64, description string) error {
	return c.v1(ctx, "POST", carnetPath(id, "/history"), descriptionBody{description}, nil)
}

// SettleCarnet marks every open parcel as paid manually.
func (c *Client) SettleCarnet(ctx context.Context, id int64) error {
	return c.v1(ctx, "PUT", carnetPath(id, "/settle"), nil, nil)
}

// SettleParcel marks one parcel as paid manually.
func (c *Client) SettleParcel(ctx context.Context, id int64, parcel int) error {
	return c.v1(ctx, "PUT", parcelPath(id, parcel, "/settle"), nil, nil)
}
