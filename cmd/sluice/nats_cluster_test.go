package main

import (
	"context"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/sluicehq/sluice/internal/buildtest"
)

// natsCluster is a 3-node NATS JetStream cluster of nats-server processes
// on loopback, each storing in a directory of the test's, so that a node
// can be killed with SIGKILL for real.
type natsCluster struct {
	nodes []*natsNode
}

// natsNode is one nats-server process of a natsCluster.
type natsNode struct {
	name      string
	clientURL string
	cmd       *exec.Cmd
	exited    chan struct{} // closed once the process is gone
}

// buildNATSServer builds the nats-server binary of the module sluice
// depends on, once per test binary (buildtest.Binary).
func buildNATSServer(t *testing.T) string {
	t.Helper()
	return buildtest.Binary(t, "github.com/nats-io/nats-server/v2")
}

// startNATSCluster starts three nats-server processes of bin clustered
// with each other, and waits until the cluster's JetStream answers. Each
// is killed when the test ends.
func startNATSCluster(t *testing.T, bin string) *natsCluster {
	t.Helper()
	const size = 3
	clientPorts, routePorts := freePorts(t, size), freePorts(t, size)
	var routes []string
	for _, p := range routePorts {
		routes = append(routes, fmt.Sprintf("nats-route://127.0.0.1:%d", p))
	}
	c := &natsCluster{}
	for i := range size {
		name := fmt.Sprintf("n%d", i+1)
		dir := t.TempDir()
		// sluice needs max_payload of at least 1088 KiB
		// (natsserver.RequiredMaxPayload); 4MB as the embedded server.
		config := fmt.Sprintf(`server_name: %s
listen: 127.0.0.1:%d
max_payload: 4MB
jetstream {
  store_dir: %q
  max_memory_store: 256MB
  max_file_store: 2GB
}
cluster {
  name: sluice-test
  listen: 127.0.0.1:%d
  routes: [%s]
}
`, name, clientPorts[i], dir, routePorts[i], strings.Join(routes, ", "))
		file := filepath.Join(dir, "nats.conf")
		if err := os.WriteFile(file, []byte(config), 0o600); err != nil {
			t.Fatal(err)
		}
		node := &natsNode{name: name, clientURL: fmt.Sprintf("nats://127.0.0.1:%d", clientPorts[i]), exited: make(chan struct{})}
		node.cmd = exec.Command(bin, "--config", file)
		if err := node.cmd.Start(); err != nil {
			t.Fatal(err)
		}
		go func() {
			_ = node.cmd.Wait()
			close(node.exited)
		}()
		t.Cleanup(func() {
			_ = node.cmd.Process.Kill()
			<-node.exited
		})
		c.nodes = append(c.nodes, node)
	}
	c.waitJetStream(t)
	return c
}

// freePorts returns n TCP ports free on loopback a moment ago.
func freePorts(t *testing.T, n int) []int {
	t.Helper()
	var ports []int
	var listeners []net.Listener
	for range n {
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		listeners = append(listeners, ln)
		ports = append(ports, ln.Addr().(*net.TCPAddr).Port)
	}
	for _, ln := range listeners {
		ln.Close()
	}
	return ports
}

// urls returns the client URLs of every node, comma-separated, as
// --nats-url takes them.
func (c *natsCluster) urls() string {
	var urls []string
	for _, n := range c.nodes {
		urls = append(urls, n.clientURL)
	}
	return strings.Join(urls, ",")
}

// connect connects to the cluster, reconnecting to any node as long as the
// test runs.
func (c *natsCluster) connect(t *testing.T) (*nats.Conn, jetstream.JetStream) {
	t.Helper()
	nc, err := nats.Connect(c.urls(), nats.MaxReconnects(-1), nats.ReconnectWait(100*time.Millisecond))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(nc.Close)
	js, err := jetstream.New(nc)
	if err != nil {
		t.Fatal(err)
	}
	return nc, js
}

// waitJetStream waits until each node answers JetStream requests: the
// cluster has formed and elected its meta leader.
func (c *natsCluster) waitJetStream(t *testing.T) {
	t.Helper()
	for _, n := range c.nodes {
		nc, err := nats.Connect(n.clientURL, nats.RetryOnFailedConnect(true), nats.MaxReconnects(-1), nats.ReconnectWait(50*time.Millisecond))
		if err != nil {
			t.Fatal(err)
		}
		js, err := jetstream.New(nc)
		if err != nil {
			t.Fatal(err)
		}
		var infoErr error
		pollUntil(t, 30*time.Second, 100*time.Millisecond, "JetStream of NATS node "+n.name, func() bool {
			ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
			defer cancel()
			_, infoErr = js.AccountInfo(ctx)
			return infoErr == nil
		}, func() string { return fmt.Sprintf("last error: %v", infoErr) })
		nc.Close()
	}
}

// consumerLeader returns the node that leads the replicas of a
// consumer of stream, and whether it leads the stream's too.
func (c *natsCluster) consumerLeader(t *testing.T, js jetstream.JetStream, stream, consumer string) (node *natsNode, leadsStream bool) {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), 5*time.Second)
	defer cancel()
	s, err := js.Stream(ctx, stream)
	if err != nil {
		t.Fatalf("stream %s: %v", stream, err)
	}
	cons, err := s.Consumer(ctx, consumer)
	if err != nil {
		t.Fatalf("consumer %s: %v", consumer, err)
	}
	leader := cons.CachedInfo().Cluster
	if leader == nil || s.CachedInfo().Cluster == nil {
		t.Fatalf("stream %s or its consumer %s has no cluster information", stream, consumer)
	}
	for _, n := range c.nodes {
		if n.name == leader.Leader {
			return n, n.name == s.CachedInfo().Cluster.Leader
		}
	}
	t.Fatalf("consumer %s is led by %q, not a node of the cluster", consumer, leader.Leader)
	return nil, false
}

// kill sends SIGKILL to the node and waits until it is gone.
func (n *natsNode) kill(t *testing.T) {
	t.Helper()
	if err := n.cmd.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	select {
	case <-n.exited:
	case <-time.After(10 * time.Second):
		t.Fatalf("nats-server %s still running 10s after SIGKILL", n.name)
	}
}
