package main

import (
	"os"
	"testing"
	"time"

	"github.com/sluicehq/sluice/pipeline"
)

// stallWindow is how long TestClusterRouteStallsWithoutRepull waits for
// delivery to go on after the node dies: twice the repull's 10 s, which
// TestClusterLosesNothing shows is enough with it.
const stallWindow = 20 * time.Second

// TestClusterRouteStallsWithoutRepull shows why a route's worker pulls
// anew when it receives nothing for a while (pipeline's
// DeliveryConfig.RepullAfter): with that turned off (--repull-after -1s),
// two `sluice serve` processes delivering a route from a 3-node NATS
// cluster under steady load stop delivering for good when the node leading
// the route's consumer is killed with SIGKILL. TestClusterLosesNothing
// runs the same with the repull, and delivery goes on.
//
// The node dies once 2,500 events are published, when the workers'
// iterators have had their first pull requests (1,000 events) filled:
// the consumer's followers then no longer track the inbox of the requests
// still open (they forget a reply subject when one of its requests is
// filled), so the new leader sends them no 409 Leadership Change. Killed
// after 1,500 events, the 409 comes and delivery goes on within about 7 s
// even without the repull (3 runs of 3 on nats-server v2.15.2).
//
// The test fails if delivery goes on without the repull: then nats.go
// (v1.55 today) or nats-server (v2.15) recover a lost pull request by
// themselves, and the repull can go. It checks the behaviour of those
// dependencies, not sluice's, and depends on when their pull requests are
// filled, so it runs only when SLUICE_UPSTREAM_TESTS is set, as on an
// upgrade of either (make upstream-test):
//
//	SLUICE_UPSTREAM_TESTS=1 go test ./cmd/sluice -run TestClusterRouteStallsWithoutRepull -v
//
// TestClusterLosesNothing, which runs in every test run, guards sluice
// itself.
func TestClusterRouteStallsWithoutRepull(t *testing.T) {
	if testing.Short() || os.Getenv("SLUICE_UPSTREAM_TESTS") == "" {
		t.Skip("checks nats.go and nats-server, not sluice: set SLUICE_UPSTREAM_TESTS=1 to run it")
	}
	t.Parallel()
	sluiceBin, natsBin := buildSluice(t), buildNATSServer(t)
	cluster := startNATSCluster(t, natsBin)
	emu := startEmulator(t)
	streamARN := createKinesisStream(t, emu, "repull")

	env := append(emu.Env(), "SLUICE_NATS_URL="+cluster.urls(), "SLUICE_REPLICAS=3", "SLUICE_ACK_WAIT="+clusterAckWait.String(), "SLUICE_REPULL_AFTER=-1s")
	a := startServe(t, sluiceBin, t.TempDir(), append(env, "SLUICE_BOOTSTRAP_API_KEY="+crashToken)...)
	b := startServe(t, sluiceBin, t.TempDir(), env...)
	consumer := createCrashRoute(t, a.url, streamARN)
	a.waitLog(t, "route delivering")
	b.waitLog(t, "route delivering")
	_, js := cluster.connect(t)

	// Enough events for the publishing to go on through the window; the
	// node dies after 2,500.
	events := newCrashEvents(clusterRate * int(stallWindow/time.Second+10))
	pub := startPacedPublisher(t, newServerSet(a.url, b.url), events, clusterBatch, clusterRate)
	pub.waitAcked(t, 5*clusterRate, 30*time.Second)
	leader, leadsStream := cluster.consumerLeader(t, js, pipeline.EventsStream, consumer)
	leader.kill(t)
	deliveredAtKill := countSelected(kinesisByEventID(t, emu, "repull"), events)
	t.Logf("killed NATS node %s, the route consumer's leader (the events stream's too: %t), with %d events published, %d delivered",
		leader.name, leadsStream, pub.acked(), deliveredAtKill)
	took, ok := resumesWithin(stallWindow, func() bool {
		return countSelected(kinesisByEventID(t, emu, "repull"), events) >= deliveredAtKill+clusterRate
	})
	delivered := countSelected(kinesisByEventID(t, emu, "repull"), events)
	if ok {
		t.Fatalf("without the repull, %d more events were delivered %s after the NATS node was killed: nats.go or nats-server now recover by themselves, and pipeline's DeliveryConfig.RepullAfter can go",
			clusterRate, took.Round(100*time.Millisecond))
	}
	t.Logf("without the repull, delivery stalled: %d delivered %s after the kill (%d at it), %d published; %s",
		delivered, took.Round(100*time.Millisecond), deliveredAtKill, pub.acked(), describeConsumer(js, consumer))
}
