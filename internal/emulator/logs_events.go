package emulator

import (
	"cmp"
	"fmt"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"
)

// PutLogEvents limits, from its API reference.
const (
	logsMaxEvents      = 10_000
	logsMaxBatchBytes  = 1_048_576
	logsEventOverhead  = 26 // bytes counted per event on top of its message
	logsMaxEventBytes  = 1_048_576
	logsMaxFuture      = 2 * time.Hour
	logsMaxAge         = 14 * 24 * time.Hour
	logsMaxBatchSpan   = 24 * time.Hour
	logsMaxGetEvents   = 10_000
	logsMaxGetBytes    = 1 << 20
	logsMaxFilterLimit = 10_000
)

type inputLogEvent struct {
	Timestamp *int64  `json:"timestamp"`
	Message   *string `json:"message"`
}

type putLogEventsInput struct {
	logStreamInput
	LogEvents     []inputLogEvent `json:"logEvents"`
	SequenceToken string          `json:"sequenceToken"`
}

type rejectedLogEventsInfo struct {
	TooNewLogEventStartIndex *int `json:"tooNewLogEventStartIndex,omitempty"`
	TooOldLogEventEndIndex   *int `json:"tooOldLogEventEndIndex,omitempty"`
	ExpiredLogEventEndIndex  *int `json:"expiredLogEventEndIndex,omitempty"`
}

// checkLogEvents checks a batch against PutLogEvents' limits.
func checkLogEvents(events []inputLogEvent) error {
	switch n := len(events); {
	case n == 0:
		return constraintError(ServiceLogs, "'[]'", "logEvents", "must have length greater than or equal to 1")
	case n > logsMaxEvents:
		return constraintError(ServiceLogs, fmt.Sprintf("'[%d events]'", n), "logEvents", "must have length less than or equal to 10000")
	}
	total := 0
	for i, e := range events {
		if e.Timestamp == nil || e.Message == nil {
			return constraintError(ServiceLogs, "null", fmt.Sprintf("logEvents.%d.member.timestamp", i+1), "must not be null")
		}
		if *e.Message == "" {
			return constraintError(ServiceLogs, "''", fmt.Sprintf("logEvents.%d.member.message", i+1), "must have length greater than or equal to 1")
		}
		size := len(*e.Message) + logsEventOverhead
		if size > logsMaxEventBytes {
			return invalidParameter(ServiceLogs, "Log event too large: %d bytes exceeds limit of %d", size, logsMaxEventBytes)
		}
		total += size
		if i > 0 && *e.Timestamp < *events[i-1].Timestamp {
			return invalidParameter(ServiceLogs, "Log events in a single PutLogEvents request must be in chronological order.")
		}
	}
	if total > logsMaxBatchBytes {
		return invalidParameter(ServiceLogs, "Upload too large: %d bytes exceeds limit of %d", total, logsMaxBatchBytes)
	}
	return nil
}

// rejectLogEvents returns which events of a sorted batch are too new, too
// old or past the retention of their group, as PutLogEvents reports them:
// events[:tooOld] and events[:expired] are refused, events[tooNew:] too.
func rejectLogEvents(events []inputLogEvent, now time.Time, retentionDays int) (tooNew, tooOld, expired int) {
	newest := now.Add(logsMaxFuture).UnixMilli()
	oldest := now.Add(-logsMaxAge).UnixMilli()
	tooNew = sort.Search(len(events), func(i int) bool { return *events[i].Timestamp > newest })
	tooOld = sort.Search(len(events), func(i int) bool { return *events[i].Timestamp >= oldest })
	if retentionDays > 0 {
		keep := now.Add(-time.Duration(retentionDays) * 24 * time.Hour).UnixMilli()
		expired = sort.Search(len(events), func(i int) bool { return *events[i].Timestamp >= keep })
	}
	return tooNew, tooOld, expired
}

func (s *Server) logsPutLogEvents(c *call) (any, error) {
	var in putLogEventsInput
	group, err := c.decodeResource(&in)
	if err != nil {
		return nil, err
	}
	stream := in.LogStreamName
	if err := checkLogEvents(in.LogEvents); err != nil {
		return nil, err
	}
	s.logs.mu.Lock()
	defer s.logs.mu.Unlock()
	g, err := s.logGroup(c, group, true)
	if err != nil {
		return nil, err
	}
	ls, err := s.logStream(g, stream, true)
	if err != nil {
		return nil, err
	}
	now := s.now()
	tooNew, tooOld, expired := rejectLogEvents(in.LogEvents, now, g.retentionDays)
	first := max(tooOld, expired)
	if first < tooNew && *in.LogEvents[tooNew-1].Timestamp-*in.LogEvents[first].Timestamp > logsMaxBatchSpan.Milliseconds() {
		return nil, invalidParameter(ServiceLogs, "The batch of log events in a single PutLogEvents request cannot span more than 24 hours.")
	}
	s.storeLogEvents(g, ls, in.LogEvents[first:max(first, tooNew)], now)
	out := struct {
		NextSequenceToken     string                 `json:"nextSequenceToken"`
		RejectedLogEventsInfo *rejectedLogEventsInfo `json:"rejectedLogEventsInfo,omitempty"`
	}{NextSequenceToken: fmt.Sprintf("%056d", g.seq)}
	if tooNew < len(in.LogEvents) || tooOld > 0 || expired > 0 {
		info := &rejectedLogEventsInfo{}
		if tooNew < len(in.LogEvents) {
			info.TooNewLogEventStartIndex = &tooNew
		}
		if tooOld > 0 {
			info.TooOldLogEventEndIndex = &tooOld
		}
		if expired > 0 {
			info.ExpiredLogEventEndIndex = &expired
		}
		out.RejectedLogEventsInfo = info
	}
	c.accepted = max(0, tooNew-first)
	c.failed = len(in.LogEvents) - c.accepted
	return out, nil
}

// storeLogEvents keeps the events of a call in their stream, then drops
// the group's events past its retention or its bounds; the store's lock
// is held.
func (s *Server) storeLogEvents(g *logGroup, ls *logStream, events []inputLogEvent, now time.Time) {
	for _, e := range events {
		s.storeLogEvent(g, ls, *e.Timestamp, *e.Message, now)
	}
	g.trimStream(ls, now)
	g.bound(s.bounds())
}

// storeLogEvent keeps an event in its stream; the store's lock is held.
// An event that comes after every one kept is appended; another waits in
// pending for the next read to merge it in, so that events put out of
// timestamp order, as the overlapping batches of a route are, cost no more
// than those put in order.
func (s *Server) storeLogEvent(g *logGroup, ls *logStream, timestamp int64, message string, now time.Time) {
	g.seq++
	e := LogEvent{Timestamp: timestamp, Message: message, IngestionTime: now.UnixMilli(), EventID: fmt.Sprintf("%056d", g.seq), seq: g.seq}
	if n := len(ls.events); len(ls.pending) == 0 && (n == 0 || ls.events[n-1].Timestamp <= timestamp) {
		ls.events = append(ls.events, e)
	} else {
		ls.pending = append(ls.pending, e)
	}
	if ls.firstEvent == 0 || timestamp < ls.firstEvent {
		ls.firstEvent = timestamp
	}
	ls.lastEvent = max(ls.lastEvent, timestamp)
	ls.lastIngestion = e.IngestionTime
	ls.storedBytes += int64(len(message))
	g.storedBytes += int64(len(message))
	g.storedEvents++
}

// sorted merges the pending events into the kept ones and returns them all,
// by timestamp and then in the order they were put; the store's lock is
// held. Every pending event was put after every kept one, so of two with
// the same timestamp the kept one comes first.
func (ls *logStream) sorted() []LogEvent {
	if len(ls.pending) == 0 {
		return ls.events
	}
	pending := ls.pending
	slices.SortStableFunc(pending, func(a, b LogEvent) int { return cmp.Compare(a.Timestamp, b.Timestamp) })
	// Merge from the back, into events grown by len(pending): only the
	// kept events newer than the oldest pending one move.
	i, j := len(ls.events)-1, len(pending)-1
	ls.events = slices.Grow(ls.events, len(pending))[:len(ls.events)+len(pending)]
	for w := len(ls.events) - 1; j >= 0; w-- {
		if i >= 0 && ls.events[i].Timestamp > pending[j].Timestamp {
			ls.events[w] = ls.events[i]
			i--
		} else {
			ls.events[w] = pending[j]
			j--
		}
	}
	clear(pending)
	ls.pending = pending[:0]
	return ls.events
}

// eventKey orders the events of a group: by timestamp, then as put.
type eventKey struct {
	timestamp int64
	seq       uint64
}

func (e LogEvent) key() eventKey { return eventKey{e.Timestamp, e.seq} }

func (k eventKey) less(other eventKey) bool {
	return k.timestamp < other.timestamp || (k.timestamp == other.timestamp && k.seq < other.seq)
}

func (k eventKey) String() string { return fmt.Sprintf("%d/%d", k.timestamp, k.seq) }

// parseEventKey reads an eventKey's String.
func parseEventKey(s string) (eventKey, bool) {
	ts, seq, ok := strings.Cut(s, "/")
	t, err1 := strconv.ParseInt(ts, 10, 64)
	n, err2 := strconv.ParseUint(seq, 10, 64)
	return eventKey{t, n}, ok && err1 == nil && err2 == nil
}

type getLogEventsInput struct {
	groupRef
	LogStreamName string `json:"logStreamName"`
	StartTime     *int64 `json:"startTime"`
	EndTime       *int64 `json:"endTime"`
	NextToken     string `json:"nextToken"`
	Limit         *int   `json:"limit"`
	StartFromHead bool   `json:"startFromHead"`
}

type outputLogEvent struct {
	Timestamp     int64  `json:"timestamp"`
	Message       string `json:"message"`
	IngestionTime int64  `json:"ingestionTime"`
}

func (s *Server) logsGetLogEvents(c *call) (any, error) {
	var in getLogEventsInput
	if err := c.decode(&in); err != nil {
		return nil, err
	}
	group, err := in.name()
	if err != nil {
		return nil, err
	}
	if err := checkStreamName(in.LogStreamName); err != nil {
		return nil, err
	}
	limit, err := pageLimit(in.Limit, logsMaxGetEvents)
	if err != nil {
		return nil, err
	}
	// A token is f/KEY (read forward from after KEY) or b/KEY (read back
	// from before KEY).
	forward := in.StartFromHead
	var from eventKey
	haveFrom := false
	if in.NextToken != "" {
		direction, key, _ := strings.Cut(in.NextToken, "/")
		from, haveFrom = parseEventKey(key)
		if !haveFrom || (direction != "f" && direction != "b") {
			return nil, invalidParameter(ServiceLogs, "The specified nextToken is invalid.")
		}
		forward = direction == "f"
	}
	if err := c.enter(group); err != nil {
		return nil, err
	}
	s.logs.mu.Lock()
	defer s.logs.mu.Unlock()
	g, err := s.logGroup(c, group, false)
	if err != nil {
		return nil, err
	}
	ls, err := s.logStream(g, in.LogStreamName, false)
	if err != nil {
		return nil, err
	}
	// The events in range: startTime inclusive, endTime exclusive.
	g.trim(s.now())
	events := ls.events
	if in.StartTime != nil {
		events = events[sort.Search(len(events), func(i int) bool { return events[i].Timestamp >= *in.StartTime }):]
	}
	if in.EndTime != nil {
		events = events[:sort.Search(len(events), func(i int) bool { return events[i].Timestamp >= *in.EndTime })]
	}
	// The page is events[lo:hi], from after the token forward, or from
	// before it backward, within the limits of one answer.
	lo, hi, size := 0, len(events), 0
	fits := func(e LogEvent) bool {
		return hi-lo < limit && size+len(e.Message)+logsEventOverhead <= logsMaxGetBytes
	}
	if forward {
		if haveFrom {
			lo = sort.Search(len(events), func(i int) bool { return from.less(events[i].key()) })
		}
		for hi = lo; hi < len(events) && fits(events[hi]); hi++ {
			size += len(events[hi].Message) + logsEventOverhead
		}
	} else {
		if haveFrom {
			hi = sort.Search(len(events), func(i int) bool { return !events[i].key().less(from) })
		}
		for lo = hi; lo > 0 && fits(events[lo-1]); lo-- {
			size += len(events[lo-1].Message) + logsEventOverhead
		}
	}
	return logEventsPage(events[lo:hi], in.NextToken, forward), nil
}

// logEventsPage is the answer of GetLogEvents returning page: at the end
// of the stream, the token that was given comes back.
func logEventsPage(page []LogEvent, token string, forward bool) any {
	out := struct {
		Events            []outputLogEvent `json:"events"`
		NextForwardToken  string           `json:"nextForwardToken"`
		NextBackwardToken string           `json:"nextBackwardToken"`
	}{Events: make([]outputLogEvent, len(page))}
	for i, e := range page {
		out.Events[i] = outputLogEvent{Timestamp: e.Timestamp, Message: e.Message, IngestionTime: e.IngestionTime}
	}
	if len(page) == 0 {
		if token == "" {
			token = "f/0/0"
		}
		out.NextForwardToken, out.NextBackwardToken = token, token
		if forward {
			out.NextBackwardToken = "b/" + strings.TrimPrefix(token, "f/")
		} else {
			out.NextForwardToken = "f/" + strings.TrimPrefix(token, "b/")
		}
		return out
	}
	out.NextForwardToken = "f/" + page[len(page)-1].key().String()
	out.NextBackwardToken = "b/" + page[0].key().String()
	return out
}
