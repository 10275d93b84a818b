package store_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/sluicehq/sluice/internal/store"
	"github.com/sluicehq/sluice/schemas"
)

const testEdge = "edge-1"

// tunnelSession returns a valid session of the credential, held by
// testEdge.
func tunnelSession(credentialID string) store.TunnelSession {
	return store.TunnelSession{AgentVersion: "3.0.0", CredentialID: credentialID, IP: "::ffff:192.0.2.1", OS: "linux",
		Arch: "amd64", Region: "eu", Transport: "muxado", UserAgent: "sluice-agent/3.0.0", EdgeID: testEdge}
}

// startSession heartbeats testEdge and records a session of the account.
func startSession(t *testing.T, e env, accountID string) store.TunnelSession {
	t.Helper()
	if err := e.store.Edges().HeartbeatEdge(e.ctx, testEdge, ""); err != nil {
		t.Fatalf("HeartbeatEdge: %v", err)
	}
	ts, err := e.store.CreateTunnelSession(e.ctx, accountID, tunnelSession(schemas.NewID(schemas.PrefixCredential)))
	if err != nil {
		t.Fatalf("CreateTunnelSession: %v", err)
	}
	return ts
}

// TestTunnelSessionLifecycle records, reads, lists, stops and deletes a
// tunnel session and its endpoints; another account's id is not found.
func TestTunnelSessionLifecycle(t *testing.T) {
	e := newEnv(t)
	account := e.createAccount(t, "team")
	other := e.createAccount(t, "other team")
	in := tunnelSession(schemas.NewID(schemas.PrefixCredential))
	in.ID, in.StopRequested, in.Metadata = "ts_chosen", true, strings.Repeat("é", store.MaxMetadata)
	if err := e.store.Edges().HeartbeatEdge(e.ctx, testEdge, ""); err != nil {
		t.Fatal(err)
	}
	ts, err := e.store.CreateTunnelSession(e.ctx, account.ID, in)
	if err != nil {
		t.Fatalf("CreateTunnelSession: %v", err)
	}
	if schemas.CheckID(schemas.PrefixTunnelSession, ts.ID) != nil || ts.AccountID != account.ID || ts.StartedAt.IsZero() ||
		ts.StopRequested || ts.IP != "192.0.2.1" || len(ts.Metadata) != store.MaxMetadata || ts.EdgeID != testEdge {
		t.Fatalf("created %+v", ts)
	}
	ep, err := e.store.CreateEndpoint(e.ctx, account.ID, store.Endpoint{TunnelSessionID: ts.ID, Proto: "https",
		URL: "https://app.example.com", UpstreamURL: "http://localhost:8080", EdgeID: testEdge})
	if err != nil {
		t.Fatalf("CreateEndpoint: %v", err)
	}
	if schemas.CheckID(schemas.PrefixEndpoint, ep.ID) != nil || ep.PublicURL != ep.URL || ep.Hostport != "app.example.com:443" {
		t.Fatalf("created %+v", ep)
	}
	if got, err := e.store.GetTunnelSession(e.ctx, account.ID, ts.ID); err != nil || got.ID != ts.ID {
		t.Fatalf("GetTunnelSession = %+v, %v", got, err)
	}
	if got, next, err := e.store.ListEndpoints(e.ctx, account.ID, store.Page{}); err != nil || len(got) != 1 || got[0].ID != ep.ID || next != "" {
		t.Fatalf("ListEndpoints = %+v, %q, %v", got, next, err)
	}
	for name, err := range map[string]error{
		"GetTunnelSession":  errOf(e.store.GetTunnelSession(e.ctx, other.ID, ts.ID)),
		"GetEndpoint":       errOf(e.store.GetEndpoint(e.ctx, other.ID, ep.ID)),
		"StopTunnelSession": e.store.StopTunnelSession(e.ctx, other.ID, ts.ID),
		"DeleteEndpoint":    e.store.DeleteEndpoint(e.ctx, other.ID, ep.ID),
		"DeleteTunnel":      e.store.DeleteTunnelSession(e.ctx, other.ID, ts.ID),
	} {
		if !errors.Is(err, store.ErrNotFound) {
			t.Errorf("%s of another account's = %v, want ErrNotFound", name, err)
		}
	}
	if list, _, err := e.store.ListTunnelSessions(e.ctx, other.ID, store.Page{}); err != nil || len(list) != 0 {
		t.Fatalf("the other account lists %+v, %v", list, err)
	}

	if err := e.store.StopTunnelSession(e.ctx, account.ID, ts.ID); err != nil {
		t.Fatalf("StopTunnelSession: %v", err)
	}
	if got, err := e.store.GetTunnelSession(e.ctx, account.ID, ts.ID); err != nil || !got.StopRequested {
		t.Fatalf("after the stop: %+v, %v; want StopRequested", got, err)
	}
	if err := e.store.DeleteTunnelSession(e.ctx, account.ID, ts.ID); err != nil {
		t.Fatalf("DeleteTunnelSession: %v", err)
	}
	wantErr(t, errOf(e.store.GetTunnelSession(e.ctx, account.ID, ts.ID)), store.ErrNotFound)
	wantErr(t, errOf(e.store.GetEndpoint(e.ctx, account.ID, ep.ID)), store.ErrNotFound)
	wantErr(t, e.store.DeleteTunnelSession(e.ctx, account.ID, ts.ID), store.ErrNotFound)
	wantErr(t, e.store.StopTunnelSession(e.ctx, account.ID, ts.ID), store.ErrNotFound)
}

// TestTunnelSessionRules refuses what the edge must not record.
func TestTunnelSessionRules(t *testing.T) {
	e := newEnv(t)
	account := e.createAccount(t, "team")
	ts := startSession(t, e, account.ID)
	for name, tc := range map[string]struct {
		session  func(*store.TunnelSession)
		endpoint func(*store.Endpoint)
		field    string
	}{
		"no edge":        {session: func(v *store.TunnelSession) { v.EdgeID = "" }, field: "edge_id"},
		"edge with dot":  {session: func(v *store.TunnelSession) { v.EdgeID = "a.b" }, field: "edge_id"},
		"bad credential": {session: func(v *store.TunnelSession) { v.CredentialID = "ak_x" }, field: "credential_id"},
		"bad ip":         {session: func(v *store.TunnelSession) { v.IP = "example.com" }, field: "ip"},
		"bad proto":      {endpoint: func(v *store.Endpoint) { v.Proto = "udp" }, field: "proto"},
		"tcp no port":    {endpoint: func(v *store.Endpoint) { v.Proto, v.URL = "tcp", "tcp://1.tcp.example.com" }, field: "url"},
		"url of other":   {endpoint: func(v *store.Endpoint) { v.URL = "http://app.example.com" }, field: "url"},
		"url with path":  {endpoint: func(v *store.Endpoint) { v.URL = "https://app.example.com/x" }, field: "url"},
		"bad domain":     {endpoint: func(v *store.Endpoint) { v.Domain = "app.example.com" }, field: "domain"},
		"no session":     {endpoint: func(v *store.Endpoint) { v.TunnelSessionID = schemas.NewID(schemas.PrefixTunnelSession) }, field: "tunnel_session_id"},
	} {
		t.Run(name, func(t *testing.T) {
			var err error
			if tc.session != nil {
				in := tunnelSession(ts.CredentialID)
				tc.session(&in)
				_, err = e.store.CreateTunnelSession(e.ctx, account.ID, in)
			} else {
				in := store.Endpoint{TunnelSessionID: ts.ID, Proto: "https", URL: "https://app.example.com:8443", EdgeID: testEdge}
				tc.endpoint(&in)
				_, err = e.store.CreateEndpoint(e.ctx, account.ID, in)
			}
			var invalid *store.ValidationError
			if !errors.As(err, &invalid) || invalid.Field != tc.field {
				t.Fatalf("error = %v, want a *ValidationError of %s", err, tc.field)
			}
		})
	}
}

// TestTunnelSessionsOfDeadEdge hides the sessions and endpoints of an edge
// that has not heartbeaten for EdgeTimeout, removes them, and frees the
// room they took under the limits.
func TestTunnelSessionsOfDeadEdge(t *testing.T) {
	e, clock := newSessionEnv(t, store.Config{Limits: store.Limits{TunnelSessions: 1, Endpoints: 1}})
	account := e.createAccount(t, "team")
	ts := startSession(t, e, account.ID)
	ep, err := e.store.CreateEndpoint(e.ctx, account.ID, store.Endpoint{TunnelSessionID: ts.ID, Proto: "tcp", URL: "tcp://1.tcp.example.com:20001", EdgeID: testEdge})
	if err != nil {
		t.Fatal(err)
	}
	wantErr(t, errOf(e.store.CreateTunnelSession(e.ctx, account.ID, tunnelSession(ts.CredentialID))), store.ErrLimit)
	wantErr(t, errOf(e.store.CreateEndpoint(e.ctx, account.ID, store.Endpoint{TunnelSessionID: ts.ID, Proto: "tcp", URL: "tcp://1.tcp.example.com:20002", EdgeID: testEdge})), store.ErrLimit)

	clock.Advance(store.EdgeTimeout - 1)
	if n, err := e.store.Edges().RemoveDeadEdgeRecords(e.ctx); err != nil || n != 0 {
		t.Fatalf("RemoveDeadEdgeRecords of a live edge = %d, %v", n, err)
	}
	if _, err := e.store.GetEndpoint(e.ctx, account.ID, ep.ID); err != nil {
		t.Fatalf("GetEndpoint of a live edge: %v", err)
	}
	clock.Advance(2)
	wantErr(t, errOf(e.store.GetTunnelSession(e.ctx, account.ID, ts.ID)), store.ErrNotFound)
	wantErr(t, errOf(e.store.GetEndpoint(e.ctx, account.ID, ep.ID)), store.ErrNotFound)
	if list, _, err := e.store.ListTunnelSessions(e.ctx, account.ID, store.Page{}); err != nil || len(list) != 0 {
		t.Fatalf("ListTunnelSessions of a dead edge = %+v, %v", list, err)
	}
	if n, err := e.store.Edges().RemoveDeadEdgeRecords(e.ctx); err != nil || n != 2 {
		t.Fatalf("RemoveDeadEdgeRecords = %d, %v; want 2", n, err)
	}
	for key := range e.rawEntries(t) {
		if strings.HasPrefix(key, "tunnel_sessions.") || strings.HasPrefix(key, "endpoints.") || strings.HasPrefix(key, "edge_heartbeats.") {
			t.Fatalf("%s outlived the sweep", key)
		}
	}
	startSession(t, e, account.ID) // the room is free again
}
