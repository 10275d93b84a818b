package firehose

import (
	"github.com/sluicehq/sluice/internal/jsonstring"
	"github.com/sluicehq/sluice/sinks"
	"github.com/sluicehq/sluice/sinks/awsjson"
)

// putRecordBatchTarget is the X-Amz-Target of PutRecordBatch.
const putRecordBatchTarget = "Firehose_20150804.PutRecordBatch"

// encode appends to *body the JSON of the PutRecordBatch call of records,
// as the SDK would encode its input: the delivery stream's name, and each
// record's Data followed by a newline, in base64. It returns Tally.Err's
// error, with *body to be ignored, when the batch is beyond Limits.
func (s *Sink) encode(body *[]byte, records []sinks.Record) error {
	tally := limits.Tally()
	buf := *body
	if cap(buf) == 0 { // new, not from the pool
		buf = make([]byte, 0, encodedSize(records))
	}
	buf = append(buf, `{"DeliveryStreamName":`...)
	buf = jsonstring.Append(buf, s.stream.name)
	buf = append(buf, `,"Records":[`...)
	for i, r := range records {
		tally.Add(r)
		if i > 0 {
			buf = append(buf, ',')
		}
		buf = append(buf, `{"Data":`...)
		buf = awsjson.AppendBase64Line(buf, r.Data)
		buf = append(buf, '}')
	}
	buf = append(buf, "]}"...)
	*body = buf
	return tally.Err()
}

// encodedSize returns about the size of the body of records: the capacity
// to give a new body.
func encodedSize(records []sinks.Record) int {
	const (
		frame = 128 // the call's own fields
		entry = 12  // one record's punctuation and field name
	)
	n := frame
	for _, r := range records {
		n += entry + (len(r.Data)+3)/3*4
	}
	return n
}
