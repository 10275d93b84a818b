package main

import (
	"strings"
	"testing"

	"github.com/sluicehq/sluice/internal/check"
	"github.com/sluicehq/sluice/internal/store"
	"github.com/sluicehq/sluice/schemas"
)

// TestTunnelSessionsCommands runs every verb of `sluice tunnel-sessions`
// and `sluice endpoints` against the API, on records the edge writes:
// list, get and stop, and no create, update or delete.
func TestTunnelSessionsCommands(t *testing.T) {
	e := newCLIEnv(t)
	st, account := e.stack.Store, e.stack.AccountID
	if err := st.Edges().HeartbeatEdge(t.Context(), "edge-cli", ""); err != nil {
		t.Fatal(err)
	}
	ts, err := st.CreateTunnelSession(t.Context(), account, store.TunnelSession{CredentialID: schemas.NewID(schemas.PrefixCredential),
		IP: "203.0.113.9", AgentVersion: "3.0.0", OS: "linux", Region: "eu", Transport: "muxado", EdgeID: "edge-cli"})
	if err != nil {
		t.Fatal(err)
	}
	ep, err := st.CreateEndpoint(t.Context(), account, store.Endpoint{TunnelSessionID: ts.ID, Proto: "tcp", URL: "tcp://1.tcp.example.com:20001", EdgeID: "edge-cli"})
	if err != nil {
		t.Fatal(err)
	}

	rows := tableRows(t, e.must("tunnel-sessions", "list"), "ID", "STARTED_AT", "CREDENTIAL", "IP", "AGENT_VERSION", "OS", "REGION")
	if len(rows) != 1 || rows[0][0] != ts.ID || rows[0][2] != ts.CredentialID || rows[0][3] != "203.0.113.9" {
		t.Errorf("tunnel-sessions list: %v", rows)
	}
	if got := field(e.must("tunnel-sessions", "get", ts.ID), "TRANSPORT"); got != "muxado" {
		t.Errorf("tunnel-sessions get shows TRANSPORT %q", got)
	}
	rows = tableRows(t, e.must("endpoints", "list"), "ID", "CREATED_AT", "PROTO", "URL", "TUNNEL_SESSION", "UPSTREAM_URL")
	if len(rows) != 1 || rows[0][0] != ep.ID || rows[0][2] != "tcp" || rows[0][4] != ts.ID {
		t.Errorf("endpoints list: %v", rows)
	}
	if out := e.must("endpoints", "get", ep.ID); field(out, "HOSTPORT") != "1.tcp.example.com:20001" || field(out, "DOMAIN") != "-" {
		t.Errorf("endpoints get printed:\n%s", out)
	}
	for _, cmd := range [][]string{{"tunnel-sessions", "create"}, {"tunnel-sessions", "delete"}, {"endpoints", "update"}, {"endpoints", "delete"}} {
		help, _, err := e.run(cmd...)
		check.ErrorContains(t, err, "")
		if !strings.Contains(help, "Available Commands:") || strings.Contains(help, "\n  "+cmd[1]+" ") {
			t.Errorf("%s printed:\n%s", strings.Join(cmd, " "), help)
		}
	}
	_, errOut, err := e.run("tunnel-sessions", "stop", ts.ID)
	check.ErrorContains(t, err, "")
	if errOut != "stop requested "+ts.ID+"\n" {
		t.Errorf("stop printed %q on stderr", errOut)
	}
	if got, err := st.GetTunnelSession(t.Context(), account, ts.ID); err != nil || !got.StopRequested {
		t.Fatalf("after stop: %+v, %v", got, err)
	}
}
