package main

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/sluicehq/sluice/internal/emulator"
)

// TestServeDeliversWithARoleThroughTheEmulator runs sluice serve with
// AWS_ENDPOINT_URL at a standalone `sluice emulator`, as the README shows,
// and a Kinesis destination written with an IAM role: sluice assumes the
// role through the emulator's STS with its account id as the external id
// (which the emulator is told to require, as the role's trust policy
// would) and delivers with the credentials it got.
func TestServeDeliversWithARoleThroughTheEmulator(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs sluice serve")
	}
	clearSluiceEnv(t)
	env := startEmulatorCommand(t, "--auto-create")
	emu := env["AWS_ENDPOINT_URL"]
	bin := buildSluice(t)
	const token = "sk_role_through_emulator_0123456789"
	p := startServe(t, bin, t.TempDir(), "SLUICE_BOOTSTRAP_API_KEY="+token,
		"AWS_ENDPOINT_URL="+emu, "AWS_REGION="+env["AWS_REGION"],
		"AWS_ACCESS_KEY_ID="+env["AWS_ACCESS_KEY_ID"], "AWS_SECRET_ACCESS_KEY="+env["AWS_SECRET_ACCESS_KEY"],
		"AWS_CONFIG_FILE=/dev/null", "AWS_SHARED_CREDENTIALS_FILE=/dev/null", "AWS_PROFILE=", "AWS_SESSION_TOKEN=", "AWS_EC2_METADATA_DISABLED=true")
	account := p.logAttr(t, "created the first account and API key", "account_id")
	waitReady(t, p.url)

	// The role trusts sluice only with its account id as the external id.
	fault, err := json.Marshal(emulator.Fault{Service: emulator.ServiceSTS, Resource: "sluice", ExternalID: account})
	if err != nil {
		t.Fatal(err)
	}
	resp, err := http.Post(emu+"/_emulator/faults", "application/json", strings.NewReader(string(fault)))
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("setting the external id the role requires: %d", resp.StatusCode)
	}

	const role = "arn:aws:iam::123456789012:role/sluice"
	status, body := request(t, http.MethodPost, p.url+"/event_destinations", token, `{"description": "edge traffic",
		"target": {"kinesis": {"auth": {"role": {"role_arn": "`+role+`"}}, "stream_arn": "arn:aws:kinesis:us-east-1:123456789012:stream/edge"}}}`)
	if status != http.StatusCreated {
		t.Fatalf("creating the destination: %d %s", status, body)
	}
	var d struct{ ID string }
	if err := json.Unmarshal([]byte(body), &d); err != nil {
		t.Fatal(err)
	}
	status, body = request(t, http.MethodPost, p.url+"/event_subscriptions", token,
		`{"sources": [{"type": "http_request_complete.v0"}], "destination_ids": ["`+d.ID+`"]}`)
	if status != http.StatusCreated {
		t.Fatalf("creating the subscription: %d %s", status, body)
	}

	const eventID = "ev_2Yq3A9cC0c7ZkU6e7d0a9oKf1xR"
	status, body = request(t, http.MethodPost, p.url+"/events", token,
		`[{"event_type": "http_request_complete.v0", "event_id": "`+eventID+`", "object": {"conn": {"server_port": 443}}}]`)
	if status != http.StatusAccepted {
		t.Fatalf("publishing: %d %s", status, body)
	}
	deadline := time.Now().Add(30 * time.Second)
	for {
		var records struct {
			Records []struct {
				Data []byte `json:"data"`
			} `json:"records"`
		}
		if resp, err := http.Get(emu + "/_emulator/kinesis/edge/records"); err == nil {
			if resp.StatusCode == http.StatusOK {
				_ = json.NewDecoder(resp.Body).Decode(&records)
			}
			resp.Body.Close()
		}
		if len(records.Records) > 0 && strings.Contains(string(records.Records[0].Data), eventID) {
			break
		}
		if time.Now().After(deadline) {
			out, _, _ := runSluice(t, "", "destinations", "status", d.ID, "--api-url", p.url, "--api-key", token)
			t.Fatalf("nothing delivered to the stream within 30 s:\n%s\n%s", out, p.tail())
		}
		time.Sleep(300 * time.Millisecond) // a running server's delivery, polled with a deadline
	}

	resp, err = http.Get(emu + "/_emulator/sts/assumed-roles")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var assumed struct {
		AssumedRoles []emulator.AssumedRole `json:"assumed_roles"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&assumed); err != nil {
		t.Fatal(err)
	}
	if len(assumed.AssumedRoles) == 0 {
		t.Fatal("the emulator recorded no AssumeRole")
	}
	for _, a := range assumed.AssumedRoles {
		if a.RoleARN != role || a.ExternalID != account || a.RoleSessionName != "sluice-delivery" {
			t.Errorf("AssumeRole of %s as %s with external id %q; want %s, sluice-delivery, %q", a.RoleARN, a.RoleSessionName, a.ExternalID, role, account)
		}
	}
}
