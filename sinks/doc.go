// Package sinks defines what sluice asks of a destination service: write one
// batch of records and say, for each, whether it was accepted, failed and
// may be sent again, or can never be written. The sinks themselves are its
// subpackages (sinks/kinesis, ...); sinks/sinktest is the conformance suite
// every sink passes.
//
// A sink does not batch, retry, wait or acknowledge: package pipeline does
// all of that, the same way for every sink. A sink's Limits tell the
// pipeline's batcher how to cut batches the service accepts.
package sinks
