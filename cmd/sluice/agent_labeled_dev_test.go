package main

import (
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestServeDevLabeledTunnelServesARoute: an HTTPS edge, a tunnel group
// backend and a route whose backend module names it, made through the
// API, send the route's requests to `sluice-agent tunnel --label`, whose
// labels the backend selects; the API's endpoints and backend show the
// labeled tunnel, and the agent's local API lists it without a URL.
// Labels that break the rules are refused by the edge, in its words.
func TestServeDevLabeledTunnelServesARoute(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs sluice serve --dev and sluice-agent")
	}
	clearSluiceEnv(t)
	bin := buildSluice(t)
	const key = "sk_agent_labeled_0123456789abcdef"
	work := t.TempDir()
	p := startServe(t, bin, filepath.Join(work, "sluice-data"), "SLUICE_BOOTSTRAP_API_KEY="+key, "SLUICE_DEV=true", "SLUICE_DEV_AWS_LISTEN=127.0.0.1:0")
	p.waitLog(t, "the edge is serving")
	public := strings.TrimPrefix(p.logAttr(t, "the edge is serving", "http"), "http://")

	const host = "shop.example.test"
	createID(t, p.url+"/reserved_domains", key, `{"domain": "`+host+`"}`)
	edge := createID(t, p.url+"/edges/https", key, `{"hostports": ["`+host+`:443"]}`)
	backend := createID(t, p.url+"/backends/tunnel_group", key, `{"labels": {"edge": "shop"}}`)
	route := createID(t, p.url+"/edges/https/"+edge+"/routes", key, `{"match_type": "path_prefix", "match": "/"}`)
	if status, body := request(t, http.MethodPut, p.url+"/edges/https/"+edge+"/routes/"+route+"/backend", key, `{"backend_id": "`+backend+`"}`); status != http.StatusOK {
		t.Fatalf("the route's backend module: %d %s", status, body)
	}

	local := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprintf(w, "local server, %s, host %s", r.URL.Path, r.Host)
	}))
	defer local.Close()
	port := local.URL[strings.LastIndex(local.URL, ":")+1:]
	a := startAgentProcess(t, work, "tunnel", "--label", "edge=shop", "--label", "team=web", port, "--web-addr", "127.0.0.1:0")
	web := a.waitLog(t, "starting web service")["addr"].(string)
	started := a.waitLog(t, "started tunnel")
	id, _ := started["id"].(string)
	if !strings.HasPrefix(id, "ep_") || started["labels"] != "edge=shop,team=web" {
		t.Fatalf("the agent's log of the tunnel: %v", started)
	}

	// The edge follows the routing from the store: the route may take
	// a moment to reach it.
	var status int
	var body string
	deadline := time.Now().Add(20 * time.Second)
	for {
		req, _ := http.NewRequest(http.MethodGet, "http://"+public+"/cart", nil)
		req.Host = host
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		status, body = resp.StatusCode, string(b)
		if status == http.StatusOK || time.Now().After(deadline) {
			break
		}
		time.Sleep(50 * time.Millisecond)
	}
	if want := "local server, /cart, host " + host; status != http.StatusOK || body != want {
		t.Fatalf("GET through the route: %d %q, want 200 %q", status, body, want)
	}

	var endpoint struct {
		Proto  string            `json:"proto"`
		Labels map[string]string `json:"labels"`
		URL    string            `json:"url"`
	}
	getAPI(t, p.url+"/endpoints/"+id, key, &endpoint)
	if endpoint.Proto != "labeled" || !maps.Equal(endpoint.Labels, map[string]string{"edge": "shop", "team": "web"}) || endpoint.URL != "" {
		t.Fatalf("the API's endpoint %s: %+v", id, endpoint)
	}
	var group struct {
		Tunnels []struct{ ID string } `json:"tunnels"`
	}
	getAPI(t, p.url+"/backends/tunnel_group/"+backend, key, &group)
	if len(group.Tunnels) != 1 || group.Tunnels[0].ID != id {
		t.Fatalf("the backend's tunnels %+v, want %s", group.Tunnels, id)
	}

	var tunnels struct {
		Tunnels []struct {
			ID        string            `json:"ID"`
			PublicURL string            `json:"public_url"`
			Proto     string            `json:"proto"`
			Labels    map[string]string `json:"labels"`
		} `json:"tunnels"`
	}
	getJSON(t, "http://"+web+"/api/tunnels", &tunnels)
	if len(tunnels.Tunnels) != 1 || tunnels.Tunnels[0].ID != id || tunnels.Tunnels[0].PublicURL != "" ||
		tunnels.Tunnels[0].Proto != "labeled" || tunnels.Tunnels[0].Labels["edge"] != "shop" {
		t.Fatalf("/api/tunnels: %+v", tunnels)
	}

	// Labels the edge refuses: the agent shows its message.
	bad := startAgentProcess(t, work, "tunnel", "--label", "Edge=shop", port, "--web-addr", "false")
	failed := bad.waitLog(t, "failed to start tunnel")
	if msg, _ := failed["err"].(string); !strings.Contains(msg, "ERR_SLUICE_606") || !strings.Contains(msg, "Edge") {
		t.Fatalf("the agent's log of labels the edge refuses: %v", failed)
	}
}

// getAPI gets u from sluice's API with the key and decodes the answer
// into v.
func getAPI(t *testing.T, u, key string, v any) {
	t.Helper()
	status, body := request(t, http.MethodGet, u, key, "")
	if status != http.StatusOK {
		t.Fatalf("GET %s: %d %s", u, status, body)
	}
	if err := json.Unmarshal([]byte(body), v); err != nil {
		t.Fatalf("GET %s: %v in %s", u, err, body)
	}
}
