package loadgen

import (
	"bufio"
	"bytes"
	"context"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"golang.ngrok.com/ngrok/v2"
)

// RunTunnel measures the edge of target (issues 24 and 25): the same
// local HTTP server reached directly and through the edge and each of
// cfg.Agents in turn, an agent process of its own with cfg.AgentTunnels
// tunnels, at cfg's rates, in each mode; TCP bytes a second both ways to
// a local sink; each agent's CPU time per request and memory; and the
// edge's memory per idle agent session (agents of the Go SDK in this
// process). Progress goes to progress.
func RunTunnel(ctx context.Context, cfg TunnelConfig, target TunnelTarget, progress io.Writer) (TunnelReport, error) {
	cfg.setDefaults()
	if err := cfg.Validate(); err != nil {
		return TunnelReport{}, err
	}
	if err := target.Validate(); err != nil {
		return TunnelReport{}, err
	}
	report := TunnelReport{Config: cfg, Target: target}

	// The local HTTP server and TCP sink.
	body := bytes.Repeat([]byte("x"), 128)
	httpLn, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return report, err
	}
	srv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
		w.Header().Set("Content-Type", "text/plain")
		_, _ = w.Write(body)
	}), ReadHeaderTimeout: 10 * time.Second}
	go func() { _ = srv.Serve(httpLn) }()
	defer srv.Close()
	sinkLn, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return report, err
	}
	defer sinkLn.Close()
	go serveSink(sinkLn)

	// The account's wildcard and a credential for the agents.
	api := tunnelAPI{base: strings.TrimSuffix(target.APIURL, "/"), token: target.Token}
	if err := api.post(ctx, "/reserved_domains", map[string]any{"domain": TunnelDomain}, nil); err != nil {
		return report, fmt.Errorf("reserving %s: %w", TunnelDomain, err)
	}
	token, err := api.credential(ctx)
	if err != nil {
		return report, err
	}

	// Memory first, on a process no load has grown yet.
	if cfg.IdleSessions > 0 {
		m := idleSessions(ctx, cfg, target, api, httpLn.Addr().String(), progress)
		report.Memory = &m
	}

	// Directly, once, for every agent to be judged by.
	direct := "http://" + httpLn.Addr().String() + "/bench"
	for _, mode := range cfg.Modes {
		for _, rate := range cfg.Rates {
			if err := ctx.Err(); err != nil {
				return report, err
			}
			run := TunnelRun{Mode: mode, Path: PathDirect, Rate: rate}
			measureRun(ctx, cfg, target, &run, direct, "", 0, progress)
			report.Runs = append(report.Runs, run)
			sleepCtx(ctx, cfg.Pause)
		}
	}
	if cfg.TCPBytes > 0 {
		t := sendTCP(ctx, sinkLn.Addr().String(), cfg.TCPBytes)
		t.Path = PathDirect
		report.TCP = append(report.TCP, t)
		fmt.Fprintf(progress, "TCP %s: %s/s %s\n", t.Path, mib(t.BytesPerSecond), t.Error)
	}

	// Through each agent in turn.
	for _, kind := range cfg.Agents {
		spec := agentSpec{
			kind: kind, token: token, server: target.Agents, caFile: target.AgentsCAFile,
			httpUpstream: httpLn.Addr().String(), tcpUpstream: sinkLn.Addr().String(),
			tunnels: cfg.AgentTunnels, sdkCommand: cfg.SDKAgent, sluiceAgent: cfg.SluiceAgent,
			bindTimeout: cfg.AgentBindTimeout, extraDomain: strings.TrimPrefix(TunnelDomain, "*."), measuredHost: agentHost(kind),
		}
		measure := measureAgent
		if kind == AgentSluiceRoute {
			spec.tunnels = 2 // the labeled tunnel and the sink
			measure = func(ctx context.Context, cfg TunnelConfig, target TunnelTarget, spec agentSpec, progress io.Writer) (TunnelAgent, []TunnelRun, []TunnelTCP) {
				return measureRoutes(ctx, cfg, target, api, spec, progress)
			}
		}
		a, runs, tcp := measure(ctx, cfg, target, spec, progress)
		report.Agents = append(report.Agents, a)
		report.Runs = append(report.Runs, runs...)
		report.TCP = append(report.TCP, tcp...)
		if err := ctx.Err(); err != nil {
			return report, err
		}
	}

	if cfg.FloodClients > 0 {
		f := flood(ctx, cfg, target, api, token, httpLn.Addr().String(), progress)
		report.Flood = &f
	}
	report.Floors = report.ComputeFloors()
	report.Comparison = report.Compare()
	return report, nil
}

// measureAgent spawns spec's agent and measures the runs through it: its
// memory once its tunnels are bound and after the runs, and its CPU time
// over each run.
func measureAgent(ctx context.Context, cfg TunnelConfig, target TunnelTarget, spec agentSpec, progress io.Writer) (TunnelAgent, []TunnelRun, []TunnelTCP) {
	a := TunnelAgent{Kind: spec.kind, Host: spec.measuredHost}
	if target.AgentsCAFile == "" {
		a.Error = "the target names no file of the agents' CA"
		return a, nil, nil
	}
	start := time.Now()
	p, bound, err := spawnAgent(ctx, spec)
	if err != nil {
		a.Error = err.Error()
		fmt.Fprintf(progress, "agent %s: %s\n", spec.kind, err)
		return a, nil, nil
	}
	defer p.stop()
	a.PID, a.Tunnels, a.BindElapsed = p.pid(), bound.tunnels, time.Since(start)
	if bound.webAddr != "" {
		if n, err := countAPITunnels(ctx, bound.webAddr); err == nil {
			a.APITunnels = n
		} else {
			fmt.Fprintf(progress, "agent %s: its local API: %s\n", spec.kind, err)
		}
	}
	fmt.Fprintf(progress, "agent %s (pid %d): %d tunnels bound in %s, %s and %s\n", spec.kind, a.PID, a.Tunnels, a.BindElapsed.Round(time.Millisecond), bound.httpURL, bound.tcpURL)
	sleepCtx(ctx, cfg.Pause)
	if f, err := readProc(a.PID); err == nil {
		a.RSSBefore = f.rss
	}

	public, err := url.Parse(target.PublicHTTP)
	if err != nil {
		a.Error = err.Error()
		return a, nil, nil
	}
	var runs []TunnelRun
	for _, mode := range cfg.Modes {
		for _, rate := range cfg.Rates {
			if ctx.Err() != nil {
				return a, runs, nil
			}
			run := TunnelRun{Mode: mode, Path: PathTunnel, Agent: spec.kind, Rate: rate}
			measureRun(ctx, cfg, target, &run, "http://"+public.Host+"/bench", spec.measuredHost, a.PID, progress)
			runs = append(runs, run)
			sleepCtx(ctx, cfg.Pause)
		}
	}
	var tcp []TunnelTCP
	if cfg.TCPBytes > 0 {
		t := TunnelTCP{Path: PathTunnel, Agent: spec.kind, Bytes: cfg.TCPBytes}
		if u, err := url.Parse(bound.tcpURL); err != nil || u.Host == "" {
			t.Error = fmt.Sprintf("the agent's TCP endpoint %q is no tcp:// URL", bound.tcpURL)
		} else {
			before, _ := readProc(a.PID)
			t = sendTCP(ctx, u.Host, cfg.TCPBytes)
			t.Path, t.Agent = PathTunnel, spec.kind
			if after, err := readProc(a.PID); err == nil {
				t.AgentCPU = after.cpu - before.cpu
			}
		}
		tcp = append(tcp, t)
		fmt.Fprintf(progress, "TCP %s through %s: %s/s %s\n", t.Path, spec.kind, mib(t.BytesPerSecond), t.Error)
	}
	if f, err := readProc(a.PID); err == nil {
		a.RSSAfter, a.RSSPeak = f.rss, f.peak
	} else {
		a.Error = "after the runs: " + err.Error()
	}
	return a, runs, tcp
}

// measureRun runs run open-loop to the URL to, with host as the request's
// Host when not empty, and measures around it the CPU time of the
// spawned sluice and of the agent (agentPID, 0 for none), and through the
// tunnel the edge's counters; it says what it measured on progress.
func measureRun(ctx context.Context, cfg TunnelConfig, target TunnelTarget, run *TunnelRun, to, host string, agentPID int, progress io.Writer) {
	var before edgeCounters
	if run.Path != PathDirect {
		before, _ = scrapeEdge(ctx, target.MetricsURL)
	}
	procBefore, procErr := readProcIf(target.PID)
	agentBefore, agentErr := readProcIf(agentPID)
	openLoop(ctx, cfg, run, to, host)
	if agentAfter, err := readProcIf(agentPID); err == nil && agentErr == nil {
		run.AgentCPU = agentAfter.cpu - agentBefore.cpu
	}
	if run.Path != PathDirect {
		after, drained := waitEdgeDrained(ctx, target.MetricsURL, before, int64(run.Sent), cfg.DrainTimeout)
		run.Events = &TunnelEvents{Requests: after.requests - before.requests, Published: after.published - before.published,
			Dropped: after.dropped - before.dropped, Drained: drained}
	}
	if procAfter, err := readProcIf(target.PID); err == nil && procErr == nil {
		run.CPU = procAfter.cpu - procBefore.cpu
	}
	through := run.Path
	if run.Agent != "" {
		through += " (" + run.Agent + ")"
	}
	fmt.Fprintf(progress, "%s %d/s %s: sent %d, errors %d, p50 %dµs p99 %dµs max %dµs\n", run.Mode, run.Rate, through, run.Sent, run.Errors, run.P50US, run.P99US, run.MaxUS)
}

func readProcIf(pid int) (procFigures, error) {
	if pid == 0 {
		return procFigures{}, errors.New("no pid")
	}
	return readProc(pid)
}

func sleepCtx(ctx context.Context, d time.Duration) {
	select {
	case <-ctx.Done():
	case <-time.After(d):
	}
}

// openLoop sends run.Rate requests a second for cfg.Duration, each
// started when due whatever the others do, and fills run.
func openLoop(ctx context.Context, cfg TunnelConfig, run *TunnelRun, target, host string) {
	tr := &http.Transport{DisableCompression: true, MaxIdleConnsPerHost: cfg.KeepAliveConns, MaxConnsPerHost: cfg.KeepAliveConns}
	if run.Mode == TunnelNewConn {
		tr = &http.Transport{DisableCompression: true, DisableKeepAlives: true}
	}
	defer tr.CloseIdleConnections()
	client := &http.Client{Transport: tr, Timeout: cfg.RequestTimeout}
	n := int(float64(run.Rate) * cfg.Duration.Seconds())
	interval := time.Second / time.Duration(run.Rate)
	run.Scheduled = n
	lat := make([]time.Duration, n)
	late := make([]time.Duration, n)
	lateAt := make([]bool, n)
	okAt := make([]bool, n)
	var answered, failed, notSent atomic.Int64
	var firstErr atomic.Pointer[string]
	setErr := func(s string) { firstErr.CompareAndSwap(nil, &s) }
	slots := make(chan struct{}, cfg.MaxInFlight)
	var wg sync.WaitGroup
	start := time.Now()
	for i := 0; i < n; {
		if ctx.Err() != nil {
			break
		}
		now := time.Since(start)
		for ; i < n && time.Duration(i)*interval <= now; i++ {
			due := start.Add(time.Duration(i) * interval)
			select {
			case slots <- struct{}{}:
			default:
				notSent.Add(1)
				setErr(fmt.Sprintf("%d requests in flight: not sent", cfg.MaxInFlight))
				continue
			}
			wg.Add(1)
			go func(i int, due time.Time) {
				defer wg.Done()
				defer func() { <-slots }()
				late[i], lateAt[i] = time.Since(due), true
				req, err := http.NewRequestWithContext(ctx, http.MethodGet, target, nil)
				if err != nil {
					failed.Add(1)
					setErr(err.Error())
					return
				}
				if host != "" {
					req.Host = host
				}
				resp, err := client.Do(req)
				if err != nil {
					failed.Add(1)
					setErr(err.Error())
					return
				}
				_, err = io.Copy(io.Discard, resp.Body)
				resp.Body.Close()
				answered.Add(1)
				if resp.StatusCode != http.StatusOK || err != nil {
					failed.Add(1)
					setErr(fmt.Sprintf("answered %d (%v)", resp.StatusCode, err))
					return
				}
				lat[i], okAt[i] = time.Since(due), true
			}(i, due)
		}
		if i < n {
			if wait := time.Duration(i)*interval - time.Since(start); wait > 0 {
				time.Sleep(wait)
			}
		}
	}
	wg.Wait()
	run.Elapsed = time.Since(start)
	run.Sent = n - int(notSent.Load())
	run.Answered = int(answered.Load())
	run.Errors = int(notSent.Load() + failed.Load())
	if p := firstErr.Load(); p != nil {
		run.FirstError = *p
	}
	var ok, started []time.Duration
	for i, d := range lat {
		if okAt[i] {
			ok = append(ok, d)
		}
		if lateAt[i] {
			started = append(started, late[i])
		}
	}
	if len(started) > 0 {
		slices.Sort(started)
		run.LateP99US = quantileOf(started, 0.99).Microseconds()
	}
	slices.Sort(ok)
	if len(ok) > 0 {
		run.P50US = quantileOf(ok, 0.50).Microseconds()
		run.P99US = quantileOf(ok, 0.99).Microseconds()
		run.MaxUS = ok[len(ok)-1].Microseconds()
	}
}

// quantileOf returns the q quantile of sorted, nearest rank.
func quantileOf(sorted []time.Duration, q float64) time.Duration {
	i := int(float64(len(sorted))*q+0.999999) - 1
	return sorted[max(0, min(i, len(sorted)-1))]
}

// serveSink accepts connections that send an 8-byte length and as many
// bytes, and answers each with a byte once it has them all.
func serveSink(ln net.Listener) {
	for {
		c, err := ln.Accept()
		if err != nil {
			return
		}
		go func() {
			defer c.Close()
			var hdr [8]byte
			if _, err := io.ReadFull(c, hdr[:]); err != nil {
				return
			}
			n := int64(binary.BigEndian.Uint64(hdr[:]))
			if got, err := io.CopyN(io.Discard, c, n); err != nil || got != n {
				return
			}
			_, _ = c.Write([]byte{1})
		}()
	}
}

// sendTCP writes n bytes to the sink at addr and waits for its answer.
func sendTCP(ctx context.Context, addr string, n int64) TunnelTCP {
	t := TunnelTCP{Bytes: n}
	start := time.Now()
	var d net.Dialer
	c, err := d.DialContext(ctx, "tcp", addr)
	if err != nil {
		t.Error = err.Error()
		return t
	}
	defer c.Close()
	_ = c.SetDeadline(time.Now().Add(5 * time.Minute))
	var hdr [8]byte
	binary.BigEndian.PutUint64(hdr[:], uint64(n))
	if _, err := c.Write(hdr[:]); err != nil {
		t.Error = err.Error()
		return t
	}
	chunk := bytes.Repeat([]byte("0123456789abcdef"), 16<<10) // 256 KiB
	for left := n; left > 0; {
		b := chunk[:min(int64(len(chunk)), left)]
		if _, err := c.Write(b); err != nil {
			t.Error = err.Error()
			return t
		}
		left -= int64(len(b))
	}
	var ack [1]byte
	if _, err := io.ReadFull(c, ack[:]); err != nil {
		t.Error = "waiting for the sink's answer: " + err.Error()
		return t
	}
	t.Elapsed = time.Since(start)
	t.BytesPerSecond = float64(n) / t.Elapsed.Seconds()
	return t
}

// edgeCounters are the edge's counters of events at one scrape.
type edgeCounters struct {
	requests, published, dropped, buffered int64
}

// scrapeEdge reads the edge's counters from /metrics.
func scrapeEdge(ctx context.Context, base string) (edgeCounters, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, strings.TrimSuffix(base, "/")+"/metrics", nil)
	if err != nil {
		return edgeCounters{}, err
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return edgeCounters{}, err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return edgeCounters{}, fmt.Errorf("/metrics answered %d", resp.StatusCode)
	}
	var c edgeCounters
	sc := bufio.NewScanner(resp.Body)
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	for sc.Scan() {
		name, value, ok := parseMetricLine(sc.Text())
		if !ok {
			continue
		}
		switch name {
		case "sluice_edge_http_requests_total":
			c.requests += value
		case "sluice_edge_events_published_total":
			c.published += value
		case "sluice_edge_events_dropped_total":
			c.dropped += value
		case "sluice_edge_events_buffered":
			c.buffered += value
		}
	}
	return c, sc.Err()
}

// parseMetricLine returns the name (without labels) and the value of a
// line of the Prometheus text format.
func parseMetricLine(line string) (string, int64, bool) {
	if line == "" || line[0] == '#' {
		return "", 0, false
	}
	i := strings.LastIndexByte(line, ' ')
	if i < 0 {
		return "", 0, false
	}
	v, err := strconv.ParseFloat(line[i+1:], 64)
	if err != nil {
		return "", 0, false
	}
	name := line[:i]
	if j := strings.IndexByte(name, '{'); j >= 0 {
		name = name[:j]
	}
	return strings.TrimSpace(name), int64(v), true
}

// waitEdgeDrained waits, up to timeout, for the edge to have counted want
// requests since before and to hold no event in its buffer, and returns
// its counters then.
func waitEdgeDrained(ctx context.Context, metrics string, before edgeCounters, want int64, timeout time.Duration) (edgeCounters, bool) {
	deadline := time.Now().Add(timeout)
	var last edgeCounters
	stable := 0
	for {
		c, err := scrapeEdge(ctx, metrics)
		if err == nil {
			if c.buffered == 0 && c.published-before.published >= c.requests-before.requests && (c.requests-before.requests >= want || c == last) {
				stable++
			} else {
				stable = 0
			}
			last = c
			if stable >= 2 {
				return c, true
			}
		}
		if time.Now().After(deadline) || ctx.Err() != nil {
			return last, last.buffered == 0
		}
		sleepCtx(ctx, 200*time.Millisecond)
	}
}

// tunnelAPI calls the API of the target.
type tunnelAPI struct{ base, token string }

func (a tunnelAPI) post(ctx context.Context, path string, in, out any) error {
	return a.call(ctx, http.MethodPost, path, in, out)
}

// call sends in, JSON, with the method to the API's path, and decodes its
// answer into out when not nil.
func (a tunnelAPI) call(ctx context.Context, method, path string, in, out any) error {
	b, _ := json.Marshal(in)
	req, err := http.NewRequestWithContext(ctx, method, a.base+path, bytes.NewReader(b))
	if err != nil {
		return err
	}
	req.Header.Set("Authorization", "Bearer "+a.token)
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Service-Version", "2")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	answer, _ := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	if resp.StatusCode != http.StatusCreated && resp.StatusCode != http.StatusOK {
		return fmt.Errorf("%s %s: %d %s", method, path, resp.StatusCode, bytes.TrimSpace(answer))
	}
	if out != nil {
		return json.Unmarshal(answer, out)
	}
	return nil
}

// credential creates a tunnel credential and returns its token.
func (a tunnelAPI) credential(ctx context.Context) (string, error) {
	var cred struct{ Token string }
	if err := a.post(ctx, "/credentials", map[string]any{"description": "sluice-bench tunnel"}, &cred); err != nil {
		return "", fmt.Errorf("creating a credential: %w", err)
	}
	if cred.Token == "" {
		return "", errors.New("creating a credential: no token in the answer")
	}
	return cred.Token, nil
}

// idleSessions connects cfg.IdleSessions agents, each with an HTTP
// endpoint of a random name, and measures the process's resident memory
// before and after; it disconnects them before it returns.
func idleSessions(ctx context.Context, cfg TunnelConfig, target TunnelTarget, api tunnelAPI, upstream string, progress io.Writer) TunnelMemory {
	m := TunnelMemory{Sessions: cfg.IdleSessions}
	// The credentials, one per account of SessionsPerAccount sessions.
	var tokens []string
	for len(tokens)*cfg.SessionsPerAccount < cfg.IdleSessions {
		a := api
		if target.NewAccount != nil {
			key, err := target.NewAccount(ctx)
			if err != nil {
				m.Error = "making an account: " + err.Error()
				return m
			}
			a = tunnelAPI{base: api.base, token: key}
		}
		tok, err := a.credential(ctx)
		if err != nil {
			m.Error = err.Error()
			return m
		}
		tokens = append(tokens, tok)
		if target.NewAccount == nil {
			break
		}
	}
	m.Accounts = len(tokens)
	sleepCtx(ctx, 2*time.Second)
	before, err := readProcIf(target.PID)
	if err != nil {
		m.Error = err.Error()
		return m
	}
	m.RSSBefore = before.rss
	agents := make([]ngrok.Agent, cfg.IdleSessions)
	var connected atomic.Int64
	var firstErr atomic.Pointer[string]
	work := make(chan int)
	var wg sync.WaitGroup
	for range 16 {
		wg.Go(func() {
			for i := range work {
				tok := tokens[min(i/cfg.SessionsPerAccount, len(tokens)-1)]
				a, err := ngrok.NewAgent(ngrok.WithAuthtoken(tok), ngrok.WithAgentConnectURL(target.Agents), ngrok.WithAgentConnectCAs(target.AgentsCAs))
				if err == nil {
					cctx, cancel := context.WithTimeout(ctx, 30*time.Second)
					_, err = a.Forward(cctx, ngrok.WithUpstream("http://"+upstream), ngrok.WithURL("http://"))
					cancel()
				}
				if err != nil {
					s := err.Error()
					firstErr.CompareAndSwap(nil, &s)
					if a != nil {
						_ = a.Disconnect()
					}
					continue
				}
				agents[i] = a
				connected.Add(1)
			}
		})
	}
	for i := range cfg.IdleSessions {
		work <- i
	}
	close(work)
	wg.Wait()
	m.Connected = int(connected.Load())
	if p := firstErr.Load(); p != nil {
		m.Error = *p
	}
	fmt.Fprintf(progress, "%d idle sessions connected of %d\n", m.Connected, m.Sessions)
	sleepCtx(ctx, 3*time.Second)
	after, err := readProcIf(target.PID)
	if err == nil {
		m.RSSAfter = after.rss
		if m.Connected > 0 {
			m.KiBPerSession = (float64(m.RSSAfter) - float64(m.RSSBefore)) / 1024 / float64(m.Connected)
		}
	}
	var dwg sync.WaitGroup
	for _, a := range agents {
		if a != nil {
			dwg.Go(func() { _ = a.Disconnect() })
		}
	}
	dwg.Wait()
	return m
}
