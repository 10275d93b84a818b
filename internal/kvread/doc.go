// Package kvread reads the current entries of a JetStream key-value bucket
// whose keys match a filter, with batched direct gets: plain requests and
// replies to the bucket's stream (which key-value buckets make with
// AllowDirect), paged, so that a read makes no consumer on the server and
// starts no goroutine in the client.
//
// It exists because the key-value API of nats.go lists keys with a watch,
// an ordered push consumer per call, with heartbeat timers and a reset
// goroutine of its own: a management read per request that made one let a
// flood of reads from one account make the server create and delete
// consumers faster than it could and set off nats.go v1.55.0's ordered
// consumer reset on watches already stopped (issue 23), which crashed the
// process. Long-lived watches owned by the process are not its business.
//
// It reads a bucket kept with History 1, as sluice's are: a stream that
// holds one message per key, its latest, so that reading the stream's
// messages matching the filter in sequence order reads each current key
// once, and a key written during the read comes again, later, with its
// new value.
package kvread
