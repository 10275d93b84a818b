package natsserver

import (
	"errors"
	"fmt"
	"log/slog"
	"net"
	"strconv"
	"time"

	"github.com/nats-io/nats-server/v2/server"
	"github.com/nats-io/nats.go"

	"github.com/sluicehq/sluice/schemas"
)

// ErrNotReady is returned by Start when the server does not accept
// connections within Config.ReadyTimeout, or stops on a fatal error while
// starting (the error says which).
var ErrNotReady = errors.New("nats server not ready")

// readyPoll bounds each readiness check of Start. The server's check
// sleeps 25ms between polls when given more than 25ms, and spins otherwise.
const readyPoll = 50 * time.Millisecond

// Server is a running embedded NATS server with JetStream. Its methods are
// safe for concurrent use.
type Server struct {
	srv     *server.Server
	opts    *server.Options // as started, for a restart of JetStream
	listen  bool
	dataDir string
	ids     *identities // the key pairs of the NATS users
}

// Start creates the server described by cfg, starts it and waits until it
// accepts connections, at most cfg.ReadyTimeout. The server's own goroutines
// run until Shutdown. Start returns an error if cfg is not valid, if the
// server cannot be created, or one wrapping ErrNotReady if it does not
// become ready; in the last case it has shut the server down again.
func Start(cfg Config) (*Server, error) {
	cfg.setDefaults()
	if err := cfg.Validate(); err != nil {
		return nil, fmt.Errorf("nats server config: %w", err)
	}
	if err := cfg.checkKey(); err != nil {
		return nil, err
	}
	ids, err := loadIdentities(cfg.DataDir)
	if err != nil {
		return nil, err
	}
	opts, err := cfg.options(ids)
	if err != nil {
		return nil, err
	}
	srv, err := server.NewServer(opts)
	if err != nil {
		return nil, fmt.Errorf("creating nats server: %w", err)
	}
	log := newServerLog(cfg.Logger)
	srv.SetLoggerV2(log, log.enabled(slog.LevelDebug), log.enabled(LevelTrace), false)
	srv.Start()

	s := &Server{srv: srv, opts: opts, listen: !opts.DontListen, dataDir: cfg.DataDir, ids: ids}
	if err := s.waitReady(cfg.ReadyTimeout, log.fatal); err != nil {
		s.Shutdown()
		return nil, err
	}
	if err := s.checkEncryption(cfg); err != nil {
		s.Shutdown()
		return nil, err
	}
	return s, nil
}

// MaxPayload is the largest message the embedded server accepts: room for a
// 1 MiB event and its envelope, with a margin.
const MaxPayload = 4 << 20

// RequiredMaxPayload is the smallest max_payload a NATS server must allow
// for sluice to store every event it accepts: the largest event
// (schemas.DefaultMaxEventBytes) plus 64 KiB for its envelope. NATS's
// default of 1 MiB is too small; `sluice serve --nats-url` refuses to start
// against a server allowing less.
const RequiredMaxPayload = schemas.DefaultMaxEventBytes + 64<<10

// options translates the configuration into the server's options, with
// the identities' NKeys as its only users.
func (c Config) options(ids *identities) (*server.Options, error) {
	host, port, err := c.listenAddr()
	if err != nil {
		return nil, err
	}
	users, err := ids.users()
	if err != nil {
		return nil, err
	}
	opts := &server.Options{
		ServerName: c.ServerName,
		Host:       host,
		Port:       port,
		DontListen: c.Listen == "",
		JetStream:  true,
		// The server stores JetStream under StoreDir/jetstream. Memory and
		// storage limits stay at zero: the server then sizes them from the
		// machine (a share of its memory and of the disk).
		StoreDir: c.DataDir,
		// The server's own loggers are off; Start installs serverLog.
		NoLog: true,
		// Signals belong to the process, not to the embedded server.
		NoSigs: true,
		// An event may be 1 MiB as sent, and its envelope adds to that:
		// NATS's default of 1 MiB per message would refuse it.
		MaxPayload: MaxPayload,
		// Encryption at rest, when a key is given.
		JetStreamKey:    c.Key,
		JetStreamCipher: server.ChaCha,
		// Every client authenticates as one of the identities, in process
		// too: Connect does it as IdentitySluice.
		Nkeys: users,
	}
	if opts.DontListen {
		opts.Host, opts.Port = loopback, randomPort
	}
	return opts, nil
}

// waitReady waits until the server accepts connections and JetStream runs,
// the server reports a fatal error, or the timeout passes.
func (s *Server) waitReady(timeout time.Duration, fatal <-chan string) error {
	deadline := time.NewTimer(timeout)
	defer deadline.Stop()
	for {
		// ReadyForConnections itself waits up to readyPoll.
		if s.srv.ReadyForConnections(readyPoll) {
			if !s.srv.JetStreamEnabled() {
				return fmt.Errorf("%w: jetstream is not enabled", ErrNotReady)
			}
			return nil
		}
		select {
		case msg := <-fatal:
			return fmt.Errorf("%w: %s", ErrNotReady, msg)
		case <-deadline.C:
			return fmt.Errorf("%w after %s", ErrNotReady, timeout)
		default:
		}
	}
}

// Connect returns a client connection to the server that does not go
// through the network, so it works with or without a listener. It
// authenticates as IdentitySluice. Options are applied after the in-process
// one and the identity's. The caller closes the connection.
func (s *Server) Connect(opts ...nats.Option) (*nats.Conn, error) {
	opts = append(append([]nats.Option{nats.InProcessServer(s.srv)}, s.ClientOptions(IdentitySluice)...), opts...)
	nc, err := nats.Connect("", opts...)
	if err != nil {
		return nil, fmt.Errorf("connecting to embedded nats server: %w", err)
	}
	return nc, nil
}

// ClientURL returns the URL clients of other processes on this machine
// connect to, such as "nats://127.0.0.1:40321", or "" when the server does
// not listen.
func (s *Server) ClientURL() string {
	if !s.listen {
		return ""
	}
	addr, ok := s.srv.Addr().(*net.TCPAddr)
	if !ok {
		return ""
	}
	return "nats://" + net.JoinHostPort(addr.IP.String(), strconv.Itoa(addr.Port))
}

// ClientOptions returns the options a client of this process connects
// as id with, over ClientURL or with Connect: its NKey, and its inbox
// prefix (Identity.InboxPrefix). Clients of other processes read the
// identity's seed from SeedFile instead.
func (s *Server) ClientOptions(id Identity) []nats.Option {
	kp, ok := s.ids.keys[id]
	if !ok {
		return nil
	}
	pub, err := kp.PublicKey()
	if err != nil {
		return nil
	}
	opts := []nats.Option{nats.Nkey(pub, kp.Sign)}
	if prefix := id.InboxPrefix(); prefix != "" {
		opts = append(opts, nats.CustomInboxPrefix(prefix))
	}
	return opts
}

// SeedFile returns the file holding the NKey seed of id in the server's
// data dir (the package's SeedFile).
func (s *Server) SeedFile(id Identity) string { return SeedFile(s.dataDir, id) }

// Shutdown stops the server, closing its clients' connections, and waits
// until it has stopped and its files are closed. It is safe to call more
// than once.
func (s *Server) Shutdown() {
	s.srv.Shutdown()
	s.srv.WaitForShutdown()
}
