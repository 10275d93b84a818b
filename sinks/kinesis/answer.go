package kinesis

import (
	"github.com/aws/aws-sdk-go-v2/service/kinesis"

	"github.com/sluicehq/sluice/sinks"
	"github.com/sluicehq/sluice/sinks/awsjson"
)

// putRecordsAnswer is the shape of PutRecords' answer.
var putRecordsAnswer = awsjson.AnswerShape{
	List:         "Records",
	Members:      []awsjson.Member{{Name: "EncryptionType", Kind: awsjson.String}, {Name: "FailedRecordCount", Kind: awsjson.Int32}},
	EntryMembers: []awsjson.Member{{Name: "SequenceNumber", Kind: awsjson.String}, {Name: "ShardId", Kind: awsjson.String}},
}

// answerReader returns the reader of the successful answer of a
// PutRecords call of the records sent of results, which fills in their
// results as recordResults would, with no allocation but a failed
// record's code and message: a record whose entry has an ErrorCode failed.
func (s *Sink) answerReader(answer *sinks.Answer) *awsjson.Deserializer {
	return &awsjson.Deserializer{
		Shape:  &putRecordsAnswer,
		Output: &kinesis.PutRecordsOutput{},
		Bodies: s.answers,
		Entry: func(e awsjson.Entry) {
			if !e.HasCode {
				answer.Entry(sinks.EntryError{})
				return
			}
			answer.Entry(sinks.EntryError{Failed: true, Code: string(e.Code), Message: string(e.Message)})
		},
	}
}
