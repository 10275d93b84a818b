package kvread

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
)

// Sizes of a page: the messages and bytes one direct get asks for.
const (
	pageMessages = 256
	pageBytes    = 1 << 20
)

// PageTimeout bounds the wait for one page's answer, whatever the
// caller's context: a reply lost on the way fails the read rather than
// leaving it waiting.
const PageTimeout = 5 * time.Second

// ErrRead is wrapped by the errors of a page the server refused or did
// not answer in time.
var ErrRead = errors.New("reading bucket")

// Headers of the key-value messages and of the direct get answers.
const (
	headerStatus     = "Status"
	headerNumPending = "Nats-Num-Pending"
	headerOperation  = "KV-Operation"
	statusEndOfBatch = "204"
	statusNoMessages = "404"
	operationDelete  = "DEL"
	operationPurge   = "PURGE"
)

// Entry is one key of a bucket as read: a jetstream.KeyValueEntry.
type Entry struct {
	bucket   string
	key      string
	value    []byte
	revision uint64
	created  time.Time
	op       jetstream.KeyValueOp
}

// Bucket returns the bucket the entry was read from.
func (e Entry) Bucket() string { return e.bucket }

// Key returns the entry's key.
func (e Entry) Key() string { return e.key }

// Value returns the entry's value; empty for a deleted key.
func (e Entry) Value() []byte { return e.value }

// Revision returns the stream sequence of the entry.
func (e Entry) Revision() uint64 { return e.revision }

// Created returns when the entry was written.
func (e Entry) Created() time.Time { return e.created }

// Delta is always 0: a read is not a watch.
func (e Entry) Delta() uint64 { return 0 }

// Operation returns jetstream.KeyValuePut, or KeyValueDelete or
// KeyValuePurge for a deleted key.
func (e Entry) Operation() jetstream.KeyValueOp { return e.op }

// deleted reports whether the entry is the marker of a deleted key.
func (e Entry) deleted() bool { return e.op != jetstream.KeyValuePut }

// request is the direct get of a page: the messages of the filter from
// a sequence on (JSApiMsgGetRequest's next_by_subj, seq, batch and
// max_bytes).
type request struct {
	Seq      uint64 `json:"seq"`
	NextFor  string `json:"next_by_subj"`
	Batch    int    `json:"batch"`
	MaxBytes int    `json:"max_bytes"`
}

// Each calls fn on every message of the bucket whose key matches filter
// (a key-value key pattern, with * and >), deleted keys' markers
// included (their Operation is not KeyValuePut), in revision order, as it reads them page by page. A key
// written during the read may come twice, its latest value last. It
// returns the first error of fn as it is, ctx's error, or one wrapping
// ErrRead.
func Each(ctx context.Context, nc *nats.Conn, bucket, filter string, fn func(Entry) error) error {
	inbox := nc.NewInbox()
	sub, err := nc.SubscribeSync(inbox)
	if err != nil {
		return fmt.Errorf("%w %s: %w", ErrRead, bucket, err)
	}
	defer func() { _ = sub.Unsubscribe() }()
	prefix := "$KV." + bucket + "."
	r := reader{nc: nc, sub: sub, inbox: inbox, api: "$JS.API.DIRECT.GET.KV_" + bucket, subject: prefix + filter, prefix: prefix, bucket: bucket}
	for seq := uint64(1); ; {
		next, more, err := r.page(ctx, seq, fn)
		if err != nil || !more {
			return err
		}
		seq = next
	}
}

// Current returns the current entries of the keys of the bucket that
// match filter, without deleted keys, each key once with its latest
// value, in the order of their revisions when first read. Errors are
// Each's.
func Current(ctx context.Context, nc *nats.Conn, bucket, filter string) ([]Entry, error) {
	var found []Entry
	index := make(map[string]int)
	err := Each(ctx, nc, bucket, filter, func(e Entry) error {
		if i, seen := index[e.key]; seen {
			found[i] = e // written, or deleted, during the read
			return nil
		}
		if !e.deleted() {
			index[e.key] = len(found)
			found = append(found, e)
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	current := found[:0]
	for _, e := range found {
		if !e.deleted() {
			current = append(current, e)
		}
	}
	return current, nil
}

// reader reads the pages of one Each.
type reader struct {
	nc                          *nats.Conn
	sub                         *nats.Subscription
	inbox, api, subject, prefix string
	bucket                      string
}

// page asks for the messages from seq on and hands them to fn. It
// returns the sequence to go on from and whether messages remain.
func (r reader) page(ctx context.Context, seq uint64, fn func(Entry) error) (uint64, bool, error) {
	body, err := json.Marshal(request{Seq: seq, NextFor: r.subject, Batch: pageMessages, MaxBytes: pageBytes})
	if err != nil {
		return 0, false, err
	}
	if err := r.nc.PublishRequest(r.api, r.inbox, body); err != nil {
		return 0, false, fmt.Errorf("%w %s: %w", ErrRead, r.bucket, err)
	}
	ctx, cancel := context.WithTimeout(ctx, PageTimeout)
	defer cancel()
	next := seq
	for {
		msg, err := r.sub.NextMsgWithContext(ctx)
		if err != nil { // ctx's error, or PageTimeout's
			return 0, false, fmt.Errorf("%w %s: %w", ErrRead, r.bucket, err)
		}
		switch status := msg.Header.Get(headerStatus); status {
		case "":
		case statusEndOfBatch:
			// A count missing or malformed is an error: read as 0, it
			// would end the read early and cut the list short.
			pending, err := strconv.ParseUint(msg.Header.Get(headerNumPending), 10, 64)
			if err != nil {
				return 0, false, fmt.Errorf("%w %s: the end of a page has no count of the messages left (%s: %q)", ErrRead, r.bucket, headerNumPending, msg.Header.Get(headerNumPending))
			}
			return next, pending > 0, nil
		case statusNoMessages:
			return 0, false, nil
		default:
			return 0, false, fmt.Errorf("%w %s: the server answered %s %s", ErrRead, r.bucket, status, msg.Header.Get("Description"))
		}
		e, err := r.entry(msg)
		if err != nil {
			return 0, false, err
		}
		next = e.revision + 1
		if err := fn(e); err != nil {
			return 0, false, err
		}
	}
}

// entry decodes a message of the answer.
func (r reader) entry(msg *nats.Msg) (Entry, error) {
	subject := msg.Header.Get(jetstream.SubjectHeader)
	if len(subject) <= len(r.prefix) || subject[:len(r.prefix)] != r.prefix {
		return Entry{}, fmt.Errorf("%w %s: a message of subject %q, not of the bucket", ErrRead, r.bucket, subject)
	}
	seq, err := strconv.ParseUint(msg.Header.Get(jetstream.SequenceHeader), 10, 64)
	if err != nil {
		return Entry{}, fmt.Errorf("%w %s: bad %s header: %w", ErrRead, r.bucket, jetstream.SequenceHeader, err)
	}
	created, _ := time.Parse(time.RFC3339Nano, msg.Header.Get(jetstream.TimeStampHeaer))
	e := Entry{bucket: r.bucket, key: subject[len(r.prefix):], value: msg.Data, revision: seq, created: created, op: jetstream.KeyValuePut}
	switch msg.Header.Get(headerOperation) {
	case operationDelete:
		e.op, e.value = jetstream.KeyValueDelete, nil
	case operationPurge:
		e.op, e.value = jetstream.KeyValuePurge, nil
	}
	return e, nil
}
