package loadgen

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"sync"
	"sync/atomic"
	"time"

	"golang.ngrok.com/ngrok/v2"
)

// Defaults of the flood phase.
const (
	DefaultTunnelFloodClients = 64
	DefaultTunnelFloodRate    = 200
	// FloorTunnelFloodExtra is how much another account's flood may
	// raise an account's p99 on the same edge (issue 24).
	FloorTunnelFloodExtra = 10 * time.Millisecond
	// tunnelFloodHost is account B's endpoint.
	tunnelFloodHost = "flood.tunnel-flood.example.test"
)

// TunnelFlood is account A's latency through the edge without and with
// account B's flood of requests to its own endpoint on the same edge.
type TunnelFlood struct {
	// Clients are B's connections, each sending its next request as soon
	// as the last is answered.
	Clients int `json:"clients"`
	// Baseline and Flooded are A's runs, keep-alive, at the same rate.
	Baseline TunnelRun `json:"baseline"`
	Flooded  TunnelRun `json:"flooded"`
	// FloodAnswered and FloodRefused count B's requests answered 200 and
	// refused (any other answer, or an error).
	FloodAnswered int64  `json:"flood_answered"`
	FloodRefused  int64  `json:"flood_refused"`
	Error         string `json:"error,omitempty"`
}

// flood measures A at cfg.FloodRate, keep-alive, for cfg.Duration, then
// again while B's cfg.FloodClients connections send requests as fast as
// they are answered to B's own endpoint, served by B's own agent. A's
// agent (of token, A's credential) and B's are of the Go SDK, in this
// process.
func flood(ctx context.Context, cfg TunnelConfig, target TunnelTarget, api tunnelAPI, token, upstream string, progress io.Writer) TunnelFlood {
	f := TunnelFlood{Clients: cfg.FloodClients}
	public, err := url.Parse(target.PublicHTTP)
	if err != nil {
		f.Error = err.Error()
		return f
	}
	publicHost := public.Host
	if target.NewAccount == nil {
		f.Error = "no way to make account B"
		return f
	}
	agentA, err := forwardInProcess(ctx, target, token, upstream, TunnelHost)
	if err != nil {
		f.Error = "A's agent: " + err.Error()
		return f
	}
	defer agentA.Disconnect() //nolint:errcheck
	key, err := target.NewAccount(ctx)
	if err != nil {
		f.Error = "making account B: " + err.Error()
		return f
	}
	b := tunnelAPI{base: api.base, token: key}
	if err := b.post(ctx, "/reserved_domains", map[string]any{"domain": tunnelFloodHost}, nil); err != nil {
		f.Error = "reserving B's domain: " + err.Error()
		return f
	}
	tokenB, err := b.credential(ctx)
	if err != nil {
		f.Error = err.Error()
		return f
	}
	agentB, err := forwardInProcess(ctx, target, tokenB, upstream, tunnelFloodHost)
	if err != nil {
		f.Error = "B's agent: " + err.Error()
		return f
	}
	defer agentB.Disconnect() //nolint:errcheck
	victim := "http://" + publicHost + "/bench"
	f.Baseline = TunnelRun{Mode: TunnelKeepAlive, Path: PathTunnel, Rate: cfg.FloodRate}
	openLoop(ctx, cfg, &f.Baseline, victim, TunnelHost)
	fmt.Fprintf(progress, "A alone at %d/s: p50 %dµs p99 %dµs\n", cfg.FloodRate, f.Baseline.P50US, f.Baseline.P99US)

	floodCtx, stop := context.WithCancel(ctx)
	var wg sync.WaitGroup
	var answered, refused atomic.Int64
	tr := &http.Transport{DisableCompression: true, MaxIdleConnsPerHost: cfg.FloodClients, MaxConnsPerHost: cfg.FloodClients}
	defer tr.CloseIdleConnections()
	client := &http.Client{Transport: tr, Timeout: cfg.RequestTimeout}
	for range cfg.FloodClients {
		wg.Go(func() {
			for floodCtx.Err() == nil {
				req, _ := http.NewRequestWithContext(floodCtx, http.MethodGet, "http://"+publicHost+"/flood", nil)
				req.Host = tunnelFloodHost
				resp, err := client.Do(req)
				if err != nil {
					if floodCtx.Err() == nil {
						refused.Add(1)
					}
					continue
				}
				_, _ = io.Copy(io.Discard, resp.Body)
				resp.Body.Close()
				if resp.StatusCode == http.StatusOK {
					answered.Add(1)
				} else {
					refused.Add(1)
				}
			}
		})
	}
	sleepCtx(ctx, time.Second) // B's flood at its height
	f.Flooded = TunnelRun{Mode: TunnelKeepAlive, Path: PathTunnel, Rate: cfg.FloodRate}
	openLoop(ctx, cfg, &f.Flooded, victim, TunnelHost)
	stop()
	wg.Wait()
	f.FloodAnswered, f.FloodRefused = answered.Load(), refused.Load()
	fmt.Fprintf(progress, "A beside B's flood of %d connections: p50 %dµs p99 %dµs; B answered %d, refused %d\n",
		cfg.FloodClients, f.Flooded.P50US, f.Flooded.P99US, f.FloodAnswered, f.FloodRefused)
	return f
}

// floodFloor is the floor of the flood phase: A's p99 beside B's flood
// within its baseline's plus FloorTunnelFloodExtra, and A's requests all
// answered.
func floodFloor(f *TunnelFlood) TunnelFloor {
	out := TunnelFloor{Name: fmt.Sprintf("another account's flood: A's p99 ≤ its baseline + %s", FloorTunnelFloodExtra)}
	switch {
	case f == nil:
		out.Skipped, out.OK, out.Measured = true, true, "not run"
	case f.Error != "":
		out.Measured = "not measured: " + f.Error
	default:
		extra := time.Duration(f.Flooded.P99US-f.Baseline.P99US) * time.Microsecond
		out.Measured = fmt.Sprintf("A's p99 %dµs beside B's flood of %d connections (%d answered), %dµs alone (%+dµs)",
			f.Flooded.P99US, f.Clients, f.FloodAnswered, f.Baseline.P99US, f.Flooded.P99US-f.Baseline.P99US)
		if f.Baseline.P99US > 0 {
			out.Ratio = float64(f.Flooded.P99US) / float64(f.Baseline.P99US)
		}
		out.OK = extra <= FloorTunnelFloodExtra && f.Flooded.Held() && f.Baseline.Held()
		if !f.Flooded.Held() {
			out.Measured += fmt.Sprintf(", %d of A's requests failed: %s", f.Flooded.Errors, f.Flooded.FirstError)
		}
	}
	return out
}

// forwardInProcess connects an agent of the Go SDK in this process with
// token and binds http://host to upstream.
func forwardInProcess(ctx context.Context, target TunnelTarget, token, upstream, host string) (ngrok.Agent, error) {
	agent, err := ngrok.NewAgent(ngrok.WithAuthtoken(token), ngrok.WithAgentConnectURL(target.Agents), ngrok.WithAgentConnectCAs(target.AgentsCAs))
	if err != nil {
		return nil, err
	}
	if _, err := agent.Forward(ctx, ngrok.WithUpstream("http://"+upstream), ngrok.WithURL("http://"+host)); err != nil {
		_ = agent.Disconnect()
		return nil, fmt.Errorf("binding http://%s: %w", host, err)
	}
	return agent, nil
}
