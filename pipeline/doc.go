// Package pipeline carries events from JetStream to their destinations. It is
// the home of the events stream (EnsureStream: SLUICE_EVENTS, every event on
// sluice.events.<account_id>.<event_type>), the dead-letter stream
// (EnsureDLQStream: SLUICE_DLQ), the route reconciler (Reconciler: one durable
// consumer per subscription × destination, kept in step with the store) and
// delivery (Deliverer: one worker per route that fetches, filters, selects
// fields, batches to the sink's limits with Batch, writes, retries and acks),
// the recovery of dead letters (DeadLetters lists them, Redriver sends
// them again), and the delivery status of destinations (StatusRecorder keeps
// each process's outcomes in the SLUICE_STATUS bucket, StatusReader merges
// them; Trial writes one test record).
//
// It is not for validating events (package schemas), publishing them from
// other services (package producer), or talking to AWS (package sinks).
package pipeline
