package loadgen

import (
	"context"
	"crypto/x509"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"sync"

	"golang.ngrok.com/ngrok/v2"
)

// SDKAgentConfig is what the agent of the Go SDK that ServeSDKAgent runs
// forwards, and where it connects.
type SDKAgentConfig struct {
	// Authtoken is the tunnel credential's token; ServerAddr the edge's
	// agents listener, HOST:PORT; CAFile the PEM file of the CA it
	// trusts there.
	Authtoken  string
	ServerAddr string
	CAFile     string
	// HTTPUpstream (a URL) is served at http://HTTPHost, and TCPUpstream
	// (HOST:PORT) at a tcp:// address of the edge's, when not empty.
	HTTPUpstream string
	HTTPHost     string
	TCPUpstream  string
	// ExtraTunnels more HTTP endpoints forward to HTTPUpstream, each at
	// a random name under ExtraDomain, or one the edge picks when
	// ExtraDomain is empty.
	ExtraTunnels int
	ExtraDomain  string
}

// Validate reports what is missing.
func (c SDKAgentConfig) Validate() error {
	var errs []error
	if c.Authtoken == "" || c.ServerAddr == "" || c.CAFile == "" {
		errs = append(errs, errors.New("the SDK agent needs an authtoken, the server address and the CA file"))
	}
	if c.HTTPUpstream == "" || c.HTTPHost == "" {
		errs = append(errs, errors.New("the SDK agent needs the HTTP upstream and its host name"))
	}
	if c.ExtraTunnels < 0 {
		errs = append(errs, fmt.Errorf("extra tunnels %d: want 0 or more", c.ExtraTunnels))
	}
	return errors.Join(errs...)
}

// SDKAgentBound is the line ServeSDKAgent prints once every endpoint is
// bound.
type SDKAgentBound struct {
	HTTPURL string `json:"http_url"`
	TCPURL  string `json:"tcp_url,omitempty"`
	// Tunnels counts the endpoints bound, HTTP, TCP and extra.
	Tunnels int `json:"tunnels"`
}

// ServeSDKAgent runs an agent of the Go SDK as a process of its own
// would, so that its CPU time and memory can be measured apart from the
// bench's: it binds cfg's endpoints, writes an SDKAgentBound line to out
// once they all are, and serves until ctx ends or stop (its standard
// input) does.
func ServeSDKAgent(ctx context.Context, cfg SDKAgentConfig, stop io.Reader, out io.Writer) error {
	if err := cfg.Validate(); err != nil {
		return err
	}
	pem, err := os.ReadFile(cfg.CAFile)
	if err != nil {
		return fmt.Errorf("the CA: %w", err)
	}
	pool := x509.NewCertPool()
	if !pool.AppendCertsFromPEM(pem) {
		return fmt.Errorf("%s holds no PEM certificate", cfg.CAFile)
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	go func() {
		_, _ = io.Copy(io.Discard, stop)
		cancel()
	}()
	agent, err := ngrok.NewAgent(ngrok.WithAuthtoken(cfg.Authtoken), ngrok.WithAgentConnectURL(cfg.ServerAddr), ngrok.WithAgentConnectCAs(pool))
	if err != nil {
		return err
	}
	defer agent.Disconnect() //nolint:errcheck

	bound := SDKAgentBound{}
	fwd, err := agent.Forward(ctx, ngrok.WithUpstream(cfg.HTTPUpstream), ngrok.WithURL("http://"+cfg.HTTPHost))
	if err != nil {
		return fmt.Errorf("binding http://%s: %w", cfg.HTTPHost, err)
	}
	bound.HTTPURL, bound.Tunnels = fwd.URL().String(), 1
	if cfg.TCPUpstream != "" {
		fwd, err := agent.Forward(ctx, ngrok.WithUpstream("tcp://"+cfg.TCPUpstream), ngrok.WithURL("tcp://"))
		if err != nil {
			return fmt.Errorf("binding a TCP endpoint: %w", err)
		}
		bound.TCPURL = fwd.URL().String()
		bound.Tunnels++
	}
	if err := bindExtra(ctx, agent, cfg); err != nil {
		return err
	}
	bound.Tunnels += cfg.ExtraTunnels
	line, _ := json.Marshal(bound)
	if _, err := fmt.Fprintf(out, "%s\n", line); err != nil {
		return err
	}
	<-ctx.Done()
	return nil
}

// bindExtra binds cfg.ExtraTunnels HTTP endpoints, eight at a time.
func bindExtra(ctx context.Context, agent ngrok.Agent, cfg SDKAgentConfig) error {
	work := make(chan int)
	var (
		wg       sync.WaitGroup
		mu       sync.Mutex
		firstErr error
	)
	for range min(8, cfg.ExtraTunnels) {
		wg.Go(func() {
			for range work {
				u := "http://"
				if cfg.ExtraDomain != "" {
					u += "x" + randomHex(6) + "." + cfg.ExtraDomain
				}
				if _, err := agent.Forward(ctx, ngrok.WithUpstream(cfg.HTTPUpstream), ngrok.WithURL(u)); err != nil {
					mu.Lock()
					if firstErr == nil {
						firstErr = fmt.Errorf("binding an extra endpoint %s: %w", u, err)
					}
					mu.Unlock()
				}
			}
		})
	}
	for i := range cfg.ExtraTunnels {
		work <- i
	}
	close(work)
	wg.Wait()
	return firstErr
}
