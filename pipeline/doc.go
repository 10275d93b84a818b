// Package pipeline carries events from JetStream to their destinations. It is
// the home of the events stream (EnsureStream: SLUICE_EVENTS, every event on
// sluice.events.<account_id>.<event_type>), the dead-letter stream
// (EnsureDLQStream: SLUICE_DLQ), the route reconciler (Reconciler: one durable
// consumer per subscription × destination, kept in step with the store) and
// delivery (Deliverer: one worker per route that fetches, filters, selects
// fields, batches to the sink's limits with Batch, writes, retries and acks),
// and the recovery of dead letters (DeadLetters lists them, Redriver sends
// them again).
//
// It is not for validating events (package schemas), publishing them from
// other services (package producer), or talking to AWS (package sinks).
package pipeline
