package client

import (
	"context"
	"net/http"
	"net/url"

	"github.com/sluicehq/sluice/apiwire"
)

// DestinationStatus returns how delivery to the destination id goes. It
// returns the errors of Client.Do: an *Error of status 404 when the
// account has no such destination.
func (c *Client) DestinationStatus(ctx context.Context, id string, opts ...CallOption) (apiwire.DestinationStatus, error) {
	var out apiwire.DestinationStatus
	err := c.Do(ctx, http.MethodGet, destinationPath(id)+"/status", nil, &out, opts...)
	return out, err
}

// TestDestination writes one test event to the destination id now,
// without retries, and returns the outcome: a destination that does not
// take it is a DestinationTest whose Result is failed, not an error. It
// returns the errors of Client.Do.
func (c *Client) TestDestination(ctx context.Context, id string, opts ...CallOption) (apiwire.DestinationTest, error) {
	var out apiwire.DestinationTest
	err := c.Do(ctx, http.MethodPost, destinationPath(id)+"/test", nil, &out, opts...)
	return out, err
}

// destinationPath is the path of the destination id.
func destinationPath(id string) string {
	return apiwire.EventDestinationsPath + "/" + url.PathEscape(id)
}

// DeadLetters are the dead letters of a destination,
// /event_destinations/{id}/dead_letters, listed newest first.
type DeadLetters struct {
	Collection[apiwire.DeadLetter]
}

// DeadLetters returns the dead letters of the destination destinationID.
func (c *Client) DeadLetters(destinationID string) DeadLetters {
	return DeadLetters{NewCollection[apiwire.DeadLetter](c, destinationPath(destinationID)+"/dead_letters", "dead_letters")}
}

// Redrive sends dead letters to the destination again, now: those in
// names, or all of them (at most 10,000 a call, oldest first) when in is
// nil. Those the destination takes are removed. It returns the errors of
// Client.Do.
func (d DeadLetters) Redrive(ctx context.Context, in *apiwire.RedriveInput, opts ...CallOption) (apiwire.Redrive, error) {
	var body any
	if in != nil {
		body = in
	}
	var out apiwire.Redrive
	err := d.client.Do(ctx, http.MethodPost, d.path+"/redrive", body, &out, opts...)
	return out, err
}

// Delete removes the dead letter id (dl_...) of the destination. It
// returns the errors of Client.Do: an *Error of status 404 when the
// destination has no such letter.
func (d DeadLetters) Delete(ctx context.Context, id string, opts ...CallOption) error {
	return d.client.Do(ctx, http.MethodDelete, d.path+"/"+url.PathEscape(id), nil, nil, opts...)
}

// DeleteMatching removes the destination's dead letters that in matches,
// oldest first, examining at most 10,000 a call: POST
// .../dead_letters/delete. It returns the errors of Client.Do.
func (d DeadLetters) DeleteMatching(ctx context.Context, in apiwire.DeadLetterFilter, opts ...CallOption) (apiwire.DeadLetterDeletion, error) {
	var out apiwire.DeadLetterDeletion
	err := d.client.Do(ctx, http.MethodPost, d.path+"/delete", in, &out, opts...)
	return out, err
}

// Replays are the replays of a subscription,
// /event_subscriptions/{id}/replays, newest first on one page.
type Replays struct {
	Collection[apiwire.Replay]
	subscription string // the subscription's path
}

// Replays returns the replays of the subscription subscriptionID.
func (c *Client) Replays(subscriptionID string) Replays {
	path := apiwire.EventSubscriptionsPath + "/" + url.PathEscape(subscriptionID)
	return Replays{Collection: NewCollection[apiwire.Replay](c, path+"/replays", "replays"), subscription: path}
}

// Start starts a replay: the subscription's events stored from in.Since
// to in.Until are delivered again to each of its destinations, in the
// background. It returns the errors of Client.Do.
func (r Replays) Start(ctx context.Context, in apiwire.ReplayInput, opts ...CallOption) (apiwire.Replay, error) {
	var out apiwire.Replay
	err := r.client.Do(ctx, http.MethodPost, r.subscription+"/replay", in, &out, opts...)
	return out, err
}

// Get returns the replay id. It returns the errors of Client.Do: an
// *Error of status 404 when the subscription has no such replay.
func (r Replays) Get(ctx context.Context, id string, opts ...CallOption) (apiwire.Replay, error) {
	var out apiwire.Replay
	err := r.client.Do(ctx, http.MethodGet, r.path+"/"+url.PathEscape(id), nil, &out, opts...)
	return out, err
}
