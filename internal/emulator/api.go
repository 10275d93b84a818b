package emulator

import (
	"fmt"
	"slices"
	"strings"
	"time"
)

// SetFault injects f into the calls naming its resource from now on,
// replacing the fault that resource had. It returns an error wrapping
// ErrInvalidFault when f is invalid.
func (s *Server) SetFault(f Fault) error {
	if err := s.faults.set(f); err != nil {
		return err
	}
	s.log.Info("emulator: fault set", "fault", f.String())
	return nil
}

// ClearFault stops injecting the fault of a resource (or of AnyResource),
// and reports whether it had one.
func (s *Server) ClearFault(svc Service, resource string) bool {
	ok := s.faults.clear(svc, resource)
	if ok {
		s.log.Info("emulator: fault cleared", "service", svc, "resource", resource)
	}
	return ok
}

// ClearFaults stops injecting every fault.
func (s *Server) ClearFaults() { s.faults.clearAll() }

// Faults returns the faults being injected, by service and resource.
func (s *Server) Faults() []Fault { return s.faults.list() }

// Counters returns the counters of the calls that named a resource (a
// stream, delivery stream or log group); zero when none did.
func (s *Server) Counters(svc Service, resource string) Counters {
	return s.counters.get(svc, resource)
}

// AllCounters returns the counters of every resource a call named, keyed
// SERVICE/RESOURCE ("kinesis/orders").
func (s *Server) AllCounters() map[string]Counters { return s.counters.all() }

// ResetCounters zeroes every counter.
func (s *Server) ResetCounters() { s.counters.reset() }

// KinesisRecord is a record a Kinesis stream keeps.
type KinesisRecord struct {
	ShardID        string    `json:"shard_id"`
	SequenceNumber string    `json:"sequence_number"`
	PartitionKey   string    `json:"partition_key"`
	Data           []byte    `json:"data"`
	Arrival        time.Time `json:"arrival_time"`
}

// CreateStream creates a Kinesis stream of shards shards, as CreateStream
// would in Config.Region. It returns an error wrapping ErrExists when the
// stream exists.
func (s *Server) CreateStream(name string, shards int) error {
	defer s.markChanged()
	if !kinesisNamePattern.MatchString(name) {
		return fmt.Errorf("creating stream %q: a stream's name is 1 to 128 letters, digits, '_', '.' or '-'", name)
	}
	if shards < 1 || shards > kinesisMaxShards {
		return fmt.Errorf("creating stream %s of %d shards: a stream has 1 to %d shards", name, shards, kinesisMaxShards)
	}
	s.kinesis.mu.Lock()
	defer s.kinesis.mu.Unlock()
	arn := arnOf(ServiceKinesis, s.cfg.Region, s.cfg.AccountID, "stream/"+name)
	if _, err := s.kinesis.createStream(name, arn, "PROVISIONED", shards, s.now()); err != nil {
		return fmt.Errorf("creating stream %s: %w", name, err)
	}
	return nil
}

// KinesisRecords returns the records a Kinesis stream keeps, shard by
// shard, oldest first. It returns an error wrapping ErrNotFound when the
// stream does not exist.
func (s *Server) KinesisRecords(stream string) ([]KinesisRecord, error) {
	s.kinesis.mu.Lock()
	defer s.kinesis.mu.Unlock()
	st, ok := s.kinesis.streams[stream]
	if !ok {
		return nil, fmt.Errorf("stream %s: %w", stream, ErrNotFound)
	}
	st.trim(s.now(), s.bounds())
	out := make([]KinesisRecord, 0, st.storedRecords)
	for _, sh := range st.shards {
		for _, r := range sh.records {
			out = append(out, KinesisRecord{ShardID: sh.id, SequenceNumber: sequenceNumber(sh.index, r.counter), PartitionKey: r.partitionKey, Data: r.data, Arrival: r.arrival})
		}
	}
	return out, nil
}

// CreateDeliveryStream creates a DirectPut Firehose delivery stream. It
// returns an error wrapping ErrExists when it exists.
func (s *Server) CreateDeliveryStream(name string) error {
	defer s.markChanged()
	if err := checkDeliveryStreamName(name); err != nil {
		return fmt.Errorf("creating delivery stream: %w", err)
	}
	s.firehose.mu.Lock()
	defer s.firehose.mu.Unlock()
	arn := arnOf(ServiceFirehose, s.cfg.Region, s.cfg.AccountID, "deliverystream/"+name)
	if _, err := s.firehose.create(name, arn, "DirectPut", s.now()); err != nil {
		return fmt.Errorf("creating delivery stream %s: %w", name, err)
	}
	return nil
}

// FirehoseRecords returns the records a delivery stream received and
// keeps, oldest first, and how many older ones it dropped, past their 24
// hours or past Config.MaxStoredRecords or MaxStoredBytes. It returns an
// error wrapping ErrNotFound when the delivery stream does not exist.
func (s *Server) FirehoseRecords(name string) (records []FirehoseRecord, dropped int64, err error) {
	s.firehose.mu.Lock()
	defer s.firehose.mu.Unlock()
	ds, ok := s.firehose.streams[name]
	if !ok {
		return nil, 0, fmt.Errorf("delivery stream %s: %w", name, ErrNotFound)
	}
	ds.trim(s.now(), s.bounds())
	return slices.Clone(ds.records), ds.dropped, nil
}

// CreateLogGroup creates a log group, with a retention of retentionDays
// days (0: events never expire; otherwise a value PutRetentionPolicy
// takes). It returns an error wrapping ErrExists when it exists.
func (s *Server) CreateLogGroup(name string, retentionDays int) error {
	defer s.markChanged()
	if _, err := (groupRef{LogGroupName: name}).name(); err != nil {
		return fmt.Errorf("creating log group: %w", err)
	}
	if retentionDays != 0 && !slices.Contains(retentionDaysValues, retentionDays) {
		return fmt.Errorf("creating log group %s: retention of %d days is not one CloudWatch Logs takes", name, retentionDays)
	}
	s.logs.mu.Lock()
	defer s.logs.mu.Unlock()
	g, err := s.logs.createGroup(name, arnOf(ServiceLogs, s.cfg.Region, s.cfg.AccountID, "log-group:"+name), s.now())
	if err != nil {
		return fmt.Errorf("creating log group %s: %w", name, err)
	}
	g.retentionDays = retentionDays
	return nil
}

// CreateLogStream creates a log stream. It returns an error wrapping
// ErrNotFound when the group does not exist, ErrExists when the stream
// does.
func (s *Server) CreateLogStream(group, stream string) error {
	defer s.markChanged()
	if err := checkStreamName(stream); err != nil {
		return fmt.Errorf("creating log stream: %w", err)
	}
	s.logs.mu.Lock()
	defer s.logs.mu.Unlock()
	g, ok := s.logs.groups[group]
	if !ok {
		return fmt.Errorf("log group %s: %w", group, ErrNotFound)
	}
	if _, err := g.createStream(stream, s.now()); err != nil {
		return fmt.Errorf("creating log stream %s in %s: %w", stream, group, err)
	}
	return nil
}

// DeleteLogStream deletes a log stream and its events: the
// DeleteLogStream call does so. It returns an error wrapping ErrNotFound
// when the group or the stream does not exist.
func (s *Server) DeleteLogStream(group, stream string) error {
	defer s.markChanged()
	s.logs.mu.Lock()
	defer s.logs.mu.Unlock()
	g, err := s.logGroup(nil, group, false)
	if err != nil {
		return fmt.Errorf("log group %s: %w", group, err)
	}
	if _, err := s.logStream(g, stream, false); err != nil {
		return fmt.Errorf("log stream %s in %s: %w", stream, group, err)
	}
	ls := g.streams[stream]
	g.storedBytes -= ls.storedBytes
	g.storedEvents -= len(ls.events) + len(ls.pending)
	delete(g.streams, stream)
	return nil
}

// LogEvents returns the events a log stream keeps, by timestamp. It
// returns an error wrapping ErrNotFound when the group or the stream does
// not exist.
func (s *Server) LogEvents(group, stream string) ([]LogEvent, error) {
	s.logs.mu.Lock()
	defer s.logs.mu.Unlock()
	g, ok := s.logs.groups[group]
	if !ok {
		return nil, fmt.Errorf("log group %s: %w", group, ErrNotFound)
	}
	ls, ok := g.streams[stream]
	if !ok {
		return nil, fmt.Errorf("log stream %s in %s: %w", stream, group, ErrNotFound)
	}
	g.trim(s.now())
	return slices.Clone(ls.events), nil
}

// LogStreamInfo describes a log stream, as DescribeLogStreams does.
type LogStreamInfo struct {
	Name    string
	ARN     string
	Created time.Time
	// FirstEventTimestamp and LastEventTimestamp are the timestamps of the
	// first and last events ever put, LastIngestionTime the time of the
	// last put, in milliseconds since the epoch; 0 before the first put.
	FirstEventTimestamp int64
	LastEventTimestamp  int64
	LastIngestionTime   int64
	// StoredBytes is the size of the messages the stream keeps.
	StoredBytes int64
}

// DescribeLogStreams returns the log streams of a group, sorted by name:
// the DescribeLogStreams call answers from it. It returns an error
// wrapping ErrNotFound when the group does not exist.
func (s *Server) DescribeLogStreams(group string) ([]LogStreamInfo, error) {
	s.logs.mu.Lock()
	defer s.logs.mu.Unlock()
	g, err := s.logGroup(nil, group, false)
	if err != nil {
		return nil, fmt.Errorf("log group %s: %w", group, err)
	}
	g.trim(s.now())
	out := make([]LogStreamInfo, 0, len(g.streams))
	for _, ls := range g.streams {
		out = append(out, LogStreamInfo{
			Name: ls.name, ARN: ls.arn, Created: ls.created,
			FirstEventTimestamp: ls.firstEvent, LastEventTimestamp: ls.lastEvent, LastIngestionTime: ls.lastIngestion,
			StoredBytes: ls.storedBytes,
		})
	}
	slices.SortFunc(out, func(a, b LogStreamInfo) int { return strings.Compare(a.Name, b.Name) })
	return out, nil
}

// Operations returns the names of the operations the emulator serves for
// svc (PutRecords, AssumeRole, ...), sorted; none for a service it does
// not emulate.
func (s *Server) Operations(svc Service) []string {
	out := make([]string, 0, len(s.operations[svc]))
	for name := range s.operations[svc] {
		out = append(out, name)
	}
	slices.Sort(out)
	return out
}
