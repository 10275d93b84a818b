package schemas

import (
	"encoding/json"
	"fmt"
	"strings"
)

// This file keeps the audit kinds sluice emits about its own resources
// (Kind.EmittedBySluice, marked in catalogue_table.go) sluice's alone.
//
// The HTTP ingest API decodes with DecodeBatch, which refuses them whatever
// the API key, and has no way to allow them: sluice's management API makes
// its audit events with EncodeBySluice, which nothing a client sends
// reaches. The producer package refuses them too (Encode, and
// CheckPublishable for PublishEncoded), but a Go program with NATS
// credentials can publish any bytes on sluice's subjects: for services
// publishing over NATS, the boundary is NATS authorization (see
// producer's package documentation).

// emittedBySluiceError returns the error for an event of k, a kind only
// sluice emits, sent to be published.
func emittedBySluiceError(k *Kind) *FieldError {
	if k.Family == "agent_session" {
		return &FieldError{
			Path: "event_type",
			Err:  ErrEmittedBySluice,
			Msg: fmt.Sprintf("%s is emitted by sluice itself, by its edge when an agent session starts or stops, and cannot be published. "+
				"To receive it, subscribe to it; docs/events.md lists the kinds only sluice emits", k.Name),
		}
	}
	if k.Family == "tls_certificate" {
		return &FieldError{
			Path: "event_type",
			Err:  ErrEmittedBySluice,
			Msg: fmt.Sprintf("%s is emitted by sluice itself about its own resources and cannot be published: "+
				"sluice stores it when it obtains, renews or deletes the certificate of one of the account's reserved domains. "+
				"To receive it, subscribe to it; docs/events.md lists the kinds only sluice emits", k.Name),
		}
	}
	return &FieldError{
		Path: "event_type",
		Err:  ErrEmittedBySluice,
		Msg: fmt.Sprintf("%s is emitted by sluice itself about its own resources and cannot be published: "+
			"sluice stores it when one of the account's %ss changes through sluice's management API. "+
			"To receive it, subscribe to it; docs/events.md lists the kinds only sluice emits",
			k.Name, strings.ReplaceAll(k.Family, "_", " ")),
	}
}

// EncodeBySluice validates an event of a kind sluice emits about its own
// resources (Kind.EmittedBySluice) and returns it in its stored form,
// marked as sluice's own so that producer.PublishEncoded publishes it
// (CheckPublishable). Encode and DecodeBatch refuse these kinds; this is
// the one way to make them, and it is for sluice's management API, which
// reports its own changes with it: no client request reaches it. It
// returns the errors of Encode, and an error wrapping ErrUnknownKind for a
// kind the catalogue does not have or sluice does not emit.
func (c *Catalogue) EncodeBySluice(ev Event) (Encoded, error) {
	k, ok := c.Kind(ev.Type)
	if !ok || !k.EmittedBySluice {
		return Encoded{}, fmt.Errorf("event_type %q: %w of sluice's own resources (use Encode for other kinds)", ev.Type, ErrUnknownKind)
	}
	enc, err := c.encode(k, ev)
	enc.bySluice = err == nil
	return enc, err
}

// CheckPublishable returns nil when e may be published into sluice's
// stream: its kind is not one sluice emits about its own resources, or
// EncodeBySluice made it. Otherwise it returns a *FieldError wrapping
// ErrEmittedBySluice. Events from DecodeBatch and Encode always pass; an
// Encoded built by hand with such a kind does not.
func (c *Catalogue) CheckPublishable(e *Encoded) error {
	if k, ok := c.Kind(e.Type); ok && k.EmittedBySluice && !e.bySluice {
		return emittedBySluiceError(k)
	}
	return nil
}

// RestoreBySluice takes back the stored form of an event EncodeBySluice
// made earlier (its Data), as sluice keeps it in its own outbox until it is
// published, and returns it validated and marked as sluice's own again. It
// is for sluice's audit relay, which reads only what sluice itself wrote:
// nothing a client sends reaches it. It returns the errors of
// EncodeBySluice, and one for Data that is not an envelope.
func (c *Catalogue) RestoreBySluice(data []byte) (Encoded, error) {
	var ev Event
	if err := json.Unmarshal(data, &ev); err != nil {
		return Encoded{}, fmt.Errorf("reading a stored audit event: %w", err)
	}
	return c.EncodeBySluice(ev)
}
