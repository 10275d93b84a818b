package emulator

import (
	"slices"
	"time"
)

// firehoseRetention is how long a delivery stream keeps a record: Firehose
// keeps the records it could not deliver for up to 24 hours. A Kinesis
// stream keeps its records its retention period (RetentionPeriodHours,
// 24 hours unless changed), a log group its retentionInDays.
const firehoseRetention = 24 * time.Hour

// bounds are what a stream, delivery stream or log group keeps at most:
// Config.MaxStoredRecords and MaxStoredBytes.
type bounds struct {
	records int
	bytes   int64
}

func (s *Server) bounds() bounds {
	return bounds{records: s.cfg.MaxStoredRecords, bytes: s.cfg.MaxStoredBytes}
}

// over reports whether records records of size bytes are past b.
func (b bounds) over(records int, bytes int64) bool {
	return records > b.records || bytes > b.bytes
}

// trim drops the stream's records older than its retention period and,
// oldest first, those past b; the store's lock is held. Each dropped
// record costs a constant time, and a call with nothing to drop one
// comparison.
func (st *kinesisStream) trim(now time.Time, b bounds) {
	expired := now.Add(-time.Duration(st.retentionHours) * time.Hour)
	for len(st.order) > 0 {
		sh := st.shards[st.order[0]]
		if !sh.records[0].arrival.Before(expired) && !b.over(st.storedRecords, st.storedBytes) {
			return
		}
		r := sh.records[0]
		sh.records[0] = kinesisRecord{}
		sh.records = sh.records[1:]
		st.order = st.order[1:]
		st.storedRecords--
		st.storedBytes -= r.size()
	}
}

// size is what a record counts against the stream's byte bound: its data
// and partition key, as Kinesis counts a record's size.
func (r kinesisRecord) size() int64 { return int64(len(r.data) + len(r.partitionKey)) }

// rebuildOrder makes the stream's order of its records, oldest first, from
// its shards', for a stream restored from a saved state.
func (st *kinesisStream) rebuildOrder() {
	type kept struct {
		arrival time.Time
		shard   int32
	}
	all := make([]kept, 0, st.storedRecords)
	for _, sh := range st.shards {
		for _, r := range sh.records {
			all = append(all, kept{r.arrival, int32(sh.index)})
		}
	}
	slices.SortStableFunc(all, func(a, b kept) int { return a.arrival.Compare(b.arrival) })
	st.order = make([]int32, len(all))
	for i, k := range all {
		st.order[i] = k.shard
	}
}

// trim drops the delivery stream's records older than firehoseRetention
// and, oldest first, those past b, counting them in dropped; the store's
// lock is held.
func (ds *deliveryStream) trim(now time.Time, b bounds) {
	expired := now.Add(-firehoseRetention)
	for len(ds.records) > 0 && (ds.records[0].Arrival.Before(expired) || b.over(len(ds.records), ds.storedBytes)) {
		ds.storedBytes -= int64(len(ds.records[0].Data))
		ds.records[0] = FirehoseRecord{}
		ds.records = ds.records[1:]
		ds.dropped++
	}
}

// retention returns the age past which the group's events expire, and
// false when they never do.
func (g *logGroup) retention() (time.Duration, bool) {
	return time.Duration(g.retentionDays) * 24 * time.Hour, g.retentionDays > 0
}

// trimStream drops the events of one of the group's streams older than the
// group's retention, as a put to it does; the store's lock is held. The
// events of a put waiting to be merged (logStream.pending) are dropped
// when a read or a save merges them (trim).
func (g *logGroup) trimStream(ls *logStream, now time.Time) {
	age, ok := g.retention()
	if !ok {
		return
	}
	cutoff := now.Add(-age).UnixMilli()
	for len(ls.events) > 0 && ls.events[0].Timestamp < cutoff {
		g.dropFirst(ls)
	}
}

// trim drops every event of the group older than its retention, as a read
// or a save sees it; the store's lock is held.
func (g *logGroup) trim(now time.Time) {
	for _, ls := range g.streams {
		ls.sorted()
		g.trimStream(ls, now)
	}
}

// bound drops the group's oldest events, by timestamp across its streams,
// while the group is past b; the store's lock is held. It looks for the
// oldest stream once per run of events it drops from one stream, not once
// per event.
func (g *logGroup) bound(b bounds) {
	for b.over(g.storedEvents, g.storedBytes) {
		var oldest, next *logStream
		for _, ls := range g.streams {
			events := ls.sorted()
			switch {
			case len(events) == 0:
			case oldest == nil || events[0].key().less(oldest.events[0].key()):
				oldest, next = ls, oldest
			case next == nil || events[0].key().less(next.events[0].key()):
				next = ls
			}
		}
		if oldest == nil {
			return
		}
		for len(oldest.events) > 0 && b.over(g.storedEvents, g.storedBytes) &&
			(next == nil || !next.events[0].key().less(oldest.events[0].key())) {
			g.dropFirst(oldest)
		}
	}
}

// dropFirst drops the first of the kept events of one of the group's
// streams (not one of its pending events); the store's lock is held.
func (g *logGroup) dropFirst(ls *logStream) {
	size := int64(len(ls.events[0].Message))
	ls.events[0] = LogEvent{}
	ls.events = ls.events[1:]
	ls.storedBytes -= size
	g.storedBytes -= size
	g.storedEvents--
}
