package main

import (
	"bufio"
	"encoding/json"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// buildSluice builds the sluice binary once per test binary run.
func buildSluice(t *testing.T) string {
	t.Helper()
	bin := filepath.Join(t.TempDir(), "sluice")
	out, err := exec.Command("go", "build", "-o", bin, ".").CombinedOutput()
	if err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	return bin
}

// serveProcess is a running `sluice serve`.
type serveProcess struct {
	cmd    *exec.Cmd
	url    string
	stderr []string // lines logged so far
	done   chan error
}

// startServe runs `sluice serve` on a free port with the data dir and waits
// until it says where it serves.
func startServe(t *testing.T, bin, dataDir string, env ...string) *serveProcess {
	t.Helper()
	cmd := exec.Command(bin, "serve", "--http", "127.0.0.1:0", "--log-format", "json")
	cmd.Env = append(os.Environ(), append([]string{"SLUICE_DATA_DIR=" + dataDir}, env...)...)
	stderr, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	p := &serveProcess{cmd: cmd, done: make(chan error, 1)}
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
				Msg  string `json:"msg"`
				HTTP string `json:"http"`
			}
			if json.Unmarshal([]byte(line), &rec) == nil && rec.Msg == "sluice is serving" {
				p.url = rec.HTTP
			}
		case <-deadline:
			t.Fatalf("sluice serve did not start:\n%s", strings.Join(p.stderr, "\n"))
		}
	}
	go func() {
		for line := range lines {
			_ = line // keep the pipe drained
		}
	}()
	return p
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
	req.Header.Set("Authorization", "Bearer "+token)
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
	if code, body := request(t, "GET", p.url+"/readyz", "", ""); code != 200 {
		t.Fatalf("readyz: %d %s", code, body)
	}
	if code, body := request(t, "POST", p.url+"/events", token, events); code != 202 || !strings.Contains(body, `"stored":1`) {
		t.Fatalf("ingest: %d %s", code, body)
	}
	if code, body := request(t, "GET", p.url+"/metrics", "", ""); code != 200 || !strings.Contains(body, `sluice_ingest_events_total{event_type="http_request_complete.v0"} 1`) {
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
	if code, body := request(t, "POST", p.url+"/events", token, `[{"event_type":"api_key_created.v0","object":{}}]`); code != 202 {
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
