// Package pipeline carries events from JetStream to their destinations. It is
// the home of the events stream, the route reconciler (one durable consumer
// per subscription × destination) and the delivery worker (fetch, filter,
// batch, send to the sink, ack).
//
// At present it holds the stream's configuration: EnsureStream creates or
// updates SLUICE_EVENTS, where every event is stored on
// sluice.events.<account_id>.<event_type>. The reconciler and the worker are
// added by later changes.
//
// It is not for validating events (package schemas), publishing them from
// other services (package producer), or talking to AWS (package sinks).
package pipeline
