package main

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"github.com/sluicehq/sluice/internal/check"
)

// replayAPI is an API of one replay whose reads answer the figures of
// progress in turn, the last one from then on.
type replayAPI struct {
	t        *testing.T
	mu       sync.Mutex
	progress []string // "replayed/total/state"
	reads    int
	read     chan int // told the count of reads after each
}

func (a *replayAPI) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	a.mu.Lock()
	step := a.progress[min(a.reads, len(a.progress)-1)]
	if r.Method == http.MethodGet {
		a.reads++
		step = a.progress[min(a.reads, len(a.progress)-1)]
	}
	reads := a.reads
	a.mu.Unlock()
	var replayed, total uint64
	var state string
	parts := strings.Split(step, "/")
	if err := json.Unmarshal([]byte(parts[0]), &replayed); err != nil {
		a.t.Error(err)
	}
	if err := json.Unmarshal([]byte(parts[1]), &total); err != nil {
		a.t.Error(err)
	}
	state = parts[2]
	status := http.StatusOK
	switch {
	case r.Method == http.MethodPost && r.URL.Path == "/event_subscriptions/esb_1/replay":
		status = http.StatusAccepted
	case r.Method == http.MethodGet && r.URL.Path == "/event_subscriptions/esb_1/replays/rpl_1":
	default:
		a.t.Errorf("unexpected %s %s", r.Method, r.URL.Path)
		http.NotFound(w, r)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(map[string]any{
		"id": "rpl_1", "uri": "http://" + r.Host + "/event_subscriptions/esb_1/replays/rpl_1", "subscription_id": "esb_1",
		"since": "2026-11-23T03:00:00Z", "until": "2026-11-23T04:00:00Z", "state": state,
		"events_replayed": replayed, "events_total": total, "created_at": "2026-11-23T04:00:00.000Z",
	})
	if r.Method == http.MethodGet && a.read != nil {
		a.read <- reads
	}
}

func startReplayAPI(t *testing.T, progress ...string) (*replayAPI, string) {
	t.Helper()
	api := &replayAPI{t: t, progress: progress}
	srv := httptest.NewServer(api)
	t.Cleanup(srv.Close)
	return api, srv.URL
}

// TestReplayWait waits for a replay with the CLI: a progress line on
// standard error each time the figures change, the replay as it ends on
// standard output.
func TestReplayWait(t *testing.T) {
	clearSluiceEnv(t)
	_, url := startReplayAPI(t, "0/4600/running", "0/4600/running", "1234/4600/running", "1234/4600/running", "4600/4600/done")
	out, errOut, err := runSluice(t, "", "subscriptions", "replay", "esb_1", "--since", "1h", "--wait", "--interval", "10ms",
		"--api-url", url, "--api-key", "sk_test")
	if err != nil {
		t.Fatalf("replay --wait: %v\n%s", err, errOut)
	}
	want := "replay rpl_1: 0 of 4,600 events (0%)\nreplay rpl_1: 1,234 of 4,600 events (26%)\nreplay rpl_1: 4,600 of 4,600 events (100%), done\n"
	if errOut != want {
		t.Errorf("standard error:\n%s\nwant:\n%s", errOut, want)
	}
	for _, field := range []string{"STATE", "done", "EVENTS", "4,600 of 4,600"} {
		if !strings.Contains(out, field) {
			t.Errorf("standard output does not show %q:\n%s", field, out)
		}
	}

	out, _, err = runSluice(t, "", "subscriptions", "replay", "esb_1", "--since", "1h", "--wait", "--interval", "10ms", "--json",
		"--api-url", url, "--api-key", "sk_test")
	if err != nil {
		t.Fatal(err)
	}
	var final struct {
		State          string `json:"state"`
		EventsReplayed uint64 `json:"events_replayed"`
	}
	if err := json.Unmarshal([]byte(out), &final); err != nil || final.State != "done" || final.EventsReplayed != 4600 {
		t.Errorf("--json prints %s (%v), want the replay done", out, err)
	}
}

// TestReplayWaitEnds checks how waiting for a replay ends short of done:
// at --timeout, at Ctrl-C, and on bad flags, each saying so.
func TestReplayWaitEnds(t *testing.T) {
	clearSluiceEnv(t)
	_, url := startReplayAPI(t, "0/10/running", "5/10/running")
	_, errOut, err := runSluice(t, "", "subscriptions", "replay", "esb_1", "--since", "1h", "--wait", "--interval", "10ms", "--timeout", "100ms",
		"--api-url", url, "--api-key", "sk_test")
	check.ErrorContains(t, err, "replay rpl_1 is not done after 100ms (--timeout); it goes on: see it with `sluice subscriptions replays esb_1 rpl_1`, or wait longer")
	if !strings.HasSuffix(errOut, "replay rpl_1: 5 of 10 events (50%)\n") {
		t.Errorf("standard error %q does not end with the last progress", errOut)
	}

	// Interrupted once it has read the replay.
	api, url := startReplayAPI(t, "0/10/running", "5/10/running")
	api.read = make(chan int, 100)
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	go func() {
		<-api.read
		cancel()
	}()
	cmd := newRootCommand()
	var out, stderr bytes.Buffer
	cmd.SetOut(&out)
	cmd.SetErr(&stderr)
	cmd.SetArgs([]string{"subscriptions", "replay", "esb_1", "--since", "1h", "--wait", "--interval", "10ms", "--api-url", url, "--api-key", "sk_test"})
	err = cmd.ExecuteContext(ctx)
	check.ErrorContains(t, err, "stopped waiting for replay rpl_1; it goes on: see it with `sluice subscriptions replays esb_1 rpl_1`")

	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"--timeout", "1m"}, "--timeout and --interval say how to wait for the replay: give --wait with them"},
		{[]string{"--wait", "--interval", "0s"}, "--interval 0s is not a positive duration: give one such as 1s"},
		{[]string{"--wait", "--timeout", "-1m"}, "--timeout -1m0s is negative: give how long to wait, such as 10m, or 0 to wait as long as it takes"},
	} {
		args := append([]string{"subscriptions", "replay", "esb_1", "--since", "1h", "--api-url", url, "--api-key", "sk_test"}, c.args...)
		_, _, err := runSluice(t, "", args...)
		check.ErrorContains(t, err, c.want)
	}
}

// TestProgressLine writes a changing line over in place on a terminal,
// and as a line per change elsewhere.
func TestProgressLine(t *testing.T) {
	for _, c := range []struct {
		name     string
		terminal bool
		want     string
	}{
		{"terminal", true, "\r1 of 3\x1b[K\r2 of 3\x1b[K\n"},
		{"file", false, "1 of 3\n2 of 3\n"},
	} {
		t.Run(c.name, func(t *testing.T) {
			var b bytes.Buffer
			p := &progressLine{w: &b, terminal: c.terminal}
			p.show("1 of 3")
			p.show("1 of 3")
			p.show("2 of 3")
			p.end()
			p.end()
			if b.String() != c.want {
				t.Errorf("wrote %q, want %q", b.String(), c.want)
			}
		})
	}
	if got := []string{groupDigits(0), groupDigits(999), groupDigits(1000), groupDigits(1234567)}; strings.Join(got, " ") != "0 999 1,000 1,234,567" {
		t.Errorf("groupDigits: %q", got)
	}
}
