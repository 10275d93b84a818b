// Package awsjson encodes the bodies of the AWS calls that carry a sink's
// records (Kinesis PutRecords, Firehose PutRecordBatch, CloudWatch Logs
// PutLogEvents) straight from the records' bytes into pooled buffers, and
// hands such a body to the AWS SDK in place of the SDK's own serializer.
//
// The SDK still does everything else of the call: credentials, STS,
// endpoint resolution, SigV4 signing, sending, and reading the answer. The
// package is not a JSON encoder for anything else: it has appenders for a
// JSON string and a base64 blob, which is all those bodies need beyond
// their fixed punctuation.
package awsjson
