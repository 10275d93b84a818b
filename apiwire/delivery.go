package apiwire

import (
	"encoding/json"
)

// DestinationStatus is how delivery to an event destination goes, merged
// from every sluice process that delivers to it, as GET
// /event_destinations/{id}/status answers.
type DestinationStatus struct {
	// State is ok (the last write succeeded), retrying (writes fail) or
	// failing (calls fail as a whole for longer than serve's
	// --failing-after).
	State         string  `json:"state"`
	LastSuccessAt *string `json:"last_success_at"` // RFC 3339, in milliseconds; nil: never
	// LastError is the last failure of a write; nil: none.
	LastError          *DeliveryError `json:"last_error"`
	EventsPending      uint64         `json:"events_pending"`       // events of its routes not yet delivered
	EventsDeadLettered uint64         `json:"events_dead_lettered"` // its dead letters
}

// DeliveryError is the last failure of a write to a destination.
type DeliveryError struct {
	Class   string  `json:"class"` // such as access_denied, or permanent for a record refused
	Code    *string `json:"code"`  // the service's error code; nil when it gave none
	Message string  `json:"message"`
	At      string  `json:"at"` // RFC 3339, in milliseconds
}

// DestinationTest is the outcome of a test write to a destination, as
// POST /event_destinations/{id}/test answers.
type DestinationTest struct {
	Result string `json:"result"` // delivered or failed
	// Class, Code and Message say why it failed; nil when delivered or
	// not known.
	Class      *string `json:"class"`
	Code       *string `json:"code"`
	Message    *string `json:"message"`
	DurationMS int64   `json:"duration_ms"`
}

// DeadLetter is an event a destination could never take, and why, as the
// API returns it.
type DeadLetter struct {
	ID             string `json:"id"` // dl_ and a number
	EventID        string `json:"event_id"`
	SubscriptionID string `json:"subscription_id"`
	Class          string `json:"class"`
	Code           string `json:"code"`
	Message        string `json:"message"`
	Attempts       uint64 `json:"attempts"`
	FirstFailureAt string `json:"first_failure_at"` // RFC 3339, in milliseconds
	DeadLetteredAt string `json:"dead_lettered_at"` // RFC 3339, in milliseconds
	// Event is the stored event, null when its bytes are not JSON.
	Event json.RawMessage `json:"event"`
}

// RedriveInput is the body of a redrive: the ids of the dead letters to
// send again.
type RedriveInput struct {
	IDs *[]string `json:"ids,omitempty"` // from 1 to 10,000 ids; nil: every dead letter
}

// Redrive is the outcome of a redrive.
type Redrive struct {
	Redriven int `json:"redriven"` // taken by the destination, and removed
	Failed   int `json:"failed"`   // failed again, and kept
	// Remaining is how many dead letters the destination has afterwards.
	Remaining int              `json:"remaining"`
	Failures  []RedriveFailure `json:"failures"`
}

// RedriveFailure is a dead letter that a redrive failed to send, and why.
type RedriveFailure struct {
	ID      string `json:"id"`
	Class   string `json:"class"`
	Code    string `json:"code"`
	Message string `json:"message"`
}

// Replay is a replay of a subscription's stored events, as the API
// returns it.
type Replay struct {
	ID             string `json:"id"`
	URI            string `json:"uri"`
	SubscriptionID string `json:"subscription_id"`
	Since          string `json:"since"` // RFC 3339
	Until          string `json:"until"` // RFC 3339
	State          string `json:"state"` // running, then done
	// EventsReplayed of EventsTotal are the events delivered again so
	// far, counting an event once for each destination; equal once the
	// replay is done.
	EventsReplayed uint64 `json:"events_replayed"`
	EventsTotal    uint64 `json:"events_total"`
	CreatedAt      string `json:"created_at"`
}

// ReplayInput is the body of a replay's start.
type ReplayInput struct {
	Since *string `json:"since,omitempty"` // RFC 3339, within the stream's retention; required
	Until *string `json:"until,omitempty"` // RFC 3339; nil: now
}

// DeadLetterFilter is the body of a bulk delete of dead letters: the
// letters to remove are those every field set matches; none set matches
// every letter.
type DeadLetterFilter struct {
	SubscriptionID *string `json:"subscription_id,omitempty"` // esb_...: letters of this subscription
	Class          *string `json:"class,omitempty"`           // too_large, permanent, filter or malformed
	EventID        *string `json:"event_id,omitempty"`        // ev_...: letters of this event
	// AfterID continues a delete that stopped at 10,000 letters examined:
	// the NextAfterID it returned.
	AfterID *string `json:"after_id,omitempty"`
}

// DeadLetterDeletion is the outcome of a bulk delete of dead letters.
type DeadLetterDeletion struct {
	Deleted   int `json:"deleted"`   // letters removed
	Remaining int `json:"remaining"` // letters the destination has afterwards
	// NextAfterID, when not nil, says the call examined its 10,000
	// letters and stopped: send it as AfterID to go on.
	NextAfterID *string `json:"next_after_id"`
}
