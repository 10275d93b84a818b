package emulator

import (
	"bufio"
	"bytes"
	"encoding/json"
	"testing"
	"time"
)

// TestWriteStateIsJSONMarshal checks writeState writes what json.Marshal
// makes of a state, byte for byte, so that its fields follow the struct
// tags load reads.
func TestWriteStateIsJSONMarshal(t *testing.T) {
	at := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	states := map[string]*state{
		"empty": {Version: stateVersion, SavedAt: at},
		"full": {
			Version: stateVersion, SavedAt: at,
			Kinesis: []kinesisStreamState{
				{Name: "s", ARN: "arn:s", Mode: "PROVISIONED", Created: at, RetentionHours: 48, Shards: []kinesisShardState{
					{Next: 3, Records: []kinesisRecordState{{Counter: 1, PartitionKey: "k<&>", Data: []byte("a\x00\"b"), Arrival: at}, {Counter: 2, PartitionKey: "k", Data: []byte{}, Arrival: at}}},
					{Next: 1},
				}},
				{Name: "t", Shards: []kinesisShardState{{Next: 1, Records: []kinesisRecordState{}}}},
			},
			Firehose: []deliveryStreamState{
				{Name: "d", ARN: "arn:d", Kind: "DirectPut", Created: at, Records: []FirehoseRecord{{RecordID: "r1", Data: []byte(`{"a":1}`), Arrival: at}}, Dropped: 4, Puts: 5},
				{Name: "e"},
			},
			Logs: []logGroupState{
				{Name: "/g", ARN: "arn:g", Created: at, RetentionDays: 7, Seq: 9, Streams: []logStreamState{
					{Name: "s", Created: at, Events: []logEventState{{Timestamp: 1, Message: "m \"é\" <x>\u2028", IngestionTime: 2, EventID: "e", Seq: 3}}, FirstEvent: 1, LastEvent: 1, LastIngestion: 2},
					{Name: "t"},
				}},
				{Name: "/h"},
			},
		},
	}
	for name, st := range states {
		t.Run(name, func(t *testing.T) {
			want, err := json.Marshal(st)
			if err != nil {
				t.Fatal(err)
			}
			want = append(want, '\n')
			var buf bytes.Buffer
			w := bufio.NewWriter(&buf)
			if err := writeState(w, st); err != nil {
				t.Fatal(err)
			}
			if err := w.Flush(); err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(buf.Bytes(), want) {
				t.Errorf("writeState wrote\n%s\njson.Marshal makes\n%s", buf.Bytes(), want)
			}
		})
	}
}
