package main

import (
	"context"
	"errors"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"
)

// TestLockDataDir checks that a data dir is locked once at a time, that
// the refusal names the holder's pid, and that a released lock can be
// taken again.
func TestLockDataDir(t *testing.T) {
	dir := t.TempDir() + "/data"
	first, err := lockDataDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	_, err = lockDataDir(dir)
	var inUse *dataDirInUseError
	if !errors.As(err, &inUse) || inUse.pid != os.Getpid() {
		t.Fatalf("second lock: %v, want a *dataDirInUseError naming pid %d", err, os.Getpid())
	}
	if want := "--data-dir " + dir + " is in use by another sluice serve (pid " + strconv.Itoa(os.Getpid()) + ")"; !strings.Contains(err.Error(), want) {
		t.Fatalf("error %q, want one saying %q", err, want)
	}
	first.release()
	again, err := lockDataDir(dir)
	if err != nil {
		t.Fatalf("lock after release: %v", err)
	}
	again.release()
}

// TestServeRefusesADataDirInUse starts a second serve on the data dir of a
// running one: it exits at once, saying which process has the directory,
// without starting NATS on it, and the first keeps working. After the first
// is killed (SIGKILL), the directory is free again.
func TestServeRefusesADataDirInUse(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the binary")
	}
	bin := buildSluice(t)
	dataDir := t.TempDir()
	const token = "sk_test_lock_token_0123456789abc"
	first := startServe(t, bin, dataDir, "SLUICE_BOOTSTRAP_API_KEY="+token)
	waitReady(t, first.url)

	ctx, cancel := context.WithTimeout(t.Context(), 20*time.Second)
	defer cancel()
	second := exec.CommandContext(ctx, bin, "serve", "--data-dir", dataDir, "--http", "127.0.0.1:0", "--metrics-http", "127.0.0.1:0", "--log-level", "debug", "--log-format", "json")
	second.Env = os.Environ()
	start := time.Now()
	out, err := second.CombinedOutput()
	elapsed := time.Since(start)
	if err == nil || ctx.Err() != nil {
		t.Fatalf("the second serve on %s: %v after %s, want it to exit non-zero at once:\n%s", dataDir, err, elapsed, out)
	}
	if elapsed > 5*time.Second {
		t.Errorf("the second serve took %s to refuse, want at once", elapsed)
	}
	want := "sluice: --data-dir " + dataDir + " is in use by another sluice serve (pid " + strconv.Itoa(first.cmd.Process.Pid) + "): stop it first"
	if !strings.Contains(string(out), want) {
		t.Errorf("the second serve said\n%s\nwant %q", out, want)
	}
	if strings.Contains(string(out), `"component":"nats"`) {
		t.Errorf("the second serve started NATS on the data dir in use:\n%s", out)
	}

	events := `[{"event_type":"http_request_complete.v0","object":{"conn":{"server_port":443}}}]`
	if code, body := request(t, "POST", first.url+"/events", token, events); code != 202 {
		t.Fatalf("the first serve, after the second was refused: %d %s", code, body)
	}
	if tail := first.tail(); strings.Contains(tail, "errored") || strings.Contains(tail, `"level":"ERROR"`) {
		t.Errorf("the first serve logged errors:\n%s", tail)
	}

	first.kill(t)
	again := startServe(t, bin, dataDir)
	waitReady(t, again.url)
	again.stop(t)
}

// TestServeBindsBeforeBootstrap starts serve on a fresh data dir with one
// of its addresses taken: it stops naming the address, having printed no
// key and made no account, and a start with the address free then makes
// them.
func TestServeBindsBeforeBootstrap(t *testing.T) {
	if testing.Short() {
		t.Skip("runs sluice serve")
	}
	clearSluiceEnv(t)
	for _, tt := range []struct {
		flag string
		args func(addr string) []string
	}{
		{"--http", func(addr string) []string { return []string{"--http", addr} }},
		{"--metrics-http", func(addr string) []string { return []string{"--metrics-http", addr} }},
		{"--dev-aws-listen", func(addr string) []string { return devEdgeArgs([]string{"--dev", "--dev-aws-listen", addr}) }},
		{"--edge-agents", func(addr string) []string {
			return []string{"--dev", "--edge-agents", addr, "--edge-http", "127.0.0.1:0", "--edge-https", "127.0.0.1:0"}
		}},
		{"--nats-listen", func(addr string) []string { return []string{"--nats-listen", addr} }},
	} {
		t.Run(tt.flag, func(t *testing.T) {
			taken, err := net.Listen("tcp", "127.0.0.1:0")
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { _ = taken.Close() })
			dataDir := t.TempDir()
			logs := &serveLog{served: make(chan string, 1)}
			cmd := newRootCommand()
			cmd.SetArgs(append([]string{"serve", "--http", "127.0.0.1:0", "--metrics-http", "127.0.0.1:0", "--dev-aws-listen", "127.0.0.1:0", "--log-format", "json", "--data-dir", dataDir}, tt.args(taken.Addr().String())...))
			cmd.SetErr(logs)
			ctx, cancel := context.WithTimeout(t.Context(), 20*time.Second)
			defer cancel()
			err = cmd.ExecuteContext(ctx)
			if err == nil || ctx.Err() != nil {
				t.Fatalf("serve with %s %s taken: %v, want it refused", tt.flag, taken.Addr(), err)
			}
			if want := tt.flag + " " + taken.Addr().String(); !strings.Contains(err.Error(), want) || !strings.Contains(err.Error(), "address already in use") {
				t.Errorf("error %q, want one naming %s and saying it is in use", err, want)
			}
			if printed := logs.String(); strings.Contains(printed, "sk_") || strings.Contains(printed, "created the first account") {
				t.Fatalf("serve made the first account and printed its key before failing:\n%s", printed)
			}

			// The address free, the same data dir bootstraps.
			if err := taken.Close(); err != nil {
				t.Fatal(err)
			}
			p := startServeInProcess(t, "--data-dir", dataDir)
			if !strings.Contains(p.logs.String(), "created the first account") {
				t.Fatalf("the start after did not make the first account:\n%s", p.logs)
			}
		})
	}
}

// TestServeDevCorruptStateBeforeBootstrap checks that serve --dev reads its
// emulator's state file before it makes anything: a file it cannot read
// stops serve on a fresh data dir with no account made and no key printed.
func TestServeDevCorruptStateBeforeBootstrap(t *testing.T) {
	if testing.Short() {
		t.Skip("runs sluice serve")
	}
	clearSluiceEnv(t)
	dataDir := t.TempDir()
	state := filepath.Join(dataDir, devAWSDir, "state.json")
	if err := os.MkdirAll(filepath.Dir(state), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(state, []byte(`{"version":`), 0o600); err != nil {
		t.Fatal(err)
	}
	logs := &serveLog{served: make(chan string, 1)}
	cmd := newRootCommand()
	cmd.SetArgs([]string{"serve", "--dev", "--http", "127.0.0.1:0", "--metrics-http", "127.0.0.1:0", "--dev-aws-listen", "127.0.0.1:0", "--log-format", "json", "--data-dir", dataDir, "--edge-agents", "127.0.0.1:0", "--edge-http", "127.0.0.1:0", "--edge-https", "127.0.0.1:0"})
	cmd.SetErr(logs)
	ctx, cancel := context.WithTimeout(t.Context(), 20*time.Second)
	defer cancel()
	err := cmd.ExecuteContext(ctx)
	if err == nil || ctx.Err() != nil || !strings.Contains(err.Error(), "state.json") {
		t.Fatalf("serve --dev with a corrupt state file: %v, want it refused naming the file", err)
	}
	if printed := logs.String(); strings.Contains(printed, "sk_") || strings.Contains(printed, "created the first account") {
		t.Fatalf("serve made the first account and printed its key before failing:\n%s", printed)
	}
}
