package kinesalitetest

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/kinesis"
)

// What the emulator reports and accepts. kinesalite takes its account id and
// region from the environment it starts in (AWS_ACCOUNT_ID, AWS_REGION) and
// puts them in the ARNs it returns; it checks that a request is signed but
// not with which keys.
const (
	// Region is the region of every stream.
	Region = "us-east-1"
	// AccountID is the account that owns every stream.
	AccountID = "123456789012"
	// AccessKeyID and SecretAccessKey are static credentials to sign
	// requests with; any would do.
	AccessKeyID     = "AKIAKINESALITETEST00"
	SecretAccessKey = "kinesalite-test-secret"
)

// startTimeout bounds how long Start waits for kinesalite to listen and
// answer; node starts it in well under a second.
const startTimeout = 30 * time.Second

// launcher starts kinesalite in process rather than through its CLI, which
// listens on every interface and cannot take port 0: here it listens on
// loopback only, on a port the kernel picks, and prints that port. It exits
// when its standard input closes, so it dies with the test binary even when
// that is killed. A client that resets its connection in the middle of a
// request (a sluice process killed while it writes) makes kinesalite's
// request stream raise an error it does not handle; that must not end the
// emulator.
const launcher = `
process.on('uncaughtException', err => {
  if (err && err.code === 'ECONNRESET') return
  console.error(err)
  process.exit(1)
})
const kinesalite = require(process.argv[1])
const server = kinesalite(JSON.parse(process.argv[2]))
server.listen(0, '127.0.0.1', () => console.log('port ' + server.address().port))
process.stdin.on('end', () => process.exit(0))
process.stdin.resume()
`

// options are kinesalite's: in memory (no path), streams ACTIVE at once,
// and room for many shards (its default limit is 10 in all).
var options = map[string]int{
	"createStreamMs": 0,
	"deleteStreamMs": 0,
	"updateStreamMs": 0,
	"shardLimit":     10000,
}

// Server is a running kinesalite.
type Server struct {
	// Endpoint is its base URL, http://127.0.0.1:PORT, for the SDK's
	// BaseEndpoint or AWS_ENDPOINT_URL_KINESIS.
	Endpoint string

	client *kinesis.Client
	// pageLimit is the most records ReadAll asks for at once; 0 is the
	// service's most, 10,000.
	pageLimit int32
}

// Start starts kinesalite on a free loopback port, in memory, and waits until
// it answers. It stops when the test ends. Start fails the test when
// kinesalite is not installed (run `npm ci` or `make test`).
func Start(t testing.TB) *Server {
	t.Helper()
	module, err := kinesaliteModule()
	if err != nil {
		t.Fatalf("kinesalite: %v", err)
	}
	node, err := exec.LookPath("node")
	if err != nil {
		t.Fatalf("kinesalite needs node on PATH: %v", err)
	}
	opts, err := json.Marshal(options)
	if err != nil {
		t.Fatalf("encoding kinesalite options: %v", err)
	}
	stderr, err := os.Create(filepath.Join(t.TempDir(), "kinesalite.stderr"))
	if err != nil {
		t.Fatalf("creating kinesalite's stderr file: %v", err)
	}
	t.Cleanup(func() { stderr.Close() })

	cmd := exec.Command(node, "-e", launcher, module, string(opts))
	cmd.Env = append(os.Environ(), "AWS_ACCOUNT_ID="+AccountID, "AWS_REGION="+Region, "AWS_DEFAULT_REGION="+Region)
	cmd.Stderr = stderr
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatalf("kinesalite stdin: %v", err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatalf("kinesalite stdout: %v", err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatalf("starting kinesalite: %v", err)
	}
	exited := make(chan struct{})
	t.Cleanup(func() {
		stdin.Close()
		_ = cmd.Process.Kill()
		<-exited
		if t.Failed() {
			if out, err := os.ReadFile(stderr.Name()); err == nil && len(out) > 0 {
				t.Logf("kinesalite's stderr:\n%s", out)
			}
		}
	})
	ports := make(chan string, 1)
	go func() {
		// Read the port line, then drain stdout until kinesalite exits.
		scanner := bufio.NewScanner(stdout)
		for scanner.Scan() {
			if port, ok := strings.CutPrefix(scanner.Text(), "port "); ok {
				ports <- port
			}
		}
		_ = cmd.Wait()
		close(exited)
	}()

	ctx, cancel := context.WithTimeout(context.Background(), startTimeout)
	defer cancel()
	var port string
	select {
	case port = <-ports:
	case <-exited:
		out, _ := os.ReadFile(stderr.Name())
		t.Fatalf("kinesalite exited before listening: %s", out)
	case <-ctx.Done():
		t.Fatalf("kinesalite did not listen within %v", startTimeout)
	}
	srv := &Server{Endpoint: "http://127.0.0.1:" + port}
	srv.client = NewClient(srv.Endpoint)
	if err := srv.waitAnswering(ctx); err != nil {
		t.Fatalf("kinesalite at %s: %v", srv.Endpoint, err)
	}
	return srv
}

// waitAnswering polls ListStreams until kinesalite answers or ctx ends.
func (s *Server) waitAnswering(ctx context.Context) error {
	tick := time.NewTicker(20 * time.Millisecond)
	defer tick.Stop()
	for {
		_, err := s.client.ListStreams(ctx, &kinesis.ListStreamsInput{})
		if err == nil {
			return nil
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("not answering: %w", err)
		case <-tick.C:
		}
	}
}

// NewClient returns a Kinesis client of the emulator at endpoint, signing
// with the static test credentials.
func NewClient(endpoint string) *kinesis.Client {
	return kinesis.New(kinesis.Options{
		Region:       Region,
		BaseEndpoint: aws.String(endpoint),
		Credentials: aws.CredentialsProviderFunc(func(context.Context) (aws.Credentials, error) {
			return aws.Credentials{AccessKeyID: AccessKeyID, SecretAccessKey: SecretAccessKey}, nil
		}),
	})
}

// Client returns a Kinesis client of the server, for calls the helpers do
// not make.
func (s *Server) Client() *kinesis.Client { return s.client }

// Env returns the environment that points an AWS SDK at the server with the
// test credentials (AWS_ENDPOINT_URL_KINESIS, AWS_REGION,
// AWS_ACCESS_KEY_ID, AWS_SECRET_ACCESS_KEY), for a sluice subprocess.
func (s *Server) Env() []string {
	return []string{
		"AWS_ENDPOINT_URL_KINESIS=" + s.Endpoint,
		"AWS_REGION=" + Region,
		"AWS_ACCESS_KEY_ID=" + AccessKeyID,
		"AWS_SECRET_ACCESS_KEY=" + SecretAccessKey,
	}
}

// kinesaliteModule returns the directory of the kinesalite package installed
// in the module root's node_modules.
func kinesaliteModule() (string, error) {
	root, err := moduleRoot()
	if err != nil {
		return "", err
	}
	return installedModule(root)
}

// installedModule returns the directory of the kinesalite package installed
// under root/node_modules.
func installedModule(root string) (string, error) {
	bin := filepath.Join(root, "node_modules", ".bin", "kinesalite")
	module := filepath.Join(root, "node_modules", "kinesalite")
	for _, path := range []string{bin, module} {
		if _, err := os.Stat(path); err != nil {
			return "", fmt.Errorf("not installed (%s: %w): run `npm ci` in %s, or `make test`", path, errors.Unwrap(err), root)
		}
	}
	return module, nil
}

// moduleRoot walks up from the working directory to the directory holding
// go.mod.
func moduleRoot() (string, error) {
	dir, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return dir, nil
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", errors.New("no go.mod above the working directory")
		}
		dir = parent
	}
}

// StreamARN returns the ARN of the stream named name, as kinesalite reports
// it: arn:aws:kinesis:us-east-1:123456789012:stream/NAME.
func StreamARN(name string) string {
	return "arn:aws:kinesis:" + Region + ":" + AccountID + ":stream/" + name
}

// streamName returns the name in a stream ARN.
func streamName(streamARN string) string {
	_, name, _ := strings.Cut(streamARN, ":stream/")
	return name
}
