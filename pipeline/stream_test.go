package pipeline_test

import (
	"context"
	"testing"
	"time"

	"github.com/sluicehq/sluice/internal/check"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/sluicehq/sluice/internal/natstest"
	"github.com/sluicehq/sluice/pipeline"
	"github.com/sluicehq/sluice/schemas"
)

func setup(t *testing.T) (context.Context, jetstream.JetStream) {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
	t.Cleanup(cancel)
	_, js := natstest.Connect(t, natstest.Start(t))
	return ctx, js
}

func ensure(ctx context.Context, t *testing.T, js jetstream.JetStream, cfg pipeline.StreamConfig) *jetstream.StreamInfo {
	t.Helper()
	stream, err := pipeline.EnsureStream(ctx, js, cfg)
	if err != nil {
		t.Fatalf("EnsureStream(%+v): %v", cfg, err)
	}
	info, err := stream.Info(ctx)
	if err != nil {
		t.Fatalf("stream Info: %v", err)
	}
	return info
}

func publish(ctx context.Context, t *testing.T, js jetstream.JetStream, eventID string) *jetstream.PubAck {
	t.Helper()
	subject := schemas.EventSubject(schemas.NewID(schemas.PrefixAccount), "http_request_complete.v0")
	ack, err := js.Publish(ctx, subject, []byte(`{}`), jetstream.WithMsgID(eventID))
	if err != nil {
		t.Fatalf("Publish to %s: %v", subject, err)
	}
	if ack.Stream != pipeline.EventsStream {
		t.Fatalf("event stored in stream %q, want %q", ack.Stream, pipeline.EventsStream)
	}
	return ack
}

func TestEnsureStreamCreates(t *testing.T) {
	tests := []struct {
		name          string
		cfg           pipeline.StreamConfig
		wantRetention time.Duration
	}{
		{name: "defaults", cfg: pipeline.StreamConfig{}, wantRetention: 72 * time.Hour},
		{name: "one day", cfg: pipeline.StreamConfig{Retention: 24 * time.Hour, Replicas: 1}, wantRetention: 24 * time.Hour},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ctx, js := setup(t)
			got := ensure(ctx, t, js, tt.cfg).Config

			if got.Name != pipeline.EventsStream {
				t.Errorf("Name = %q, want %q", got.Name, pipeline.EventsStream)
			}
			if len(got.Subjects) != 1 || got.Subjects[0] != "sluice.events.>" {
				t.Errorf("Subjects = %q, want [sluice.events.>]", got.Subjects)
			}
			if got.Storage != jetstream.FileStorage {
				t.Errorf("Storage = %v, want file", got.Storage)
			}
			if got.MaxAge != tt.wantRetention {
				t.Errorf("MaxAge = %s, want %s", got.MaxAge, tt.wantRetention)
			}
			if got.Duplicates != 2*time.Minute {
				t.Errorf("Duplicates = %s, want 2m", got.Duplicates)
			}
			if got.Replicas != 1 {
				t.Errorf("Replicas = %d, want 1", got.Replicas)
			}
			if got.Retention != jetstream.LimitsPolicy {
				t.Errorf("Retention policy = %v, want limits", got.Retention)
			}
		})
	}
}

func TestEnsureStreamUpdatesRetention(t *testing.T) {
	ctx, js := setup(t)
	ensure(ctx, t, js, pipeline.StreamConfig{})
	publish(ctx, t, js, schemas.NewID(schemas.PrefixEvent))

	info := ensure(ctx, t, js, pipeline.StreamConfig{Retention: time.Hour})
	if info.Config.MaxAge != time.Hour {
		t.Fatalf("MaxAge after update = %s, want 1h", info.Config.MaxAge)
	}
	if info.State.Msgs != 1 {
		t.Fatalf("stream holds %d messages after update, want the 1 published before", info.State.Msgs)
	}
}

func TestEnsureStreamIdempotent(t *testing.T) {
	ctx, js := setup(t)
	cfg := pipeline.StreamConfig{Retention: 48 * time.Hour}
	first := ensure(ctx, t, js, cfg)
	publish(ctx, t, js, schemas.NewID(schemas.PrefixEvent))
	second := ensure(ctx, t, js, cfg)

	if !first.Created.Equal(second.Created) {
		t.Fatalf("stream recreated: created %s, then %s", first.Created, second.Created)
	}
	if second.Config.MaxAge != first.Config.MaxAge || second.Config.Duplicates != first.Config.Duplicates {
		t.Fatalf("config changed: %+v, then %+v", first.Config, second.Config)
	}
	if second.State.Msgs != 1 {
		t.Fatalf("stream holds %d messages, want 1", second.State.Msgs)
	}
}

func TestEnsureStreamDeduplicates(t *testing.T) {
	ctx, js := setup(t)
	ensure(ctx, t, js, pipeline.StreamConfig{})

	eventID := schemas.NewID(schemas.PrefixEvent)
	if ack := publish(ctx, t, js, eventID); ack.Duplicate {
		t.Fatal("first publish reported as duplicate")
	}
	if ack := publish(ctx, t, js, eventID); !ack.Duplicate {
		t.Fatal("second publish with the same Nats-Msg-Id not reported as duplicate")
	}
	publish(ctx, t, js, schemas.NewID(schemas.PrefixEvent))

	info := ensure(ctx, t, js, pipeline.StreamConfig{})
	if info.State.Msgs != 2 {
		t.Fatalf("stream holds %d messages, want 2 (the duplicate stored once)", info.State.Msgs)
	}
}

func TestStreamConfigValidate(t *testing.T) {
	tests := []struct {
		name    string
		cfg     pipeline.StreamConfig
		wantErr string
	}{
		{name: "defaults", cfg: pipeline.StreamConfig{}},
		{name: "three replicas", cfg: pipeline.StreamConfig{Retention: time.Hour, Replicas: 3}},
		{name: "retention at duplicate window", cfg: pipeline.StreamConfig{Retention: 2 * time.Minute}},
		{name: "retention below duplicate window", cfg: pipeline.StreamConfig{Retention: time.Minute}, wantErr: "duplicate window"},
		{name: "negative retention", cfg: pipeline.StreamConfig{Retention: -time.Hour}, wantErr: "retention"},
		{name: "too many replicas", cfg: pipeline.StreamConfig{Replicas: 7}, wantErr: "replicas"},
		{name: "negative replicas", cfg: pipeline.StreamConfig{Replicas: -1}, wantErr: "replicas"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			check.ErrorContains(t, tt.cfg.Validate(), tt.wantErr)
		})
	}
}

func TestEnsureStreamRejectsInvalidConfig(t *testing.T) {
	ctx, js := setup(t)
	if _, err := pipeline.EnsureStream(ctx, js, pipeline.StreamConfig{Retention: time.Second}); err == nil {
		t.Fatal("EnsureStream accepted a retention shorter than the duplicate window")
	}
	if _, err := js.Stream(ctx, pipeline.EventsStream); err == nil {
		t.Fatal("stream created from an invalid config")
	}
}
