package destinations

import (
	"context"
	"errors"
	"fmt"

	"github.com/sluicehq/sluice/internal/store"
	"github.com/sluicehq/sluice/sinks"
	"github.com/sluicehq/sluice/sinks/desttype"
)

// ErrUnsupported is returned for a target no sink writes yet.
var ErrUnsupported = errors.New("no sink writes to this target yet")

// Factory builds the sinks of stored destinations. Its zero value sends
// every call to AWS with the destination's own credentials.
type Factory struct {
	// Endpoint, when set, receives the calls of every sink instead of the
	// service's endpoint (sluice serve --dev sends them to its emulator).
	Endpoint string
	// Auth, when set, signs the calls of every sink instead of the
	// destination's own credentials, which an emulator cannot check (it
	// cannot assume a role).
	Auth *sinks.AWSAuth
}

// New returns the sink of a destination with Factory's zero value: the
// pipeline.SinkFactory of a sluice writing to AWS.
func New(ctx context.Context, d store.Destination) (sinks.Sink, error) {
	return Factory{}.New(ctx, d)
}

// New returns the sink of the destination. It does no network I/O. The
// role of a destination is assumed with the destination's account id as
// the external id.
//
// For a CloudWatch Logs destination it returns the log group's sink, a
// sinks.SubscriptionSink: each subscription's events go to a log stream of
// their own, through ForSubscription(the subscription's id). The group's
// sink itself has no log stream, and its Writes fail with a
// *sinks.DestinationError of ClassInvalid.
//
// It returns an error wrapping the sink's ErrConfig when the destination's
// target or credentials cannot work, and ErrUnsupported for a target it
// does not know.
func (f Factory) New(ctx context.Context, d store.Destination) (sinks.Sink, error) {
	typ, ok := desttype.Named(d.Target.Type())
	if !ok {
		return nil, fmt.Errorf("destination %s has no target: %w", d.ID, ErrUnsupported)
	}
	sink, err := typ.NewSink(ctx, sinks.Target{
		ARN:        d.Target.ARN(),
		Auth:       f.auth(d.Target.Auth()),
		ExternalID: d.AccountID,
		Endpoint:   f.Endpoint,
	})
	if err != nil {
		return nil, fmt.Errorf("destination %s: %w", d.ID, err)
	}
	return sink, nil
}

// auth returns the credentials to sign a destination's calls with.
func (f Factory) auth(a store.AWSAuth) sinks.AWSAuth {
	if f.Auth != nil {
		return *f.Auth
	}
	return awsAuth(a)
}

// awsAuth returns the sinks' form of a destination's credentials.
func awsAuth(a store.AWSAuth) sinks.AWSAuth {
	switch {
	case a.Role != nil:
		return sinks.AWSAuth{RoleARN: a.Role.RoleARN}
	case a.Creds != nil:
		return sinks.AWSAuth{AccessKeyID: a.Creds.AccessKeyID, SecretAccessKey: a.Creds.SecretAccessKey}
	}
	return sinks.AWSAuth{}
}
