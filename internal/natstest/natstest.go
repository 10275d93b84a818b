package natstest

import (
	"testing"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/sluicehq/sluice/internal/natsserver"
)

// Start starts a NATS server with JetStream storing in a directory of
// t.TempDir(), listening on a random loopback port so that subprocesses can
// connect too (its ClientURL). The server shuts down when the test ends.
func Start(t testing.TB) *natsserver.Server {
	t.Helper()
	srv, err := natsserver.Start(natsserver.Config{
		DataDir: t.TempDir(),
		Listen:  "127.0.0.1:-1",
	})
	if err != nil {
		t.Fatalf("starting nats server: %v", err)
	}
	t.Cleanup(srv.Shutdown)
	return srv
}

// Connect connects to srv in process and returns the connection and a
// JetStream client on it. The connection closes when the test ends.
func Connect(t testing.TB, srv *natsserver.Server) (*nats.Conn, jetstream.JetStream) {
	t.Helper()
	nc, err := srv.Connect(nats.Name(t.Name()))
	if err != nil {
		t.Fatalf("connecting to nats server: %v", err)
	}
	t.Cleanup(nc.Close)
	js, err := jetstream.New(nc)
	if err != nil {
		t.Fatalf("creating jetstream client: %v", err)
	}
	return nc, js
}
