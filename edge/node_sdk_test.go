package edge_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/sluicehq/sluice/internal/check"
	"github.com/sluicehq/sluice/schemas"
)

// nodeAgent is edge/testdata/node-agent.js running: the Node SDK (npm
// package @ngrok/ngrok, a binding of the Rust SDK) connected to the edge.
type nodeAgent struct {
	HTTP string `json:"http"`
	TCP  string `json:"tcp"`
	// Labeled are the ids of its labeled listeners (AGENT_LABELED).
	Labeled []string `json:"labeled"`
}

// nodeAgentCommand returns the command that runs testdata/node-agent.js
// with env, killed when ctx ends. The test fails, not skips, without node
// or the npm package: make node_modules installs it.
func nodeAgentCommand(ctx context.Context, t *testing.T, env ...string) *exec.Cmd {
	t.Helper()
	node, err := exec.LookPath("node")
	if err != nil {
		t.Fatalf("node is not installed (%v): install Node.js, then run `make node_modules`", err)
	}
	modules, err := filepath.Abs(filepath.Join("..", "node_modules"))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(modules, "@ngrok", "ngrok", "package.json")); err != nil {
		t.Fatalf("the npm package @ngrok/ngrok is not installed (%v): run `make node_modules` at the repository's root", err)
	}
	cmd := exec.CommandContext(ctx, node, filepath.Join("testdata", "node-agent.js"))
	cmd.Env = append(append(os.Environ(), "NODE_PATH="+modules), env...)
	return cmd
}

// startNodeAgent runs testdata/node-agent.js with env and returns the
// endpoints it bound. The test fails, not skips, without node or the
// npm package: make node_modules installs it.
func startNodeAgent(t *testing.T, env ...string) nodeAgent {
	t.Helper()
	// Not t's context: that ends before the cleanup below lets the
	// agent exit by itself.
	cmd := nodeAgentCommand(context.Background(), t, env...)
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	var stderr lockedBuffer
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	// exited is closed when the agent has exited, waitErr then set.
	exited := make(chan struct{})
	var waitErr error
	t.Cleanup(func() {
		_ = stdin.Close()
		select {
		case <-exited:
			if waitErr != nil && !t.Failed() {
				t.Errorf("the node agent did not exit cleanly when its stdin closed: %v\n%s", waitErr, stderr.String())
			}
		case <-time.After(10 * time.Second):
			_ = cmd.Process.Kill()
			<-exited
			t.Errorf("the node agent did not exit within 10s of its stdin closing; killed\n%s", stderr.String())
		}
	})
	lines := make(chan string, 1)
	go func() {
		defer close(exited)
		sc := bufio.NewScanner(stdout)
		if sc.Scan() {
			lines <- sc.Text()
		}
		close(lines)
		_, _ = io.Copy(io.Discard, stdout)
		waitErr = cmd.Wait()
	}()
	select {
	case line, ok := <-lines:
		if !ok {
			status := "its output closed"
			select {
			case <-exited:
				status = fmt.Sprintf("it exited: %v", waitErr)
			case <-time.After(10 * time.Second):
			}
			t.Fatalf("the node agent bound no endpoints (%s):\n%s", status, stderr.String())
		}
		var a nodeAgent
		if err := json.Unmarshal([]byte(line), &a); err != nil {
			t.Fatalf("the node agent printed %q: %v\n%s", line, err, stderr.String())
		}
		return a
	case <-time.After(30 * time.Second):
		t.Fatalf("the node agent bound no endpoints within 30s:\n%s", stderr.String())
	}
	return nodeAgent{}
}

// lockedBuffer is a bytes.Buffer that a process writes while a test reads.
type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

func TestNodeSDKServesHTTPAndTCPThroughTheEdge(t *testing.T) {
	// The upstreams the agent forwards to: an HTTP server and a TCP
	// server that answers what it read, upper-cased.
	httpUp, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	httpSrv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("X-Upstream", "node")
		fmt.Fprintf(w, "hello %s via %s", r.URL.Path, r.Host)
	}), ReadHeaderTimeout: 10 * time.Second}
	go func() { _ = httpSrv.Serve(httpUp) }()
	t.Cleanup(func() { _ = httpSrv.Close() })
	tcpUp, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = tcpUp.Close() })
	go func() {
		for {
			c, err := tcpUp.Accept()
			if err != nil {
				return
			}
			go func() {
				defer c.Close()
				b, _ := io.ReadAll(c)
				_, _ = c.Write([]byte(strings.ToUpper(string(b))))
			}()
		}
	}()

	te := startEdge(t)
	account := schemas.NewID(schemas.PrefixAccount)
	te.Reserve(account, "*.apps.example.test")
	token := te.Credential(account)
	caFile := filepath.Join(t.TempDir(), "ca.pem")
	if err := os.WriteFile(caFile, te.CA.PEM, 0o600); err != nil {
		t.Fatal(err)
	}
	a := startNodeAgent(t,
		"AGENT_AUTHTOKEN="+token,
		"AGENT_SERVER_ADDR="+te.Agents,
		"AGENT_CA_FILE="+caFile,
		"AGENT_HTTP_URL=http://node.apps.example.test",
		"AGENT_HTTP_UPSTREAM=http://"+httpUp.Addr().String(),
		"AGENT_TCP_UPSTREAM=tcp://"+tcpUp.Addr().String(),
		// AGENT_LOG_LEVEL=DEBUG go test ... shows the SDK's log on a failure.
		"AGENT_LOG_LEVEL="+os.Getenv("AGENT_LOG_LEVEL"),
	)
	if !strings.HasPrefix(a.HTTP, "http://node.apps.example.test") {
		t.Fatalf("HTTP endpoint %q, want http://node.apps.example.test[:port]", a.HTTP)
	}
	if !strings.HasPrefix(a.TCP, "tcp://127.0.0.1:") {
		t.Fatalf("TCP endpoint %q, want tcp://127.0.0.1:<port>", a.TCP)
	}

	resp, body := te.Get(t, "node.apps.example.test", "/hi?x=1")
	if resp.StatusCode != 200 || body != "hello /hi via node.apps.example.test" || resp.Header.Get("X-Upstream") != "node" {
		t.Fatalf("got %d %q (X-Upstream %q), want 200 \"hello /hi via node.apps.example.test\"", resp.StatusCode, body, resp.Header.Get("X-Upstream"))
	}
	reqs := check.Eventually(t, 5*time.Second, "a request event", func() ([]map[string]any, bool) {
		reqs := te.Events.OfKind(t, "http_request_complete.v0")
		return reqs, len(reqs) >= 1
	})
	if got := dig(reqs[0], "http", "response", "status_code"); got != float64(200) {
		t.Errorf("status_code %v, want 200", got)
	}
	if got := dig(reqs[0], "conn", "server_name"); got != "node.apps.example.test" {
		t.Errorf("server_name %v", got)
	}

	te.pingTCP(t, strings.TrimPrefix(a.TCP, "tcp://"))
	if starts := te.Events.OfKind(t, "agent_session_start.v0"); len(starts) != 1 || dig(starts[0], "error") != "" {
		t.Errorf("agent_session_start events %v, want one without error", starts)
	}
}

// runRefusedNodeAgent runs testdata/node-agent.js with env, expects it to
// fail (exit 1 without binding), and returns what it wrote on stderr:
// the error the Node SDK shows its user.
func runRefusedNodeAgent(t *testing.T, env ...string) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), 60*time.Second)
	defer cancel()
	cmd := nodeAgentCommand(ctx, t, env...)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	// Its stdin is empty: had it bound its endpoints, it would close its
	// session and exit 0 at once.
	err := cmd.Run()
	if ctx.Err() != nil {
		t.Fatalf("the node agent neither bound nor failed within 60s:\n%s", stderr.String())
	}
	if err == nil || stdout.Len() > 0 {
		t.Fatalf("the node agent was not refused (%v): it printed %q\n%s", err, stdout.String(), stderr.String())
	}
	return stderr.String()
}

// TestNodeSDKShowsTheEdgesRefusals: the Node SDK shows its user the
// edge's refusals, with what is wrong and what to do: an unknown
// authtoken at connect, and a bind the credential's ACL does not allow,
// or of a domain the account did not reserve.
func TestNodeSDKShowsTheEdgesRefusals(t *testing.T) {
	te := startEdge(t)
	account := schemas.NewID(schemas.PrefixAccount)
	te.Reserve(account, "*.apps.example.test")
	caFile := filepath.Join(t.TempDir(), "ca.pem")
	if err := os.WriteFile(caFile, te.CA.PEM, 0o600); err != nil {
		t.Fatal(err)
	}
	agentEnv := func(token, httpURL string) []string {
		return []string{"AGENT_AUTHTOKEN=" + token, "AGENT_SERVER_ADDR=" + te.Agents, "AGENT_CA_FILE=" + caFile,
			"AGENT_HTTP_URL=" + httpURL, "AGENT_HTTP_UPSTREAM=http://127.0.0.1:1", "AGENT_TCP_UPSTREAM=tcp://127.0.0.1:1"}
	}
	for _, tt := range []struct {
		name, token, url string
		want             []string
	}{
		{"an unknown authtoken", "ct_no_such_token", "http://node.apps.example.test",
			[]string{"ERR_SLUICE_601", "the authtoken is not valid"}},
		{"a bind outside the ACL", te.Credential(account, "bind:only.apps.example.test"), "http://other.apps.example.test",
			[]string{"ERR_SLUICE_613"}},
		{"a domain not reserved", te.Credential(account), "http://node.elsewhere.test",
			[]string{"ERR_SLUICE_614"}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			stderr := runRefusedNodeAgent(t, agentEnv(tt.token, tt.url)...)
			for _, w := range tt.want {
				if !strings.Contains(stderr, w) {
					t.Errorf("the node agent's error does not say %q:\n%s", w, stderr)
				}
			}
		})
	}
}
