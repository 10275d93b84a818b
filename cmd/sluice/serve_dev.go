package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"path/filepath"
	"strings"

	"github.com/sluicehq/sluice/internal/bytesize"
	"github.com/sluicehq/sluice/internal/destinations"
	"github.com/sluicehq/sluice/internal/emulator"
	"github.com/sluicehq/sluice/sinks"
)

// devAWS is the AWS emulator serve --dev runs and delivers to.
type devAWS struct {
	emulator *emulator.Server
	ln       net.Listener
	endpoint string
}

// devAWSDir is the directory, in --data-dir, where the emulator of --dev
// keeps its streams, delivery streams, log groups and records.
const devAWSDir = "emulator"

// defaultDevAWSMaxBytes is the default of --dev-aws-max-stored-bytes: the
// emulator's own bound with a data dir (emulator.DefaultMaxStoredBytesDataDir).
const defaultDevAWSMaxBytes = "8MiB"

// devAWSMaxStoredBytes returns --dev-aws-max-stored-bytes in bytes; empty
// is its default.
func (f serveFlags) devAWSMaxStoredBytes() (int64, error) {
	if f.devAWSMaxBytes == "" {
		return emulator.DefaultMaxStoredBytesDataDir, nil
	}
	n, err := bytesize.Parse(f.devAWSMaxBytes)
	if err == nil && n == 0 {
		err = errors.New("give a size above 0, such as " + defaultDevAWSMaxBytes)
	}
	if err != nil {
		return 0, fmt.Errorf("--dev-aws-max-stored-bytes %q: %w", f.devAWSMaxBytes, err)
	}
	return n, nil
}

// startDevAWS makes the emulator of serve --dev, creating whatever stream,
// delivery stream or log group a destination names and keeping them in
// dataDir/emulator, each at most maxStoredBytes, to serve on ln
// (--dev-aws-listen, bound already). Serve runs it.
func startDevAWS(ln net.Listener, dataDir string, maxStoredBytes int64, log *slog.Logger) (*devAWS, error) {
	emu, err := emulator.New(emulator.Config{AutoCreate: true, DataDir: filepath.Join(dataDir, devAWSDir), MaxStoredBytes: maxStoredBytes, Logger: log.With("component", "emulator")})
	if err != nil {
		return nil, fmt.Errorf("the AWS emulator of --dev: %w", err)
	}
	return &devAWS{emulator: emu, ln: ln, endpoint: "http://" + ln.Addr().String()}, nil
}

// sinkFactory builds sinks that write to the emulator, signed with keys it
// takes, whatever the destination's credentials.
func (d *devAWS) sinkFactory() destinations.Factory {
	return destinations.Factory{Endpoint: d.endpoint, Auth: &sinks.AWSAuth{AccessKeyID: "sluice-dev", SecretAccessKey: "sluice-dev"}}
}

// headerDevAWSEndpoint is the header of every answer of a serve --dev
// process, whose value is the URL of its AWS emulator: sluice tail reads
// it to read a destination from the emulator it was delivered to. The
// emulator listens on loopback only and needs no secret, so the header
// tells nothing a caller could not learn on the server's machine.
const headerDevAWSEndpoint = "Sluice-Dev-Aws-Endpoint"

// markAnswers returns next with every answer carrying
// headerDevAWSEndpoint.
func (d *devAWS) markAnswers(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set(headerDevAWSEndpoint, d.endpoint)
		next.ServeHTTP(w, r)
	})
}

// announce tells the newcomer where the events go and how to read them.
func (d *devAWS) announce(w io.Writer, log *slog.Logger) {
	log.Info("dev mode: every destination delivers to the AWS emulator", "aws_endpoint", d.endpoint)
	fmt.Fprintf(w, "sluice: --dev: every destination delivers to the AWS emulator at %s; any ARN works, and its stream, delivery stream or log group appears with the first events delivered to it. Read what arrives with\n\n    sluice tail <the destination's id or ARN>\n\n(with SLUICE_API_KEY set, tail asks this server where its emulator is; elsewhere, give --emulator %s)\n\n", d.endpoint, d.endpoint)
}

// serve runs the emulator until ctx ends.
func (d *devAWS) serve(ctx context.Context) error {
	if err := d.emulator.Serve(ctx, d.ln); err != nil {
		return fmt.Errorf("the AWS emulator of --dev: %w", err)
	}
	return nil
}

// checkLoopback returns an error unless addr is HOST:PORT with a loopback
// host: the emulator has no authentication.
func checkLoopback(addr string) error {
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return fmt.Errorf("%q is not HOST:PORT: %w", addr, err)
	}
	if ip := net.ParseIP(host); !strings.EqualFold(host, "localhost") && (ip == nil || !ip.IsLoopback()) {
		return fmt.Errorf("%q: the emulator has no authentication, so it listens on loopback only (127.0.0.1, ::1 or localhost)", addr)
	}
	return nil
}
