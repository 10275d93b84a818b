package schemas_test

import (
	"strconv"
	"testing"

	"github.com/sluicehq/sluice/schemas"
)

// benchKind is the kind of the benchmark events, about 1 KB each.
const benchKind = "http_request_complete.v0"

// benchEvent returns a 1 KB sample event.
func benchEvent(b *testing.B) schemas.Event {
	b.Helper()
	return schemas.NewSampler(1).HTTPRequest1KB()
}

func BenchmarkValidateObject(b *testing.B) {
	k, ok := schemas.Default().Kind(benchKind)
	if !ok {
		b.Fatalf("no kind %s", benchKind)
	}
	obj := benchEvent(b).Object
	b.SetBytes(int64(len(obj)))
	b.ReportAllocs()
	for b.Loop() {
		if _, err := k.ValidateObject(obj); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkEncode(b *testing.B) {
	cat := schemas.Default()
	ev := benchEvent(b)
	enc, err := cat.Encode(ev)
	if err != nil {
		b.Fatal(err)
	}
	b.SetBytes(int64(len(enc.Data)))
	b.ReportAllocs()
	for b.Loop() {
		if _, err := cat.Encode(ev); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkDecodeBatch500(b *testing.B) {
	const events = 500
	cat := schemas.Default()
	s := schemas.NewSampler(1)
	body := []byte{'['}
	var account string
	for i := range events {
		ev := s.HTTPRequest1KB()
		account = ev.AccountID
		if i > 0 {
			body = append(body, ',')
		}
		// As a producer sends it: the key gives the account, and traffic
		// events have no principal.
		body = append(body, `{"event_id":`...)
		body = strconv.AppendQuote(body, ev.ID)
		body = append(body, `,"event_type":`...)
		body = strconv.AppendQuote(body, ev.Type)
		body = append(body, `,"event_timestamp":"`...)
		body = ev.Timestamp.UTC().AppendFormat(body, schemas.TimeLayout)
		body = append(body, `","object":`...)
		body = append(body, ev.Object...)
		body = append(body, '}')
	}
	body = append(body, ']')
	opts := schemas.DecodeOptions{AccountID: account}

	b.SetBytes(int64(len(body)))
	b.ReportAllocs()
	for b.Loop() {
		batch, err := cat.DecodeBatch(body, opts)
		if err != nil || len(batch.Events) != events {
			b.Fatalf("DecodeBatch: %d events, %d invalid, error %v", len(batch.Events), len(batch.Errors), err)
		}
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*events), "ns/event")
}
