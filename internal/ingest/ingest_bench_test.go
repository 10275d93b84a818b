package ingest_test

import (
	"bytes"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strconv"
	"testing"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/sluicehq/sluice/internal/api"
	"github.com/sluicehq/sluice/internal/apiconv"
	"github.com/sluicehq/sluice/internal/apitest"
)

// ingestHandler is the handler of POST /events, on fakes: keys of one
// account, and a publisher that stores every event.
func ingestHandler(b *testing.B) http.Handler {
	b.Helper()
	pub := apitest.FakePublisher{Publish: apitest.StoreAll}
	reg := prometheus.NewRegistry()
	srv, err := api.New(api.Config{}, api.Deps{
		Keys:      apitest.FakeKeysFor("ac_bench"),
		Publisher: pub,
		Logger:    slog.New(slog.DiscardHandler),
		Metrics:   reg,
	})
	if err != nil {
		b.Fatal(err)
	}
	routeIngest(b, srv, pub, reg)
	return srv
}

// BenchmarkIngest serves POST /events with batches of sampled events,
// from the front door's admission to the 202, on fakes.
func BenchmarkIngest(b *testing.B) {
	for _, n := range []int{1, 100} {
		b.Run("events="+strconv.Itoa(n), func(b *testing.B) {
			h := ingestHandler(b)
			body := apitest.MustJSON(b, apitest.Samples(b, 1, n))
			b.SetBytes(int64(len(body)))
			b.ReportAllocs()
			b.RunParallel(func(pb *testing.PB) {
				for pb.Next() {
					r := httptest.NewRequest(http.MethodPost, "/events", bytes.NewReader(body))
					r.Header.Set("Authorization", "Bearer "+apitest.FakeToken)
					r.Header.Set(apiconv.HeaderVersion, apiconv.SupportedVersion)
					r.Header.Set("Content-Type", "application/json")
					w := httptest.NewRecorder()
					h.ServeHTTP(w, r)
					if w.Code != http.StatusAccepted {
						b.Errorf("POST /events: %d %s", w.Code, w.Body)
						return
					}
				}
			})
		})
	}
}
