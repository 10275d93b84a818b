package natsserver_test

import (
	"bytes"
	"context"
	"errors"
	"log/slog"
	"net"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/sluicehq/sluice/internal/check"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/sluicehq/sluice/internal/natsserver"
)

func startServer(t *testing.T, cfg natsserver.Config) *natsserver.Server {
	t.Helper()
	srv, err := natsserver.Start(cfg)
	if err != nil {
		t.Fatalf("Start: %v", err)
	}
	t.Cleanup(srv.Shutdown)
	return srv
}

func testContext(t *testing.T) context.Context {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
	t.Cleanup(cancel)
	return ctx
}

// publishAndCount creates (or opens) stream TEST on subject test.>, publishes
// one message and returns how many messages the stream holds.
func publishAndCount(ctx context.Context, t *testing.T, nc *nats.Conn) uint64 {
	t.Helper()
	js, err := jetstream.New(nc)
	if err != nil {
		t.Fatalf("jetstream.New: %v", err)
	}
	stream, err := js.CreateOrUpdateStream(ctx, jetstream.StreamConfig{
		Name:     "TEST",
		Subjects: []string{"test.>"},
		Storage:  jetstream.FileStorage,
	})
	if err != nil {
		t.Fatalf("CreateOrUpdateStream: %v", err)
	}
	if _, err := js.Publish(ctx, "test.one", []byte("hello")); err != nil {
		t.Fatalf("Publish: %v", err)
	}
	info, err := stream.Info(ctx)
	if err != nil {
		t.Fatalf("stream Info: %v", err)
	}
	return info.State.Msgs
}

func TestStartConnectPublish(t *testing.T) {
	tests := []struct {
		name    string
		listen  string
		overTCP bool
	}{
		{name: "no listener, in process", listen: ""},
		{name: "random loopback port, in process", listen: "127.0.0.1:-1"},
		{name: "random loopback port, over tcp", listen: "127.0.0.1:-1", overTCP: true},
		{name: "port 0 and no host, over tcp", listen: ":0", overTCP: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ctx := testContext(t)
			srv := startServer(t, natsserver.Config{DataDir: t.TempDir(), Listen: tt.listen})

			url := srv.ClientURL()
			if tt.listen == "" {
				if url != "" {
					t.Fatalf("ClientURL = %q, want empty without a listener", url)
				}
			} else if !strings.HasPrefix(url, "nats://127.0.0.1:") || strings.HasSuffix(url, ":4222") {
				t.Fatalf("ClientURL = %q, want a random loopback port", url)
			}

			var nc *nats.Conn
			var err error
			if tt.overTCP {
				seed, seedErr := nats.NkeyOptionFromSeed(srv.SeedFile(natsserver.IdentitySluice))
				if seedErr != nil {
					t.Fatalf("reading the seed: %v", seedErr)
				}
				nc, err = nats.Connect(url, seed)
			} else {
				nc, err = srv.Connect()
			}
			if err != nil {
				t.Fatalf("connect: %v", err)
			}
			t.Cleanup(nc.Close)

			if got := publishAndCount(ctx, t, nc); got != 1 {
				t.Fatalf("stream holds %d messages, want 1", got)
			}
		})
	}
}

func TestRestartKeepsMessages(t *testing.T) {
	ctx := testContext(t)
	cfg := natsserver.Config{DataDir: t.TempDir()}

	first, err := natsserver.Start(cfg)
	if err != nil {
		t.Fatalf("Start: %v", err)
	}
	nc, err := first.Connect()
	if err != nil {
		first.Shutdown()
		t.Fatalf("Connect: %v", err)
	}
	got := publishAndCount(ctx, t, nc)
	nc.Close()
	first.Shutdown()
	if got != 1 {
		t.Fatalf("first run: stream holds %d messages, want 1", got)
	}

	if _, err := os.Stat(filepath.Join(cfg.DataDir, "jetstream")); err != nil {
		t.Fatalf("jetstream directory: %v", err)
	}

	second := startServer(t, cfg)
	nc, err = second.Connect()
	if err != nil {
		t.Fatalf("Connect: %v", err)
	}
	t.Cleanup(nc.Close)
	if got := publishAndCount(ctx, t, nc); got != 2 {
		t.Fatalf("after restart: stream holds %d messages, want 2 (1 kept + 1 new)", got)
	}
}

func TestStartFails(t *testing.T) {
	taken, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatalf("net.Listen: %v", err)
	}
	t.Cleanup(func() { taken.Close() })

	notADir := filepath.Join(t.TempDir(), "file")
	if err := os.WriteFile(notADir, []byte("x"), 0o600); err != nil {
		t.Fatalf("WriteFile: %v", err)
	}

	tests := []struct {
		name    string
		cfg     natsserver.Config
		wantErr string // "": ErrNotReady
	}{
		{name: "port in use", cfg: natsserver.Config{DataDir: t.TempDir(), Listen: taken.Addr().String()}},
		// The seeds of the NATS users are written in it before the server starts.
		{name: "data dir is a file", cfg: natsserver.Config{DataDir: notADir}, wantErr: "not a directory"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv, err := natsserver.Start(tt.cfg)
			if err == nil {
				srv.Shutdown()
				t.Fatal("Start succeeded, want an error")
			}
			if tt.wantErr != "" {
				check.ErrorContains(t, err, tt.wantErr)
			} else if !errors.Is(err, natsserver.ErrNotReady) {
				t.Fatalf("Start error = %v, want ErrNotReady", err)
			}
		})
	}
}

func TestConfigValidate(t *testing.T) {
	tests := []struct {
		name    string
		cfg     natsserver.Config
		wantErr string
	}{
		{name: "no listener", cfg: natsserver.Config{DataDir: "d"}},
		{name: "host and port", cfg: natsserver.Config{DataDir: "d", Listen: "127.0.0.1:4222"}},
		{name: "random port", cfg: natsserver.Config{DataDir: "d", Listen: "127.0.0.1:-1"}},
		{name: "no host", cfg: natsserver.Config{DataDir: "d", Listen: ":4222"}},
		{name: "other loopback address", cfg: natsserver.Config{DataDir: "d", Listen: "127.0.0.2:4222"}},
		{name: "ipv6 loopback", cfg: natsserver.Config{DataDir: "d", Listen: "[::1]:4222"}},
		{name: "localhost", cfg: natsserver.Config{DataDir: "d", Listen: "localhost:4222"}},
		{name: "every interface", cfg: natsserver.Config{DataDir: "d", Listen: "0.0.0.0:4222"}, wantErr: "only listens on loopback"},
		{name: "every ipv6 interface", cfg: natsserver.Config{DataDir: "d", Listen: "[::]:4222"}, wantErr: "only listens on loopback"},
		{name: "private address", cfg: natsserver.Config{DataDir: "d", Listen: "10.0.0.5:4222"}, wantErr: "--nats-url"},
		{name: "host name", cfg: natsserver.Config{DataDir: "d", Listen: "nats.example.com:4222"}, wantErr: "no TLS"},
		{name: "no data dir", cfg: natsserver.Config{}, wantErr: "data dir"},
		{name: "no port", cfg: natsserver.Config{DataDir: "d", Listen: "127.0.0.1"}, wantErr: "listen address"},
		{name: "port not a number", cfg: natsserver.Config{DataDir: "d", Listen: "127.0.0.1:nats"}, wantErr: "port must be"},
		{name: "port too large", cfg: natsserver.Config{DataDir: "d", Listen: "127.0.0.1:70000"}, wantErr: "port must be"},
		{name: "negative timeout", cfg: natsserver.Config{DataDir: "d", ReadyTimeout: -time.Second}, wantErr: "ready timeout"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			check.ErrorContains(t, tt.cfg.Validate(), tt.wantErr)
		})
	}
}

// syncBuffer is a bytes.Buffer the server's goroutines can write to.
type syncBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

func TestLogger(t *testing.T) {
	for _, tt := range []struct {
		level      slog.Level
		wantNotice bool
	}{
		{slog.LevelDebug, true},
		{slog.LevelInfo, false}, // notices, the start-up banner among them, are routine
	} {
		t.Run(tt.level.String(), func(t *testing.T) {
			var out syncBuffer
			logger := slog.New(slog.NewTextHandler(&out, &slog.HandlerOptions{Level: tt.level}))
			srv, err := natsserver.Start(natsserver.Config{DataDir: t.TempDir(), Logger: logger})
			if err != nil {
				t.Fatalf("Start: %v", err)
			}
			srv.Shutdown()

			logged := out.String()
			if got := strings.Contains(logged, "level=DEBUG msg=\"Starting nats-server\""); got != tt.wantNotice {
				t.Fatalf("start notice at debug logged = %v, want %v:\n%s", got, tt.wantNotice, logged)
			}
			if tt.level == slog.LevelInfo && strings.Contains(logged, "level=DEBUG") {
				t.Fatalf("log has debug lines although the logger is at Info:\n%s", logged)
			}
		})
	}
}

func TestMaxPayloadFitsTheLargestEvent(t *testing.T) {
	if natsserver.MaxPayload < natsserver.RequiredMaxPayload {
		t.Fatalf("MaxPayload %d is below RequiredMaxPayload %d", natsserver.MaxPayload, natsserver.RequiredMaxPayload)
	}
}
