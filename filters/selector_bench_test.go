package filters_test

import (
	"testing"
	"time"

	"github.com/sluicehq/sluice/filters"
	"github.com/sluicehq/sluice/schemas"
)

// BenchmarkSelect measures what a worker does per event between pulling it
// and batching it: read its header, filter it, select its fields, and make
// its record, for a 1 KB http_request_complete.v0 event. The filters keep
// the event, so the whole of the work is measured.
// record is what the delivery engine makes of a selected event
// (sinks.Record's fields), made here so that the figure is a worker's.
type record struct {
	id        string
	data      []byte
	timestamp time.Time
}

func BenchmarkSelect(b *testing.B) {
	const (
		filter        = `inCIDR(ev.conn.client_ip, "203.0.113.0/24") && ev.conn.server_port == 443`
		rejecting     = `inCIDR(ev.conn.client_ip, "198.51.100.0/24") && ev.conn.server_port == 443`
		stringsFilter = `ev.conn.server_name.endsWith(".example.org") && ev.conn.server_ip != ""`
	)
	fields := filters.Normalize([]string{"conn.client_ip", "conn.server_name", "http.request.method", "http.request.url.path", "http.response.status_code", "tls"})
	for _, bc := range []struct {
		name string
		src  filters.Source
		keep bool
	}{
		{"whole", filters.Source{Kind: selHTTP}, true},
		{"filter", filters.Source{Kind: selHTTP, Filter: filter}, true},
		{"filter_rejecting", filters.Source{Kind: selHTTP, Filter: rejecting}, false},
		{"filter_strings", filters.Source{Kind: selHTTP, Filter: stringsFilter}, true},
		{"fields", filters.Source{Kind: selHTTP, Fields: fields}, true},
		{"filter_fields", filters.Source{Kind: selHTTP, Filter: filter, Fields: fields}, true},
	} {
		b.Run(bc.name, func(b *testing.B) {
			env, cache := selEnv(b)
			s := selNew(b, env, cache, bc.src)
			ev := schemas.NewSampler(1).HTTPRequest1KB()
			data := ev.AppendJSON(nil)
			ctx := b.Context()
			var buf []byte
			if bc.src.Fields != nil {
				buf = make([]byte, 0, len(data))
			}
			var rec record
			b.SetBytes(int64(len(data)))
			b.ReportAllocs()
			for b.Loop() {
				h, _, err := schemas.ReadHeader(data)
				if err != nil {
					b.Fatal(err)
				}
				out, keep, err := s.Select(ctx, data, buf[:0:cap(buf)])
				if err != nil || keep != bc.keep {
					b.Fatalf("Select = %v, %v", keep, err)
				}
				rec = record{id: h.ID, data: out, timestamp: h.Timestamp}
			}
			_ = rec
		})
	}
}
