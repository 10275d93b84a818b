package loadgen

import (
	"bytes"
	"strconv"

	"github.com/sluicehq/sluice/schemas"
)

// sampleObjects is how many distinct objects the events cycle through.
// Sampling a 1 KB event takes about 0.2 ms, so sampling 200,000 of them
// would take longer than the benchmark; every event still has its own id
// and its own copy of its object, so that every mode holds about as much
// pre-generated data in memory (which sets how often the GC runs).
const sampleObjects = 1000

// sampleSeed seeds the sampler, so that every run sends the same objects.
const sampleSeed = 1

// sampleEvents returns n http_request_complete.v0 events of about 1 KB
// each, all of one account, each with its own event_id.
func sampleEvents(n int) []schemas.Event {
	s := schemas.NewSampler(sampleSeed)
	samples := make([]schemas.Event, min(n, sampleObjects))
	for i := range samples {
		samples[i] = s.HTTPRequest1KB()
	}
	events := make([]schemas.Event, n)
	for i := range events {
		ev := samples[i%len(samples)]
		if i >= len(samples) {
			ev.ID = schemas.NewID(schemas.PrefixEvent)
		}
		ev.Object = bytes.Clone(ev.Object)
		events[i] = ev
	}
	return events
}

// encodeEvents returns the events as sluice stores them. It fails on the
// first event the catalogue refuses.
func encodeEvents(events []schemas.Event) ([]schemas.Encoded, error) {
	cat := schemas.Default()
	encoded := make([]schemas.Encoded, len(events))
	for i, ev := range events {
		enc, err := cat.Encode(ev)
		if err != nil {
			return nil, err
		}
		encoded[i] = enc
	}
	return encoded, nil
}

// requestBody is one pre-built ingest request.
type requestBody struct {
	json   []byte // a JSON array of events
	events int
}

// requestBodies returns the events as JSON array bodies of at most batch
// events each, in the form producers send them (see appendRequestEvent).
func requestBodies(events []schemas.Event, batch int) []requestBody {
	bodies := make([]requestBody, 0, (len(events)+batch-1)/batch)
	for start := 0; start < len(events); start += batch {
		chunk := events[start:min(start+batch, len(events))]
		b := make([]byte, 0, len(chunk)*1100+2)
		b = append(b, '[')
		for i := range chunk {
			if i > 0 {
				b = append(b, ',')
			}
			b = appendRequestEvent(b, &chunk[i])
		}
		b = append(b, ']')
		bodies = append(bodies, requestBody{json: b, events: len(chunk)})
	}
	return bodies
}

// appendRequestEvent appends ev as a producer sends a traffic event to the
// ingest API: event_id, event_type, event_timestamp and object. It leaves
// out account_id, which sluice takes from the API key, and principal, which
// traffic events do not have (the decoder refuses "principal":null).
func appendRequestEvent(b []byte, ev *schemas.Event) []byte {
	b = append(b, `{"event_id":`...)
	b = strconv.AppendQuote(b, ev.ID)
	b = append(b, `,"event_type":`...)
	b = strconv.AppendQuote(b, ev.Type)
	b = append(b, `,"event_timestamp":"`...)
	b = ev.Timestamp.UTC().AppendFormat(b, schemas.TimeLayout)
	b = append(b, `","object":`...)
	b = append(b, ev.Object...)
	return append(b, '}')
}
