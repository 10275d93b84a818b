package edge_test

import (
	"context"
	"io"
	"net"
	"net/http"
	"sync"
	"testing"
	"time"

	"golang.ngrok.com/ngrok/v2"

	"github.com/sluicehq/sluice/edge"
	"github.com/sluicehq/sluice/internal/edgetest"
	"github.com/sluicehq/sluice/schemas"
)

// discardEvents counts the events it is given and keeps none, so that a
// benchmark's memory does not grow with b.N.
type discardEvents struct {
	mu sync.Mutex
	n  int
}

func (d *discardEvents) Publish(schemas.Encoded) {
	d.mu.Lock()
	d.n++
	d.mu.Unlock()
}

// BenchmarkEdgeHTTPRequest measures one HTTP request through the edge and
// the Go SDK's agent to a local server, all in this process, against the
// same request sent to the server directly: on a kept-alive connection,
// and on a new connection a request. The figures of interest are the
// tunnel's time and allocations over direct's; the profile
// (-cpuprofile) shows the edge's share among the client's, the agent's
// and the server's.
func BenchmarkEdgeHTTPRequest(b *testing.B) {
	events := &discardEvents{}
	te := edgetest.Start(b, func(c *edge.Config) {
		c.Events = events
		c.Limits.RequestRate = -1 // the benchmark measures the path, not the bound
	})
	account := schemas.NewID(schemas.PrefixAccount)
	te.Reserve(account, "*.bench.example.test")
	a, err := ngrok.NewAgent(ngrok.WithAuthtoken(te.Credential(account)), ngrok.WithAgentConnectURL(te.Agents), ngrok.WithAgentConnectCAs(te.CA.Pool()))
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { _ = a.Disconnect() })
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	ln, err := a.Listen(ctx, ngrok.WithURL("http://demo.bench.example.test"))
	if err != nil {
		b.Fatal(err)
	}
	answer := []byte("0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef")
	handler := http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { _, _ = w.Write(answer) })
	tunnelSrv := &http.Server{Handler: handler}
	go func() { _ = tunnelSrv.Serve(ln) }()
	b.Cleanup(func() { _ = tunnelSrv.Close() })
	direct, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		b.Fatal(err)
	}
	directSrv := &http.Server{Handler: handler}
	go func() { _ = directSrv.Serve(direct) }()
	b.Cleanup(func() { _ = directSrv.Close() })

	paths := []struct{ name, addr, host string }{
		{"direct", direct.Addr().String(), "direct.test"},
		{"tunnel", te.HTTPAddr, "demo.bench.example.test"},
	}
	for _, mode := range []string{"keep-alive", "new-connection"} {
		for _, p := range paths {
			b.Run(mode+"/"+p.name, func(b *testing.B) {
				transport := &http.Transport{DisableKeepAlives: mode == "new-connection", MaxIdleConnsPerHost: 1}
				defer transport.CloseIdleConnections()
				client := &http.Client{Transport: transport}
				req, err := http.NewRequest(http.MethodGet, "http://"+p.addr+"/bench", nil)
				if err != nil {
					b.Fatal(err)
				}
				req.Host = p.host
				b.ReportAllocs()
				for b.Loop() {
					resp, err := client.Do(req)
					if err != nil {
						b.Fatal(err)
					}
					n, _ := io.Copy(io.Discard, resp.Body)
					_ = resp.Body.Close()
					if resp.StatusCode != http.StatusOK || n != int64(len(answer)) {
						b.Fatalf("answer %d with %d bytes, want 200 with %d", resp.StatusCode, n, len(answer))
					}
				}
			})
		}
	}
}
