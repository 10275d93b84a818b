package pipeline

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/sluicehq/sluice/internal/defaults"
	"github.com/sluicehq/sluice/sinks"
)

// StatusBucket is the JetStream key-value bucket of delivery status: one
// key per process and destination, <account_id>.<destination_id>.<process
// id>, holding that process's StatusRecord of the destination.
const StatusBucket = "SLUICE_STATUS"

// Defaults of StatusConfig.
const (
	// DefaultFailingAfter is how long a destination's calls fail as a
	// whole before it is failing rather than retrying.
	DefaultFailingAfter = 5 * time.Minute
	// DefaultStatusTTL is how long a status record outlives the last
	// write of its process: the records of a process that died expire.
	DefaultStatusTTL = 2 * time.Minute
	// DefaultStatusFlush is how often a process writes the records that
	// changed.
	DefaultStatusFlush = time.Second
)

// Outcomes of the last write of a StatusRecord.
const (
	OutcomeOK      = "ok"      // every record accepted or dead-lettered
	OutcomePartial = "partial" // some records are to be sent again
	OutcomeFailed  = "failed"  // the call failed as a whole
)

// StatusRecord is what one process knows of its writes to one
// destination.
type StatusRecord struct {
	// LastSuccessAt is when the destination last accepted records.
	LastSuccessAt time.Time `json:"last_success_at,omitzero"`
	// LastError is the last failure: of the whole call, or of a record
	// in a call the destination answered.
	LastError *StatusError `json:"last_error,omitempty"`
	// LastWriteAt and LastOutcome are the time and outcome of the last
	// write.
	LastWriteAt time.Time `json:"last_write_at,omitzero"`
	LastOutcome string    `json:"last_outcome,omitempty"`
	// FailingSince is when the calls started failing as a whole, zero
	// unless the last call did.
	FailingSince time.Time `json:"failing_since,omitzero"`
}

// StatusError is a failure to write to a destination.
type StatusError struct {
	// Class is a sinks.Class for a call that failed as a whole, else the
	// sinks.Status of a record refused (retryable or permanent).
	Class string `json:"class"`
	// Code and Message are the service's error code and message, when
	// it gave them.
	Code    string    `json:"code"`
	Message string    `json:"message"`
	At      time.Time `json:"at"`
}

// StatusConfig tunes a StatusRecorder.
type StatusConfig struct {
	// ProcessID tells this process's records from others'; default a
	// random id.
	ProcessID string
	// FailingAfter: see DefaultFailingAfter.
	FailingAfter time.Duration
	// TTL must be the bucket's (EnsureStatusBucket); a record is written
	// again within a quarter of it even when unchanged. Default
	// DefaultStatusTTL.
	TTL time.Duration
	// Flush: see DefaultStatusFlush.
	Flush time.Duration
	// Metrics, when not nil, get the sluice_destination_failing gauge.
	Metrics *Metrics
}

func (c *StatusConfig) setDefaults() {
	if c.ProcessID == "" {
		var b [8]byte
		_, _ = rand.Read(b[:])
		c.ProcessID = hex.EncodeToString(b[:])
	}
	defaults.Positive(&c.FailingAfter, DefaultFailingAfter)
	defaults.Positive(&c.TTL, DefaultStatusTTL)
	defaults.Positive(&c.Flush, DefaultStatusFlush)
}

// EnsureStatusBucket creates the status bucket, or updates it, with keys
// expiring after ttl (default DefaultStatusTTL), with replicas copies.
func EnsureStatusBucket(ctx context.Context, js jetstream.JetStream, ttl time.Duration, replicas int) (jetstream.KeyValue, error) {
	defaults.Positive(&ttl, DefaultStatusTTL)
	kv, err := js.CreateOrUpdateKeyValue(ctx, jetstream.KeyValueConfig{
		Bucket:      StatusBucket,
		Description: "sluice delivery status: each process's last success and error per destination",
		History:     1,
		TTL:         ttl,
		Storage:     jetstream.FileStorage,
		Replicas:    max(replicas, 1),
	})
	if err != nil {
		return nil, fmt.Errorf("creating or updating bucket %s: %w", StatusBucket, err)
	}
	return kv, nil
}

// StatusRecorder keeps this process's status of each destination it
// writes to, in memory, as workers report their writes; Run writes the
// records that changed to the status bucket, at most once per Flush, and
// announces a destination that becomes failing (a Warn log line and
// sluice_destination_failing). A nil *StatusRecorder records nothing.
type StatusRecorder struct {
	kv  jetstream.KeyValue
	cfg StatusConfig
	log *slog.Logger

	mu           sync.Mutex
	destinations map[string]*destinationStatus // by account_id.destination_id
}

// NewStatusRecorder returns a recorder writing to kv, the status bucket.
func NewStatusRecorder(kv jetstream.KeyValue, cfg StatusConfig, log *slog.Logger) *StatusRecorder {
	cfg.setDefaults()
	return &StatusRecorder{kv: kv, cfg: cfg, log: log, destinations: make(map[string]*destinationStatus)}
}

// destinationStatus is the record of one destination in this process.
type destinationStatus struct {
	accountID, destinationID string

	mu        sync.Mutex
	record    StatusRecord
	changed   bool
	written   time.Time // when the record was last written to the bucket
	announced bool      // the destination was announced failing
}

// forDestination returns the record of a destination, made on first use.
func (r *StatusRecorder) forDestination(accountID, destinationID string) *destinationStatus {
	if r == nil {
		return nil
	}
	key := accountID + "." + destinationID
	r.mu.Lock()
	defer r.mu.Unlock()
	s, ok := r.destinations[key]
	if !ok {
		s = &destinationStatus{accountID: accountID, destinationID: destinationID}
		r.destinations[key] = s
	}
	return s
}

// retain forgets the destinations no route delivers to any more, keyed
// by account_id.destination_id: their records expire from the bucket, and
// their failing gauge goes.
func (r *StatusRecorder) retain(delivered map[string]bool) {
	if r == nil {
		return
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	for key, s := range r.destinations {
		if !delivered[key] {
			delete(r.destinations, key)
			r.cfg.Metrics.forgetDestination(s.accountID, s.destinationID)
		}
	}
}

// callFailed records a call that failed as a whole at now.
func (s *destinationStatus) callFailed(now time.Time, err error) {
	if s == nil {
		return
	}
	e := &StatusError{Class: string(sinks.ClassOf(err)), Message: err.Error(), At: now}
	var de *sinks.DestinationError
	if errors.As(err, &de) {
		e.Code = de.Code
		if de.Message != "" {
			e.Message = de.Message
		}
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.record.LastError = e
	s.record.LastWriteAt, s.record.LastOutcome = now, OutcomeFailed
	if s.record.FailingSince.IsZero() {
		s.record.FailingSince = now
	}
	s.changed = true
}

// answered records a call the destination answered at now: accepted
// records accepted, and failed, when not nil, one record it refused
// (retry says whether records are to be sent again).
func (s *destinationStatus) answered(now time.Time, accepted int, failed *sinks.Result, retry bool) {
	if s == nil {
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if accepted > 0 {
		s.record.LastSuccessAt = now
	}
	if failed != nil {
		s.record.LastError = &StatusError{Class: failed.Status.String(), Code: failed.Code, Message: failed.Message, At: now}
	}
	s.record.LastWriteAt, s.record.LastOutcome = now, OutcomeOK
	if retry {
		s.record.LastOutcome = OutcomePartial
	}
	s.record.FailingSince = time.Time{}
	s.changed = true
}

// Run writes the changed records until ctx ends, and announces the
// destinations that become failing or recover. It returns nil.
func (r *StatusRecorder) Run(ctx context.Context) error {
	ticker := time.NewTicker(r.cfg.Flush)
	defer ticker.Stop()
	for {
		select {
		case <-ctx.Done():
			return nil
		case <-ticker.C:
			r.flush(ctx, time.Now())
		}
	}
}

// flush writes the records that changed, or were not written for a
// quarter of the TTL, and announces changes of failing.
func (r *StatusRecorder) flush(ctx context.Context, now time.Time) {
	r.mu.Lock()
	all := make([]*destinationStatus, 0, len(r.destinations))
	for _, s := range r.destinations {
		all = append(all, s)
	}
	r.mu.Unlock()
	for _, s := range all {
		record, due := s.take(now, r.cfg.TTL/4)
		r.announce(s, record, now)
		if !due {
			continue
		}
		data, err := json.Marshal(record)
		if err != nil {
			continue
		}
		key := s.accountID + "." + s.destinationID + "." + r.cfg.ProcessID
		if _, err := r.kv.Put(ctx, key, data); err != nil {
			if ctx.Err() == nil {
				r.log.Warn("writing delivery status failed; trying again", "destination_id", s.destinationID, "error", err)
			}
			s.mu.Lock()
			s.changed = true
			s.mu.Unlock()
		}
	}
}

// take returns the record and whether it is to be written: changed, or
// not written for refresh.
func (s *destinationStatus) take(now time.Time, refresh time.Duration) (StatusRecord, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	due := s.changed || now.Sub(s.written) >= refresh
	if due {
		s.changed = false
		s.written = now
	}
	return s.record, due
}

// announce logs, once, and sets the gauge of a destination that has been
// failing for FailingAfter, and clears it when it recovers.
func (r *StatusRecorder) announce(s *destinationStatus, record StatusRecord, now time.Time) {
	failing := !record.FailingSince.IsZero() && now.Sub(record.FailingSince) >= r.cfg.FailingAfter
	s.mu.Lock()
	changed := failing != s.announced
	s.announced = failing
	s.mu.Unlock()
	if !changed {
		return
	}
	r.cfg.Metrics.setFailing(s.accountID, s.destinationID, failing)
	if !failing {
		r.log.Info("destination recovered", "account_id", s.accountID, "destination_id", s.destinationID)
		return
	}
	var class, code string
	if e := record.LastError; e != nil {
		class, code = e.Class, e.Code
	}
	r.log.Warn("destination failing", "account_id", s.accountID, "destination_id", s.destinationID, "class", class, "code", code, "since", record.FailingSince.UTC().Format(time.RFC3339))
}
