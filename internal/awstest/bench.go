package awstest

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/sluicehq/sluice/sinks"
)

// Endpoint is an aws.HTTPClient that reads each request's body and
// answers status 200 and Answer, sending nothing: an in-process endpoint
// for benchmarks of a sink's Write, which then measure the sink and the
// SDK alone.
type Endpoint struct {
	// Answer is the JSON body of every answer.
	Answer string
}

// Do reads req's body, closes it as a transport does, and answers it.
func (e Endpoint) Do(req *http.Request) (*http.Response, error) {
	if req.Body != nil {
		_, err := io.Copy(io.Discard, req.Body)
		req.Body.Close()
		if err != nil {
			return nil, err
		}
	}
	return &http.Response{
		StatusCode:    http.StatusOK,
		Header:        http.Header{"Content-Type": {"application/x-amz-json-1.1"}},
		Body:          io.NopCloser(strings.NewReader(e.Answer)),
		ContentLength: int64(len(e.Answer)),
		Request:       req,
	}, nil
}

// Envelopes returns n records of about 1.8 KB each, shaped like sluice's
// envelope of an http_request_complete.v0 event (nested objects, quoted
// strings, an escaped quote), a millisecond apart.
func Envelopes(n int) []sinks.Record {
	at := time.Date(2026, 11, 22, 10, 4, 5, 0, time.UTC)
	records := make([]sinks.Record, n)
	for i := range records {
		id := fmt.Sprintf("ev_2mE3%022d", i)
		data := fmt.Appendf(nil, `{"event_id":%q,"event_type":"http_request_complete.v0","event_timestamp":%q,"account_id":"ac_2mE3aB9xYz0123456789ABCDEF","object":{"conn":{"client_ip":"203.0.113.%d","client_port":%d,"server_ip":"198.51.100.7","server_port":443,"start_ts":%q,"tls":{"version":"TLSv1.3","cipher_suite":"TLS_AES_128_GCM_SHA256","sni":"api.example.com"}},"http":{"request":{"method":"GET","url":"https://api.example.com/v1/items?page=%d&limit=50&sort=created_at","headers":{"user-agent":["Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/120.0 Safari/537.36"],"accept":["application/json"],"x-request-id":["req-%d"],"cookie":["session=\"abc;def\""]}},"response":{"status_code":200,"headers":{"content-type":["application/json; charset=utf-8"],"cache-control":["no-store"]},"body_bytes":%d}},"endpoint":{"id":"ep_2mE3endpoint0000000000001","url":"https://api.example.com","region":"eu-west-1"},"geo":{"country":"DE","city":"Frankfurt am Main","latitude":50.1109,"longitude":8.6821},"duration_ms":%d,"bytes_in":%d,"bytes_out":%d,"traffic_policy":{"rules":["rate-limit","add-headers","log"],"decision":"allow"},"labels":{"team":"payments","service":"checkout-api","environment":"production","version":"2026.11.3","commit":"9f1c2e7d4b5a6c8e0f1a2b3c4d5e6f7a8b9c0d1e","owner":"platform-oncall@example.com"},"upstream":{"url":"http://checkout.internal.svc.cluster.local:8080/v1/items","status_code":200,"connect_ms":1,"first_byte_ms":12,"attempts":1,"pool":"checkout-primary"},"note":"GET /v1/items answered from the primary pool; \"cached\" was false, compression gzip, 3 headers added by policy"},"source":{"type":"edge","id":"edg_2mE3edge00000000000000001","name":"production api edge, eu-west-1"}}`,
			id, at.Add(time.Duration(i)*time.Millisecond).Format(time.RFC3339Nano), i%250, 40000+i, at.Format(time.RFC3339Nano), i, i, 1000+i, i%900, 512+i, 2048+i)
		records[i] = sinks.Record{ID: id, Data: data, Timestamp: at.Add(time.Duration(i) * time.Millisecond)}
	}
	return records
}

// BenchWrite measures sink's Write of Envelopes(500), the bytes of their
// Data a Write, allocations reported: BenchmarkWriteEndpoint of each AWS
// sink, given a sink whose client sends to an Endpoint.
func BenchWrite(b *testing.B, sink sinks.Sink) {
	batch := Envelopes(500)
	n := 0
	for _, r := range batch {
		n += len(r.Data)
	}
	b.SetBytes(int64(n))
	b.ReportAllocs()
	ctx := context.Background()
	for b.Loop() {
		if _, err := sink.Write(ctx, batch); err != nil {
			b.Fatal(err)
		}
	}
}
