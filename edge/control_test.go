package edge_test

import (
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"golang.ngrok.com/ngrok/v2"

	"github.com/prometheus/client_golang/prometheus/testutil"
	"github.com/sluicehq/sluice/edge"
	"github.com/sluicehq/sluice/internal/agenttest"
	"github.com/sluicehq/sluice/internal/check"
	"github.com/sluicehq/sluice/internal/store"
	"github.com/sluicehq/sluice/schemas"
)

// serveUp binds url with agent a and serves "up" on it.
func serveUp(t *testing.T, a ngrok.Agent, url string) string {
	t.Helper()
	// The endpoint lives as long as the context of its Listen.
	ln, err := a.Listen(t.Context(), ngrok.WithURL(url))
	if err != nil {
		t.Fatalf("Listen(%s): %v", url, err)
	}
	go func() {
		_ = http.Serve(ln, http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { _, _ = io.WriteString(w, "up") }))
	}()
	return ln.URL().Hostname()
}

// gone waits up to two seconds for host to answer 404.
func (te *testEdge) gone(t *testing.T, host string) {
	t.Helper()
	check.Eventually(t, 2*time.Second, host+" gone", func() (int, bool) {
		resp, _ := te.Get(t, host, "/")
		return resp.StatusCode, resp.StatusCode == http.StatusNotFound
	})
}

func TestInactiveBotUserEndsItsCredentialsSessions(t *testing.T) {
	te := startEdge(t)
	account := schemas.NewID(schemas.PrefixAccount)
	bot := store.BotUser{ID: schemas.NewID(schemas.PrefixBotUser), AccountID: account, Active: true}
	te.Store.Mu.Lock()
	te.Store.Bots[bot.ID] = bot
	te.Store.Mu.Unlock()
	token := te.Credential(account)
	te.Store.Mu.Lock()
	c := te.Store.Creds[token]
	c.OwnerID = bot.ID
	te.Store.Creds[token] = c
	te.Store.Mu.Unlock()
	// The edge ends the session: the agent connects once (agenttest.DialOnce).
	host := serveUp(t, te.agent(t, token, agenttest.DialOnce(t)), "http://")
	if resp, body := te.Get(t, host, "/"); resp.StatusCode != 200 || body != "up" {
		t.Fatalf("before: %d %q", resp.StatusCode, body)
	}
	bot.Active = false
	te.Store.Mu.Lock()
	te.Store.Bots[bot.ID] = bot
	te.Store.Mu.Unlock()
	te.Service.BotUserInactive(account, bot.ID)
	te.gone(t, host)
	// And a new session of its credential is refused.
	again := te.agent(t, token)
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Second)
	defer cancel()
	if err := again.Connect(ctx); err == nil || !strings.Contains(err.Error(), "is inactive") {
		t.Fatalf("a session of an inactive bot user's credential: %v, want it refused as inactive", err)
	}
}

func TestDeletedReservationClosesItsEndpoints(t *testing.T) {
	te := startEdge(t)
	account := schemas.NewID(schemas.PrefixAccount)
	te.Reserve(account, "*.keep.example.test")
	te.Reserve(account, "*.drop.example.test")
	a := te.agent(t, te.Credential(account))
	keep := serveUp(t, a, "http://a.keep.example.test")
	drop := serveUp(t, a, "http://a.drop.example.test")
	te.Store.Mu.Lock()
	var dropID string
	for _, d := range te.Store.Domains[account] {
		if d.Domain == "*.drop.example.test" {
			dropID = d.ID
		}
	}
	te.Store.Mu.Unlock()
	te.Service.ReservedDomainGone(account, dropID)
	te.gone(t, drop)
	if resp, body := te.Get(t, keep, "/"); resp.StatusCode != 200 || body != "up" {
		t.Fatalf("the endpoint of the other reservation: %d %q, want it up", resp.StatusCode, body)
	}
}

func TestStopSessionEndsIt(t *testing.T) {
	te := startEdge(t)
	account := schemas.NewID(schemas.PrefixAccount)
	// The edge ends the session: the agent connects once (agenttest.DialOnce).
	host := serveUp(t, te.agent(t, te.Credential(account), agenttest.DialOnce(t)), "http://")
	te.Store.Mu.Lock()
	var id string
	for sid := range te.Store.Sessions {
		id = sid
	}
	te.Store.Mu.Unlock()
	te.Service.StopSession(schemas.NewID(schemas.PrefixAccount), id) // another account's: nothing
	if resp, _ := te.Get(t, host, "/"); resp.StatusCode != 200 {
		t.Fatalf("another account stopped the session: %d", resp.StatusCode)
	}
	te.Service.StopSession(account, id)
	te.gone(t, host)
	stops := check.Eventually(t, 2*time.Second, "the stop event", func() ([]map[string]any, bool) {
		s := te.Events.OfKind(t, "agent_session_stop.v0")
		return s, len(s) >= 1
	})
	if got, _ := dig(stops[0], "error").(string); !strings.Contains(got, "stopped through the API") {
		t.Fatalf("stop reason %q", got)
	}
}

// redirect dials addr whatever address it is asked for, keeping the
// name the agent connects to for TLS.
type redirect struct{ addr string }

func (r redirect) Dial(network, _ string) (net.Conn, error) { return net.Dial(network, r.addr) }
func (r redirect) DialContext(ctx context.Context, network, _ string) (net.Conn, error) {
	var d net.Dialer
	return d.DialContext(ctx, network, r.addr)
}

// TestAgentIngressNeedsItsAccountsCredential: an agent that connects
// through an account's agent ingress name must use a credential of that
// account.
func TestAgentIngressNeedsItsAccountsCredential(t *testing.T) {
	owner := schemas.NewID(schemas.PrefixAccount)
	te := startEdge(t, func(c *edge.Config) {
		c.IngressOwner = func(_ context.Context, host string) (string, bool, error) {
			return owner, host == "tunnel.us.a-corp.test", nil
		}
	})
	connect := func(token string) error {
		a, err := ngrok.NewAgent(ngrok.WithAuthtoken(token), ngrok.WithAgentConnectURL("tunnel.us.a-corp.test:443"),
			ngrok.WithDialer(redirect{te.Agents}), ngrok.WithAgentConnectCAs(te.CA.Pool()))
		if err != nil {
			t.Fatal(err)
		}
		defer a.Disconnect()
		ctx, cancel := context.WithTimeout(context.Background(), 3*time.Second)
		defer cancel()
		return a.Connect(ctx)
	}
	if err := connect(te.Credential(owner)); err != nil {
		t.Fatalf("the owner's credential through its ingress: %v", err)
	}
	if err := connect(te.Credential(schemas.NewID(schemas.PrefixAccount))); err == nil || !strings.Contains(err.Error(), "another account's agent ingress") {
		t.Fatalf("another account's credential through the ingress: %v, want it refused", err)
	}
}

// TestAccountRequestRate: past its rate at the edge, an account's
// requests are answered 429 with Retry-After, without reaching the
// agent, each after the refusal hold, and each is still an event of the
// account.
func TestAccountRequestRate(t *testing.T) {
	const hold = 100 * time.Millisecond
	te := startEdge(t, func(c *edge.Config) {
		c.Limits.RequestRate, c.Limits.RequestBurst, c.Limits.RefusalHold = 1, 3, hold
	})
	account := schemas.NewID(schemas.PrefixAccount)
	host := serveUp(t, te.agent(t, te.Credential(account)), "http://")
	codes := map[int]int{}
	for range 6 {
		start := time.Now()
		resp, _ := te.Get(t, host, "/")
		took := time.Since(start)
		codes[resp.StatusCode]++
		if resp.StatusCode == http.StatusTooManyRequests && (resp.Header.Get("Retry-After") == "" || resp.Header.Get("X-Sluice-Error-Code") != "ERR_SLUICE_635") {
			t.Fatalf("a 429 without Retry-After or its code: %v", resp.Header)
		}
		if resp.StatusCode == http.StatusTooManyRequests && took < hold {
			t.Fatalf("a 429 after %v, want it held %v", took, hold)
		}
	}
	if codes[200] < 3 || codes[429] < 2 {
		t.Fatalf("six requests at once with a burst of three: %v, want three 200 and the rest 429", codes)
	}
	check.Eventually(t, 2*time.Second, "an event per request, 429s included", func() (int, bool) {
		n := len(te.Events.OfKind(t, "http_request_complete.v0"))
		return n, n == 6
	})
}

// TestRandomSubdomainIsTheAccounts: a random subdomain the edge gave
// account A, even made public, cannot be bound by account B while A's
// agent is away; A's next agent gets it back.
func TestRandomSubdomainIsTheAccounts(t *testing.T) {
	te := startEdge(t)
	a, b := schemas.NewID(schemas.PrefixAccount), schemas.NewID(schemas.PrefixAccount)
	tokenA := te.Credential(a)
	first := te.agent(t, tokenA)
	host := serveUp(t, first, "http://")
	if err := first.Disconnect(); err != nil {
		t.Fatal(err)
	}
	te.gone(t, host)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if _, err := te.agent(t, te.Credential(b)).Listen(ctx, ngrok.WithURL("http://"+host)); err == nil || !strings.Contains(err.Error(), "not a reserved domain") {
		t.Fatalf("account B binding A's random %s: %v, want it refused", host, err)
	}
	if got := serveUp(t, te.agent(t, tokenA), "http://"+host); got != host {
		t.Fatalf("A bound %s again as %s", host, got)
	}
	if resp, body := te.Get(t, host, "/"); resp.StatusCode != 200 || body != "up" {
		t.Fatalf("A's endpoint back: %d %q", resp.StatusCode, body)
	}
}

// TestRefusalHoldKeepsTheConnectionCounted: a request refused for its
// account's rate is held on a connection that stays counted against the
// account's connections, even when its client goes away at once, so that
// closing and opening connections gets no quicker refusals: another
// connection meanwhile, past the limit, is refused at once and closed.
func TestRefusalHoldKeepsTheConnectionCounted(t *testing.T) {
	const hold = 3 * time.Second
	te := startEdge(t, func(c *edge.Config) {
		c.Limits.RequestRate, c.Limits.RequestBurst, c.Limits.RefusalHold, c.Limits.Connections = 0.001, 1, hold, 2
	})
	account := schemas.NewID(schemas.PrefixAccount)
	host := serveUp(t, te.agent(t, te.Credential(account)), "http://")
	// The burst's one request, on a connection kept alive: counted.
	kept := &http.Client{Transport: &http.Transport{}}
	defer kept.CloseIdleConnections()
	req, _ := http.NewRequest(http.MethodGet, "http://"+te.HTTPAddr+"/", nil)
	req.Host = host
	resp, err := kept.Do(req)
	if err != nil || resp.StatusCode != http.StatusOK {
		t.Fatalf("the burst's request: %v %v", resp, err)
	}
	_, _ = io.Copy(io.Discard, resp.Body)
	_ = resp.Body.Close()
	// A request the rate refuses, on a second connection whose client
	// leaves at once: held, and counted while held.
	c, err := net.Dial("tcp", te.HTTPAddr)
	if err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	if _, err := fmt.Fprintf(c, "GET / HTTP/1.1\r\nHost: %s\r\n\r\n", host); err != nil {
		t.Fatal(err)
	}
	check.Eventually(t, hold, "the refused request held", func() (float64, bool) {
		n := testutil.ToFloat64(te.Service.Metrics.RateLimited())
		return n, n == 1
	})
	_ = c.Close()
	// A third connection, within the hold: past the limit of two.
	fresh := &http.Client{Transport: &http.Transport{DisableKeepAlives: true}}
	resp, err = fresh.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	_ = resp.Body.Close()
	if time.Since(start) >= hold {
		t.Fatalf("the third request took the whole hold (%v): the machine is too slow to tell", time.Since(start))
	}
	if resp.StatusCode != http.StatusTooManyRequests || resp.Header.Get("X-Sluice-Error-Code") != "ERR_SLUICE_632" || !resp.Close {
		t.Fatalf("a third connection during the hold: %d %s (close %v), want 429 ERR_SLUICE_632 closing the connection", resp.StatusCode, resp.Header.Get("X-Sluice-Error-Code"), resp.Close)
	}
}
