package store

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/sluicehq/sluice/filters"
	"github.com/sluicehq/sluice/internal/kvread"
	"github.com/sluicehq/sluice/schemas"
)

// Bucket is the name of the JetStream key-value bucket the store keeps
// everything in.
const Bucket = "SLUICE_STORE"

// maxReplicas is the largest replica count JetStream accepts.
const maxReplicas = 5

// Sentinel errors. Errors returned by the store wrap them with details.
var (
	// ErrNotFound means the resource does not exist, or the id is not one the
	// store could have given out.
	ErrNotFound = errors.New("not found")
	// ErrConflict means the resource clashes with one that exists, such as
	// an API key with the same token, or with the state of others, such as
	// a destination still used by a subscription (*InUseError); or that it
	// kept changing under concurrent updates.
	ErrConflict = errors.New("conflict")
	// ErrUnauthenticated means a bearer token matches no API key.
	ErrUnauthenticated = errors.New("unauthenticated")
	// ErrInvalid means an input breaks a rule of the store, such as a
	// description longer than 255 bytes.
	ErrInvalid = errors.New("invalid")
)

// Config says how to create the bucket.
type Config struct {
	// Replicas is how many copies of the bucket the JetStream cluster keeps;
	// default 1. Use 3 (or 5) on a cluster.
	Replicas int
	// Limits bound what one account can have; zero fields get their
	// defaults.
	Limits Limits
	// Clock is the time the store compares times with (rather than stamps
	// them): application sessions expire by it, and ACME challenge values
	// age by it (they are stamped with it, to be compared with it);
	// default time.Now. Tests move it on.
	Clock func() time.Time
	// ServiceDomains are the service's own domains, lower case, which no
	// account reserves: reservations under two of their names never
	// overlap through them (see domainNodes).
	ServiceDomains []string
	// ServiceNames are more names the service hands out, lower case: its
	// name servers (serve --ingress-ns-targets). No account may hold one
	// or a name under one (checkServiceName).
	ServiceNames []string
}

func (c *Config) setDefaults() {
	if c.Replicas == 0 {
		c.Replicas = 1
	}
	if c.Clock == nil {
		c.Clock = time.Now
	}
	c.Limits.setDefaults()
}

// Validate reports what is wrong with the configuration, after defaults have
// been applied to the fields left zero.
func (c Config) Validate() error {
	c.setDefaults()
	if c.Replicas < 1 || c.Replicas > maxReplicas {
		return fmt.Errorf("store replicas %d: must be from 1 to %d", c.Replicas, maxReplicas)
	}
	return nil
}

// Store reads and writes accounts, API keys, event destinations, event
// subscriptions and bot users. Its methods are safe for concurrent use,
// also by several processes sharing the bucket.
type Store struct {
	kv jetstream.KeyValue
	// stream is the bucket's stream, and nc the connection, that changes
	// and their audit events are written with, in one atomic batch.
	stream jetstream.Stream
	nc     *nats.Conn
	limits Limits
	// filters returns the CEL environments subscription sources are
	// checked with.
	filters func() (*filters.Env, error)
	// ids makes the ids of what the store creates (see newID).
	ids schemas.IDs
	// clock is the time application sessions expire by (Config.Clock).
	clock func() time.Time
	// serviceDomains are Config.ServiceDomains.
	serviceDomains []string
	// serviceNames are the names no account may hold a name at or under:
	// cname.<d> and acme.<d> of each service domain d, and
	// Config.ServiceNames.
	serviceNames []string
	// tokensIndexed is set once indexCredentialTokens has indexed the
	// tokens of the credentials made before the index; mu serializes it.
	tokensIndexed struct {
		mu   sync.Mutex
		done bool
	}
}

// Option is an optional extra of Open.
type Option func(*Store)

// WithFilters makes the store check the filters and field selections of
// subscription sources with env: pass the Env the process delivers with, so
// that what the store accepts is exactly what delivery runs. Without it, the
// store builds its own from schemas.Default() when it first checks a
// subscription; WithFilters(nil) changes nothing.
func WithFilters(env *filters.Env) Option {
	return func(s *Store) {
		if env != nil {
			s.filters = func() (*filters.Env, error) { return env, nil }
		}
	}
}

// Open creates the bucket, or updates it to cfg if it exists, and returns a
// Store on it. It returns an error if cfg is not valid or JetStream refuses
// the bucket.
func Open(ctx context.Context, js jetstream.JetStream, cfg Config, opts ...Option) (*Store, error) {
	cfg.setDefaults()
	if err := cfg.Validate(); err != nil {
		return nil, fmt.Errorf("store config: %w", err)
	}
	kv, err := openBucket(ctx, js, cfg)
	if err != nil {
		return nil, err
	}
	stream, err := allowAtomicBatches(ctx, js)
	if err != nil {
		return nil, err
	}
	s := &Store{kv: kv, stream: stream, nc: js.Conn(), limits: cfg.Limits, filters: sync.OnceValues(defaultFilters), clock: cfg.Clock, serviceDomains: cfg.ServiceDomains, serviceNames: serviceNames(cfg.ServiceDomains, cfg.ServiceNames)}
	for _, opt := range opts {
		opt(s)
	}
	return s, nil
}

// openBucket creates the bucket, or updates it when its replicas are not
// cfg's, and returns it. A bucket as wanted is left as it is: updating it
// through the key-value API would also turn off the atomic batches of its
// stream, under the feet of processes already writing them.
func openBucket(ctx context.Context, js jetstream.JetStream, cfg Config) (jetstream.KeyValue, error) {
	stream, err := js.Stream(ctx, kvStream)
	if err == nil && stream.CachedInfo().Config.Replicas == cfg.Replicas {
		kv, err := js.KeyValue(ctx, Bucket)
		if err != nil {
			return nil, fmt.Errorf("opening bucket %s: %w", Bucket, err)
		}
		return kv, nil
	}
	if err != nil && !errors.Is(err, jetstream.ErrStreamNotFound) {
		return nil, fmt.Errorf("reading stream %s: %w", kvStream, err)
	}
	kv, err := js.CreateOrUpdateKeyValue(ctx, jetstream.KeyValueConfig{
		Bucket:      Bucket,
		Description: "sluice accounts, API keys, event destinations and event subscriptions",
		History:     1,
		Storage:     jetstream.FileStorage,
		Replicas:    cfg.Replicas,
	})
	if err != nil {
		return nil, fmt.Errorf("creating or updating bucket %s: %w", Bucket, err)
	}
	return kv, nil
}

// defaultFilters builds the CEL environments of the default catalogue.
func defaultFilters() (*filters.Env, error) {
	env, err := filters.NewEnv(schemas.Default())
	if err != nil {
		return nil, fmt.Errorf("building the filter environments: %w", err)
	}
	return env, nil
}

// Ping checks that the bucket is reachable.
func (s *Store) Ping(ctx context.Context) error {
	if _, err := s.kv.Status(ctx); err != nil {
		return fmt.Errorf("bucket %s: %w", Bucket, err)
	}
	return nil
}

// now is the time stored in created_at: UTC, milliseconds, as the API shows
// it.
func now() time.Time { return time.Now().UTC().Truncate(time.Millisecond) }

// now returns the time of the store's clock (Config.Clock), in UTC.
func (s *Store) now() time.Time { return s.clock().UTC() }

// newID returns the id of a new resource, prefix and a KSUID, and its
// created_at. Lists sort by id, newest first, and the ids of schemas.IDs
// sort by the nanosecond they were made in (strictly ascending within the
// process), so lists are in creation order exactly, also between resources
// made within one second; created_at is the id's time to the millisecond
// (as now), so it never contradicts that order.
func (s *Store) newID(prefix string) (string, time.Time) {
	id, at := s.ids.New(prefix)
	return id, at.Truncate(time.Millisecond)
}

// getJSON decodes the value of key into v. It returns an error wrapping
// ErrNotFound if the key does not exist or was deleted.
func (s *Store) getJSON(ctx context.Context, key string, v any) error {
	entry, err := s.kv.Get(ctx, key)
	if errors.Is(err, jetstream.ErrKeyNotFound) {
		return ErrNotFound
	}
	if err != nil {
		return err
	}
	return json.Unmarshal(entry.Value(), v)
}

// createJSON stores v under key unless the key exists. It returns an error
// wrapping ErrConflict if it does.
func (s *Store) createJSON(ctx context.Context, key string, v any) error {
	value, err := json.Marshal(v)
	if err != nil {
		return err
	}
	if _, err := s.kv.Create(ctx, key, value); err != nil {
		if errors.Is(err, jetstream.ErrKeyExists) {
			return ErrConflict
		}
		return err
	}
	return nil
}

// entries returns the current entries of the keys matching filter,
// without deleted ones, each key once with its latest value. It reads them
// with batched direct gets (package kvread), making no consumer: a list
// is a management read any account can repeat at will.
func (s *Store) entries(ctx context.Context, filter string) ([]jetstream.KeyValueEntry, error) {
	current, err := kvread.Current(ctx, s.nc, Bucket, filter)
	if err != nil {
		return nil, fmt.Errorf("reading %s: %w", filter, err)
	}
	found := make([]jetstream.KeyValueEntry, len(current))
	for i, e := range current {
		found[i] = e
	}
	return found, nil
}

// eachEntry calls fn on each current entry of the keys matching filter,
// without deleted ones, as it reads them (with kvread, as entries does),
// holding none: a key written meanwhile may come twice, the latest last.
func (s *Store) eachEntry(ctx context.Context, filter string, fn func(jetstream.KeyValueEntry)) error {
	err := kvread.Each(ctx, s.nc, Bucket, filter, func(e kvread.Entry) error {
		if e.Operation() == jetstream.KeyValuePut {
			fn(e)
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("reading %s: %w", filter, err)
	}
	return nil
}
