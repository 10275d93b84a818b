package localapi_test

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"time"

	"github.com/sluicehq/sluice/internal/agent/localapi"
)

// The forwarding of an HTTP tunnel that inspects wraps its handler in
// Capturing, and counts each request on the tunnel's Meter.
func ExampleCaptures_Capturing() {
	captures := localapi.NewCaptures(localapi.CapturesConfig{MaxBytes: 1 << 20})
	meter := localapi.NewMeter(nil)
	upstream := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprint(w, "hello")
	})
	forward := captures.Capturing("web", http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		start := time.Now()
		upstream.ServeHTTP(w, r)
		meter.HTTPDone(time.Since(start))
	}))

	forward.ServeHTTP(httptest.NewRecorder(), httptest.NewRequest("GET", "/greet", nil))

	c := captures.List(1, "web")[0]
	fmt.Println(c.TunnelName, c.Request.Method, c.Request.URI, c.Response.Status, c.Response.BodySize)
	fmt.Println(meter.Snapshot().HTTP.Count)
	// Output:
	// web GET /greet 200 OK 5
	// 1
}
