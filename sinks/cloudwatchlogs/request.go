package cloudwatchlogs

import (
	"strconv"

	"github.com/sluicehq/sluice/internal/jsonstring"
	"github.com/sluicehq/sluice/sinks"
)

// putLogEventsTarget is the X-Amz-Target of PutLogEvents.
const putLogEventsTarget = "Logs_20140328.PutLogEvents"

// encode appends to buf the JSON of the PutLogEvents call of a run of
// events, as the SDK would encode its input: each event's message the
// Data of its record as a JSON string, its timestamp, and the sink's log
// group and stream.
func (s *Sink) encode(buf []byte, records []sinks.Record, run []event) []byte {
	if cap(buf) == 0 { // new, not from the pool
		buf = make([]byte, 0, encodedSize(records, run))
	}
	buf = append(buf, `{"logEvents":[`...)
	for i, e := range run {
		if i > 0 {
			buf = append(buf, ',')
		}
		buf = append(buf, `{"message":`...)
		buf = jsonstring.AppendBytes(buf, records[e.index].Data)
		buf = append(buf, `,"timestamp":`...)
		buf = strconv.AppendInt(buf, e.timestamp, 10)
		buf = append(buf, '}')
	}
	buf = append(buf, `],"logGroupName":`...)
	buf = jsonstring.Append(buf, s.group.name)
	buf = append(buf, `,"logStreamName":`...)
	buf = jsonstring.Append(buf, s.stream)
	return append(buf, '}')
}

// encodedSize returns about the size of the body of a run: the capacity to
// give a new body. A message's escapes make it larger (an envelope's
// quotes, mostly), so it counts each Data a quarter more.
func encodedSize(records []sinks.Record, run []event) int {
	const (
		frame = 256 // the call's own fields
		entry = 44  // one event's punctuation, field names and timestamp
	)
	n := frame
	for _, e := range run {
		n += entry + len(records[e.index].Data)*5/4
	}
	return n
}
