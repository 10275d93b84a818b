// Package awsjson encodes the bodies of the AWS calls that carry a sink's
// records (Kinesis PutRecords, Firehose PutRecordBatch, CloudWatch Logs
// PutLogEvents) straight from the records' bytes into pooled buffers, and
// hands such a body to the AWS SDK in place of the SDK's own serializer.
// It reads the successful answers of PutRecords and PutRecordBatch, the
// per-record entries, in place of the SDK's deserializer (Deserializer,
// AnswerShape), allocating nothing but what the sink keeps of a failed
// record, and leaves every other answer to the SDK's deserializer.
//
// The SDK still does everything else of the call: credentials, STS,
// endpoint resolution, SigV4 signing, sending, and reading error answers.
// The package is not a JSON encoder or decoder for anything else: it has
// appenders for a base64 blob, which with package jsonstring's strings is
// all those bodies need beyond their fixed punctuation, and a reader of the
// one shape of answer those calls have.
package awsjson
