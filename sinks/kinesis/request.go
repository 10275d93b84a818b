package kinesis

import (
	"github.com/sluicehq/sluice/internal/jsonstring"
	"github.com/sluicehq/sluice/sinks"
	"github.com/sluicehq/sluice/sinks/awsjson"
)

// putRecordsTarget is the X-Amz-Target of PutRecords.
const putRecordsTarget = "Kinesis_20131202.PutRecords"

// encode appends to *body the JSON of the PutRecords call of records, as
// the SDK would encode its input (each record's Data in base64, its ID the
// partition key, and the stream's ARN and name), and returns the index in
// records of each record sent. It sets the Permanent results of the
// records it leaves out (refuse), and returns Tally.Err's error, with
// *body to be ignored, when the batch is beyond Limits.
func (s *Sink) encode(body *[]byte, records []sinks.Record, results []sinks.Result) ([]int, error) {
	tally := limits.Tally()
	sent := make([]int, 0, len(records))
	buf := *body
	if cap(buf) == 0 { // new, not from the pool
		buf = make([]byte, 0, encodedSize(records))
	}
	buf = append(buf, `{"Records":[`...)
	for i, r := range records {
		tally.Add(r)
		if refused, ok := refuse(r); ok {
			results[i] = refused
			continue
		}
		if len(sent) > 0 {
			buf = append(buf, ',')
		}
		buf = append(buf, `{"Data":`...)
		buf = awsjson.AppendBase64(buf, r.Data)
		buf = append(buf, `,"PartitionKey":`...)
		buf = jsonstring.Append(buf, r.ID)
		buf = append(buf, '}')
		sent = append(sent, i)
	}
	buf = append(buf, `],"StreamARN":`...)
	buf = jsonstring.Append(buf, s.stream.arn)
	buf = append(buf, `,"StreamName":`...)
	buf = jsonstring.Append(buf, s.stream.name)
	buf = append(buf, '}')
	*body = buf
	return sent, tally.Err()
}

// encodedSize returns about the size of the body of records, a little
// more when their IDs need no escaping: the capacity to give a new body.
func encodedSize(records []sinks.Record) int {
	const (
		frame = 128 // the call's own fields
		entry = 36  // one record's punctuation and field names
	)
	n := frame
	for _, r := range records {
		n += entry + (len(r.Data)+2)/3*4 + len(r.ID)
	}
	return n
}
