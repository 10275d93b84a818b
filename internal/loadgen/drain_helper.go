package loadgen

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"strings"
	"sync"
	"time"

	"github.com/sluicehq/sluice/internal/natsserver"
)

// Kinds of helper process of the drain benchmark.
const (
	// HelperNATS is the embedded, file-backed JetStream server listening
	// on a loopback port.
	HelperNATS = "nats"
	// HelperKinesis is the minimal Kinesis endpoint (KinesisEndpoint) on a
	// loopback port.
	HelperKinesis = "kinesis"
)

// ErrHelperKind is returned by ServeDrainHelper for a kind it does not
// know.
var ErrHelperKind = errors.New("unknown helper kind")

// Bounds of a helper process's life.
const (
	// helperStartTimeout bounds the wait for a helper to say its URL.
	helperStartTimeout = 30 * time.Second
	// helperStopTimeout bounds the wait for a helper to exit once told;
	// then it is killed.
	helperStopTimeout = 10 * time.Second
)

// ServeDrainHelper is the body of a helper process of the drain benchmark:
// it starts the server of the kind (HelperNATS, storing in a temporary
// directory under dataDir, "" for the system's, which it removes when it
// stops; or HelperKinesis), writes its URL and a newline to out (for
// HelperNATS, the URL, a space and the seed file of the server's sluice
// identity, which the benchmark connects with), and serves until
// stop reaches its end (the benchmark closes the pipe, or its process
// ended) or ctx ends. It returns ErrHelperKind for another kind.
//
// The read of stop is left blocked when ctx ends first; the process exits
// right after.
func ServeDrainHelper(ctx context.Context, kind, dataDir string, stop io.Reader, out io.Writer) error {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	go func() {
		_, _ = io.Copy(io.Discard, stop)
		cancel()
	}()
	switch kind {
	case HelperNATS:
		return serveNATSHelper(ctx, dataDir, out)
	case HelperKinesis:
		return serveKinesisHelper(ctx, out)
	}
	return fmt.Errorf("%w %q: use %s or %s", ErrHelperKind, kind, HelperNATS, HelperKinesis)
}

// serveNATSHelper runs a file-backed JetStream server on a free loopback
// port until ctx ends, storing in a new directory under dataDir, which it
// removes at the end: the helper owns it, so that it goes even when the
// benchmark's process was killed.
func serveNATSHelper(ctx context.Context, dataDir string, out io.Writer) (err error) {
	dir, err := os.MkdirTemp(dataDir, "sluice-bench-drain-")
	if err != nil {
		return fmt.Errorf("creating data directory: %w", err)
	}
	defer func() {
		if rmErr := os.RemoveAll(dir); rmErr != nil && err == nil {
			err = fmt.Errorf("removing data directory: %w", rmErr)
		}
	}()
	srv, err := natsserver.Start(natsserver.Config{DataDir: dir, Listen: "127.0.0.1:0", ServerName: "sluice-bench-drain"})
	if err != nil {
		return err
	}
	defer srv.Shutdown()
	if _, err := fmt.Fprintln(out, srv.ClientURL(), srv.SeedFile(natsserver.IdentitySluice)); err != nil {
		return err
	}
	<-ctx.Done()
	return nil
}

// serveKinesisHelper serves a KinesisEndpoint on a free loopback port
// until ctx ends.
func serveKinesisHelper(ctx context.Context, out io.Writer) error {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return fmt.Errorf("listening: %w", err)
	}
	srv := &http.Server{Handler: NewKinesisEndpoint(), ReadHeaderTimeout: 10 * time.Second}
	served := make(chan error, 1)
	go func() { served <- srv.Serve(ln) }()
	if _, err := fmt.Fprintln(out, "http://"+ln.Addr().String()); err != nil {
		_ = srv.Close()
		<-served
		return err
	}
	select {
	case err := <-served:
		return err
	case <-ctx.Done():
	}
	shutdownCtx, cancel := context.WithTimeout(context.WithoutCancel(ctx), helperStopTimeout)
	defer cancel()
	err = srv.Shutdown(shutdownCtx)
	<-served
	return err
}

// helperProcess is a running helper process, owned by the benchmark:
// stop ends it, on every path out of RunDrain.
type helperProcess struct {
	kind   string
	cmd    *exec.Cmd
	stdin  io.WriteCloser // closing it tells the helper to exit
	url    string
	exited chan struct{} // closed once cmd.Wait returned
	stderr lockedBuffer  // what the helper wrote on stderr
	exit   error         // cmd.Wait's error, once exited is closed
	once   sync.Once
}

// startHelper starts argv with the helper's kind and flags appended and
// waits until it says its URL on stdout. When the benchmark's process
// ends, however it ends, the helper's standard input reaches its end and
// the helper exits.
func startHelper(ctx context.Context, argv []string, kind string, flags ...string) (_ *helperProcess, err error) {
	args := append(append(append([]string{}, argv[1:]...), kind), flags...)
	cmd := exec.Command(argv[0], args...)
	p := &helperProcess{kind: kind, cmd: cmd, exited: make(chan struct{})}
	cmd.Stderr = &p.stderr
	if p.stdin, err = cmd.StdinPipe(); err != nil {
		return nil, err
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("starting the %s helper (%s): %w", kind, strings.Join(cmd.Args, " "), err)
	}
	urls := make(chan string, 1)
	go func() {
		defer close(p.exited)
		line, _ := bufio.NewReader(stdout).ReadString('\n')
		urls <- strings.TrimSpace(line)
		_, _ = io.Copy(io.Discard, stdout)
		p.exit = cmd.Wait()
	}()
	defer func() {
		if err != nil {
			p.stop()
		}
	}()
	t := time.NewTimer(helperStartTimeout)
	defer t.Stop()
	select {
	case p.url = <-urls:
	case <-ctx.Done():
		return nil, ctx.Err()
	case <-t.C:
		return nil, fmt.Errorf("the %s helper did not say its URL within %s: %s", kind, helperStartTimeout, p.stderr.String())
	}
	if p.url == "" {
		<-p.exited
		return nil, fmt.Errorf("the %s helper exited before serving (%v): %s", kind, p.exit, p.stderr.String())
	}
	return p, nil
}

// stop tells the helper to exit, by closing its standard input, waits for
// it, and kills it if it has not exited within helperStopTimeout. It
// returns an error if the helper exited with one.
func (p *helperProcess) stop() error {
	p.once.Do(func() {
		_ = p.stdin.Close()
		t := time.NewTimer(helperStopTimeout)
		defer t.Stop()
		select {
		case <-p.exited:
		case <-t.C:
			_ = p.cmd.Process.Kill()
			<-p.exited
		}
	})
	if p.exit != nil {
		return fmt.Errorf("the %s helper: %w: %s", p.kind, p.exit, p.stderr.String())
	}
	return nil
}

// lockedBuffer is a buffer written by one goroutine and read by another.
type lockedBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *lockedBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.buf.Len() > 64<<10 {
		return len(p), nil // keep the first lines, which say why
	}
	return b.buf.Write(p)
}

func (b *lockedBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return strings.TrimSpace(b.buf.String())
}

// dataDirFlag is the helper's flag of its data directory.
const dataDirFlag = "--data-dir"
