package client

import (
	"context"
	"encoding/json"
	"net/http"
	"net/url"
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

// DestinationStatus returns how delivery to the destination id goes. It
// returns the errors of Client.Do: an *Error of status 404 when the
// account has no such destination.
func (c *Client) DestinationStatus(ctx context.Context, id string, opts ...CallOption) (DestinationStatus, error) {
	var out DestinationStatus
	err := c.Do(ctx, http.MethodGet, destinationPath(id)+"/status", nil, &out, opts...)
	return out, err
}

// TestDestination writes one test event to the destination id now,
// without retries, and returns the outcome: a destination that does not
// take it is a DestinationTest whose Result is failed, not an error. It
// returns the errors of Client.Do.
func (c *Client) TestDestination(ctx context.Context, id string, opts ...CallOption) (DestinationTest, error) {
	var out DestinationTest
	err := c.Do(ctx, http.MethodPost, destinationPath(id)+"/test", nil, &out, opts...)
	return out, err
}

// destinationPath is the path of the destination id.
func destinationPath(id string) string { return EventDestinationsPath + "/" + url.PathEscape(id) }

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

// DeadLetters are the dead letters of a destination,
// /event_destinations/{id}/dead_letters, listed newest first.
type DeadLetters struct {
	Collection[DeadLetter]
}

// DeadLetters returns the dead letters of the destination destinationID.
func (c *Client) DeadLetters(destinationID string) DeadLetters {
	return DeadLetters{NewCollection[DeadLetter](c, destinationPath(destinationID)+"/dead_letters", "dead_letters")}
}

// Redrive sends dead letters to the destination again, now: those in
// names, or all of them (at most 10,000 a call, oldest first) when in is
// nil. Those the destination takes are removed. It returns the errors of
// Client.Do.
func (d DeadLetters) Redrive(ctx context.Context, in *RedriveInput, opts ...CallOption) (Redrive, error) {
	var body any
	if in != nil {
		body = in
	}
	var out Redrive
	err := d.client.Do(ctx, http.MethodPost, d.path+"/redrive", body, &out, opts...)
	return out, err
}

// Delete removes the dead letter id (dl_...) of the destination. It
// returns the errors of Client.Do: an *Error of status 404 when the
// destination has no such letter.
func (d DeadLetters) Delete(ctx context.Context, id string, opts ...CallOption) error {
	return d.client.Do(ctx, http.MethodDelete, d.path+"/"+url.PathEscape(id), nil, nil, opts...)
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

// DeleteMatching removes the destination's dead letters that in matches,
// oldest first, examining at most 10,000 a call: POST
// .../dead_letters/delete. It returns the errors of Client.Do.
func (d DeadLetters) DeleteMatching(ctx context.Context, in DeadLetterFilter, opts ...CallOption) (DeadLetterDeletion, error) {
	var out DeadLetterDeletion
	err := d.client.Do(ctx, http.MethodPost, d.path+"/delete", in, &out, opts...)
	return out, err
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
	CreatedAt      string `json:"created_at"`
}

// ReplayInput is the body of a replay's start.
type ReplayInput struct {
	Since *string `json:"since,omitempty"` // RFC 3339, within the stream's retention; required
	Until *string `json:"until,omitempty"` // RFC 3339; nil: now
}

// Replays are the replays of a subscription,
// /event_subscriptions/{id}/replays, newest first on one page.
type Replays struct {
	Collection[Replay]
	subscription string // the subscription's path
}

// Replays returns the replays of the subscription subscriptionID.
func (c *Client) Replays(subscriptionID string) Replays {
	path := EventSubscriptionsPath + "/" + url.PathEscape(subscriptionID)
	return Replays{Collection: NewCollection[Replay](c, path+"/replays", "replays"), subscription: path}
}

// Start starts a replay: the subscription's events stored from in.Since
// to in.Until are delivered again to each of its destinations, in the
// background. It returns the errors of Client.Do.
func (r Replays) Start(ctx context.Context, in ReplayInput, opts ...CallOption) (Replay, error) {
	var out Replay
	err := r.client.Do(ctx, http.MethodPost, r.subscription+"/replay", in, &out, opts...)
	return out, err
}

// Get returns the replay id. It returns the errors of Client.Do: an
// *Error of status 404 when the subscription has no such replay.
func (r Replays) Get(ctx context.Context, id string, opts ...CallOption) (Replay, error) {
	var out Replay
	err := r.client.Do(ctx, http.MethodGet, r.path+"/"+url.PathEscape(id), nil, &out, opts...)
	return out, err
}
