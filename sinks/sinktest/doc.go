// Package sinktest is the conformance suite every sink passes: Run writes
// batches through a sink into a real destination (an emulator) and reads
// them back.
//
// It checks what the pipeline relies on and no more: batches at the sink's
// own Limits are accepted, results are one per record and in order, what
// was accepted is stored byte for byte under its ID, an ended context ends a
// Write, and Writes may run concurrently. The failures a real service
// causes (throttling, access denied) are each sink's own unit tests, with a
// faked SDK.
//
// A destination that keeps no record IDs (Firehose, CloudWatch Logs) wraps
// its sink in IDsByData, whose Record gives what ReadAll reads back its ID.
package sinktest
