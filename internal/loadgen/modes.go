package loadgen

import (
	"context"
	"errors"
	"fmt"
	"sync/atomic"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/sluicehq/sluice/producer"
)

// prepareRaw readies the baseline: the events are encoded as sluice stores
// them before the clock starts, and the timed loop only publishes them
// asynchronously, with their Nats-Msg-Id, and waits for every ack.
func prepareRaw(_ context.Context, env *environment) (func(context.Context) error, error) {
	encoded, err := encodeEvents(env.workload.events)
	if err != nil {
		return nil, fmt.Errorf("encoding events: %w", err)
	}
	subjects := make([]string, len(encoded))
	for i := range encoded {
		subjects[i] = encoded[i].Subject()
	}
	var failed atomic.Int64
	js, err := jetstream.New(env.nc,
		jetstream.WithPublishAsyncMaxPending(env.cfg.MaxPending),
		jetstream.WithPublishAsyncErrHandler(func(jetstream.JetStream, *nats.Msg, error) { failed.Add(1) }))
	if err != nil {
		return nil, fmt.Errorf("creating JetStream context: %w", err)
	}
	return func(ctx context.Context) error {
		for i := range encoded {
			msg := &nats.Msg{
				Subject: subjects[i],
				Data:    encoded[i].Data,
				Header:  nats.Header{jetstream.MsgIDHeader: []string{encoded[i].MsgID()}},
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
	}, nil
}

// publishRaw starts publishing msg, waiting while every slot for pending
// acks is taken.
func publishRaw(ctx context.Context, js jetstream.JetStream, msg *nats.Msg) error {
	for {
		_, err := js.PublishMsgAsync(msg)
		if !errors.Is(err, jetstream.ErrTooManyStalledMsgs) {
			return err
		}
		if ctx.Err() != nil {
			return ctx.Err()
		}
	}
}

// prepareProducer readies publishing through package producer: validation
// and encoding of each event are timed, as in a service that uses it. The
// loop waits for each future once MaxPending newer events are published,
// as a service would, so that no more futures are alive than acks can be
// pending; then it waits for the rest.
func prepareProducer(_ context.Context, env *environment) (func(context.Context) error, error) {
	p, err := producer.New(env.nc, producer.Config{MaxPending: env.cfg.MaxPending})
	if err != nil {
		return nil, err
	}
	events := env.workload.events
	pending := make([]*producer.Future, min(env.cfg.MaxPending, len(events)))
	return func(ctx context.Context) error {
		for i := range events {
			slot := i % len(pending)
			if i >= len(pending) {
				if err := checkResult(i-len(pending), pending[slot].Wait(ctx)); err != nil {
					return err
				}
			}
			f, err := p.PublishAsync(ctx, events[i])
			if err != nil {
				return fmt.Errorf("publishing event %d: %w", i, err)
			}
			pending[slot] = f
		}
		for i := max(len(events)-len(pending), 0); i < len(events); i++ {
			if err := checkResult(i, pending[i%len(pending)].Wait(ctx)); err != nil {
				return err
			}
		}
		return nil
	}, nil
}

// checkResult returns an error wrapping ErrNotStored unless event i was
// stored, for the first time.
func checkResult(i int, res producer.Result) error {
	switch {
	case res.Err != nil:
		return fmt.Errorf("%w: event %d: %w", ErrNotStored, i, res.Err)
	case res.Duplicate:
		return fmt.Errorf("%w: event %d (%s) is a duplicate", ErrNotStored, i, res.EventID)
	}
	return nil
}
