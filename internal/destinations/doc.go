// Package destinations builds the sink that writes to a stored event
// destination, choosing the sink package by the destination's target:
// sinks/kinesis, sinks/firehose or sinks/cloudwatchlogs. New is the
// pipeline.SinkFactory of sluice serve and of the end-to-end tests.
//
// It is not the place for caching sinks or for any I/O: the pipeline keeps
// one sink per destination, and a sink reaches AWS only when it writes.
package destinations
