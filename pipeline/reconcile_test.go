package pipeline_test

import (
	"context"
	"log/slog"
	"maps"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/sluicehq/sluice/internal/check"
	"github.com/sluicehq/sluice/internal/store"
	"github.com/sluicehq/sluice/pipeline"
	"github.com/sluicehq/sluice/schemas"
)

const (
	httpKind = "http_request_complete.v0"
	tcpKind  = "tcp_connection_closed.v0"
)

// routesSeen records what a reconciler applies.
type routesSeen struct {
	mu      sync.Mutex
	latest  map[string]pipeline.Route
	changed chan struct{}
}

func newRoutesSeen() *routesSeen { return &routesSeen{changed: make(chan struct{}, 1)} }

func (s *routesSeen) apply(_ context.Context, routes map[string]pipeline.Route) {
	s.mu.Lock()
	s.latest = maps.Clone(routes)
	s.mu.Unlock()
	select {
	case s.changed <- struct{}{}:
	default:
	}
}

// waitFor waits until the applied routes satisfy ok.
func (s *routesSeen) waitFor(t *testing.T, what string, ok func(map[string]pipeline.Route) bool) map[string]pipeline.Route {
	t.Helper()
	deadline := time.After(2 * time.Second)
	for {
		s.mu.Lock()
		latest := s.latest
		s.mu.Unlock()
		if latest != nil && ok(latest) {
			return latest
		}
		select {
		case <-s.changed:
		case <-deadline:
			t.Fatalf("within 2 s, the routes applied never became %s: %v", what, slices.Collect(maps.Keys(latest)))
		}
	}
}

// consumerSubjects returns the filter subjects of the consumer, or nil if
// it does not exist.
func consumerSubjects(ctx context.Context, t *testing.T, stream jetstream.Stream, name string) []string {
	t.Helper()
	c, err := stream.Consumer(ctx, name)
	if err != nil {
		return nil
	}
	info := c.CachedInfo()
	subjects := slices.Clone(info.Config.FilterSubjects)
	if info.Config.FilterSubject != "" {
		subjects = append(subjects, info.Config.FilterSubject)
	}
	slices.Sort(subjects)
	return subjects
}

func TestReconciler(t *testing.T) {
	ctx, js := setup(t)
	stream, err := pipeline.EnsureStream(ctx, js, pipeline.StreamConfig{})
	if err != nil {
		t.Fatal(err)
	}
	st, err := store.Open(ctx, js, store.Config{})
	if err != nil {
		t.Fatal(err)
	}
	account, err := st.CreateAccount(ctx, "acme")
	if err != nil {
		t.Fatal(err)
	}
	dest, err := st.CreateDestination(ctx, account.ID, store.Destination{Target: store.Target{Kinesis: &store.KinesisTarget{
		Auth:      store.AWSAuth{Role: &store.AWSRole{RoleARN: "arn:aws:iam::123456789012:role/r"}},
		StreamARN: "arn:aws:kinesis:us-east-1:123456789012:stream/s",
	}}})
	if err != nil {
		t.Fatal(err)
	}
	// Present before the reconciler starts: a route, and a stray consumer
	// left by a route removed while no sluice ran.
	sub, err := st.CreateSubscription(ctx, account.ID, store.Subscription{Sources: []store.Source{{Type: httpKind}}, DestinationIDs: []string{dest.ID}})
	if err != nil {
		t.Fatal(err)
	}
	stray := pipeline.ConsumerName(schemas.NewID(schemas.PrefixSubscription), dest.ID)
	if _, err := stream.CreateOrUpdateConsumer(ctx, jetstream.ConsumerConfig{Durable: stray, FilterSubject: "sluice.events.x.y"}); err != nil {
		t.Fatal(err)
	}
	// And the consumer of a replay that no longer exists.
	strayReplay := pipeline.ReplayConsumerName(schemas.NewID(store.PrefixReplay), dest.ID)
	if _, err := stream.CreateOrUpdateConsumer(ctx, jetstream.ConsumerConfig{Durable: strayReplay, FilterSubject: "sluice.events.x.y"}); err != nil {
		t.Fatal(err)
	}
	other, err := stream.CreateOrUpdateConsumer(ctx, jetstream.ConsumerConfig{Durable: "someone_elses"})
	if err != nil {
		t.Fatal(err)
	}

	seen := newRoutesSeen()
	runCtx, stop := context.WithCancel(ctx)
	done := make(chan error, 1)
	rec := pipeline.NewReconciler(stream, st, pipeline.ReconcilerConfig{}, slog.New(slog.DiscardHandler), seen.apply)
	if rec.Ready() {
		t.Fatal("Ready before Run")
	}
	go func() { done <- rec.Run(runCtx) }()
	defer func() {
		stop()
		if err := <-done; err != nil {
			t.Errorf("Run: %v", err)
		}
	}()

	name := pipeline.ConsumerName(sub.ID, dest.ID)
	seen.waitFor(t, "the route", func(r map[string]pipeline.Route) bool { _, ok := r[name]; return len(r) == 1 && ok })
	check.Eventually(t, 2*time.Second, "Ready after the route's consumer is made", func() (bool, bool) { return rec.Ready(), rec.Ready() })
	if got := consumerSubjects(ctx, t, stream, name); !slices.Equal(got, []string{schemas.EventSubject(account.ID, httpKind)}) {
		t.Fatalf("consumer subjects %v", got)
	}
	c, _ := stream.Consumer(ctx, name)
	// The consumer starts at the subscription's write, so that no event
	// stored between the change and the consumer's creation is missed.
	if cfg := c.CachedInfo().Config; cfg.DeliverPolicy != jetstream.DeliverByStartTimePolicy || cfg.OptStartTime == nil ||
		cfg.OptStartTime.Before(sub.CreatedAt.Add(-time.Second)) || cfg.OptStartTime.After(time.Now()) ||
		cfg.AckPolicy != jetstream.AckExplicitPolicy || cfg.MaxAckPending != pipeline.DefaultMaxAckPending {
		t.Fatalf("consumer config %+v", cfg)
	}
	if consumerSubjects(ctx, t, stream, stray) != nil {
		t.Fatalf("the stray route consumer %s was not deleted", stray)
	}
	if consumerSubjects(ctx, t, stream, strayReplay) != nil {
		t.Fatalf("the stray replay consumer %s was not deleted", strayReplay)
	}
	if _, err := stream.Consumer(ctx, other.CachedInfo().Name); err != nil {
		t.Fatalf("a consumer that is not a route's was deleted")
	}

	// A source added: the consumer takes both subjects, keeping its place.
	if _, err := js.Publish(ctx, schemas.EventSubject(account.ID, httpKind), []byte(`{}`)); err != nil {
		t.Fatal(err)
	}
	if _, err := st.UpdateSubscription(ctx, account.ID, sub.ID, func(s *store.Subscription) error {
		s.Sources = append(s.Sources, store.Source{Type: tcpKind})
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	seen.waitFor(t, "the route with two sources", func(r map[string]pipeline.Route) bool { return len(r[name].Subscription.Sources) == 2 })
	want := []string{schemas.EventSubject(account.ID, httpKind), schemas.EventSubject(account.ID, tcpKind)}
	slices.Sort(want)
	if got := consumerSubjects(ctx, t, stream, name); !slices.Equal(got, want) {
		t.Fatalf("consumer subjects after adding a source: %v, want %v", got, want)
	}
	c, _ = stream.Consumer(ctx, name)
	info, err := c.Info(ctx)
	if err != nil || info.NumPending != 1 {
		t.Fatalf("consumer info %+v, %v: want the event published before the change still pending", info, err)
	}

	// The subscription deleted: the route goes, and its consumer.
	if _, err := st.DeleteSubscription(ctx, account.ID, sub.ID); err != nil {
		t.Fatal(err)
	}
	seen.waitFor(t, "no route", func(r map[string]pipeline.Route) bool { return len(r) == 0 })
	// The workers stop first (apply), then the consumer is deleted.
	check.Eventually(t, 2*time.Second, "the consumer of the deleted route gone", func() ([]string, bool) {
		subjects := consumerSubjects(ctx, t, stream, name)
		return subjects, subjects == nil
	})
}
