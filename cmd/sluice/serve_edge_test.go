package main

import (
	"bytes"
	"context"
	"log/slog"
	"strings"
	"testing"
	"time"
)

// TestEdgePeerAddress: the peer address an edge advertises is
// --edge-peer-advertise, else --edge-peer unless it listens on every
// address, which other edges could not dial.
func TestEdgePeerAddress(t *testing.T) {
	for _, tt := range []struct {
		peer, advertise, want, err string
	}{
		{peer: "10.0.0.5:7443", want: "10.0.0.5:7443"},
		{peer: "127.0.0.1:0", want: "127.0.0.1:0"},
		{peer: "0.0.0.0:7443", advertise: "edge-1.internal:7443", want: "edge-1.internal:7443"},
		{peer: "0.0.0.0:7443", err: "give --edge-peer-advertise"},
		{peer: ":7443", err: "give --edge-peer-advertise"},
		{peer: "[::]:7443", err: "give --edge-peer-advertise"},
		{peer: "0.0.0.0:7443", advertise: "edge-1.internal", err: "is not HOST:PORT"},
		{peer: "0.0.0.0:7443", advertise: "edge-1.internal:0", err: "is not HOST:PORT"},
	} {
		got, err := edgeFlags{peer: tt.peer, peerAdvertise: tt.advertise}.peerAddress()
		if tt.err != "" {
			if err == nil || !strings.Contains(err.Error(), tt.err) {
				t.Errorf("--edge-peer %q --edge-peer-advertise %q: %q, %v; want an error saying %q", tt.peer, tt.advertise, got, err, tt.err)
			}
			continue
		}
		if err != nil || got != tt.want {
			t.Errorf("--edge-peer %q --edge-peer-advertise %q: %q, %v; want %q", tt.peer, tt.advertise, got, err, tt.want)
		}
	}
	if err := (edgeFlags{peerAdvertise: "x:1", agents: "127.0.0.1:4443", domain: "d", requestRate: 1, maxConnections: 1, bufferEvents: 1}).validate(true); err == nil || !strings.Contains(err.Error(), "goes with --edge-peer") {
		t.Errorf("--edge-peer-advertise alone: %v", err)
	}
}

// TestEdgeRequestBurstFlag: --edge-account-request-burst is a count of
// requests, or 0 for its default; a negative one is refused, naming the
// flag.
func TestEdgeRequestBurstFlag(t *testing.T) {
	valid := edgeFlags{agents: "127.0.0.1:4443", domain: "d", requestRate: 1000, maxConnections: 1, bufferEvents: 1}
	for _, burst := range []int{0, 1, 5000} {
		f := valid
		f.requestBurst = burst
		if err := f.validate(true); err != nil {
			t.Errorf("--edge-account-request-burst %d: %v", burst, err)
		}
	}
	f := valid
	f.requestBurst = -1
	if err := f.validate(true); err == nil || !strings.Contains(err.Error(), "--edge-account-request-burst must be at least 1") {
		t.Errorf("--edge-account-request-burst -1: %v, want it refused", err)
	}
}

// TestEdgeHTTPWaitsForChallenges checks waitLoaded, which holds the edge's
// public HTTP listener until the pending ACME HTTP-01 challenges are
// loaded: it serves once they are, serves after its bound if they never
// are (saying so), and does not serve once the edge stops.
func TestEdgeHTTPWaitsForChallenges(t *testing.T) {
	var logs bytes.Buffer
	log := slog.New(slog.NewTextHandler(&logs, nil))

	// Loaded: serve at once, not after the hour's bound (the test would
	// time out).
	loaded := make(chan struct{})
	close(loaded)
	if serve := waitLoaded(t.Context(), loaded, time.Hour, log); !serve {
		t.Error("waitLoaded once the challenges are loaded: false, want true")
	}
	// Never loaded: not before the bound.

	began := time.Now()
	if serve := waitLoaded(t.Context(), make(chan struct{}), 20*time.Millisecond, log); !serve || time.Since(began) < 20*time.Millisecond {
		t.Errorf("waitLoaded with the challenges never loaded: %v after %s, want true after its bound", serve, time.Since(began))
	}
	if !strings.Contains(logs.String(), "before the pending ACME HTTP-01 challenges are loaded") {
		t.Errorf("serving without the challenges logged %q, want a warning saying so", logs.String())
	}

	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	if serve := waitLoaded(ctx, make(chan struct{}), time.Hour, log); serve {
		t.Error("waitLoaded after the edge stopped: true, want false")
	}
}
