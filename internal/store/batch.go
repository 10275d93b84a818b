package store

import (
	"context"
	"crypto/rand"
	"encoding/json"
	"fmt"
	"strconv"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
)

// Headers of JetStream's atomic batch publish (nats-server 2.12 and
// later), which nats.go has no client for yet.
const (
	headerBatchID     = "Nats-Batch-Id"
	headerBatchSeq    = "Nats-Batch-Sequence"
	headerBatchCommit = "Nats-Batch-Commit"
	headerKVOperation = "KV-Operation"
	kvDelete          = "DEL"
	kvPurge           = "PURGE"
)

// JetStream API error codes of a compare-and-swap conflict: "wrong last
// sequence", and its form on replicated streams and in batches.
const (
	jsWrongLastSequence         = 10071
	jsWrongLastSequenceConstant = 10164
)

// batchTimeout bounds the answer to each message of a batch when ctx has
// no deadline, as nats.go's own default does for a publish.
const batchTimeout = 5 * time.Second

// batchAckEvery is how often a batch waits for the server's answer to a
// message before its commit: the first message (which starts the batch),
// then every batchAckEvery-th, so that a batch of many messages takes a
// few round trips rather than one each (an edge's delete is up to 902),
// and a server refusing it is heard before all of it is sent (ADR-50).
const batchAckEvery = 128

// write is one message of an atomic batch on the bucket: a put of value
// under key, or a deletion of key, each only if the key is at revision (0:
// the key has never been written).
type write struct {
	key      string
	value    []byte
	del      bool
	revision uint64
}

// commitBatch writes every write, all or none: JetStream checks each
// write's revision when the batch commits, and stores them all together,
// or none if one check fails (an error wrapping
// jetstream.ErrKeyRevisionMismatch) or the store fails. It returns the
// revision each write got.
//
// A batch the server took but did not answer (connection lost) may or may
// not have been stored, like any publish. Only some of its messages wait
// for an answer (batchAckEvery).
//
// A batch once begun is sent to its commit whatever becomes of ctx (its
// values are kept, its end is not; batchTimeout bounds it): JetStream keeps
// a batch without its commit for 10 s and at most 50 at once per stream,
// and every account's changes share the bucket's stream, so a client that
// hangs up during its requests could otherwise hold them all and stop
// every other account's changes.
func (s *Store) commitBatch(ctx context.Context, writes []write) ([]uint64, error) {
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), batchTimeout)
	defer cancel()
	id := rand.Text()
	var answer []byte
	for i, w := range writes {
		msg := nats.NewMsg(kvSubject(w.key))
		msg.Data = w.value
		msg.Header.Set(headerBatchID, id)
		msg.Header.Set(headerBatchSeq, strconv.Itoa(i+1))
		msg.Header.Set(jetstream.ExpectedLastSubjSeqHeader, strconv.FormatUint(w.revision, 10))
		if w.del {
			msg.Header.Set(headerKVOperation, kvDelete)
		}
		last := i == len(writes)-1
		if last {
			msg.Header.Set(headerBatchCommit, "1")
		}
		if !last && i%batchAckEvery != 0 {
			// Published without waiting: one connection keeps its order,
			// and a message the server refuses or never gets leaves a gap
			// that makes it refuse the commit.
			if err := s.nc.PublishMsg(msg); err != nil {
				return nil, fmt.Errorf("writing %s in a batch: %w", w.key, err)
			}
			continue
		}
		reply, err := s.nc.RequestMsgWithContext(ctx, msg)
		if err != nil {
			return nil, fmt.Errorf("writing %s in a batch: %w", w.key, err)
		}
		// The server answers the messages before the commit with nothing,
		// unless it refuses them.
		if len(reply.Data) == 0 && i < len(writes)-1 {
			continue
		}
		answer = reply.Data
		if err := batchError(answer); err != nil {
			return nil, fmt.Errorf("writing %s in a batch: %w", w.key, err)
		}
		if i < len(writes)-1 {
			return nil, fmt.Errorf("writing %s in a batch: unexpected answer %q", w.key, answer)
		}
	}
	var ack struct {
		Seq uint64 `json:"seq"`
	}
	if err := json.Unmarshal(answer, &ack); err != nil || ack.Seq < uint64(len(writes)) {
		return nil, fmt.Errorf("reading the answer to a batch: %q", answer)
	}
	revisions := make([]uint64, len(writes))
	for i := range writes {
		revisions[i] = ack.Seq - uint64(len(writes)-1-i)
	}
	return revisions, nil
}

// batchError returns the error of an answer of JetStream to a message of a
// batch, wrapping jetstream.ErrKeyRevisionMismatch for a compare-and-swap
// conflict, or nil.
func batchError(answer []byte) error {
	var resp struct {
		Error *jetstream.APIError `json:"error"`
	}
	if err := json.Unmarshal(answer, &resp); err != nil {
		return fmt.Errorf("reading the answer %q: %w", answer, err)
	}
	if resp.Error == nil {
		return nil
	}
	switch resp.Error.ErrorCode {
	case jsWrongLastSequence, jsWrongLastSequenceConstant:
		return fmt.Errorf("%w: %w", resp.Error, jetstream.ErrKeyRevisionMismatch)
	}
	return resp.Error
}

// kvSubject returns the subject the bucket stores key on.
func kvSubject(key string) string { return "$KV." + Bucket + "." + key }

// kvStream is the name of the stream the bucket is kept in.
const kvStream = "KV_" + Bucket

// allowAtomicBatches lets the bucket's stream take atomic batches, which
// changes and their audit events are written in, and direct gets, which
// lists are read with (package kvread; the key-value API makes its
// buckets with them, but a bucket made otherwise might lack them).
// Buckets made before sluice wrote batches get the settings here; it
// changes nothing else of the stream.
func allowAtomicBatches(ctx context.Context, js jetstream.JetStream) (jetstream.Stream, error) {
	stream, err := js.Stream(ctx, kvStream)
	if err != nil {
		return nil, fmt.Errorf("reading stream %s: %w", kvStream, err)
	}
	cfg := stream.CachedInfo().Config
	if cfg.AllowAtomicPublish && cfg.AllowDirect {
		return stream, nil
	}
	cfg.AllowAtomicPublish, cfg.AllowDirect = true, true
	if stream, err = js.UpdateStream(ctx, cfg); err != nil {
		return nil, fmt.Errorf("letting stream %s take atomic batches (it needs nats-server 2.12 or later): %w", kvStream, err)
	}
	// A server older than 2.12 takes the update and ignores the setting;
	// it would store a batch's messages one by one.
	if !stream.CachedInfo().Config.AllowAtomicPublish {
		return nil, fmt.Errorf("stream %s does not take atomic batches: sluice needs nats-server 2.12 or later on every node, to store each change with its audit event", kvStream)
	}
	return stream, nil
}
