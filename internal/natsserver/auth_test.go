package natsserver_test

import (
	"context"
	"errors"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
	"github.com/nats-io/nkeys"

	"github.com/sluicehq/sluice/appsession"
	"github.com/sluicehq/sluice/internal/check"
	"github.com/sluicehq/sluice/internal/natsserver"
	"github.com/sluicehq/sluice/internal/sessionservice"
	"github.com/sluicehq/sluice/internal/store"
	"github.com/sluicehq/sluice/pipeline"
	"github.com/sluicehq/sluice/producer"
	"github.com/sluicehq/sluice/schemas"
)

// refusalWait bounds the wait for the server to refuse something.
const refusalWait = 10 * time.Second

// TestListenerRequiresCredentials connects to the listener of the
// embedded server without credentials, and with a key it does not know:
// both are refused. With the seed of sluice's identity, read from its
// file, the client may use JetStream.
func TestListenerRequiresCredentials(t *testing.T) {
	ctx := testContext(t)
	srv := startServer(t, natsserver.Config{DataDir: t.TempDir(), Listen: "127.0.0.1:-1"})

	if nc, err := nats.Connect(srv.ClientURL()); !errors.Is(err, nats.ErrAuthorization) {
		if nc != nil {
			nc.Close()
		}
		t.Fatalf("connecting without credentials: %v, want %v", err, nats.ErrAuthorization)
	}

	stranger, err := nkeys.CreateUser()
	if err != nil {
		t.Fatal(err)
	}
	pub, err := stranger.PublicKey()
	if err != nil {
		t.Fatal(err)
	}
	if nc, err := nats.Connect(srv.ClientURL(), nats.Nkey(pub, stranger.Sign)); !errors.Is(err, nats.ErrAuthorization) {
		if nc != nil {
			nc.Close()
		}
		t.Fatalf("connecting with an unknown key: %v, want %v", err, nats.ErrAuthorization)
	}

	seed, err := nats.NkeyOptionFromSeed(srv.SeedFile(natsserver.IdentitySluice))
	if err != nil {
		t.Fatalf("reading the seed of sluice: %v", err)
	}
	nc, err := nats.Connect(srv.ClientURL(), seed)
	if err != nil {
		t.Fatalf("connecting as sluice: %v", err)
	}
	t.Cleanup(nc.Close)
	if got := publishAndCount(ctx, t, nc); got != 1 {
		t.Fatalf("stream holds %d messages, want 1", got)
	}
}

// TestSeedFiles checks that the seeds are written once, mode 600 in a
// directory of mode 700, kept at a restart, and refused when others can
// read them.
func TestSeedFiles(t *testing.T) {
	dir := t.TempDir()
	first := startServer(t, natsserver.Config{DataDir: dir})
	seeds := make(map[natsserver.Identity]string)
	for _, id := range natsserver.Identities() {
		path := first.SeedFile(id)
		if path != natsserver.SeedFile(dir, id) || filepath.Dir(path) != filepath.Join(dir, "nats") {
			t.Fatalf("seed file of %s is %s, want it in %s", id, path, filepath.Join(dir, "nats"))
		}
		info, err := os.Stat(path)
		if err != nil {
			t.Fatalf("seed of %s: %v", id, err)
		}
		if info.Mode().Perm() != 0o600 {
			t.Fatalf("seed file of %s has mode %s, want 0600", id, info.Mode().Perm())
		}
		raw, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		if !strings.HasPrefix(string(raw), "SU") {
			t.Fatalf("seed file of %s does not hold a user seed", id)
		}
		seeds[id] = string(raw)
	}
	if info, err := os.Stat(filepath.Join(dir, "nats")); err != nil || info.Mode().Perm() != 0o700 {
		t.Fatalf("the seeds' directory: %v, mode %v, want 0700", err, info.Mode().Perm())
	}
	if entries, err := os.ReadDir(filepath.Join(dir, "nats")); err != nil || len(entries) != len(natsserver.Identities()) {
		t.Fatalf("the seeds' directory holds %d files (%v), want one seed per identity and no temporary file left", len(entries), err)
	}
	first.Shutdown()

	second := startServer(t, natsserver.Config{DataDir: dir})
	for id, seed := range seeds {
		if raw, err := os.ReadFile(second.SeedFile(id)); err != nil || string(raw) != seed {
			t.Fatalf("seed of %s changed at a restart (%v)", id, err)
		}
	}
	second.Shutdown()

	if err := os.Chmod(natsserver.SeedFile(dir, natsserver.IdentityProducer), 0o644); err != nil {
		t.Fatal(err)
	}
	srv, err := natsserver.Start(natsserver.Config{DataDir: dir})
	if err == nil {
		srv.Shutdown()
		t.Fatal("Start took a seed file others can read")
	}
	check.ErrorContains(t, err, "chmod 600")
}

// client is a connection as one identity, over TCP, with the errors the
// server sent it.
type client struct {
	nc   *nats.Conn
	js   jetstream.JetStream
	errs chan error
}

func connectAs(t *testing.T, srv *natsserver.Server, id natsserver.Identity) *client {
	t.Helper()
	c := &client{errs: make(chan error, 64)}
	opts := append(srv.ClientOptions(id), nats.Name(string(id)), nats.ErrorHandler(func(_ *nats.Conn, _ *nats.Subscription, err error) {
		select {
		case c.errs <- err:
		default:
		}
	}))
	var err error
	if c.nc, err = nats.Connect(srv.ClientURL(), opts...); err != nil {
		t.Fatalf("connecting as %s: %v", id, err)
	}
	t.Cleanup(c.nc.Close)
	if c.js, err = jetstream.New(c.nc); err != nil {
		t.Fatal(err)
	}
	return c
}

// errNoAnswer is what the calls return whose refusal comes only through
// the connection's error handler: a publish and a subscribe.
var errNoAnswer = errors.New("refused asynchronously")

// refused runs do, and waits until the server refuses the client a
// subject starting with subject; do's context then ends, and do must
// have returned an error (errNoAnswer for a publish or a subscribe).
func (c *client) refused(t *testing.T, subject string, do func(context.Context) error) {
	t.Helper()
	ctx, cancel := context.WithCancel(t.Context())
	done := make(chan error, 1)
	go func() { done <- do(ctx) }()
	deadline := time.NewTimer(refusalWait)
	defer deadline.Stop()
	for refused := false; !refused; {
		select {
		case err := <-c.errs:
			refused = errors.Is(err, nats.ErrPermissionViolation) && strings.Contains(err.Error(), `"`+subject)
		case <-deadline.C:
			cancel()
			t.Fatalf("the server did not refuse %s (do returned %v)", subject, <-done)
		}
	}
	cancel()
	if err := <-done; err == nil {
		t.Fatalf("%s was refused, and yet the call succeeded", subject)
	}
}

// subscribe subscribes c to subject: the server's refusal comes later.
func subscribe(c *client, subject string) error {
	if _, err := c.nc.SubscribeSync(subject); err != nil {
		return err
	}
	return errNoAnswer
}

// publish publishes enc as a client sending raw bytes would: the server's
// refusal comes later.
func publish(c *client, enc schemas.Encoded) error {
	if err := c.nc.PublishMsg(&nats.Msg{Subject: enc.Subject(), Data: enc.Data}); err != nil {
		return err
	}
	return errNoAnswer
}

// sluiceSide is what sluice serve sets up: the stream, the store and the
// application session service, through sluice's own connection.
type sluiceSide struct {
	srv    *natsserver.Server
	stream jetstream.Stream
}

func startSluiceSide(t *testing.T) sluiceSide {
	t.Helper()
	ctx := testContext(t)
	srv := startServer(t, natsserver.Config{DataDir: t.TempDir(), Listen: "127.0.0.1:-1"})
	nc, js := connectSluice(t, srv)
	stream, err := pipeline.EnsureStream(ctx, js, pipeline.StreamConfig{})
	if err != nil {
		t.Fatal(err)
	}
	st, err := store.Open(ctx, js, store.Config{})
	if err != nil {
		t.Fatal(err)
	}
	svc := sessionservice.New(nc, st, sessionservice.Config{Logger: slog.New(slog.DiscardHandler)})
	runCtx, stop := context.WithCancel(context.Background())
	ran := make(chan error, 1)
	go func() { ran <- svc.Run(runCtx) }()
	t.Cleanup(func() {
		stop()
		if err := <-ran; err != nil {
			t.Errorf("session service: %v", err)
		}
	})
	return sluiceSide{srv: srv, stream: stream}
}

func connectSluice(t *testing.T, srv *natsserver.Server) (*nats.Conn, jetstream.JetStream) {
	t.Helper()
	nc, err := srv.Connect()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(nc.Close)
	js, err := jetstream.New(nc)
	if err != nil {
		t.Fatal(err)
	}
	return nc, js
}

// sample returns an event of kind, encoded as sluice stores it, whatever
// its kind: what a client publishing raw bytes could send.
func sample(t *testing.T, kind string) schemas.Encoded {
	t.Helper()
	ev, err := schemas.NewSampler(1).Event(kind)
	if err != nil {
		t.Fatal(err)
	}
	cat := schemas.Default()
	k, _ := cat.Kind(kind)
	var enc schemas.Encoded
	if k.EmittedBySluice {
		enc, err = cat.EncodeBySluice(ev)
	} else {
		enc, err = cat.Encode(ev)
	}
	if err != nil {
		t.Fatal(err)
	}
	return enc
}

// publishes checks that c publishes an event of kind into the stream.
func (c *client) publishes(t *testing.T, kind string) {
	t.Helper()
	p, err := producer.New(c.nc, producer.Config{})
	if err != nil {
		t.Fatal(err)
	}
	enc := sample(t, kind) // sluice's own kinds as the edge encodes them
	if res := p.PublishEncoded(testContext(t), []schemas.Encoded{enc}); res[0].Err != nil {
		t.Fatalf("publishing %s: %v", kind, res[0].Err)
	}
}

// storeAndPeers are the refusals every identity but sluice's gets: no
// reading of the store or the stream, no JetStream API, no listening to
// other identities' inboxes.
func storeAndPeers(t *testing.T, c *client) {
	t.Run("no store", func(t *testing.T) {
		c.refused(t, "$JS.API.STREAM.INFO.KV_"+store.Bucket, func(ctx context.Context) error {
			_, err := c.js.KeyValue(ctx, store.Bucket)
			return err
		})
		c.refused(t, "$JS.API.DIRECT.GET.KV_"+store.Bucket, func(ctx context.Context) error {
			_, err := c.nc.RequestWithContext(ctx, "$JS.API.DIRECT.GET.KV_"+store.Bucket+".$KV."+store.Bucket+".accounts", nil)
			return err
		})
		c.refused(t, "$KV."+store.Bucket, func(context.Context) error {
			return subscribe(c, "$KV."+store.Bucket+".>")
		})
	})
	t.Run("no stream", func(t *testing.T) {
		c.refused(t, "$JS.API.CONSUMER.CREATE."+pipeline.EventsStream, func(ctx context.Context) error {
			_, err := c.js.CreateOrUpdateConsumer(ctx, pipeline.EventsStream, jetstream.ConsumerConfig{})
			return err
		})
		c.refused(t, "sluice.events.>", func(context.Context) error {
			return subscribe(c, "sluice.events.>")
		})
	})
	t.Run("no other inboxes", func(t *testing.T) {
		c.refused(t, "_INBOX.>", func(context.Context) error {
			return subscribe(c, "_INBOX.>")
		})
	})
}

// TestProducerIdentity checks that a producer publishes traffic events,
// and may not forge sluice's own kinds, read the store or the stream, nor
// record application sessions.
func TestProducerIdentity(t *testing.T) {
	side := startSluiceSide(t)
	c := connectAs(t, side.srv, natsserver.IdentityProducer)

	t.Run("publishes", func(t *testing.T) {
		c.publishes(t, "http_request_complete.v0")
		c.publishes(t, "ip_policy_created.v0")
	})
	t.Run("not sluice's kinds", func(t *testing.T) {
		for _, k := range schemas.Default().Kinds() {
			if !k.EmittedBySluice {
				continue
			}
			enc := sample(t, k.Name)
			c.refused(t, enc.Subject(), func(context.Context) error {
				return publish(c, enc)
			})
		}
	})
	storeAndPeers(t, c)
	t.Run("no app sessions", func(t *testing.T) {
		c.refused(t, appsession.SubjectRecord, func(ctx context.Context) error {
			_, err := appsession.New(c.nc).Record(ctx, appsession.RecordRequest{AccountID: schemas.NewID(schemas.PrefixAccount)})
			return err
		})
	})
}

// TestEdgeIdentity checks that the edge publishes its own kinds and
// reaches the application session service, and no more.
func TestEdgeIdentity(t *testing.T) {
	side := startSluiceSide(t)
	c := connectAs(t, side.srv, natsserver.IdentityEdge)

	t.Run("publishes", func(t *testing.T) {
		c.publishes(t, "http_request_complete.v0")
		c.publishes(t, "tcp_connection_closed.v0")
		c.publishes(t, "agent_session_start.v0")
	})
	t.Run("app sessions", func(t *testing.T) {
		_, err := appsession.New(c.nc).Refresh(testContext(t), appsession.RefreshRequest{
			AccountID: schemas.NewID(schemas.PrefixAccount), ID: schemas.NewID(schemas.PrefixAppSession)})
		if !errors.Is(err, appsession.ErrEnded) {
			t.Fatalf("refreshing a session that does not exist: %v, want the service's answer, %v", err, appsession.ErrEnded)
		}
	})
	t.Run("not other kinds", func(t *testing.T) {
		for _, kind := range []string{"domain_created.v0", "api_key_created.v0", "ip_policy_created.v0"} {
			enc := sample(t, kind)
			c.refused(t, enc.Subject(), func(context.Context) error {
				return publish(c, enc)
			})
		}
	})
	storeAndPeers(t, c)
}

// TestPermissionsCoverTheCatalogue checks the permissions against the
// catalogue: the producer is denied exactly sluice's kinds, and the edge
// allowed none of them but its own, the agent sessions'.
func TestPermissionsCoverTheCatalogue(t *testing.T) {
	cat := schemas.Default()
	producerDeny := natsserver.Permissions(natsserver.IdentityProducer, cat).Publish.Deny
	edgeAllow := natsserver.Permissions(natsserver.IdentityEdge, cat).Publish.Allow
	var sluiceKinds int
	for _, k := range cat.Kinds() {
		subject := "sluice.events.*." + k.Name
		denied := slices.Contains(producerDeny, subject)
		if denied != k.EmittedBySluice {
			t.Errorf("producer denied %s: %t, want %t", k.Name, denied, k.EmittedBySluice)
		}
		if k.EmittedBySluice {
			sluiceKinds++
			if allowed := slices.Contains(edgeAllow, subject); allowed != (k.Family == "agent_session") {
				t.Errorf("the edge may publish %s, one of sluice's own: %t, want %t", k.Name, allowed, !allowed)
			}
		}
	}
	if sluiceKinds == 0 {
		t.Fatal("the catalogue has no kind of sluice's own: the test checks nothing")
	}
}
