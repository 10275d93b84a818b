// Package loadgen is the engine of `sluice-bench`: it measures how many
// events per second sluice stores in JetStream and delivers from it, and
// sets each figure beside a raw JetStream baseline measured in the same run
// on the same kind of server, so that the ratio says what sluice's own
// logic costs on whatever machine runs it.
//
// RunIngest compares three ways in, each on a fresh embedded NATS server
// with file storage: a minimal nats.go asynchronous-publish loop of
// pre-encoded events (the baseline), package producer, and the HTTP ingest
// API over loopback. It verifies that the stream holds every event after
// each measurement. Besides the rates it reports the CPU time and heap
// allocations per event, which vary less than the rates on a shared
// machine.
//
// RunDeliver compares two ways out of a backlog of the same events: a
// minimal nats.go pull loop acknowledging each (the baseline), and
// package pipeline's reconciler and deliverer running a filtered route,
// made through package store, into a sink that accepts every record. It
// verifies that the sink accepted exactly the events the filter passes.
//
// RunDrain compares three ways out of a backlog of ~1.8 KB events stored
// by a JetStream server in another process: the same raw pull loop, and
// routes without and with a filter and selection into the real Kinesis
// sink, writing to a minimal Kinesis endpoint in a third process
// (KinesisEndpoint); both helper processes run ServeDrainHelper. It
// reports the CPU time of the bench process alone, and the load average.
//
// RunPending measures the resident memory of the process while a million
// events are pending for a destination that takes none.
//
// RunLoad runs sluice end to end in one process, as `sluice serve` does
// (HTTP API, embedded JetStream, reconciler and deliverer), under paced or
// flat-out load over HTTP into a null sink or sluice's AWS emulator, and
// reports the rates in and out, the latency from event_timestamp to the
// sink's acceptance, events lost or delivered twice, and the resident
// memory over time (`make soak`).
//
// RunAttacks is the exception to that: it plays the attacks of a hostile
// tenant (issue 11: filter bombs, reused event ids, slow uploads, big
// bodies, resource floods, leaks, ambiguous JSON, forged audit events)
// from one account against a separate `sluice serve --dev` process on this
// machine, while another account publishes at a steady rate, and reports
// per attack what sluice answered, the victim's ingest and delivery
// latency beside a baseline, and the process's peak resident memory, CPU
// time and liveness; AttackReport.Violations says which guarantee of
// tenancy broke. It refuses any address but loopback.
//
// Otherwise it is not a load tester for a deployed sluice: it starts its
// own servers, in process or (RunDrain) in processes of its own, and it is
// not used by `sluice serve`.
package loadgen
