package main

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/sluicehq/sluice/internal/buildtest"
	"github.com/sluicehq/sluice/internal/check"
)

// agentProcess is a sluice-agent process whose JSON log a test reads.
type agentProcess struct {
	cmd  *exec.Cmd
	mu   sync.Mutex
	logs []map[string]any
	out  []string
	done chan error
}

// startAgentProcess runs sluice-agent with args in dir, its log as JSON
// on stdout.
func startAgentProcess(t *testing.T, dir string, args ...string) *agentProcess {
	t.Helper()
	bin := buildtest.Binary(t, "github.com/sluicehq/sluice/cmd/sluice-agent")
	cmd := exec.Command(bin, append(args, "--log=stdout", "--log-format=json")...)
	cmd.Dir = dir
	// No configuration of the machine's user: only the dev server's.
	cmd.Env = append(os.Environ(), "SLUICE_AGENT_CONFIG="+filepath.Join(dir, "no-such-config.yml"))
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	var stderr strings.Builder
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	p := &agentProcess{cmd: cmd, done: make(chan error, 1)}
	go func() {
		sc := bufio.NewScanner(stdout)
		for sc.Scan() {
			line := sc.Text()
			var m map[string]any
			p.mu.Lock()
			p.out = append(p.out, line)
			if json.Unmarshal([]byte(line), &m) == nil {
				p.logs = append(p.logs, m)
			}
			p.mu.Unlock()
		}
		p.done <- cmd.Wait()
	}()
	t.Cleanup(func() {
		_ = cmd.Process.Kill()
		<-p.done
		if t.Failed() {
			p.mu.Lock()
			t.Logf("sluice-agent's log:\n%s\nstderr:\n%s", strings.Join(p.out, "\n"), stderr.String())
			p.mu.Unlock()
		}
	})
	return p
}

// waitLog waits for a log line of msg and returns it.
func (p *agentProcess) waitLog(t *testing.T, msg string) map[string]any {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for time.Now().Before(deadline) {
		p.mu.Lock()
		for _, m := range p.logs {
			if m["msg"] == msg {
				p.mu.Unlock()
				return m
			}
		}
		p.mu.Unlock()
		time.Sleep(10 * time.Millisecond)
	}
	t.Fatalf("sluice-agent did not log %q within 20 s", msg)
	return nil
}

// TestServeDevAndAgentInTwoCommands is the README's quickstart: sluice
// serve --dev, then sluice-agent http PORT in the same directory, with
// nothing configured by hand, puts a local server online; the local API
// lists the tunnel and its captured request; SIGTERM closes the session,
// and the edge records why.
func TestServeDevAndAgentInTwoCommands(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs sluice serve --dev and sluice-agent")
	}
	clearSluiceEnv(t)
	bin := buildSluice(t)
	const key = "sk_agent_two_commands_0123456789abcdef"
	work := t.TempDir()
	dataDir := filepath.Join(work, "sluice-data")
	p := startServe(t, bin, dataDir, "SLUICE_BOOTSTRAP_API_KEY="+key, "SLUICE_DEV=true", "SLUICE_DEV_AWS_LISTEN=127.0.0.1:0")
	p.waitLog(t, "the edge is serving")
	if got, want := p.logAttr(t, "the edge is serving", "agent_config"), filepath.Join(dataDir, "edge", "agent.yml"); got != want {
		t.Fatalf("agent_config %q, want %q", got, want)
	}
	public := strings.TrimPrefix(p.logAttr(t, "the edge is serving", "http"), "http://")

	local := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprintf(w, "local server, %s", r.URL.Path)
	}))
	defer local.Close()
	port := local.URL[strings.LastIndex(local.URL, ":")+1:]

	a := startAgentProcess(t, work, "http", port, "--web-addr", "127.0.0.1:0", "--scheme", "http")
	web := a.waitLog(t, "starting web service")["addr"].(string)
	a.waitLog(t, "client session established")
	started := a.waitLog(t, "started tunnel")
	u, err := url.Parse(started["url"].(string))
	if err != nil || !strings.HasSuffix(u.Hostname(), ".sluice.localhost") {
		t.Fatalf("the tunnel's URL %v (%v), want a random name under sluice.localhost", started["url"], err)
	}
	req, _ := http.NewRequest(http.MethodGet, "http://"+public+"/hello", nil)
	req.Host = u.Host
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK || string(body) != "local server, /hello" {
		t.Fatalf("GET through the tunnel: %d %q", resp.StatusCode, body)
	}

	var tunnels struct {
		Tunnels []struct {
			Name      string `json:"name"`
			PublicURL string `json:"public_url"`
		} `json:"tunnels"`
	}
	getJSON(t, "http://"+web+"/api/tunnels", &tunnels)
	if len(tunnels.Tunnels) != 1 || tunnels.Tunnels[0].PublicURL != u.String() {
		t.Fatalf("/api/tunnels: %+v, want the tunnel at %s", tunnels, u)
	}
	var requests struct {
		Requests []struct {
			TunnelName string `json:"tunnel_name"`
			Request    struct {
				URI string `json:"uri"`
			} `json:"request"`
		} `json:"requests"`
	}
	// The agent keeps a capture once its handler returns, which may be a
	// moment after the client has the whole answer: wait for it.
	check.Eventually(t, 10*time.Second, "the agent's capture of the request", func() (any, bool) {
		getJSON(t, "http://"+web+"/api/requests/http", &requests)
		return requests, len(requests.Requests) > 0
	})
	if len(requests.Requests) != 1 || requests.Requests[0].Request.URI != "/hello" {
		t.Fatalf("/api/requests/http: %+v, want the request to /hello", requests)
	}

	// SIGTERM: the agent closes its session, saying why, and exits 0.
	if err := a.cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	select {
	case err := <-a.done:
		a.done <- err
		if err != nil {
			t.Fatalf("sluice-agent after SIGTERM: %v", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("sluice-agent did not exit within 10 s of SIGTERM")
	}
}

func getJSON(t *testing.T, u string, v any) {
	t.Helper()
	resp, err := http.Get(u)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("GET %s: %d %s", u, resp.StatusCode, b)
	}
	if err := json.Unmarshal(b, v); err != nil {
		t.Fatalf("GET %s: %v in %s", u, err, b)
	}
}
