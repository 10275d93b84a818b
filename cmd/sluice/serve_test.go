package main

import (
	"bufio"
	"encoding/json"
	"io"
	"net/http"
	"os"
	"os/exec"
	"slices"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/nats-io/nats.go"

	"github.com/sluicehq/sluice/internal/buildtest"
	"github.com/sluicehq/sluice/internal/check"
	"github.com/sluicehq/sluice/internal/emulator"
)

// TestMain removes the binaries the tests built (buildSluice) when they
// are done.
func TestMain(m *testing.M) {
	code := m.Run()
	buildtest.Cleanup()
	os.Exit(code)
}

// buildSluice returns the sluice binary, built once per run of the test
// binary: built anew by each of its two dozen callers, it took minutes of
// the suite.
func buildSluice(t *testing.T) string {
	t.Helper()
	return buildtest.Binary(t, ".")
}

// serveProcess is a running `sluice serve`.
type serveProcess struct {
	cmd        *exec.Cmd
	url        string
	metricsURL string   // of --metrics-http
	stderr     []string // lines logged until it served
	done       chan error

	mu    sync.Mutex
	later []string      // lines logged after it served
	more  chan struct{} // gets a value when later grows
}

// startServe runs `sluice serve` on a free port with the data dir and waits
// until it says where it serves.
func startServe(t *testing.T, bin, dataDir string, env ...string) *serveProcess {
	t.Helper()
	cmd := exec.Command(bin, "serve", "--http", "127.0.0.1:0", "--metrics-http", "127.0.0.1:0", "--log-format", "json")
	cmd.Env = append(os.Environ(), append([]string{"SLUICE_DATA_DIR=" + dataDir}, devEdgeEnv(env)...)...)
	stderr, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	p := &serveProcess{cmd: cmd, done: make(chan error, 1), more: make(chan struct{}, 1)}
	lines := make(chan string)
	go func() {
		sc := bufio.NewScanner(stderr)
		for sc.Scan() {
			lines <- sc.Text()
		}
		close(lines)
		p.done <- cmd.Wait()
	}()
	t.Cleanup(func() {
		_ = cmd.Process.Kill()
		for range lines {
		}
	})
	deadline := time.After(30 * time.Second)
	for p.url == "" {
		select {
		case line, ok := <-lines:
			if !ok {
				t.Fatalf("sluice serve exited early:\n%s", strings.Join(p.stderr, "\n"))
			}
			p.stderr = append(p.stderr, line)
			var rec struct {
				Msg     string `json:"msg"`
				HTTP    string `json:"http"`
				Metrics string `json:"metrics"`
			}
			if json.Unmarshal([]byte(line), &rec) == nil && rec.Msg == "sluice is serving" {
				p.url, p.metricsURL = rec.HTTP, rec.Metrics
			}
		case <-deadline:
			t.Fatalf("sluice serve did not start:\n%s", strings.Join(p.stderr, "\n"))
		}
	}
	// Keep the pipe drained, and the lines for waitLog.
	go func() {
		for line := range lines {
			p.mu.Lock()
			p.later = append(p.later, line)
			p.mu.Unlock()
			select {
			case p.more <- struct{}{}:
			default:
			}
		}
	}()
	return p
}

// logged reports whether the process has logged msg since it served.
func (p *serveProcess) logged(msg string) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	for _, line := range p.later {
		var rec struct {
			Msg string `json:"msg"`
		}
		if json.Unmarshal([]byte(line), &rec) == nil && rec.Msg == msg {
			return true
		}
	}
	return false
}

// waitLog waits until the process logs a line whose msg is msg.
func (p *serveProcess) waitLog(t *testing.T, msg string) {
	t.Helper()
	deadline := time.NewTimer(20 * time.Second)
	defer deadline.Stop()
	for !p.logged(msg) {
		select {
		case <-p.more:
		case <-deadline.C:
			p.mu.Lock()
			defer p.mu.Unlock()
			t.Fatalf("sluice serve did not log %q within 20s:\n%s", msg, strings.Join(p.later, "\n"))
		}
	}
}

// logAttr returns the string attribute key of the first line the process
// logged with msg, from its start on, failing the test when there is none.
func (p *serveProcess) logAttr(t *testing.T, msg, key string) string {
	t.Helper()
	p.mu.Lock()
	lines := append(slices.Clone(p.stderr), p.later...)
	p.mu.Unlock()
	for _, line := range lines {
		var rec map[string]any
		if json.Unmarshal([]byte(line), &rec) != nil || rec["msg"] != msg {
			continue
		}
		if v, ok := rec[key].(string); ok && v != "" {
			return v
		}
		t.Fatalf("sluice serve logged %q without %s: %s", msg, key, line)
	}
	t.Fatalf("sluice serve did not log %q:\n%s", msg, strings.Join(lines, "\n"))
	return ""
}

// tail returns the last lines the process logged, for a failure message.
func (p *serveProcess) tail() string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return strings.Join(p.later[max(0, len(p.later)-30):], "\n")
}

// kill sends SIGKILL and waits until the process is gone.
func (p *serveProcess) kill(t *testing.T) {
	t.Helper()
	if err := p.cmd.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	select {
	case <-p.done:
	case <-time.After(10 * time.Second):
		t.Fatal("sluice serve still running 10s after SIGKILL")
	}
}

// stop sends SIGTERM and waits for a clean exit.
func (p *serveProcess) stop(t *testing.T) {
	t.Helper()
	if err := p.cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	select {
	case err := <-p.done:
		if err != nil {
			t.Fatalf("sluice serve exited with %v after SIGTERM", err)
		}
	case <-time.After(20 * time.Second):
		t.Fatal("sluice serve did not stop within 20s of SIGTERM")
	}
}

func request(t *testing.T, method, url, token, body string) (int, string) {
	t.Helper()
	req, err := http.NewRequest(method, url, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	if token != "" { // "": a request without a key
		req.Header.Set("Authorization", "Bearer "+token)
	}
	req.Header.Set("Service-Version", "2")
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	out, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(out)
}

func TestServeEndToEnd(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the binary")
	}
	bin := buildSluice(t)
	dataDir := t.TempDir()
	const token = "sk_test_bootstrap_token_0123456789"
	events := `[{"event_type":"http_request_complete.v0","event_id":"ev_2Yq3A9cC0c7ZkU6e7d0a9oKf1xG","object":{"conn":{"server_port":443}}}]`

	p := startServe(t, bin, dataDir, "SLUICE_BOOTSTRAP_API_KEY="+token)
	if !strings.Contains(strings.Join(p.stderr, "\n"), "created the first account") {
		t.Fatalf("first start did not bootstrap a key:\n%s", strings.Join(p.stderr, "\n"))
	}
	waitReady(t, p.url)
	if code, body := request(t, "GET", p.url+"/openapi.yaml", "", ""); code != 200 || !strings.HasPrefix(body, "openapi: 3.1") {
		t.Fatalf("openapi.yaml: %d %.80s", code, body)
	}
	if code, body := request(t, "POST", p.url+"/events", token, events); code != 202 || !strings.Contains(body, `"stored":1`) {
		t.Fatalf("ingest: %d %s", code, body)
	}
	if code, body := request(t, "GET", p.metricsURL+"/metrics", "", ""); code != 200 || !strings.Contains(body, `sluice_ingest_events_total{event_type="http_request_complete.v0"} 1`) {
		t.Fatalf("metrics: %d %.500s", code, body)
	}
	p.stop(t)

	// Same data dir: the key and the stored event survive; nothing new is
	// bootstrapped, and the resent event is a duplicate.
	p = startServe(t, bin, dataDir)
	if strings.Contains(strings.Join(p.stderr, "\n"), "created the first account") {
		t.Fatal("second start bootstrapped again")
	}
	if code, body := request(t, "POST", p.url+"/events", token, events); code != 202 || !strings.Contains(body, `"duplicates":1`) {
		t.Fatalf("ingest after restart: %d %s", code, body)
	}
	p.stop(t)
}

func TestServeGeneratesAndPrintsAKeyOnce(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the binary")
	}
	bin := buildSluice(t)
	p := startServe(t, bin, t.TempDir())
	var token string
	for _, line := range p.stderr {
		if f := strings.Fields(line); len(f) == 1 && strings.HasPrefix(f[0], "sk_") {
			token = f[0]
		}
	}
	if token == "" {
		t.Fatalf("no key printed:\n%s", strings.Join(p.stderr, "\n"))
	}
	if code, body := request(t, "POST", p.url+"/events", token, `[{"event_type":"ip_policy_created.v0","object":{}}]`); code != 202 {
		t.Fatalf("printed key does not work: %d %s", code, body)
	}
	for _, line := range p.stderr {
		if strings.Contains(line, token) && strings.HasPrefix(line, "{") {
			t.Fatalf("the key appears in a log line: %s", line)
		}
	}
	p.stop(t)
}

func TestFlagsFromEnvironment(t *testing.T) {
	cmd := newServeCommand()
	t.Setenv("SLUICE_RETENTION", "1h")
	t.Setenv("SLUICE_HTTP", "127.0.0.1:9999")
	if err := cmd.Flags().Parse([]string{"--http", "127.0.0.1:7777"}); err != nil {
		t.Fatal(err)
	}
	if err := flagsFromEnv(cmd.Flags()); err != nil {
		t.Fatal(err)
	}
	if got := cmd.Flags().Lookup("retention").Value.String(); got != "1h0m0s" {
		t.Errorf("retention from env = %s", got)
	}
	if got := cmd.Flags().Lookup("http").Value.String(); got != "127.0.0.1:7777" {
		t.Errorf("the command line should win over the environment, got %s", got)
	}
	t.Setenv("SLUICE_REPLICAS", "three")
	if err := flagsFromEnv(cmd.Flags()); err == nil || !strings.Contains(err.Error(), "SLUICE_REPLICAS") {
		t.Errorf("bad env value error = %v", err)
	}
}

// TestServeFinishesRequestsInFlight sends SIGTERM while a request's body is
// half sent: the request still gets its 202 once the rest arrives, and the
// process then exits cleanly.
func TestServeFinishesRequestsInFlight(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the binary")
	}
	bin := buildSluice(t)
	const token = "sk_test_bootstrap_token_0123456789"
	events := `[{"event_type":"http_request_complete.v0","event_id":"ev_2Yq3A9cC0c7ZkU6e7d0a9oKf1xG","object":{"conn":{"server_port":443}}}]`
	p := startServe(t, bin, t.TempDir(), "SLUICE_BOOTSTRAP_API_KEY="+token)

	body, bodyWriter := io.Pipe()
	req, err := http.NewRequest(http.MethodPost, p.url+"/events", body)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Authorization", "Bearer "+token)
	req.Header.Set("Service-Version", "2")
	req.Header.Set("Content-Type", "application/json")
	// With Expect: 100-continue the client sends the body only once the
	// handler starts reading it, so when the first write below returns
	// the request is in the handler.
	req.Header.Set("Expect", "100-continue")
	client := &http.Client{Transport: &http.Transport{ExpectContinueTimeout: time.Minute}}
	t.Cleanup(client.CloseIdleConnections)

	type answer struct {
		status int
		body   string
		err    error
	}
	answered := make(chan answer, 1)
	go func() {
		resp, err := client.Do(req)
		if err != nil {
			answered <- answer{err: err}
			return
		}
		defer resp.Body.Close()
		out, err := io.ReadAll(resp.Body)
		answered <- answer{status: resp.StatusCode, body: string(out), err: err}
	}()

	half := len(events) / 2
	if _, err := io.WriteString(bodyWriter, events[:half]); err != nil {
		t.Fatalf("sending the first half of the body: %v", err)
	}
	if err := p.cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	p.waitLog(t, "shutting down")
	if _, err := io.WriteString(bodyWriter, events[half:]); err != nil {
		t.Fatalf("sending the rest of the body: %v", err)
	}
	if err := bodyWriter.Close(); err != nil {
		t.Fatal(err)
	}

	select {
	case a := <-answered:
		if a.err != nil || a.status != http.StatusAccepted || !strings.Contains(a.body, `"stored":1`) {
			t.Fatalf("request in flight at SIGTERM: status %d, error %v: %s", a.status, a.err, a.body)
		}
	case <-time.After(20 * time.Second):
		t.Fatal("the request in flight at SIGTERM got no answer within 20s")
	}
	select {
	case err := <-p.done:
		if err != nil {
			t.Fatalf("sluice serve exited with %v after SIGTERM", err)
		}
	case <-time.After(20 * time.Second):
		t.Fatal("sluice serve did not stop within 20s of answering")
	}
}

func TestServeFlagsValidate(t *testing.T) {
	valid := serveFlags{retention: 72 * time.Hour, replicas: 1, shutdownTimeout: 15 * time.Second, ackWait: 30 * time.Second, linger: 200 * time.Millisecond, roles: defaultRoles(), devAWSListen: "127.0.0.1:4566"}
	tests := []struct {
		name    string
		edit    func(*serveFlags)
		wantErr string
	}{
		{name: "defaults", edit: func(*serveFlags) {}},
		{name: "external server with credentials and tls", edit: func(f *serveFlags) {
			f.natsURL, f.natsCreds, f.natsTLSCA, f.natsTLSCert, f.natsTLSKey = "nats://n:4222", "c.creds", "ca.pem", "c.pem", "k.pem"
		}},
		{name: "creds without url", edit: func(f *serveFlags) { f.natsCreds = "c.creds" }, wantErr: "--nats-creds is for an external NATS server: give its address with --nats-url"},
		{name: "nkey without url", edit: func(f *serveFlags) { f.natsNkey = "sluice.nk" }, wantErr: "--nats-nkey is for an external NATS server: give its address with --nats-url"},
		{name: "creds and nkey", edit: func(f *serveFlags) { f.natsURL, f.natsCreds, f.natsNkey = "nats://n:4222", "c.creds", "sluice.nk" }, wantErr: "give one of them"},
		{name: "tls ca without url", edit: func(f *serveFlags) { f.natsTLSCA = "ca.pem" }, wantErr: "--nats-tls-ca is for an external NATS server"},
		{name: "cert without key", edit: func(f *serveFlags) { f.natsURL, f.natsTLSCert = "nats://n:4222", "c.pem" }, wantErr: "--nats-tls-cert needs --nats-tls-key"},
		{name: "key without cert", edit: func(f *serveFlags) { f.natsURL, f.natsTLSKey = "nats://n:4222", "k.pem" }, wantErr: "--nats-tls-key needs --nats-tls-cert"},
		{name: "listen and url", edit: func(f *serveFlags) { f.natsURL, f.natsListen = "nats://n:4222", "127.0.0.1:4222" }, wantErr: "--nats-listen exposes the embedded NATS server, which --nats-url replaces"},
		{name: "negative shutdown timeout", edit: func(f *serveFlags) { f.shutdownTimeout = -time.Second }, wantErr: "--shutdown-timeout -1s is negative"},
		{name: "negative retention", edit: func(f *serveFlags) { f.retention = -time.Hour }, wantErr: "--retention -1h0m0s is negative"},
		{name: "retention under the duplicate window", edit: func(f *serveFlags) { f.retention = time.Minute }, wantErr: "--retention 1m0s is shorter than the stream's duplicate window"},
		{name: "no replicas", edit: func(f *serveFlags) { f.replicas = 0 }, wantErr: "--replicas 0"},
		{name: "too many replicas", edit: func(f *serveFlags) { f.replicas = 6 }, wantErr: "--replicas 6: JetStream keeps 1 to 5 replicas"},
		{name: "memory limit", edit: func(f *serveFlags) { f.memoryLimit = "512MiB" }},
		{name: "memory limit not a size", edit: func(f *serveFlags) { f.memoryLimit = "half" }, wantErr: `--memory-limit "half": give a size such as 512MiB`},
		{name: "ack wait under a second", edit: func(f *serveFlags) { f.ackWait = 100 * time.Millisecond }, wantErr: "--ack-wait 100ms: give at least 1s"},
		{name: "no linger", edit: func(f *serveFlags) { f.linger = 0 }, wantErr: "--linger 0s: give a duration up to a minute"},
		{name: "linger over a minute", edit: func(f *serveFlags) { f.linger = time.Hour }, wantErr: "--linger 1h0m0s"},
		{name: "public url", edit: func(f *serveFlags) { f.publicURL = "https://sluice.example.com" }},
		{name: "public url without scheme", edit: func(f *serveFlags) { f.publicURL = "sluice.example.com" }, wantErr: `--public-url "sluice.example.com" is not a full http or https URL`},
		{name: "some roles", edit: func(f *serveFlags) { f.roles = []string{"api", " Worker"} }},
		{name: "no roles", edit: func(f *serveFlags) { f.roles = nil }, wantErr: "--roles is empty: give one or more of api, ingest, worker"},
		{name: "blank roles", edit: func(f *serveFlags) { f.roles = []string{"", " "} }, wantErr: "--roles is empty"},
		{name: "unknown role", edit: func(f *serveFlags) { f.roles = []string{"api", "delivery"} }, wantErr: `--roles: unknown role "delivery": the roles are api, ingest, worker`},
		{name: "dev with a worker", edit: func(f *serveFlags) { f.dev, f.roles = true, []string{"worker"} }},
		{name: "dev emulator bound", edit: func(f *serveFlags) { f.dev, f.devAWSMaxBytes = true, "32MiB" }},
		{name: "dev emulator bound not a size", edit: func(f *serveFlags) { f.dev, f.devAWSMaxBytes = true, "lots" }, wantErr: `--dev-aws-max-stored-bytes "lots": give a size such as 512MiB`},
		{name: "dev emulator bound of zero", edit: func(f *serveFlags) { f.devAWSMaxBytes = "0" }, wantErr: `--dev-aws-max-stored-bytes "0": give a size above 0, such as 8MiB`},
		{name: "dev without a worker", edit: func(f *serveFlags) { f.dev, f.roles = true, []string{"api", "ingest"} }, wantErr: "--dev delivers to its AWS emulator, and only the worker role delivers: add worker to --roles api,ingest"},
		{name: "metrics listener", edit: func(f *serveFlags) { f.httpAddr, f.metricsAddr = "0.0.0.0:8080", "0.0.0.0:9464" }},
		{name: "metrics on the api's address", edit: func(f *serveFlags) { f.httpAddr, f.metricsAddr = "0.0.0.0:8080", "0.0.0.0:8080" }, wantErr: "--metrics-http 0.0.0.0:8080 is the address of --http: give /metrics its own port"},
		{name: "metrics not host and port", edit: func(f *serveFlags) { f.metricsAddr = "9464" }, wantErr: `--metrics-http "9464" is not HOST:PORT`},
		{name: "tls", edit: func(f *serveFlags) { f.tlsCert, f.tlsKey = "cert.pem", "key.pem" }},
		{name: "data key", edit: func(f *serveFlags) { f.dataKeyFile = "data.key" }},
		{name: "data key and url", edit: func(f *serveFlags) { f.natsURL, f.dataKeyFile = "nats://n:4222", "data.key" }, wantErr: "--data-key-file encrypts the store of the embedded NATS server, which --nats-url replaces"},
		{name: "tls cert without key", edit: func(f *serveFlags) { f.tlsCert = "cert.pem" }, wantErr: "--tls-cert needs --tls-key"},
		{name: "tls key without cert", edit: func(f *serveFlags) { f.tlsKey = "key.pem" }, wantErr: "--tls-key needs --tls-cert"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := valid
			tt.edit(&f)
			check.ErrorContains(t, f.validate(), tt.wantErr)
		})
	}
}

// sluiceNkey returns the option connecting as sluice's NATS identity,
// whose seed file serve logs (nats_nkey) with the address of its embedded
// NATS.
func sluiceNkey(t *testing.T, seedFile string) nats.Option {
	t.Helper()
	opt, err := nats.NkeyOptionFromSeed(seedFile)
	if err != nil {
		t.Fatalf("reading the seed serve logged: %v", err)
	}
	return opt
}

// devEdgeEnv returns env, and with SLUICE_DEV=true in it the edge's
// listeners on free ports, where env does not place them: tests run
// several serve --dev at once, and the dev defaults are fixed ports.
func devEdgeEnv(env []string) []string {
	if !slices.Contains(env, "SLUICE_DEV=true") {
		return env
	}
	out := slices.Clone(env)
	for _, name := range []string{"SLUICE_EDGE_AGENTS", "SLUICE_EDGE_HTTP", "SLUICE_EDGE_HTTPS"} {
		if !slices.ContainsFunc(env, func(e string) bool { return strings.HasPrefix(e, name+"=") }) {
			out = append(out, name+"=127.0.0.1:0")
		}
	}
	return out
}

// devEdgeArgs returns args, and with --dev in them the edge's listeners
// on free ports where args do not place them (see devEdgeEnv).
func devEdgeArgs(args []string) []string {
	if !slices.Contains(args, "--dev") {
		return args
	}
	out := slices.Clone(args)
	for _, flag := range []string{"--edge-agents", "--edge-http", "--edge-https"} {
		if !slices.Contains(args, flag) {
			out = append(out, flag, "127.0.0.1:0")
		}
	}
	return out
}

// TestDevAWSMaxStoredBytes checks --dev-aws-max-stored-bytes: its default
// is the emulator's with a data dir, empty is the default, and a size is in
// bytes.
func TestDevAWSMaxStoredBytes(t *testing.T) {
	for _, tt := range []struct {
		flag string
		want int64
	}{{defaultDevAWSMaxBytes, emulator.DefaultMaxStoredBytesDataDir}, {"", emulator.DefaultMaxStoredBytesDataDir}, {"32MiB", 32 << 20}, {"1000", 1000}} {
		got, err := serveFlags{devAWSMaxBytes: tt.flag}.devAWSMaxStoredBytes()
		if err != nil || got != tt.want {
			t.Errorf("--dev-aws-max-stored-bytes %q = %d, %v; want %d", tt.flag, got, err, tt.want)
		}
	}
}
