package main

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/sluicehq/sluice/internal/emulator"
	"github.com/sluicehq/sluice/internal/emulator/emulatortest"
	"github.com/sluicehq/sluice/pipeline"
)

// The cluster test's sizes: clusterEvents at clusterRate events a second,
// in batches of clusterBatch, about 32 s of steady load.
const (
	clusterEvents = 16_000
	clusterRate   = 500
	clusterBatch  = 100
	// clusterAckWait is the routes' AckWait (serve's --ack-wait): the
	// events the killed sluice held go to the other process once it has
	// passed.
	clusterAckWait = 5 * time.Second
	// clusterRepullAfter is serve's --repull-after: how long delivery
	// may stall after the node leading the route's consumer is killed,
	// the workers' pull requests gone with it. At the default, 10 s, the
	// stall could last until past the middle of this load, when the test
	// kills a sluice process; at 2 s each kill has its own stretch of it.
	clusterRepullAfter = 2 * time.Second
)

// TestClusterLosesNothing runs two `sluice serve` processes against a
// 3-node NATS JetStream cluster (streams and key-value store with 3
// replicas) delivering to a Kinesis stream of the emulator, under steady
// load sent to either process. It kills the events stream's leader node
// with SIGKILL, later one sluice process, and starts that process again:
// every event the API accepted and the subscription selects is delivered,
// none it does not select is, and the duplicates are counted, reported and
// bounded.
func TestClusterLosesNothing(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs nats-server and sluice, kills them")
	}
	t.Parallel()
	began := time.Now()
	sluiceBin, natsBin := buildSluice(t), buildNATSServer(t)
	cluster := startNATSCluster(t, natsBin)
	emu := startEmulator(t)
	streamARN := createKinesisStream(t, emu, "cluster")

	env := append(emu.Env(), "SLUICE_NATS_URL="+cluster.urls(), "SLUICE_REPLICAS=3", "SLUICE_ACK_WAIT="+clusterAckWait.String(), "SLUICE_REPULL_AFTER="+clusterRepullAfter.String())
	a := startServe(t, sluiceBin, t.TempDir(), append(env, "SLUICE_BOOTSTRAP_API_KEY="+crashToken)...)
	b := startServe(t, sluiceBin, t.TempDir(), env...)
	consumer := createCrashRoute(t, a.url, streamARN)
	a.waitLog(t, "route delivering")
	b.waitLog(t, "route delivering")
	_, js := cluster.connect(t)

	events := newCrashEvents(clusterEvents)
	servers := newServerSet(a.url, b.url)
	pub := startPacedPublisher(t, servers, events, clusterBatch, clusterRate)

	// The node leading the route's consumer goes once delivery is under
	// way.
	pub.waitAcked(t, clusterEvents/8, 30*time.Second)
	leader, leadsStream := cluster.consumerLeader(t, js, pipeline.EventsStream, consumer)
	leader.kill(t)
	deliveredAtKill := countSelected(kinesisByEventID(t, emu, "cluster"), events)
	t.Logf("killed NATS node %s, the route consumer's leader (the events stream's too: %t), with %d events published, %d delivered",
		leader.name, leadsStream, pub.acked(), deliveredAtKill)
	// Delivery goes on within seconds: the pull requests of both workers
	// died with the node if it led the route's consumer, and a worker that
	// receives nothing for clusterRepullAfter pulls anew (pipeline's
	// DeliveryConfig.RepullAfter; TestClusterRouteStallsWithoutRepull shows
	// delivery stalled for good without it).
	took, ok := resumesWithin(30*time.Second, func() bool {
		return countSelected(kinesisByEventID(t, emu, "cluster"), events) >= deliveredAtKill+clusterRate
	})
	if !ok {
		t.Fatalf("delivery stalled after NATS node %s was killed: %d delivered %s later, %d published; %s",
			leader.name, countSelected(kinesisByEventID(t, emu, "cluster"), events), took.Round(100*time.Millisecond), pub.acked(), describeConsumer(js, consumer))
	}
	t.Logf("%d more events delivered %s after the NATS node was killed", clusterRate, took.Round(100*time.Millisecond))

	// Then a sluice process, once half the load is sent and delivery has
	// gone on for a few seconds (but with a quarter of the load left), to
	// be started again once the other alone took a few batches.
	pub.waitAcked(t, min(max(clusterEvents/2, pub.acked()+4*clusterRate), clusterEvents*3/4), 60*time.Second)
	b.kill(t)
	atKill := pub.acked()
	t.Logf("killed sluice process b with %d events published, %d delivered", atKill, countSelected(kinesisByEventID(t, emu, "cluster"), events))
	pub.waitAcked(t, atKill+5*clusterBatch, 30*time.Second)
	b = startServe(t, sluiceBin, t.TempDir(), env...)
	waitReady(t, b.url)
	servers.set(1, b.url)
	restarted := time.Now()

	if err := pub.wait(90 * time.Second); err != nil {
		t.Fatalf("publishing: %v\nsluice a:\n%s\nsluice b:\n%s", err, a.tail(), b.tail())
	}
	waitRouteDone(t, js, consumer, emu, "cluster", events, a, b)
	t.Logf("every selected event delivered and nothing left to acknowledge %s after sluice b started again",
		time.Since(restarted).Round(100*time.Millisecond))
	checkCrashDelivery(t, kinesisEnvelopes(t, emu, "cluster"), events, "", 2*crashMaxDuplicates)
	t.Logf("requests to POST /events that failed and were sent again: %d; run time %s", pub.resent(), time.Since(began).Round(100*time.Millisecond))
}

// waitRouteDone waits until every selected event is in the emulator's
// stream and the route's consumer has nothing left to deliver or to have
// acknowledged, so that no duplicate is still to come.
func waitRouteDone(t *testing.T, js jetstream.JetStream, consumer string, emu *emulatortest.Emulator, stream string, events []crashEvent, procs ...*serveProcess) {
	t.Helper()
	var (
		missing int
		info    *jetstream.ConsumerInfo
		err     error
	)
	pollUntil(t, 90*time.Second, 250*time.Millisecond, "every selected event in the stream and the route's consumer done", func() bool {
		missing = selectedIn(events) - countSelected(kinesisByEventID(t, emu, stream), events)
		if missing > 0 {
			return false
		}
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		var c jetstream.Consumer
		if c, err = js.Consumer(ctx, pipeline.EventsStream, consumer); err != nil {
			return false
		}
		info = c.CachedInfo()
		return info.NumPending == 0 && info.NumAckPending == 0
	}, func() string {
		s := fmt.Sprintf("%d selected events missing; consumer %+v (error %v)", missing, info, err)
		for i, p := range procs {
			s += fmt.Sprintf("\nlast lines of sluice %d:\n%s", i, p.tail())
		}
		return s
	})
}

// The outage test's load: outageRate events a second in batches of
// outageBatch, outagePhase long in each phase.
const (
	outageRate  = 500
	outageBatch = 50
	outagePhase = 10 * time.Second
)

// TestBrokenDestinationDoesNotSlowAnother delivers a subscription to a
// healthy Kinesis stream of the emulator, first alone (the baseline), then
// with a second destination on the same subscription whose stream answers
// AccessDenied to every call for the whole test. The healthy destination's
// throughput with the broken one beside it is at least 90% of the
// baseline's.
//
// The method, robust on a small, busy machine: each phase publishes at the
// same fixed rate, well below what one process delivers, so that the
// healthy route keeps up unless the broken one takes from it; the
// throughput of a phase is the events that reached the healthy stream (by
// the emulator's arrival time) between a second after the phase's first
// publish and its last publish, per second. A route that shares anything
// that the broken one holds (a worker, a connection, a NATS pull) falls
// behind and shows as fewer events in the window, and as higher latency
// (arrival minus the first sending of the event's batch), which is logged.
func TestBrokenDestinationDoesNotSlowAnother(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs sluice serve")
	}
	t.Parallel()
	began := time.Now()
	bin := buildSluice(t)
	emu := startEmulator(t)
	healthyARN, brokenARN := createKinesisStream(t, emu, "healthy"), createKinesisStream(t, emu, "broken")
	if err := emu.SetFault(emulator.Fault{Service: emulator.ServiceKinesis, Resource: "broken", AccessDenied: true}); err != nil {
		t.Fatal(err)
	}
	p := startServe(t, bin, t.TempDir(), append(emu.Env(), "SLUICE_BOOTSTRAP_API_KEY="+crashToken)...)
	healthyID := createByAPI(t, p.url+"/event_destinations", kinesisDestination(healthyARN))
	brokenID := createByAPI(t, p.url+"/event_destinations", kinesisDestination(brokenARN))
	subID := createByAPI(t, p.url+"/event_subscriptions", fmt.Sprintf(
		`{"description":"https requests","sources":[{"type":"http_request_complete.v0","filter":"ev.conn.server_port == 443"}],"destination_ids":[%q]}`, healthyID))
	waitRouteDelivering(t, p, healthyID)
	servers := newServerSet(p.url)

	baseline := measurePhase(t, emu, "healthy", servers)
	t.Logf("baseline, healthy destination alone: %s", baseline)

	if code, out := request(t, http.MethodPatch, p.url+"/event_subscriptions/"+subID, crashToken,
		fmt.Sprintf(`{"destination_ids":[%q,%q]}`, healthyID, brokenID)); code != http.StatusOK {
		t.Fatalf("adding the broken destination: %d %s", code, out)
	}
	waitRouteDelivering(t, p, brokenID)
	withBroken := measurePhase(t, emu, "healthy", servers)
	t.Logf("with the broken destination beside it: %s", withBroken)

	broken := emu.Counters(emulator.ServiceKinesis, "broken")
	if records, _ := emu.KinesisRecords("broken"); len(records) > 0 || broken.Errors == 0 {
		t.Fatalf("the broken destination was not down: %d records, counters %+v", len(records), broken)
	}
	t.Logf("the broken destination refused %d of %d calls; run time %s", broken.Errors, broken.Calls, time.Since(began).Round(100*time.Millisecond))
	if ratio := withBroken.throughput / baseline.throughput; ratio < 0.9 {
		t.Errorf("the healthy destination's throughput dropped to %.0f%% of the baseline with a broken destination beside it: %.0f events/s, baseline %.0f", 100*ratio, withBroken.throughput, baseline.throughput)
	}
}

// The config test's load: configEvents at configRate events a second, in
// batches of configBatch, about 15 s; the change comes at configChangeAt.
const (
	configEvents   = 6000
	configRate     = 400
	configBatch    = 40
	configChangeAt = configEvents / 4
	// widenedFilter selects every event of the test, where the
	// subscription's first filter selects those on port 443.
	widenedFilter = "ev.conn.server_port == 443 || ev.conn.server_port == 80"
)

// TestConfigChangeSurvivesRestart kills the only `sluice serve` (embedded
// NATS) with SIGKILL as soon as a change to its subscription is answered,
// under steady load, and starts it again on the same data dir: the change
// (a filter widened to every event, and a second destination) is in force
// after the restart, and nothing is lost. The first destination has every
// event the old filter selects, and every event first sent after the
// change was answered; the added one has every event first sent after the
// change was answered. Events sent while the change was in flight may go
// either way.
func TestConfigChangeSurvivesRestart(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the binary, kills and restarts sluice serve")
	}
	t.Parallel()
	began := time.Now()
	bin := buildSluice(t)
	emu := startEmulator(t)
	firstARN, addedARN := createKinesisStream(t, emu, "config-first"), createKinesisStream(t, emu, "config-added")
	dataDir := t.TempDir()
	env := append(emu.Env(), "SLUICE_NATS_LISTEN=127.0.0.1:0", "SLUICE_ACK_WAIT="+crashAckWait.String())
	first := startServe(t, bin, dataDir, append(env, "SLUICE_BOOTSTRAP_API_KEY="+crashToken)...)
	firstID := createByAPI(t, first.url+"/event_destinations", kinesisDestination(firstARN))
	addedID := createByAPI(t, first.url+"/event_destinations", kinesisDestination(addedARN))
	subID := createByAPI(t, first.url+"/event_subscriptions", fmt.Sprintf(
		`{"description":"https requests","sources":[{"type":"http_request_complete.v0","filter":"ev.conn.server_port == 443"}],"destination_ids":[%q]}`, firstID))
	first.waitLog(t, "route delivering")

	events := newCrashEvents(configEvents)
	servers := newServerSet(first.url)
	pub := startPacedPublisher(t, servers, events, configBatch, configRate)
	pub.waitAcked(t, configChangeAt, 30*time.Second)

	changing := time.Now()
	change := fmt.Sprintf(`{"sources":[{"type":"http_request_complete.v0","filter":%q}],"destination_ids":[%q,%q]}`, widenedFilter, firstID, addedID)
	if code, out := request(t, http.MethodPatch, first.url+"/event_subscriptions/"+subID, crashToken, change); code != http.StatusOK {
		t.Fatalf("changing the subscription: %d %s", code, out)
	}
	changed := time.Now()
	first.kill(t)
	t.Logf("killed sluice %s after the change was answered (it took %s), with %d events published",
		time.Since(changed).Round(time.Millisecond), changed.Sub(changing).Round(time.Millisecond), pub.acked())
	second := startServe(t, bin, dataDir, env...)
	// As a load balancer would, the publisher sends to the new process
	// once it is ready: its routes reconciled, the added one's consumer
	// made.
	waitReady(t, second.url)
	servers.set(0, second.url)
	restarted := time.Now()
	if err := pub.wait(60 * time.Second); err != nil {
		t.Fatalf("publishing: %v\n%s", err, second.tail())
	}

	code, out := request(t, http.MethodGet, second.url+"/event_subscriptions/"+subID, crashToken, "")
	if code != http.StatusOK || !strings.Contains(out, widenedFilter) || !strings.Contains(out, addedID) {
		t.Fatalf("the subscription after the restart is not as changed: %d %s", code, out)
	}

	// What each destination must have, by the time each event was first
	// sent: before the change was sent, after it was answered, or between.
	when := func(i int) string {
		sent, _ := pub.firstSent(i)
		switch {
		case sent.Before(changing):
			return "before"
		case sent.After(changed):
			return "after"
		}
		return "during"
	}
	wantFirst := func(i int) bool { return events[i].selected || when(i) == "after" }
	wantAdded := func(i int) bool { return when(i) == "after" }
	var missingFirst, missingAdded []int
	pollUntil(t, 60*time.Second, 250*time.Millisecond, "every event delivered as the configuration says", func() bool {
		missingFirst = missingEvents(kinesisByEventID(t, emu, "config-first"), events, wantFirst)
		missingAdded = missingEvents(kinesisByEventID(t, emu, "config-added"), events, wantAdded)
		return len(missingFirst) == 0 && len(missingAdded) == 0
	}, func() string {
		return fmt.Sprintf("missing at the first destination: %s\nmissing at the added destination: %s\nsluice after the restart:\n%s",
			describeMissing(missingFirst, when, restarted, pub), describeMissing(missingAdded, when, restarted, pub), second.tail())
	})
	for _, dest := range []struct {
		name, stream string
		want         func(int) bool
	}{{"first", "config-first", wantFirst}, {"added", "config-added", wantAdded}} {
		got := kinesisEnvelopes(t, emu, dest.stream)
		var wanted, extra, duplicates int
		for i, ev := range events {
			switch n := got[ev.id]; {
			case dest.want(i):
				wanted++
				duplicates += n - 1
			case n > 0:
				extra++
				duplicates += n - 1
			}
		}
		t.Logf("%s destination: published %d events, %d required (all delivered), %d more delivered that the change in flight allowed, %d duplicates",
			dest.name, len(events), wanted, extra, duplicates)
	}
	t.Logf("requests to POST /events that failed and were sent again: %d; run time %s", pub.resent(), time.Since(began).Round(100*time.Millisecond))
}

// missingEvents returns the indexes of the events want requires that got
// does not have.
func missingEvents(got map[string]int, events []crashEvent, want func(int) bool) []int {
	var missing []int
	for i, ev := range events {
		if want(i) && got[ev.id] == 0 {
			missing = append(missing, i)
		}
	}
	return missing
}

// describeMissing says how many events are missing, by when they were
// first sent, and when the first and last of them were.
func describeMissing(missing []int, when func(int) string, restarted time.Time, pub *pacedPublisher) string {
	if len(missing) == 0 {
		return "none"
	}
	by := map[string]int{}
	for _, i := range missing {
		by[when(i)]++
	}
	firstSent, _ := pub.firstSent(missing[0])
	lastSent, _ := pub.firstSent(missing[len(missing)-1])
	return fmt.Sprintf("%d (%v), first sent from %s to %s after the restart", len(missing), by,
		firstSent.Sub(restarted).Round(time.Millisecond), lastSent.Sub(restarted).Round(time.Millisecond))
}

// describeConsumer describes a route consumer's state, for a failure
// message.
func describeConsumer(js jetstream.JetStream, name string) string {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	c, err := js.Consumer(ctx, pipeline.EventsStream, name)
	if err != nil {
		return fmt.Sprintf("consumer %s: %v", name, err)
	}
	info := c.CachedInfo()
	return fmt.Sprintf("consumer %s: leader %s, %d pending, %d waiting for an ack, %d redelivered, ack floor %d, delivered %d",
		name, info.Cluster.Leader, info.NumPending, info.NumAckPending, info.NumRedelivered, info.AckFloor.Stream, info.Delivered.Stream)
}

// waitRouteDelivering waits until the process logs that it delivers a
// route to the destination.
func waitRouteDelivering(t *testing.T, p *serveProcess, destinationID string) {
	t.Helper()
	delivering := func() bool {
		p.mu.Lock()
		defer p.mu.Unlock()
		for _, line := range p.later {
			var rec struct {
				Msg           string `json:"msg"`
				DestinationID string `json:"destination_id"`
			}
			if json.Unmarshal([]byte(line), &rec) == nil && rec.Msg == "route delivering" && rec.DestinationID == destinationID {
				return true
			}
		}
		return false
	}
	pollUntil(t, 20*time.Second, 20*time.Millisecond, "a route to destination "+destinationID+" delivering", delivering, p.tail)
}

// resumesWithin polls done until it returns true or limit passes, and
// returns how long that took and whether done returned true.
func resumesWithin(limit time.Duration, done func() bool) (time.Duration, bool) {
	start := time.Now()
	tick := time.NewTicker(100 * time.Millisecond)
	defer tick.Stop()
	for !done() {
		if time.Since(start) >= limit {
			return time.Since(start), false
		}
		<-tick.C
	}
	return time.Since(start), true
}
