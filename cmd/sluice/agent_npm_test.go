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
	"testing"
	"time"

	"github.com/sluicehq/sluice/internal/buildtest"
)

// TestNpmNgrokWrapperDrivesSluiceAgent runs the npm package ngrok 4.3.3,
// unchanged (testdata/ngrok-wrapper.js), with sluice-agent as its
// binary, against sluice serve --dev: it saves the authtoken, starts the
// agent with start --none --log=stdout, finds the local API and the
// session in the log, opens a tunnel, and lists, shows and replays the
// request this test sends through it, then closes the tunnel and stops
// the agent. The test fails, not skips, without node or the package:
// make node_modules installs it.
func TestNpmNgrokWrapperDrivesSluiceAgent(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs sluice serve --dev and sluice-agent")
	}
	node, err := exec.LookPath("node")
	if err != nil {
		t.Fatalf("node is not installed (%v): install Node.js, then run `make node_modules`", err)
	}
	modules, err := filepath.Abs(filepath.Join("..", "..", "node_modules"))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(modules, "ngrok", "package.json")); err != nil {
		t.Fatalf("the npm package ngrok is not installed (%v): run `make node_modules` at the repository's root", err)
	}
	clearSluiceEnv(t)
	bin := buildSluice(t)
	const key = "sk_agent_npm_wrapper_0123456789abcdef"
	work := t.TempDir()
	dataDir := filepath.Join(work, "sluice-data")
	p := startServe(t, bin, dataDir, "SLUICE_BOOTSTRAP_API_KEY="+key, "SLUICE_DEV=true", "SLUICE_DEV_AWS_LISTEN=127.0.0.1:0")
	p.waitLog(t, "the edge is serving")
	agents := strings.TrimPrefix(p.logAttr(t, "the edge is serving", "agents"), "tls://")
	public := strings.TrimPrefix(p.logAttr(t, "the edge is serving", "http"), "http://")
	caFile := p.logAttr(t, "the edge is serving", "agents_ca")
	status, body := request(t, http.MethodPost, p.url+"/credentials", key, `{"description": "npm wrapper"}`)
	if status != http.StatusCreated {
		t.Fatalf("creating the credential: %d %s", status, body)
	}
	var cred struct{ Token string }
	if err := json.Unmarshal([]byte(body), &cred); err != nil {
		t.Fatal(err)
	}

	// The wrapper runs <binPath>/ngrok: here, sluice-agent.
	binDir := filepath.Join(work, "bin")
	if err := os.MkdirAll(binDir, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(buildtest.Binary(t, "github.com/sluicehq/sluice/cmd/sluice-agent"), filepath.Join(binDir, "ngrok")); err != nil {
		t.Fatal(err)
	}
	config := filepath.Join(work, "agent.yml")
	if err := os.WriteFile(config, fmt.Appendf(nil, "version: 2\nserver_addr: %s\nroot_cas: %s\nweb_addr: 127.0.0.1:0\n", agents, caFile), 0o600); err != nil {
		t.Fatal(err)
	}
	local := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("X-Local", "yes")
		fmt.Fprintf(w, "local server, %s %s", r.Method, r.URL.Path)
	}))
	defer local.Close()
	port := local.URL[strings.LastIndex(local.URL, ":")+1:]

	cmd := exec.Command(node, filepath.Join("testdata", "ngrok-wrapper.js"))
	cmd.Env = append(os.Environ(), "NODE_PATH="+modules, "BIN_DIR="+binDir, "CONFIG="+config, "TOKEN="+cred.Token, "UPSTREAM_PORT="+port)
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	var stderr strings.Builder
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	steps := make(chan map[string]json.RawMessage, 16)
	go func() {
		sc := bufio.NewScanner(stdout)
		sc.Buffer(make([]byte, 1<<20), 1<<20)
		for sc.Scan() {
			var m map[string]json.RawMessage
			if json.Unmarshal(sc.Bytes(), &m) == nil {
				steps <- m
			}
		}
		close(steps)
		done <- cmd.Wait()
	}()
	defer func() {
		_ = cmd.Process.Kill()
		if t.Failed() {
			t.Logf("the wrapper's stderr:\n%s", stderr.String())
		}
	}()
	next := func(want string) json.RawMessage {
		t.Helper()
		select {
		case m, ok := <-steps:
			if !ok {
				t.Fatalf("the wrapper ended before %q: %v", want, <-done)
			}
			var step string
			_ = json.Unmarshal(m["step"], &step)
			if step != want {
				t.Fatalf("the wrapper's step %q (%s), want %q", step, m["value"], want)
			}
			return m["value"]
		case <-time.After(60 * time.Second):
			t.Fatalf("no step %q within 60 s", want)
			return nil
		}
	}

	var connected struct {
		URL      string   `json:"url"`
		API      string   `json:"api"`
		Statuses []string `json:"statuses"`
	}
	if err := json.Unmarshal(next("connected"), &connected); err != nil {
		t.Fatal(err)
	}
	u, err := url.Parse(connected.URL)
	if err != nil || !strings.HasSuffix(u.Hostname(), ".sluice.localhost") || !strings.HasPrefix(connected.API, "http://127.0.0.1:") {
		t.Fatalf("connected: %+v (%v)", connected, err)
	}
	saved, err := os.ReadFile(config)
	if err != nil || !strings.Contains(string(saved), cred.Token) {
		t.Fatalf("the wrapper's `authtoken` did not save the token in the configuration: %s (%v)", saved, err)
	}
	var tunnels struct {
		Tunnels []struct {
			Name      string `json:"name"`
			PublicURL string `json:"public_url"`
			Proto     string `json:"proto"`
			Config    struct {
				Addr    string `json:"addr"`
				Inspect bool   `json:"inspect"`
			} `json:"config"`
		} `json:"tunnels"`
		URI string `json:"uri"`
	}
	if err := json.Unmarshal(next("tunnels"), &tunnels); err != nil {
		t.Fatal(err)
	}
	if len(tunnels.Tunnels) != 1 || tunnels.Tunnels[0].PublicURL != connected.URL || !tunnels.Tunnels[0].Config.Inspect || tunnels.URI != "/api/tunnels" {
		t.Fatalf("tunnels: %+v", tunnels)
	}

	req, _ := http.NewRequest(http.MethodGet, "http://"+public+"/through-the-wrapper", nil)
	req.Host = u.Host
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	got, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK || string(got) != "local server, GET /through-the-wrapper" {
		t.Fatalf("GET through the tunnel: %d %q", resp.StatusCode, got)
	}
	if _, err := io.WriteString(stdin, "requested\n"); err != nil {
		t.Fatal(err)
	}

	type capture struct {
		ID         string `json:"id"`
		TunnelName string `json:"tunnel_name"`
		Request    struct {
			Method string `json:"method"`
			URI    string `json:"uri"`
		} `json:"request"`
		Response struct {
			StatusCode int `json:"status_code"`
		} `json:"response"`
	}
	var listed struct {
		Requests []capture `json:"requests"`
	}
	if err := json.Unmarshal(next("requests"), &listed); err != nil {
		t.Fatal(err)
	}
	if len(listed.Requests) != 1 || listed.Requests[0].Request.URI != "/through-the-wrapper" || listed.Requests[0].Response.StatusCode != 200 {
		t.Fatalf("requests: %+v", listed)
	}
	var detail capture
	if err := json.Unmarshal(next("detail"), &detail); err != nil || detail.ID != listed.Requests[0].ID {
		t.Fatalf("detail: %+v (%v)", detail, err)
	}
	if v := next("replayed"); string(v) != "true" {
		t.Fatalf("replayed: %s, want true (204)", v)
	}
	var after struct {
		Requests []capture `json:"requests"`
	}
	if err := json.Unmarshal(next("after-replay"), &after); err != nil || len(after.Requests) != 2 || after.Requests[0].Request.URI != "/through-the-wrapper" {
		t.Fatalf("after the replay: %+v (%v), want the replay captured too", after, err)
	}
	if v := next("cleared"); string(v) != "true" {
		t.Fatalf("cleared: %s", v)
	}
	var gone struct {
		Tunnels []json.RawMessage `json:"tunnels"`
	}
	if err := json.Unmarshal(next("disconnected"), &gone); err != nil || len(gone.Tunnels) != 0 {
		t.Fatalf("after disconnect: %+v (%v)", gone, err)
	}
	next("killed")
	if err := <-done; err != nil {
		t.Fatalf("the wrapper: %v", err)
	}
}
