package natsserver

import (
	"errors"
	"fmt"
	"log/slog"
	"net"
	"strconv"
	"strings"
	"time"
)

// Defaults of Config.
const (
	DefaultServerName   = "sluice"
	DefaultReadyTimeout = 10 * time.Second
)

// randomPort asks the NATS server for a free port of its choosing.
const randomPort = -1

// loopback is the host the server listens on when Listen names none.
const loopback = "127.0.0.1"

// Config says how to run the embedded server. The zero value is not valid:
// DataDir is required.
type Config struct {
	// DataDir is the directory the server keeps its state in; JetStream
	// stores streams and key-value buckets under DataDir/jetstream. Required.
	DataDir string
	// Listen is "host:port" of the client listener. "" (the default) opens
	// no TCP listener at all: only clients of the same process can connect,
	// through (*Server).Connect. Port 0 or -1 picks a free port; ClientURL
	// tells which. The host must be a loopback address (127.0.0.0/8, ::1)
	// or "localhost", and an empty host means 127.0.0.1: the embedded
	// server has no TLS, so it never listens beyond this machine. To serve
	// other machines, run an external NATS server with TLS instead. Every
	// client authenticates as one of the Identities, with its seed
	// (SeedFile), whether the server listens or not.
	Listen string
	// ServerName names the server in NATS; default DefaultServerName.
	ServerName string
	// Logger receives the server's log lines: notices at Debug, warnings at
	// Warn, errors and fatal errors at Error, debug lines at Debug and
	// protocol traces at LevelTrace. Debug and trace lines are only produced
	// when the logger is enabled for their level. nil discards every line.
	Logger *slog.Logger
	// ReadyTimeout bounds how long Start waits for the server to accept
	// connections; default DefaultReadyTimeout.
	ReadyTimeout time.Duration
	// Key, when not empty, has JetStream encrypt everything it stores
	// (ChaCha20-Poly1305, keys derived from it): streams, key-value
	// buckets and consumers, those stored before included. The same key
	// must be given at every start after the first with one: Start refuses
	// another key, or none, with ErrWrongKey. See ReadKeyFile.
	Key string
}

func (c *Config) setDefaults() {
	if c.ServerName == "" {
		c.ServerName = DefaultServerName
	}
	if c.ReadyTimeout == 0 {
		c.ReadyTimeout = DefaultReadyTimeout
	}
}

// Validate reports what is wrong with the configuration, after defaults have
// been applied to the fields left empty.
func (c Config) Validate() error {
	c.setDefaults()
	var errs []error
	if c.DataDir == "" {
		errs = append(errs, errors.New("data dir is required"))
	}
	if c.ReadyTimeout < 0 {
		errs = append(errs, fmt.Errorf("ready timeout %s is negative", c.ReadyTimeout))
	}
	if _, _, err := c.listenAddr(); err != nil {
		errs = append(errs, err)
	}
	return errors.Join(errs...)
}

// listenAddr returns the host and port of Listen, with the server's
// convention for a random port (-1). It returns "", 0 when Listen is empty,
// and an error when the host is not loopback.
func (c Config) listenAddr() (host string, port int, err error) {
	if c.Listen == "" {
		return "", 0, nil
	}
	host, portText, err := net.SplitHostPort(c.Listen)
	if err != nil {
		return "", 0, fmt.Errorf("listen address %q: %w", c.Listen, err)
	}
	port, err = strconv.Atoi(portText)
	if err != nil || port < randomPort || port > 65535 {
		return "", 0, fmt.Errorf("listen address %q: port must be a number from 1 to 65535, or 0 or -1 for a free port", c.Listen)
	}
	if port == 0 {
		// The server reads port 0 as its default port, 4222.
		port = randomPort
	}
	if host == "" {
		host = loopback
	}
	if !isLoopback(host) {
		return "", 0, fmt.Errorf("listen address %q: the embedded NATS server has no TLS, so it only listens on loopback (127.0.0.1, ::1 or localhost); to serve other machines, run an external NATS server with TLS and authentication and use sluice serve --nats-url", c.Listen)
	}
	return host, port, nil
}

// isLoopback reports whether host is "localhost" or a loopback IP address.
func isLoopback(host string) bool {
	if strings.EqualFold(host, "localhost") {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}
