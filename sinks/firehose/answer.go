package firehose

import (
	"github.com/aws/aws-sdk-go-v2/service/firehose"

	"github.com/sluicehq/sluice/sinks"
	"github.com/sluicehq/sluice/sinks/awsjson"
)

// putRecordBatchAnswer is the shape of PutRecordBatch's answer.
var putRecordBatchAnswer = awsjson.AnswerShape{
	List:         "RequestResponses",
	Members:      []awsjson.Member{{Name: "Encrypted", Kind: awsjson.Bool}, {Name: "FailedPutCount", Kind: awsjson.Int32}},
	EntryMembers: []awsjson.Member{{Name: "RecordId", Kind: awsjson.String}},
}

// answerReader returns the reader of the successful answer of a
// PutRecordBatch call, which fills in the results of its records as
// recordResults would, with no allocation but a failed record's code and
// message: a record whose entry has an ErrorCode other than "" failed.
func (s *Sink) answerReader(answer *sinks.Answer) *awsjson.Deserializer {
	return &awsjson.Deserializer{
		Shape:  &putRecordBatchAnswer,
		Output: &firehose.PutRecordBatchOutput{},
		Bodies: s.answers,
		Entry: func(e awsjson.Entry) {
			if len(e.Code) == 0 {
				answer.Entry(sinks.EntryError{})
				return
			}
			answer.Entry(sinks.EntryError{Failed: true, Code: string(e.Code), Message: string(e.Message)})
		},
	}
}
