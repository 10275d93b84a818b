package loadgen

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"sync/atomic"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/sluicehq/sluice/schemas"
)

// Server ports of the backlog's events: even events go to HTTPS and pass
// the route's filter, odd ones to HTTP and do not.
const (
	portPassing  = 443
	portFiltered = 80
)

// deliverFilter is the CEL filter of the delivery benchmark's route: it
// passes half of the backlog.
const deliverFilter = "ev.conn.server_port == 443"

// backlog makes the events of the delivery benchmarks on the fly from a
// few distinct objects, so that a backlog of a million events costs no
// more memory than a thousand.
type backlog struct {
	samples []schemas.Event // HTTPRequest1KB events, alternately on portPassing and portFiltered
}

// newBacklog samples the objects of the backlog.
func newBacklog() (*backlog, error) {
	s := schemas.NewSampler(sampleSeed)
	samples := make([]schemas.Event, sampleObjects)
	for i := range samples {
		ev := s.HTTPRequest1KB()
		port := portPassing
		if i%2 == 1 {
			port = portFiltered
		}
		obj, err := withServerPort(ev.Object, port)
		if err != nil {
			return nil, fmt.Errorf("sample %d: %w", i, err)
		}
		ev.Object = obj
		samples[i] = ev
	}
	return &backlog{samples: samples}, nil
}

// withServerPort returns the object with conn.server_port set to port.
func withServerPort(object []byte, port int) ([]byte, error) {
	return editObject(object, func(obj map[string]any) error {
		conn, ok := obj["conn"].(map[string]any)
		if !ok {
			return fmt.Errorf("the object has no conn group")
		}
		conn["server_port"] = port
		return nil
	})
}

// editObject returns the JSON object with edit applied to it, numbers
// kept as written and nothing escaped for HTML.
func editObject(object []byte, edit func(obj map[string]any) error) ([]byte, error) {
	dec := json.NewDecoder(bytes.NewReader(object))
	dec.UseNumber()
	var obj map[string]any
	if err := dec.Decode(&obj); err != nil {
		return nil, fmt.Errorf("decoding the object: %w", err)
	}
	if err := edit(obj); err != nil {
		return nil, err
	}
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(obj); err != nil {
		return nil, err
	}
	return bytes.TrimSuffix(b.Bytes(), []byte("\n")), nil
}

// passing is how many of n events the route's filter passes.
func passing(n int) int { return (n + 1) / 2 }

// publish stores n events of the account in the events stream, each with
// its own event_id, validated and encoded as sluice stores them, with at
// most DefaultMaxPending acks outstanding. Event i passes the filter when i
// is even.
func (b *backlog) publish(ctx context.Context, nc *nats.Conn, account string, n int) error {
	var failed atomic.Int64
	js, err := jetstream.New(nc,
		jetstream.WithPublishAsyncMaxPending(DefaultMaxPending),
		jetstream.WithPublishAsyncErrHandler(func(jetstream.JetStream, *nats.Msg, error) { failed.Add(1) }))
	if err != nil {
		return fmt.Errorf("creating JetStream context: %w", err)
	}
	cat := schemas.Default()
	for i := range n {
		ev := b.samples[i%len(b.samples)]
		ev.ID = schemas.NewID(schemas.PrefixEvent)
		ev.AccountID = account
		enc, err := cat.Encode(ev)
		if err != nil {
			return fmt.Errorf("encoding event %d: %w", i, err)
		}
		msg := &nats.Msg{
			Subject: enc.Subject(),
			Data:    enc.Data,
			Header:  nats.Header{jetstream.MsgIDHeader: []string{enc.MsgID()}},
		}
		if err := publishRaw(ctx, js, msg); err != nil {
			return fmt.Errorf("publishing event %d: %w", i, err)
		}
	}
	select {
	case <-js.PublishAsyncComplete():
	case <-ctx.Done():
		return ctx.Err()
	}
	if n := failed.Load(); n > 0 {
		return fmt.Errorf("%w: JetStream refused %d events", ErrNotStored, n)
	}
	return nil
}
