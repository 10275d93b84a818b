package main

import (
	"context"
	"net"
	"net/http"
	"regexp"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

// closedPort returns the address of a loopback port nothing listens on.
func closedPort(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	if err := ln.Close(); err != nil {
		t.Fatal(err)
	}
	return addr
}

// TestPublishNobodyListening checks that publish to a port nobody listens
// on fails within seconds, with the hint the other commands give and the
// time it really took.
func TestPublishNobodyListening(t *testing.T) {
	apiURL := "http://" + closedPort(t)
	ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
	defer cancel()
	start := time.Now()
	_, stderr, err := runPublishCommandContext(ctx, t, strings.NewReader(""), "--api-url", apiURL, "--api-key", "k", "--sample", "mixed", "--count", "10")
	elapsed := time.Since(start)
	if err == nil {
		t.Fatal("publish succeeded with nobody listening")
	}
	if elapsed > 10*time.Second {
		t.Errorf("publish failed after %s, want within seconds", elapsed)
	}
	for _, want := range []string{"no sluice answered at " + apiURL + "/events in ", "connection refused", apiURLHint} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q, want one saying %q\nstderr:\n%s", err, want, stderr)
		}
	}
	checkStatedDuration(t, err.Error(), `answered at \S+ in (\S+):`, elapsed)
}

// checkStatedDuration checks that the duration pattern's group finds in
// msg is the time it took, measured as elapsed (from a little earlier).
func checkStatedDuration(t *testing.T, msg, pattern string, elapsed time.Duration) {
	t.Helper()
	m := regexp.MustCompile(pattern).FindStringSubmatch(msg)
	if m == nil {
		t.Fatalf("message %q states no duration (%s)", msg, pattern)
	}
	stated, err := time.ParseDuration(m[1])
	if err != nil {
		t.Fatalf("message %q: %v", msg, err)
	}
	if stated > elapsed+100*time.Millisecond || stated < elapsed-500*time.Millisecond {
		t.Errorf("message %q states %s; it took %s", msg, stated, elapsed)
	}
}

// TestIngestRetriesASluiceThatWentAway checks that once the API has
// answered, a batch that cannot connect is retried until sluice is back,
// long past the short wait given to a sluice that never answered.
func TestIngestRetriesASluiceThatWentAway(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	fake := &fakeIngest{t: t, statuses: []int{202}}
	first := &http.Server{Handler: fake}
	go func() { _ = first.Serve(ln) }()

	client := newIngestClient("http://"+addr, "token", 1)
	client.unreachableFor = time.Millisecond
	refused := make(chan struct{}, 100)
	var retries atomic.Int64
	client.retrying = func(err error, _ time.Duration) {
		retries.Add(1)
		if isDialError(err) {
			refused <- struct{}{}
		}
	}
	if _, err := client.send(t.Context(), []byte(validLine+"\n")); err != nil {
		t.Fatalf("the first batch: %v", err)
	}
	if err := first.Close(); err != nil {
		t.Fatal(err)
	}

	sent := make(chan error, 1)
	go func() {
		_, err := client.send(t.Context(), []byte(validLine+"\n"))
		sent <- err
	}()
	// Refused twice, well past unreachableFor: still retrying.
	for range 2 {
		select {
		case <-refused:
		case err := <-sent:
			t.Fatalf("the batch ended while sluice was away: %v", err)
		case <-time.After(20 * time.Second):
			t.Fatal("no retry of a refused batch within 20s")
		}
	}
	back, err := net.Listen("tcp", addr)
	if err != nil {
		t.Fatalf("listening again on %s: %v", addr, err)
	}
	second := &http.Server{Handler: fake}
	go func() { _ = second.Serve(back) }()
	t.Cleanup(func() { _ = second.Close() })
	select {
	case err := <-sent:
		if err != nil {
			t.Fatalf("the batch sent while sluice was away: %v", err)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("the batch was not sent within 30s of sluice coming back")
	}
	if n := len(fake.requests()); n != 2 {
		t.Fatalf("sluice received %d batches, want 2", n)
	}
}
