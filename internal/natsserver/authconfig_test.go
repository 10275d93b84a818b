package natsserver_test

import (
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"testing"
	"time"

	"github.com/nats-io/nats-server/v2/server"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nkeys"

	"github.com/sluicehq/sluice/internal/natsserver"
)

// TestWriteAuthConfig writes the identities for an external server, and
// runs a nats-server from a configuration including the file: it has the
// embedded server's users and permissions, takes the seeds written, and
// refuses a client without one. A second run keeps the seeds.
func TestWriteAuthConfig(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "auth")
	path, err := natsserver.WriteAuthConfig(dir, nil)
	if err != nil {
		t.Fatalf("WriteAuthConfig: %v", err)
	}
	seeds := map[natsserver.Identity][]byte{}
	for _, id := range natsserver.Identities() {
		seedPath := filepath.Join(dir, string(id)+".nk")
		info, err := os.Stat(seedPath)
		if err != nil || info.Mode().Perm() != 0o600 {
			t.Fatalf("seed of %s: %v, mode %v, want 0600", id, err, info.Mode().Perm())
		}
		if seeds[id], err = os.ReadFile(seedPath); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := natsserver.WriteAuthConfig(dir, nil); err != nil {
		t.Fatalf("WriteAuthConfig again: %v", err)
	}
	for id, seed := range seeds {
		if again, err := os.ReadFile(filepath.Join(dir, string(id)+".nk")); err != nil || string(again) != string(seed) {
			t.Fatalf("the second run changed the seed of %s (%v)", id, err)
		}
	}

	conf := filepath.Join(dir, "nats.conf")
	if err := os.WriteFile(conf, []byte("listen: 127.0.0.1:-1\ninclude ./"+filepath.Base(path)+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	opts, err := server.ProcessConfigFile(conf)
	if err != nil {
		t.Fatalf("nats-server reading the configuration: %v", err)
	}
	if len(opts.Nkeys) != len(natsserver.Identities()) {
		t.Fatalf("the configuration has %d nkey users, want %d", len(opts.Nkeys), len(natsserver.Identities()))
	}
	for i, id := range natsserver.Identities() {
		kp, err := nkeys.FromSeed(seeds[id][:len(seeds[id])-1])
		if err != nil {
			t.Fatal(err)
		}
		pub, _ := kp.PublicKey()
		user := opts.Nkeys[i]
		if user.Nkey != pub {
			t.Errorf("user %d is %s, want %s's key %s", i, user.Nkey, id, pub)
		}
		if want := natsserver.Permissions(id, nil); !reflect.DeepEqual(user.Permissions, want) {
			t.Errorf("permissions of %s: %+v, want %+v", id, user.Permissions, want)
		}
	}

	opts.NoLog, opts.NoSigs = true, true
	srv, err := server.NewServer(opts)
	if err != nil {
		t.Fatal(err)
	}
	srv.Start()
	t.Cleanup(srv.Shutdown)
	if !srv.ReadyForConnections(10 * time.Second) {
		t.Fatal("nats-server not ready")
	}
	if nc, err := nats.Connect(srv.ClientURL()); !errors.Is(err, nats.ErrAuthorization) {
		if nc != nil {
			nc.Close()
		}
		t.Fatalf("connecting without a seed: %v, want %v", err, nats.ErrAuthorization)
	}
	seed, err := nats.NkeyOptionFromSeed(filepath.Join(dir, "producer.nk"))
	if err != nil {
		t.Fatal(err)
	}
	nc, err := nats.Connect(srv.ClientURL(), seed, nats.CustomInboxPrefix(natsserver.IdentityProducer.InboxPrefix()))
	if err != nil {
		t.Fatalf("connecting as producer: %v", err)
	}
	nc.Close()
}
