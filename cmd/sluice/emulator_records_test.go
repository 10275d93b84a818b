package main

import (
	"encoding/json"
	"fmt"
	"sort"
	"testing"
	"time"

	"github.com/sluicehq/sluice/internal/emulator"
	"github.com/sluicehq/sluice/internal/emulator/emulatortest"
)

// startEmulator starts the AWS emulator for a test, keeping every record
// the test sends.
func startEmulator(t *testing.T) *emulatortest.Emulator {
	t.Helper()
	return emulatortest.Start(t, emulator.Config{MaxStoredRecords: 1_000_000, MaxStoredBytes: 1 << 30})
}

// createKinesisStream creates a stream of two shards in the emulator and
// returns its ARN.
func createKinesisStream(t *testing.T, emu *emulatortest.Emulator, name string) string {
	t.Helper()
	if err := emu.CreateStream(name, 2); err != nil {
		t.Fatal(err)
	}
	return fmt.Sprintf("arn:aws:kinesis:%s:%s:stream/%s", emu.Region, emulator.DefaultAccountID, name)
}

// kinesisByEventID counts the records of an emulator's stream by partition
// key, which sluice sets to the event id.
func kinesisByEventID(t *testing.T, emu *emulatortest.Emulator, stream string) map[string]int {
	t.Helper()
	records, err := emu.KinesisRecords(stream)
	if err != nil {
		t.Fatal(err)
	}
	got := make(map[string]int, len(records))
	for _, r := range records {
		got[r.PartitionKey]++
	}
	return got
}

// kinesisEnvelopes counts the records of an emulator's stream by event id,
// checking that each is the envelope of the event its partition key names.
func kinesisEnvelopes(t *testing.T, emu *emulatortest.Emulator, stream string) map[string]int {
	t.Helper()
	records, err := emu.KinesisRecords(stream)
	if err != nil {
		t.Fatal(err)
	}
	got := make(map[string]int, len(records))
	for _, r := range records {
		var ev struct {
			ID string `json:"event_id"`
		}
		if err := json.Unmarshal(r.Data, &ev); err != nil || ev.ID != r.PartitionKey {
			t.Fatalf("record with partition key %s is not its event's envelope (%v): %s", r.PartitionKey, err, r.Data)
		}
		got[r.PartitionKey]++
	}
	return got
}

// kinesisDestination is the body of POST /event_destinations of a Kinesis
// destination with creds auth (the emulator takes any key).
func kinesisDestination(streamARN string) string {
	return fmt.Sprintf(`{"description":"emulator stream","target":{"kinesis":{"stream_arn":%q,"auth":{"creds":{"aws_access_key_id":%q,"aws_secret_access_key":%q}}}}}`,
		streamARN, emulatortest.AccessKeyID, emulatortest.SecretAccessKey)
}

// firstArrivals returns when the first record of each event id reached an
// emulator's stream.
func firstArrivals(t *testing.T, emu *emulatortest.Emulator, stream string) map[string]time.Time {
	t.Helper()
	records, err := emu.KinesisRecords(stream)
	if err != nil {
		t.Fatal(err)
	}
	got := make(map[string]time.Time, len(records))
	for _, r := range records {
		if first, ok := got[r.PartitionKey]; !ok || r.Arrival.Before(first) {
			got[r.PartitionKey] = r.Arrival
		}
	}
	return got
}

// percentile returns the p-th percentile (0 < p <= 1) of durations, which
// it sorts.
func percentile(durations []time.Duration, p float64) time.Duration {
	if len(durations) == 0 {
		return 0
	}
	sort.Slice(durations, func(i, j int) bool { return durations[i] < durations[j] })
	return durations[min(len(durations)-1, int(p*float64(len(durations))))]
}
