package kinesis

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/kinesis"

	"github.com/sluicehq/sluice/sinks"
	"github.com/sluicehq/sluice/sinks/awsjson"
)

// lateReader is an aws.HTTPClient that fails each call at once and keeps
// its request's body unread, to read later: as net/http's transport
// returns when a call's ctx ends while its write loop may still be
// sending the body.
type lateReader struct{ bodies []io.Reader }

func (l *lateReader) Do(req *http.Request) (*http.Response, error) {
	l.bodies = append(l.bodies, req.Body)
	return nil, errors.New("the call's context ended while the request was being written")
}

// TestBodyReadAfterWriteReturned checks that what a transport reads of a
// call's body after the sink's Write returned is still that call's body,
// although the sink's next Writes reuse the pooled buffer it was encoded
// in: the sink's client sends a copy (sinks.BodyCopyingHTTPClient), which
// nothing reuses while the transport may read it.
func TestBodyReadAfterWriteReturned(t *testing.T) {
	late := &lateReader{}
	target, err := parseStreamARN(testStreamARN)
	if err != nil {
		t.Fatal(err)
	}
	client := kinesis.NewFromConfig(aws.Config{
		Region:      "eu-west-1",
		Credentials: credentials.NewStaticCredentialsProvider("AKIASTATICKEY0000000", "static-secret", ""),
		Retryer:     func() aws.Retryer { return aws.NopRetryer{} },
		HTTPClient:  sinks.BodyCopyingHTTPClient(late),
	}, func(o *kinesis.Options) { o.BaseEndpoint = aws.String("http://kinesis.test") })
	sink := &Sink{stream: target, client: client, bodies: new(awsjson.Buffers)}

	const writes = 20
	for i := range writes {
		batch := []sinks.Record{{ID: fmt.Sprintf("write-%02d", i), Data: fmt.Appendf(nil, `{"write":%d}`, i)}}
		if _, err := sink.Write(t.Context(), batch); err == nil {
			t.Fatalf("Write %d succeeded, want the transport's failure", i)
		}
	}
	if len(late.bodies) != writes {
		t.Fatalf("%d calls reached the transport, want %d", len(late.bodies), writes)
	}
	for i, body := range late.bodies {
		var sent struct {
			Records []struct{ PartitionKey string }
		}
		b, err := io.ReadAll(body)
		if err == nil {
			err = json.Unmarshal(b, &sent)
		}
		if want := fmt.Sprintf("write-%02d", i); err != nil || len(sent.Records) != 1 || sent.Records[0].PartitionKey != want {
			t.Errorf("the body of Write %d, read after it returned, is %q (%v), want its record %s", i, b, err, want)
		}
	}
}
