package metrics

import (
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus/testutil"
)

// TestRouteOf: a call's route pattern keeps the API's words and puts ":id"
// for every segment that carries data (an id, a txid, a Pix key, a token,
// a CPF), without the query; the same pattern is one APIRoute.
func TestRouteOf(t *testing.T) {
	for _, c := range []struct{ method, path, want string }{
		{"POST", "/v1/charge/123/pay", "POST /v1/charge/:id/pay"},
		{"GET", "/v1/charges?custom_id=52998224725&limit=1000", "GET /v1/charges"},
		{"PUT", "/v1/carnet/77/parcel/3/settle", "PUT /v1/carnet/:id/parcel/:id/settle"},
		{"PUT", "/v2/cobv/Abcdef0123456789Abcdef01234", "PUT /v2/cobv/:id"},
		{"DELETE", "/v2/webhook/maria%40example.com", "DELETE /v2/webhook/:id"},
		{"GET", "/v1/notification/zxcvbnmasdfghjklqwertyuiop", "GET /v1/notification/:id"},
		{"POST", "/v1/charge/one-step/link", "POST /v1/charge/one-step/link"},
		{"PUT", "/v2/lotecobv/529.982.247-25", "PUT /v2/lotecobv/:id"},
	} {
		if got := RouteOf("v1", c.method, c.path).Pattern(); got != c.want {
			t.Errorf("RouteOf(%s %s) = %q, want %q", c.method, c.path, got, c.want)
		}
	}
	if RouteOf("v1", "POST", "/v1/charge/1/pay") != RouteOf("v1", "POST", "/v1/charge/999/pay") {
		t.Error("two ids of one route gave two APIRoutes")
	}
	if RouteOf("v1", "POST", "/v1/charge/1/pay") == RouteOf("pix", "POST", "/v1/charge/1/pay") {
		t.Error("one pattern of two APIs gave one APIRoute")
	}
}

// TestObserveCounts: an observed call moves the calls counter of its
// route and status, a 429 the throttled counter, a retry its reason's.
func TestObserveCounts(t *testing.T) {
	r := RouteOf("pix", "PUT", "/v2/lotecobv/41")
	calls := apiCalls.WithLabelValues("pix", "PUT /v2/lotecobv/:id", "201")
	throttled := apiThrottled.WithLabelValues("pix", "PUT /v2/lotecobv/:id")
	before, thBefore := testutil.ToFloat64(calls), testutil.ToFloat64(throttled)
	r.Observe(201, time.Millisecond)
	r.Observe(201, time.Millisecond)
	r.Observe(429, time.Millisecond)
	r.Retry(Retry429)
	if got := testutil.ToFloat64(calls) - before; got != 2 {
		t.Errorf("201 counted %v times, want 2", got)
	}
	if got := testutil.ToFloat64(throttled) - thBefore; got != 1 {
		t.Errorf("429 counted %v times, want 1", got)
	}
	if got := testutil.ToFloat64(apiRetries.WithLabelValues("pix", "PUT /v2/lotecobv/:id", "429")); got < 1 {
		t.Errorf("retry not counted: %v", got)
	}
}

// TestObserveNoAlloc: counting a call of a route seen before allocates
// nothing (a run makes tens of thousands a second).
func TestObserveNoAlloc(t *testing.T) {
	RouteOf("v1", "POST", "/v1/charge/1/pay").Observe(200, time.Millisecond)
	if n := testing.AllocsPerRun(1000, func() {
		RouteOf("v1", "POST", "/v1/charge/123456/pay").Observe(200, time.Millisecond)
	}); n != 0 {
		t.Errorf("%v allocations per call, want 0", n)
	}
}

// TestLabelsCarryNoData: whatever the callers give, the label values stay
// in their closed sets: no CPF, name or secret becomes a label.
func TestLabelsCarryNoData(t *testing.T) {
	RowsFinished("52998224725", "Maria da Silva", 1)
	ReminderSent("Client_Secret_abc", "Maria")
	SignInFailed("senha123")
	NotificationApplied("pix", "529.982.247-25")
	RouteOf("v1", "GET", "/v1/charges?cpf=52998224725").Observe(200, time.Millisecond)
	mfs, err := Registry.Gather()
	if err != nil {
		t.Fatal(err)
	}
	bad := regexp.MustCompile(`\d{11}|\d{3}\.\d{3}\.\d{3}-\d{2}|Client_Secret|Maria|senha`)
	for _, mf := range mfs {
		if !strings.HasPrefix(mf.GetName(), "remessa_") {
			continue
		}
		for _, m := range mf.GetMetric() {
			for _, l := range m.GetLabel() {
				if bad.MatchString(l.GetValue()) {
					t.Errorf("%s{%s=%q}", mf.GetName(), l.GetName(), l.GetValue())
				}
			}
		}
	}
}

func BenchmarkRouteObserve(b *testing.B) {
	b.ReportAllocs()
	RouteOf("v1", "POST", "/v1/charge/1/pay")
	for i := 0; i < b.N; i++ {
		RouteOf("v1", "POST", "/v1/charge/123456/pay").Observe(200, time.Millisecond)
	}
}

func BenchmarkRouteObserveParallel(b *testing.B) {
	b.ReportAllocs()
	RouteOf("pix", "PUT", "/v2/lotecobv/1")
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			RouteOf("pix", "PUT", "/v2/lotecobv/123456").Observe(201, time.Millisecond)
		}
	})
}
