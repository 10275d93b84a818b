package pipeline

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/sluicehq/sluice/schemas"
)

// EventsStream is the name of the JetStream stream every event is stored in.
const EventsStream = "SLUICE_EVENTS"

// Defaults and limits of StreamConfig.
const (
	// DefaultRetention is how long events are kept by default: a destination
	// may be down this long without losing events.
	DefaultRetention = 72 * time.Hour
	// DuplicateWindow is how long the stream remembers a Nats-Msg-Id (the
	// event_id), so that a retried publish is stored once.
	DuplicateWindow = 2 * time.Minute
	// MaxReplicas is the largest replica count JetStream accepts.
	MaxReplicas = 5
)

// StreamConfig is the part of the events stream's configuration that
// operators choose.
type StreamConfig struct {
	// Retention is how long the stream keeps an event (its MaxAge); default
	// DefaultRetention. It must be at least DuplicateWindow.
	Retention time.Duration
	// Replicas is how many copies of each event the cluster keeps; default 1.
	// Use 3 (or 5) on a JetStream cluster.
	Replicas int
}

func (c *StreamConfig) setDefaults() {
	if c.Retention == 0 {
		c.Retention = DefaultRetention
	}
	if c.Replicas == 0 {
		c.Replicas = 1
	}
}

// Validate reports what is wrong with the configuration, after defaults have
// been applied to the fields left zero.
func (c StreamConfig) Validate() error {
	c.setDefaults()
	var errs []error
	if c.Retention < DuplicateWindow {
		errs = append(errs, fmt.Errorf("stream retention %s is shorter than the duplicate window %s", c.Retention, DuplicateWindow))
	}
	if c.Replicas < 1 || c.Replicas > MaxReplicas {
		errs = append(errs, fmt.Errorf("stream replicas %d: must be from 1 to %d", c.Replicas, MaxReplicas))
	}
	return errors.Join(errs...)
}

// streamConfig returns the JetStream configuration of the events stream.
func (c StreamConfig) streamConfig() jetstream.StreamConfig {
	return jetstream.StreamConfig{
		Name:        EventsStream,
		Description: "sluice events, on " + schemas.SubjectPrefix + "<account_id>.<event_type>",
		Subjects:    []string{schemas.SubjectPrefix + ">"},
		Retention:   jetstream.LimitsPolicy,
		Discard:     jetstream.DiscardOld,
		Storage:     jetstream.FileStorage,
		MaxAge:      c.Retention,
		Duplicates:  DuplicateWindow,
		Replicas:    c.Replicas,
	}
}

// EnsureStream creates the events stream, or updates it to cfg if it exists
// (for example with another retention), and returns it. It returns an error
// if cfg is not valid or JetStream refuses the configuration, for instance
// more replicas than the cluster has servers.
func EnsureStream(ctx context.Context, js jetstream.JetStream, cfg StreamConfig) (jetstream.Stream, error) {
	cfg.setDefaults()
	if err := cfg.Validate(); err != nil {
		return nil, fmt.Errorf("events stream config: %w", err)
	}
	stream, err := js.CreateOrUpdateStream(ctx, cfg.streamConfig())
	if err != nil {
		return nil, fmt.Errorf("creating or updating stream %s: %w", EventsStream, err)
	}
	return stream, nil
}
