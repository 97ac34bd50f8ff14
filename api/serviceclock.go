package api

import (
	"context"
	"net/http"
	"sync/atomic"
	"time"
)

// ServiceClock is the service's time as its answers tell it: the Date
// header of every answer (RFC 9110 §6.6.1: the moment the origin server
// made the answer, by its own clock) paired with this machine's time when
// the answer arrived. Now is that date plus the time elapsed here since,
// so whatever reasons about the service's charges (due dates passed, days
// late, the windows of a status sync) counts days as the service does,
// even when this machine's clock is wrong or the service's was moved (the
// sandbox's `clock --to`). This machine's clock is the fallback only,
// while no answer carried a Date.
//
// It is cheap on the hot path: an answer whose Date is the same string as
// the last one's (every answer of the same second) costs a comparison; a
// new string is parsed once. It is safe for concurrent use.
type ServiceClock struct {
	local func() time.Time
	r     atomic.Pointer[clockReading]
}

// clockReading is one Date header read: the service's time it says and
// this machine's time when the first answer carrying it arrived.
type clockReading struct {
	header  string
	service time.Time
	local   time.Time
}

// ClockReading is what a ServiceClock knows: the service's time (Service)
// of the latest answer read and this machine's time (Local) when it
// arrived. Known is false while no answer carried a Date (Service is then
// Local).
type ClockReading struct {
	Service time.Time
	Local   time.Time
	Known   bool
}

// Skew is how far the service's clock is ahead of this machine's
// (negative: behind). It is 0 while the service's time is not known.
func (r ClockReading) Skew() time.Duration {
	if !r.Known {
		return 0
	}
	return r.Service.Sub(r.Local)
}

// MaxSkew is the largest difference between the service's clock and this
// machine's that goes without a warning (the Date header counts whole
// seconds; a minute is well beyond the network's delay).
const MaxSkew = time.Minute

// Skewed reports whether the two clocks differ by more than MaxSkew.
func (r ClockReading) Skewed() bool { s := r.Skew(); return s > MaxSkew || s < -MaxSkew }

// NewServiceClock returns a clock that knows nothing of the service yet;
// local is this machine's clock (nil: time.Now).
func NewServiceClock(local func() time.Time) *ServiceClock {
	if local == nil {
		local = time.Now
	}
	return &ServiceClock{local: local}
}

// backJump is how far behind the latest reading a Date must be to be
// taken as the service's clock moved back (rather than an answer of the
// previous second arriving after one of the next, from another
// connection).
const backJump = 2 * time.Second

// Observe reads the Date header of an answer received now. An empty or
// malformed header changes nothing.
func (c *ServiceClock) Observe(date string) {
	if date == "" {
		return
	}
	cur := c.r.Load()
	if cur != nil && cur.header == date {
		return
	}
	t, err := http.ParseTime(date)
	if err != nil {
		return
	}
	if cur != nil && t.Before(cur.service) && cur.service.Sub(t) < backJump {
		return // a late answer of an earlier second
	}
	c.r.Store(&clockReading{header: date, service: t, local: c.local()})
}

// observe reads the Date of an answer's headers.
func (c *ServiceClock) observe(h http.Header) {
	if v := h["Date"]; len(v) > 0 {
		c.Observe(v[0])
	}
}

// Now returns the service's time now: the latest answer's Date plus the
// time elapsed on this machine since it arrived; this machine's time when
// no answer carried a Date.
func (c *ServiceClock) Now() time.Time {
	r := c.r.Load()
	if r == nil {
		return c.local()
	}
	return r.service.Add(c.local().Sub(r.local))
}

// Local returns this machine's time (the clock the ServiceClock falls
// back on).
func (c *ServiceClock) Local() time.Time { return c.local() }

// Reading returns what the clock knows (Known false: only this machine's
// time).
func (c *ServiceClock) Reading() ClockReading {
	r := c.r.Load()
	if r == nil {
		now := c.local()
		return ClockReading{Service: now, Local: now}
	}
	return ClockReading{Service: r.service, Local: r.local, Known: true}
}

// Clock returns the client's view of the service's clock, fed by every
// answer it receives (the NoRetry client shares it).
func (c *Client) Clock() *ServiceClock { return c.clock }

// ServiceNow returns the service's time now. While no answer has told it
// yet, it first gets a token of api (a call the next request needs
// anyway) and reads that answer's Date; when the service cannot be reached
// it returns this machine's time with the error.
func (c *Client) ServiceNow(ctx context.Context, api API) (time.Time, error) {
	if c.clock.r.Load() == nil {
		tc := &c.v1Tok
		if api == Pix {
			tc = &c.pixTok
		}
		if _, err := tc.get(ctx); err != nil {
			return c.clock.Now(), err
		}
	}
	return c.clock.Now(), nil
}
