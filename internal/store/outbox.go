package store

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/sluicehq/sluice/schemas"
)

// A change and its audit event are stored together or not at all, through
// a transactional outbox in the bucket itself: the store writes the audit
// event under audit_outbox.<event_id> in the same JetStream atomic batch
// as the change (the event first, so that a batch a failed write cut
// short, which JetStream completes when it starts again, never leaves a
// change without its event). Something else then publishes each pending
// event to SLUICE_EVENTS, with its id as message id so that publishing it
// twice stores it once, and removes it (PendingAudits, AuditPublished):
// the process that made the change right away, and a relay in every
// process serving the API for a process that died before it did.
//
// The other way considered, the pending event inside the resource's
// record, does not work for a deletion, which leaves no record; and an
// outbox entry keeps the records as they were, for every reader.
//
//	audit_outbox.<event_id>   outboxEntry (an audit event not yet in SLUICE_EVENTS)
const outboxPrefix = "audit_outbox."

// allOutbox matches every outbox entry.
const allOutbox = outboxPrefix + "*"

func outboxKey(eventID string) string { return outboxPrefix + eventID }

// Outbox is the store's audit outbox: the audit events stored with their
// changes and not yet published (see PendingAudits). The audit relay and
// the API's writes use it; nothing else does.
type Outbox struct{ store *Store }

// Outbox returns the store's audit outbox.
func (s *Store) Outbox() Outbox { return Outbox{s} }

// Audit builds the audit event of a change from the resource as it is
// after the change (as it was before, for a deletion): a Destination, a
// Subscription, or an APIKey without its token. It may be called several
// times, when a compare-and-swap conflict makes the store start over; the
// event of its last call is the one stored.
type Audit func(resource any) (schemas.Encoded, error)

// WriteOption is an optional extra of a change of the store.
type WriteOption func(*writeOptions)

type writeOptions struct {
	audit Audit
	// certificateDeleted builds the audit event of a reserved domain's
	// certificate its delete deletes (WithCertificateAudit).
	certificateDeleted func(TLSCertificate) (schemas.Encoded, error)
}

// WithAudit has the store write the change's audit event, built by
// audit, with the change, in one atomic write: both are stored, or
// neither. The event waits in the bucket's outbox until it is published
// (see PendingAudits).
func WithAudit(audit Audit) WriteOption {
	return func(o *writeOptions) { o.audit = audit }
}

// WithCertificateAudit has DeleteReservedDomain write, with the delete,
// the audit event that build makes of the domain's TLS certificate, which
// the delete deletes too (tls_certificate_deleted.v0).
func WithCertificateAudit(build func(TLSCertificate) (schemas.Encoded, error)) WriteOption {
	return func(o *writeOptions) { o.certificateDeleted = build }
}

func newWriteOptions(opts []WriteOption) writeOptions {
	var o writeOptions
	for _, opt := range opts {
		if opt != nil {
			opt(&o)
		}
	}
	return o
}

// auditView is implemented by records whose audit resource is not the
// record itself.
type auditView interface{ auditResource() any }

func (r apiKeyRecord) auditResource() any { return r.apiKey() }

// outboxEntry is an audit event as the outbox keeps it.
type outboxEntry struct {
	ID        string          `json:"event_id"`
	Type      string          `json:"event_type"`
	AccountID string          `json:"account_id"`
	Data      json.RawMessage `json:"data"`
}

// commit writes writes, with the audit event of resource when o asks for
// one, all or none (see commitBatch), and returns the revision of each
// write. A single write without an audit event goes through the key-value
// API.
func (s *Store) commit(ctx context.Context, o writeOptions, resource any, writes ...write) ([]uint64, error) {
	if o.audit == nil && len(writes) == 1 {
		rev, err := s.writeOne(ctx, writes[0])
		return []uint64{rev}, err
	}
	if o.audit == nil {
		return s.commitBatch(ctx, writes)
	}
	if v, ok := resource.(auditView); ok {
		resource = v.auditResource()
	}
	ev, err := o.audit(resource)
	if err != nil {
		return nil, fmt.Errorf("building the audit event: %w", err)
	}
	entry, err := json.Marshal(outboxEntry{ID: ev.ID, Type: ev.Type, AccountID: ev.AccountID, Data: ev.Data})
	if err != nil {
		return nil, fmt.Errorf("encoding the audit event: %w", err)
	}
	revisions, err := s.commitBatch(ctx, append([]write{{key: outboxKey(ev.ID), value: entry}}, writes...))
	if err != nil {
		return nil, err
	}
	return revisions[1:], nil
}

// writeOne writes w through the key-value API.
func (s *Store) writeOne(ctx context.Context, w write) (uint64, error) {
	switch {
	case w.del:
		return 0, s.kv.Delete(ctx, w.key, jetstream.LastRevision(w.revision))
	case w.revision == 0:
		return s.kv.Create(ctx, w.key, w.value)
	}
	return s.kv.Update(ctx, w.key, w.value, w.revision)
}

// PendingAudit is an audit event stored with its change and not yet
// published to SLUICE_EVENTS.
type PendingAudit struct {
	// Event is the event, as it is to be published.
	Event schemas.Encoded
	// Stored is when it was stored, by the NATS server's clock.
	Stored time.Time
}

// PendingAudits returns the audit events waiting in the outbox, oldest
// first. Publish each to SLUICE_EVENTS (with its id as message id), then
// call AuditPublished. An entry that cannot be decoded is skipped and
// reported in the error, alongside those that could.
func (o Outbox) PendingAudits(ctx context.Context) ([]PendingAudit, error) {
	entries, err := o.store.entries(ctx, allOutbox)
	if err != nil {
		return nil, fmt.Errorf("listing pending audit events: %w", err)
	}
	pending := make([]PendingAudit, 0, len(entries))
	var errs []error
	for _, entry := range entries {
		var e outboxEntry
		if err := json.Unmarshal(entry.Value(), &e); err != nil {
			errs = append(errs, fmt.Errorf("decoding %s: %w", entry.Key(), err))
			continue
		}
		pending = append(pending, PendingAudit{
			Event:  schemas.Encoded{ID: e.ID, Type: e.Type, AccountID: e.AccountID, Data: e.Data},
			Stored: entry.Created(),
		})
	}
	return pending, errors.Join(errs...)
}

// AuditPending reports whether the audit event with the id waits in the
// outbox: it was stored with its change and is not yet published. An event
// built for a change that was then not written (a compare-and-swap lost, a
// change that found nothing to change) was never there.
func (o Outbox) AuditPending(ctx context.Context, eventID string) (bool, error) {
	if strings.ContainsAny(eventID, ".*> ") || eventID == "" {
		return false, nil
	}
	_, err := o.store.kv.Get(ctx, outboxKey(eventID))
	switch {
	case errors.Is(err, jetstream.ErrKeyNotFound):
		return false, nil
	case err != nil:
		return false, fmt.Errorf("reading pending audit event %s: %w", eventID, err)
	}
	return true, nil
}

// AuditPublished removes the audit event with the id from the outbox, once
// it is in SLUICE_EVENTS. The entry is purged from the bucket's stream
// (the key-value stream denies deleting one message), so that no delete
// marker is left behind for each change. An event no longer pending
// (published by another process) is no error.
func (o Outbox) AuditPublished(ctx context.Context, eventID string) error {
	if strings.ContainsAny(eventID, ".*> ") || eventID == "" {
		return fmt.Errorf("audit event %q: %w", eventID, ErrNotFound)
	}
	if err := o.store.stream.Purge(ctx, jetstream.WithPurgeSubject(kvSubject(outboxKey(eventID)))); err != nil {
		return fmt.Errorf("removing pending audit event %s: %w", eventID, err)
	}
	return nil
}
