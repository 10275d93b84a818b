package emulator

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"
)

// stateVersion is the version of the state file's format.
const stateVersion = 1

// state is everything a Server keeps that outlives a restart with
// Config.DataDir: the streams, delivery streams and log groups and the
// records they keep. Faults and counters are not kept: faults come from
// the configuration, counters count one run.
type state struct {
	Version  int                   `json:"version"`
	SavedAt  time.Time             `json:"saved_at"`
	Kinesis  []kinesisStreamState  `json:"kinesis_streams"`
	Firehose []deliveryStreamState `json:"firehose_delivery_streams"`
	Logs     []logGroupState       `json:"log_groups"`
}

type kinesisStreamState struct {
	Name    string    `json:"name"`
	ARN     string    `json:"arn"`
	Mode    string    `json:"mode"`
	Created time.Time `json:"created"`
	// RetentionHours is its retention period; 0, in a file saved before
	// streams had one, is 24.
	RetentionHours int                 `json:"retention_hours,omitempty"`
	Shards         []kinesisShardState `json:"shards"`
}

type kinesisShardState struct {
	// Next is the counter of the next record put.
	Next    uint64               `json:"next"`
	Records []kinesisRecordState `json:"records"`
}

type kinesisRecordState struct {
	Counter      uint64    `json:"counter"`
	PartitionKey string    `json:"partition_key"`
	Data         []byte    `json:"data"`
	Arrival      time.Time `json:"arrival"`
}

type deliveryStreamState struct {
	Name    string           `json:"name"`
	ARN     string           `json:"arn"`
	Kind    string           `json:"kind"`
	Created time.Time        `json:"created"`
	Records []FirehoseRecord `json:"records"`
	Dropped int64            `json:"dropped"`
	Puts    uint64           `json:"puts"`
}

type logGroupState struct {
	Name          string           `json:"name"`
	ARN           string           `json:"arn"`
	Created       time.Time        `json:"created"`
	RetentionDays int              `json:"retention_days"`
	Seq           uint64           `json:"seq"`
	Streams       []logStreamState `json:"streams"`
}

type logStreamState struct {
	Name          string          `json:"name"`
	Created       time.Time       `json:"created"`
	Events        []logEventState `json:"events"`
	FirstEvent    int64           `json:"first_event"`
	LastEvent     int64           `json:"last_event"`
	LastIngestion int64           `json:"last_ingestion"`
}

type logEventState struct {
	Timestamp     int64  `json:"timestamp"`
	Message       string `json:"message"`
	IngestionTime int64  `json:"ingestion_time"`
	EventID       string `json:"event_id"`
	Seq           uint64 `json:"seq"`
}

// snapshot returns the server's state, without the records past their
// retention. It holds each store's lock only to trim and copy slices: a
// record's data is never changed once stored, so the copy shares it.
func (s *Server) snapshot() *state {
	now, b := s.now(), s.bounds()
	st := &state{Version: stateVersion, SavedAt: now.UTC()}

	type shardCopy struct {
		next    uint64
		records []kinesisRecord
	}
	type streamCopy struct {
		stream *kinesisStream
		shards []shardCopy
	}
	s.kinesis.mu.Lock()
	streams := make([]streamCopy, 0, len(s.kinesis.streams))
	for _, ks := range s.kinesis.streams {
		ks.trim(now, b)
		c := streamCopy{stream: ks}
		for _, sh := range ks.shards {
			c.shards = append(c.shards, shardCopy{next: sh.next, records: slices.Clone(sh.records)})
		}
		streams = append(streams, c)
	}
	s.kinesis.mu.Unlock()
	for _, c := range streams {
		ks := kinesisStreamState{Name: c.stream.name, ARN: c.stream.arn, Mode: c.stream.mode, Created: c.stream.created, RetentionHours: c.stream.retentionHours}
		for _, sh := range c.shards {
			shs := kinesisShardState{Next: sh.next, Records: make([]kinesisRecordState, len(sh.records))}
			for i, r := range sh.records {
				shs.Records[i] = kinesisRecordState{Counter: r.counter, PartitionKey: r.partitionKey, Data: r.data, Arrival: r.arrival}
			}
			ks.Shards = append(ks.Shards, shs)
		}
		st.Kinesis = append(st.Kinesis, ks)
	}

	s.firehose.mu.Lock()
	for _, ds := range s.firehose.streams {
		ds.trim(now, b)
		st.Firehose = append(st.Firehose, deliveryStreamState{
			Name: ds.name, ARN: ds.arn, Kind: ds.kind, Created: ds.created,
			Records: slices.Clone(ds.records), Dropped: ds.dropped, Puts: ds.puts,
		})
	}
	s.firehose.mu.Unlock()

	type logStreamCopy struct {
		stream *logStream
		events []LogEvent
		first  int64
		last   int64
		ingest int64
	}
	type groupCopy struct {
		state   logGroupState
		streams []logStreamCopy
	}
	s.logs.mu.Lock()
	groups := make([]groupCopy, 0, len(s.logs.groups))
	for _, g := range s.logs.groups {
		g.trim(now)
		c := groupCopy{state: logGroupState{Name: g.name, ARN: g.arn, Created: g.created, RetentionDays: g.retentionDays, Seq: g.seq}}
		for _, ls := range g.streams {
			c.streams = append(c.streams, logStreamCopy{stream: ls, events: slices.Clone(ls.events), first: ls.firstEvent, last: ls.lastEvent, ingest: ls.lastIngestion})
		}
		groups = append(groups, c)
	}
	s.logs.mu.Unlock()
	for _, c := range groups {
		for _, ls := range c.streams {
			lss := logStreamState{Name: ls.stream.name, Created: ls.stream.created, FirstEvent: ls.first, LastEvent: ls.last, LastIngestion: ls.ingest, Events: make([]logEventState, len(ls.events))}
			for i, e := range ls.events {
				lss.Events[i] = logEventState{Timestamp: e.Timestamp, Message: e.Message, IngestionTime: e.IngestionTime, EventID: e.EventID, Seq: e.seq}
			}
			c.state.Streams = append(c.state.Streams, lss)
		}
		st.Logs = append(st.Logs, c.state)
	}

	// Sorted, so that the same state makes the same file.
	slices.SortFunc(st.Kinesis, func(a, b kinesisStreamState) int { return strings.Compare(a.Name, b.Name) })
	slices.SortFunc(st.Firehose, func(a, b deliveryStreamState) int { return strings.Compare(a.Name, b.Name) })
	slices.SortFunc(st.Logs, func(a, b logGroupState) int { return strings.Compare(a.Name, b.Name) })
	for _, g := range st.Logs {
		slices.SortFunc(g.Streams, func(a, b logStreamState) int { return strings.Compare(a.Name, b.Name) })
	}
	return st
}

// errBadState is what restore returns for a state it cannot take.
var errBadState = errors.New("inconsistent state")

// restore replaces the server's streams, delivery streams and log groups
// with st's, dropping the records that have expired since it was saved or
// are past the server's bounds. It checks what the emulator relies on
// (names, shard counts, order of records) and returns an error wrapping
// errBadState otherwise.
func (s *Server) restore(st *state) error {
	now, b := s.now(), s.bounds()
	kinesis := newKinesisStore()
	for _, ks := range st.Kinesis {
		if !kinesisNamePattern.MatchString(ks.Name) || len(ks.Shards) < 1 || len(ks.Shards) > kinesisMaxShards {
			return fmt.Errorf("%w: Kinesis stream %q with %d shards", errBadState, ks.Name, len(ks.Shards))
		}
		stream, err := kinesis.createStream(ks.Name, ks.ARN, ks.Mode, len(ks.Shards), ks.Created)
		if err != nil {
			return fmt.Errorf("%w: Kinesis stream %q twice", errBadState, ks.Name)
		}
		switch {
		case ks.RetentionHours == 0:
		case ks.RetentionHours < kinesisRetentionHours || ks.RetentionHours > kinesisMaxRetention:
			return fmt.Errorf("%w: Kinesis stream %q with a retention period of %d hours", errBadState, ks.Name, ks.RetentionHours)
		default:
			stream.retentionHours = ks.RetentionHours
		}
		for i, shs := range ks.Shards {
			sh := stream.shards[i]
			sh.next = max(shs.Next, 1)
			sh.records = make([]kinesisRecord, len(shs.Records))
			for j, r := range shs.Records {
				if r.Counter == 0 || r.Counter >= sh.next || (j > 0 && r.Counter <= shs.Records[j-1].Counter) {
					return fmt.Errorf("%w: Kinesis stream %q, shard %d: records out of order", errBadState, ks.Name, i)
				}
				sh.records[j] = kinesisRecord{counter: r.Counter, partitionKey: r.PartitionKey, data: r.Data, arrival: r.Arrival}
				stream.storedRecords++
				stream.storedBytes += sh.records[j].size()
			}
		}
		stream.rebuildOrder()
		stream.trim(now, b)
	}

	firehose := newFirehoseStore()
	for _, dss := range st.Firehose {
		if checkDeliveryStreamName(dss.Name) != nil {
			return fmt.Errorf("%w: delivery stream %q", errBadState, dss.Name)
		}
		ds, err := firehose.create(dss.Name, dss.ARN, dss.Kind, dss.Created)
		if err != nil {
			return fmt.Errorf("%w: delivery stream %q twice", errBadState, dss.Name)
		}
		ds.records, ds.dropped, ds.puts = dss.Records, dss.Dropped, dss.Puts
		for _, r := range ds.records {
			ds.storedBytes += int64(len(r.Data))
		}
		ds.trim(now, b)
	}

	logs := newLogsStore()
	for _, gs := range st.Logs {
		if !logsGroupPattern.MatchString(gs.Name) {
			return fmt.Errorf("%w: log group %q", errBadState, gs.Name)
		}
		g, err := logs.createGroup(gs.Name, gs.ARN, gs.Created)
		if err != nil {
			return fmt.Errorf("%w: log group %q twice", errBadState, gs.Name)
		}
		g.retentionDays, g.seq = gs.RetentionDays, gs.Seq
		for _, lss := range gs.Streams {
			if checkStreamName(lss.Name) != nil {
				return fmt.Errorf("%w: log stream %q in %q", errBadState, lss.Name, gs.Name)
			}
			ls, err := g.createStream(lss.Name, lss.Created)
			if err != nil {
				return fmt.Errorf("%w: log stream %q in %q twice", errBadState, lss.Name, gs.Name)
			}
			ls.firstEvent, ls.lastEvent, ls.lastIngestion = lss.FirstEvent, lss.LastEvent, lss.LastIngestion
			ls.events = make([]LogEvent, len(lss.Events))
			for i, e := range lss.Events {
				if i > 0 && e.Timestamp < lss.Events[i-1].Timestamp {
					return fmt.Errorf("%w: log stream %q in %q: events out of order", errBadState, lss.Name, gs.Name)
				}
				ls.events[i] = LogEvent{Timestamp: e.Timestamp, Message: e.Message, IngestionTime: e.IngestionTime, EventID: e.EventID, seq: e.Seq}
				ls.storedBytes += int64(len(e.Message))
			}
			g.storedBytes += ls.storedBytes
			g.storedEvents += len(ls.events)
		}
		g.trim(now)
		g.bound(b)
	}

	s.kinesis.mu.Lock()
	s.kinesis.streams = kinesis.streams
	s.kinesis.mu.Unlock()
	s.firehose.mu.Lock()
	s.firehose.streams = firehose.streams
	s.firehose.mu.Unlock()
	s.logs.mu.Lock()
	s.logs.groups = logs.groups
	s.logs.mu.Unlock()
	return nil
}
