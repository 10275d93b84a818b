package producer

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/sluicehq/sluice/internal/defaults"
	"github.com/sluicehq/sluice/schemas"
)

// ErrNotStored is wrapped by a Result's error when JetStream did not
// acknowledge the event: it may or may not be stored. Publishing the same
// event (with the same event_id) again is safe within the stream's
// duplicate window.
var ErrNotStored = errors.New("event not acknowledged by JetStream")

// Config tunes a Producer. The zero value is usable.
type Config struct {
	// MaxPending bounds the acknowledgements in flight; publishing waits for
	// room beyond it. Default 4096.
	MaxPending int
	// AckTimeout bounds the wait for one acknowledgement. Default 10s.
	AckTimeout time.Duration
	// Catalogue validates events; default schemas.Default().
	Catalogue *schemas.Catalogue
}

func (c *Config) setDefaults() {
	defaults.Positive(&c.MaxPending, 4096)
	defaults.Positive(&c.AckTimeout, 10*time.Second)
	if c.Catalogue == nil {
		c.Catalogue = schemas.Default()
	}
}

// Producer publishes events to sluice's stream. It is safe for concurrent use.
type Producer struct {
	js  jetstream.JetStream
	cfg Config
}

// New returns a Producer publishing over nc.
func New(nc *nats.Conn, cfg Config) (*Producer, error) {
	cfg.setDefaults()
	js, err := jetstream.New(nc,
		jetstream.WithPublishAsyncMaxPending(cfg.MaxPending),
		jetstream.WithPublishAsyncTimeout(cfg.AckTimeout))
	if err != nil {
		return nil, fmt.Errorf("creating JetStream context: %w", err)
	}
	return &Producer{js: js, cfg: cfg}, nil
}

// Result is the outcome of publishing one event.
type Result struct {
	// EventID is the event's id, generated when the event had none.
	EventID string
	// Duplicate is true when the stream already held an event with this id
	// (a retried publish): it was not stored again.
	Duplicate bool
	// Err is nil when the event is stored. It is a validation error
	// (*schemas.FieldError, *schemas.SyntaxError, schemas.ErrUnknownKind,
	// and schemas.ErrEmittedBySluice for a kind only sluice emits), or
	// wraps ErrNotStored.
	Err error
}

// Future is an event being published.
type Future struct {
	id  string
	ack jetstream.PubAckFuture
	err error // set when the publish could not start
}

// Wait blocks until the event is acknowledged, the acknowledgement times
// out (Config.AckTimeout), or ctx ends, and returns the outcome.
func (f *Future) Wait(ctx context.Context) Result {
	if f.err != nil {
		return Result{EventID: f.id, Err: f.err}
	}
	select {
	case ack := <-f.ack.Ok():
		return Result{EventID: f.id, Duplicate: ack.Duplicate}
	case err := <-f.ack.Err():
		return Result{EventID: f.id, Err: fmt.Errorf("%w: %w", ErrNotStored, err)}
	case <-ctx.Done():
		return Result{EventID: f.id, Err: fmt.Errorf("%w: %w", ErrNotStored, ctx.Err())}
	}
}

// PublishAsync validates ev and starts publishing it. It returns a
// validation error at once; otherwise the Future reports whether JetStream
// stored the event. It waits while MaxPending acknowledgements are in flight.
// When ctx has ended it publishes nothing and the Future reports an error
// wrapping ErrNotStored and ctx.Err().
func (p *Producer) PublishAsync(ctx context.Context, ev schemas.Event) (*Future, error) {
	enc, err := p.cfg.Catalogue.Encode(ev)
	if err != nil {
		return nil, err
	}
	return p.start(ctx, &enc), nil
}

// start publishes an encoded event, waiting for room among the pending acks.
// When ctx has already ended it publishes nothing: the Future's error wraps
// ErrNotStored and ctx.Err().
func (p *Producer) start(ctx context.Context, enc *schemas.Encoded) *Future {
	if err := ctx.Err(); err != nil {
		return &Future{id: enc.ID, err: fmt.Errorf("%w: %w", ErrNotStored, err)}
	}
	msg := &nats.Msg{
		Subject: enc.Subject(),
		Data:    enc.Data,
		Header:  nats.Header{jetstream.MsgIDHeader: []string{enc.MsgID()}},
	}
	for {
		ack, err := p.js.PublishMsgAsync(msg)
		if errors.Is(err, jetstream.ErrTooManyStalledMsgs) {
			// Every slot is taken: the client's stall wait was spent
			// waiting for acks. Go on waiting unless the caller gave up.
			if ctx.Err() == nil {
				continue
			}
			err = ctx.Err()
		}
		if err != nil {
			return &Future{id: enc.ID, err: fmt.Errorf("%w: %w", ErrNotStored, err)}
		}
		return &Future{id: enc.ID, ack: ack}
	}
}

// Publish validates and publishes events, and waits until every one is
// acknowledged or has failed. Results[i] is the outcome of events[i]; events
// that fail validation are not published.
func (p *Producer) Publish(ctx context.Context, events ...schemas.Event) []Result {
	results := make([]Result, len(events))
	futures := make([]*Future, len(events))
	for i, ev := range events {
		enc, err := p.cfg.Catalogue.Encode(ev)
		if err != nil {
			results[i] = Result{EventID: ev.ID, Err: err}
			continue
		}
		futures[i] = p.start(ctx, &enc)
	}
	p.wait(ctx, futures, results)
	return results
}

// PublishEncoded publishes events already validated and encoded (by
// schemas.Catalogue.DecodeBatch or Encode) and waits for every outcome.
// Results[i] is the outcome of events[i]. An event of a kind only sluice
// emits is not published unless schemas.Catalogue.EncodeBySluice made it:
// its Result's error wraps schemas.ErrEmittedBySluice. When ctx has ended
// nothing is published, and every Result's error wraps ErrNotStored and
// ctx.Err().
func (p *Producer) PublishEncoded(ctx context.Context, events []schemas.Encoded) []Result {
	futures := make([]*Future, len(events))
	results := make([]Result, len(events))
	for i := range events {
		if err := p.cfg.Catalogue.CheckPublishable(&events[i]); err != nil {
			results[i] = Result{EventID: events[i].ID, Err: err}
			continue
		}
		futures[i] = p.start(ctx, &events[i])
	}
	p.wait(ctx, futures, results)
	return results
}

func (p *Producer) wait(ctx context.Context, futures []*Future, results []Result) {
	for i, f := range futures {
		if f != nil {
			results[i] = f.Wait(ctx)
		}
	}
}
