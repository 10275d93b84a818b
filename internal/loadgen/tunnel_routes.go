package loadgen

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"time"
)

// The label of the bench's labeled tunnel, which its tunnel group backend
// selects, and the user its route with modules lets in.
const (
	routeLabel      = "bench"
	routeLabelValue = "route"
	routeUser       = "bench"
	routePassword   = "bench-password"
)

// routeModulesPolicy is the traffic policy of the route with modules:
// every action of the format that lets a request through, with limits
// the bench never reaches and the bench's own user, so that what is
// measured is their cost.
const routeModulesPolicy = `on_http_request:
  - name: clients
    actions:
      - type: restrict-ips
        config: {allow: ["127.0.0.0/8", "::1/128"]}
      - type: rate-limit
        config: {name: bench, algorithm: sliding_window, capacity: 100000000, rate: 60s, bucket_key: [conn.client_ip]}
      - type: basic-auth
        config: {credentials: ["` + routeUser + `:` + routePassword + `"]}
      - type: log
        config: {metadata: {bench: route}}
      - type: compress-response
`

// measureRoutes measures the requests of an HTTPS edge's two routes to
// one labeled tunnel of sluice-agent (spec.kind AgentSluiceRoute), at
// each mode and rate in turn: /plain, a route with its backend only, and
// /modules, the same backend behind a circuit breaker (which never trips
// here) and a traffic policy of every action that lets a request pass
// (routeModulesPolicy), its requests carrying the user's Basic
// credentials. The websocket TCP converter is left out: a route
// with it takes WebSocket upgrades only.
func measureRoutes(ctx context.Context, cfg TunnelConfig, target TunnelTarget, api tunnelAPI, spec agentSpec, progress io.Writer) (TunnelAgent, []TunnelRun, []TunnelTCP) {
	a := TunnelAgent{Kind: spec.kind, Host: spec.measuredHost}
	fail := func(err error) (TunnelAgent, []TunnelRun, []TunnelTCP) {
		a.Error = err.Error()
		fmt.Fprintf(progress, "agent %s: %s\n", spec.kind, err)
		return a, nil, nil
	}
	if err := setUpRoutes(ctx, api, spec.measuredHost); err != nil {
		return fail(err)
	}
	if target.AgentsCAFile == "" {
		return fail(fmt.Errorf("the target names no file of the agents' CA"))
	}
	start := time.Now()
	p, bound, err := spawnAgent(ctx, spec)
	if err != nil {
		return fail(err)
	}
	defer p.stop()
	a.PID, a.Tunnels, a.BindElapsed = p.pid(), bound.tunnels, time.Since(start)
	public, err := url.Parse(target.PublicHTTP)
	if err != nil {
		return fail(err)
	}
	base := "http://" + public.Host
	if err := waitRouted(ctx, base+"/plain/bench", spec.measuredHost, spec.bindTimeout); err != nil {
		return fail(err)
	}
	fmt.Fprintf(progress, "agent %s (pid %d): its labeled tunnel serves the routes of %s after %s\n", spec.kind, a.PID, spec.measuredHost, time.Since(start).Round(time.Millisecond))
	sleepCtx(ctx, cfg.Pause)
	if f, err := readProc(a.PID); err == nil {
		a.RSSBefore = f.rss
	}
	var runs []TunnelRun
	for _, mode := range cfg.Modes {
		for _, rate := range cfg.Rates {
			// The two routes at one rate one after the other, so that
			// the machine's drift meets both alike.
			for _, path := range []string{PathRoute, PathRouteModules} {
				if ctx.Err() != nil {
					return a, runs, nil
				}
				run := TunnelRun{Mode: mode, Path: path, Agent: spec.kind, Rate: rate}
				to := base + "/plain/bench"
				if path == PathRouteModules {
					// The client sends the URL's user as Basic credentials.
					to = "http://" + url.UserPassword(routeUser, routePassword).String() + "@" + public.Host + "/modules/bench"
				}
				measureRun(ctx, cfg, target, &run, to, spec.measuredHost, a.PID, progress)
				runs = append(runs, run)
				sleepCtx(ctx, cfg.Pause)
			}
		}
	}
	if f, err := readProc(a.PID); err == nil {
		a.RSSAfter, a.RSSPeak = f.rss, f.peak
	}
	return a, runs, nil
}

// setUpRoutes makes, through the API, the HTTPS edge at host, the tunnel
// group backend of the bench's label and the edge's two routes.
func setUpRoutes(ctx context.Context, api tunnelAPI, host string) error {
	var backend, edge, plain, modules struct{ ID string }
	if err := api.post(ctx, "/backends/tunnel_group", map[string]any{"description": "sluice-bench routes", "labels": map[string]string{routeLabel: routeLabelValue}}, &backend); err != nil {
		return fmt.Errorf("creating the tunnel group backend: %w", err)
	}
	if err := api.post(ctx, "/edges/https", map[string]any{"description": "sluice-bench routes", "hostports": []string{host + ":443"}}, &edge); err != nil {
		return fmt.Errorf("creating the HTTPS edge: %w", err)
	}
	routes := "/edges/https/" + edge.ID + "/routes"
	if err := api.post(ctx, routes, map[string]any{"match_type": "path_prefix", "match": "/plain"}, &plain); err != nil {
		return fmt.Errorf("creating the route without modules: %w", err)
	}
	if err := api.post(ctx, routes, map[string]any{"match_type": "path_prefix", "match": "/modules"}, &modules); err != nil {
		return fmt.Errorf("creating the route with modules: %w", err)
	}
	for _, module := range []struct {
		route, name string
		body        map[string]any
	}{
		{plain.ID, "backend", map[string]any{"enabled": true, "backend_id": backend.ID}},
		{modules.ID, "backend", map[string]any{"enabled": true, "backend_id": backend.ID}},
		{modules.ID, "circuit_breaker", map[string]any{"enabled": true, "tripped_duration": 10, "rolling_window": 10, "num_buckets": 10,
			"volume_threshold": 1000000, "error_threshold_percentage": 0.5}},
		{modules.ID, "traffic_policy", map[string]any{"enabled": true, "value": routeModulesPolicy}},
	} {
		if err := api.call(ctx, http.MethodPut, routes+"/"+module.route+"/"+module.name, module.body, nil); err != nil {
			return fmt.Errorf("setting the route's %s: %w", module.name, err)
		}
	}
	return nil
}

// waitRouted waits, up to timeout, until a GET of u with the Host host
// is answered 200: the edge follows the routes and the tunnel is bound.
func waitRouted(ctx context.Context, u, host string, timeout time.Duration) error {
	deadline := time.Now().Add(timeout)
	last := ""
	for time.Now().Before(deadline) && ctx.Err() == nil {
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
		if err != nil {
			return err
		}
		req.Host = host
		resp, err := http.DefaultClient.Do(req)
		if err == nil {
			body, _ := io.ReadAll(io.LimitReader(resp.Body, 4096))
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return nil
			}
			last = fmt.Sprintf("%d %s", resp.StatusCode, strings.TrimSpace(string(body)))
		} else {
			last = err.Error()
		}
		sleepCtx(ctx, 100*time.Millisecond)
	}
	return fmt.Errorf("the route at %s did not answer 200 within %s: last %s", host, timeout, last)
}
