package pipeline_test

import (
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/sluicehq/sluice/internal/check"
	"github.com/sluicehq/sluice/internal/destinations"
	"github.com/sluicehq/sluice/internal/emulator"
	"github.com/sluicehq/sluice/internal/store"
	"github.com/sluicehq/sluice/pipeline"
	"github.com/sluicehq/sluice/schemas"
	"github.com/sluicehq/sluice/sinks/cloudwatchlogs"
)

// deadLetterSeen is a dead letter as read back from SLUICE_DLQ.
type deadLetterSeen struct {
	subject, eventID, dataEventID string
	class, code, message          string
	subscriptionID, destinationID string
}

// deadLetters waits until SLUICE_DLQ holds n dead letters, for at most
// within, and returns them.
func (f *faultEnv) deadLetters(t *testing.T, n uint64, within time.Duration) []deadLetterSeen {
	t.Helper()
	dlq, err := f.js.Stream(f.ctx, pipeline.DLQStream)
	if err != nil {
		t.Fatal(err)
	}
	check.Eventually(t, within, fmt.Sprintf("%d dead letters", n), func() (string, bool) {
		info, err := dlq.Info(f.ctx)
		if err != nil {
			t.Fatal(err)
		}
		return fmt.Sprintf("%d dead letters", info.State.Msgs), info.State.Msgs >= n
	})
	info, err := dlq.Info(f.ctx)
	if err != nil {
		t.Fatal(err)
	}
	var out []deadLetterSeen
	for seq := info.State.FirstSeq; seq <= info.State.LastSeq; seq++ {
		msg, err := dlq.GetMsg(f.ctx, seq)
		if err != nil {
			t.Fatalf("dead letter %d: %v", seq, err)
		}
		head, _, err := schemas.ReadHeader(msg.Data)
		if err != nil {
			t.Fatalf("dead letter %d is not the stored event: %v", seq, err)
		}
		out = append(out, deadLetterSeen{
			subject: msg.Subject, eventID: msg.Header.Get(pipeline.HeaderDLQEventID), dataEventID: head.ID,
			class: msg.Header.Get(pipeline.HeaderDLQClass), code: msg.Header.Get(pipeline.HeaderDLQCode), message: msg.Header.Get(pipeline.HeaderDLQMessage),
			subscriptionID: msg.Header.Get(pipeline.HeaderDLQSubscriptionID), destinationID: msg.Header.Get(pipeline.HeaderDLQDestinationID),
		})
	}
	return out
}

// TestFaultsDeadLetters sends, among 300 events to a Kinesis stream, a
// Firehose delivery stream and a CloudWatch log group, one event larger
// than any of them takes and one event 15 days old, which CloudWatch Logs
// rejects as older than 14 days: each is in SLUICE_DLQ with its reason,
// once per destination that cannot take it, and the rest is delivered.
func TestFaultsDeadLetters(t *testing.T) {
	if testing.Short() {
		t.Skip("delivers through the emulator")
	}
	t.Parallel()
	f := startFaultEnv(t, pipeline.DeliveryConfig{})
	targets := f.allTargets(t, "dlq")
	var destIDs []string
	for _, d := range targets {
		destIDs = append(destIDs, d.dest.ID)
	}
	sub := f.subscribe(t, destIDs, store.Source{Type: tcpKind})

	const n, large, old = 300, 100, 200
	ids := f.publishNow(t, tcpKind, n, func(i int, ev *schemas.Event) {
		switch i {
		case large:
			// Larger than 1 MiB, the most any of the three takes.
			var object map[string]any
			if err := json.Unmarshal(ev.Object, &object); err != nil {
				t.Fatal(err)
			}
			object["note"] = strings.Repeat("x", 1<<20+10_000)
			b, err := json.Marshal(object)
			if err != nil {
				t.Fatal(err)
			}
			ev.Object = b
		case old:
			ev.Timestamp = time.Now().Add(-15 * 24 * time.Hour)
		}
	})
	want := map[emulator.Service][]string{}
	for i, id := range ids {
		if i != large {
			want[emulator.ServiceKinesis] = append(want[emulator.ServiceKinesis], id)
			want[emulator.ServiceFirehose] = append(want[emulator.ServiceFirehose], id)
		}
		if i != large && i != old {
			want[emulator.ServiceLogs] = append(want[emulator.ServiceLogs], id)
		}
	}

	// Every event acknowledged or dead-lettered first: then SLUICE_DLQ
	// holds every dead letter there is.
	waitAllAckedWithin(t, f.deliveryEnv, 30*time.Second)
	letters := f.deadLetters(t, 4, 5*time.Second)
	for _, d := range targets {
		c := count(want[d.service], f.received(t, d, sub.ID))
		t.Logf("%s: %v", d, c)
		if c.missing > 0 || c.duplicates > 0 || c.unexpected > 0 {
			t.Errorf("%s: %v: want every deliverable event once", d, c)
		}
	}

	// One dead letter of the large event per destination, one of the old
	// event for CloudWatch Logs, and no other.
	type key struct{ eventID, destinationID string }
	seen := map[key]deadLetterSeen{}
	for _, l := range letters {
		t.Logf("dead letter on %s: event %s, class %q, code %q, message %q", l.subject, l.eventID, l.class, l.code, l.message)
		if l.dataEventID != l.eventID || l.subscriptionID != sub.ID || l.subject != pipeline.DLQSubject(f.account, l.destinationID) {
			t.Errorf("dead letter of event %s (data of %s), subscription %s, on %s: not the route's", l.eventID, l.dataEventID, l.subscriptionID, l.subject)
		}
		if _, dup := seen[key{l.eventID, l.destinationID}]; dup {
			t.Errorf("event %s dead-lettered twice for %s", l.eventID, l.destinationID)
		}
		seen[key{l.eventID, l.destinationID}] = l
	}
	if len(letters) != 4 {
		t.Errorf("%d dead letters, want 4", len(letters))
	}
	for _, d := range targets {
		sink, err := destinations.Factory{Endpoint: f.emu.Endpoint}.New(f.ctx, d.dest)
		if err != nil {
			t.Fatal(err)
		}
		limit := strconv.Itoa(sink.Limits().MaxRecordBytes)
		if l, ok := seen[key{ids[large], d.dest.ID}]; !ok {
			t.Errorf("%s: the large event is not dead-lettered", d)
		} else if l.class != "too_large" || !strings.Contains(l.message, limit) {
			t.Errorf("%s: the large event dead-lettered as %q %q, want too_large and a message naming the limit %s", d, l.class, l.message, limit)
		}
	}
	logs := targets[2]
	if l, ok := seen[key{ids[old], logs.dest.ID}]; !ok {
		t.Errorf("%s: the old event is not dead-lettered", logs)
	} else if l.class != "permanent" || l.code != cloudwatchlogs.CodeTooOld || !strings.Contains(l.message, "older than 14 days") {
		t.Errorf("%s: the old event dead-lettered as %q %q %q, want permanent, %s, older than 14 days", logs, l.class, l.code, l.message, cloudwatchlogs.CodeTooOld)
	}
	if r := f.puts(logs); r.RecordsFailed != 1 {
		t.Errorf("%s: the emulator rejected %d log events, want the old one", logs, r.RecordsFailed)
	}
}
