package pipeline

import (
	"context"
	"fmt"

	"github.com/sluicehq/sluice/filters"
	"github.com/sluicehq/sluice/internal/store"
	"github.com/sluicehq/sluice/schemas"
	"github.com/sluicehq/sluice/sinks"
)

// routePlan is how the events of one subscription go to one destination: a
// selector per source, by event kind, and the sink the records go to. Live
// delivery and redrive build it the same way, with newRoutePlan.
type routePlan struct {
	subscriptionID string
	selectors      map[string]planSelector // by event kind
	sink           sinks.Sink
	// memo, when not nil, is shared by the routes of every subscription,
	// so that they select each event once per source (see filterMemo).
	memo *filterMemo
}

// planSelector is the selector of a source, and the source's key in the
// plan's memo.
type planSelector struct {
	*filters.Selector
	memoKey uint64
}

// newRoutePlan returns the plan of the events of sub written through sink,
// the sink of the destination. A destination that keeps subscriptions
// apart (CloudWatch Logs, a log stream each) gives each its own sink on the
// shared client. The routes of a subscription given one memo (nil: none)
// select each event once. It returns an error naming the source whose
// selector cannot be built.
func newRoutePlan(env *filters.Env, cache *filters.Cache, memo *filterMemo, sub store.Subscription, sink sinks.Sink) (routePlan, error) {
	if s, ok := sink.(sinks.SubscriptionSink); ok {
		sink = s.ForSubscription(sub.ID)
	}
	selectors := make(map[string]planSelector, len(sub.Sources))
	for _, src := range sub.Sources {
		sel, err := filters.NewSelector(env, cache, filters.Source{Kind: src.Type, Filter: src.Filter, Fields: src.Fields})
		if err != nil {
			return routePlan{}, fmt.Errorf("source %s: %w", src.Type, err)
		}
		selectors[src.Type] = planSelector{Selector: sel, memoKey: memo.sourceKey(sub.ID, src)}
	}
	return routePlan{subscriptionID: sub.ID, selectors: selectors, sink: sink, memo: memo}, nil
}

// entry is a record on its way to a sink, with its size against the sink's
// limits (sinks.Limits.Size), computed once when the record is made.
type entry struct {
	record sinks.Record
	size   int
}

// refusal says why an event became no record: the class of its dead letter
// (dlqMalformed, dlqFilter) or of the redrive failure (RedriveUnroutable,
// RedriveFiltered), and what text says. The zero refusal is none. It is a
// value, and its text is made only when asked: the live worker acks an
// event the filter rejects without a word, half of a route's events or
// more.
type refusal struct {
	class string
	// message is the text of dlqMalformed and dlqFilter; subscriptionID
	// and eventType make that of RedriveUnroutable and RedriveFiltered.
	message, subscriptionID, eventType string
}

// text says why the event became no record.
func (r refusal) text() string {
	switch r.class {
	case RedriveUnroutable:
		return fmt.Sprintf("subscription %s no longer has a source of kind %s", r.subscriptionID, r.eventType)
	case RedriveFiltered:
		return fmt.Sprintf("the filter of subscription %s's source %s rejects the event now", r.subscriptionID, r.eventType)
	}
	return r.message
}

// record turns a stored event into the entry the plan writes: it reads the
// event's header once (its time parsed once, carried in the record), picks
// the selector of its kind and runs it. A refusal of class
// RedriveUnroutable is an event of a kind the plan has no source of,
// RedriveFiltered one the filter rejects, dlqFilter one the filter could
// not decide (ctx may have ended: the caller tells) and dlqMalformed bytes
// that are no envelope. The size of the entry is not checked here: the
// write path refuses a record over the sink's MaxRecordBytes.
func (rp *routePlan) record(ctx context.Context, data []byte) (entry, refusal) {
	head, spans, err := schemas.ReadHeader(data)
	if err != nil {
		return entry{}, refusal{class: dlqMalformed, message: err.Error()}
	}
	sel, ok := rp.selectors[head.Type]
	if !ok {
		return entry{record: sinks.Record{ID: head.ID}}, refusal{class: RedriveUnroutable, subscriptionID: rp.subscriptionID, eventType: head.Type}
	}
	out, keep, err := rp.memo.selectEvent(ctx, sel.memoKey, sel.Selector, data, spans, head.ID)
	switch {
	case err != nil:
		return entry{record: sinks.Record{ID: head.ID}}, refusal{class: dlqFilter, message: err.Error()}
	case !keep:
		return entry{record: sinks.Record{ID: head.ID}}, refusal{class: RedriveFiltered, subscriptionID: rp.subscriptionID, eventType: head.Type}
	}
	rec := sinks.Record{ID: head.ID, Data: out, Timestamp: head.Timestamp}
	return entry{record: rec, size: rp.sink.Limits().Size(rec)}, refusal{}
}

// selectEvent runs sel on data, turning a panic into an error, so that an
// event that breaks the selector or its filter is dead-lettered rather than
// taking the process down.
func selectEvent(ctx context.Context, sel *filters.Selector, data []byte, h schemas.HeaderSpans) (out []byte, keep bool, err error) {
	defer func() {
		if r := recover(); r != nil {
			out, keep, err = nil, false, fmt.Errorf("selecting the event: panic: %v", r)
		}
	}()
	return sel.SelectScanned(ctx, data, h, nil)
}
