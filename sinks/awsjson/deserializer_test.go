package awsjson

import (
	"context"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/aws/smithy-go/middleware"
	smithyhttp "github.com/aws/smithy-go/transport/http"
)

// partialReader is an SDK deserializer that reads only the first bytes of
// an answer's body, as one that fails early does.
type partialReader struct{ read string }

func (*partialReader) ID() string { return deserializerID }

func (p *partialReader) HandleDeserialize(ctx context.Context, in middleware.DeserializeInput, next middleware.DeserializeHandler) (middleware.DeserializeOutput, middleware.Metadata, error) {
	out, md, err := next.HandleDeserialize(ctx, in)
	var b [4]byte
	n, _ := out.RawResponse.(*smithyhttp.Response).Body.Read(b[:])
	p.read = string(b[:n])
	return out, md, err
}

// answered is the transport's side of a call: an answer of status 200.
type answered string

func (a answered) HandleDeserialize(context.Context, middleware.DeserializeInput) (middleware.DeserializeOutput, middleware.Metadata, error) {
	resp := &smithyhttp.Response{Response: &http.Response{StatusCode: http.StatusOK, Body: io.NopCloser(strings.NewReader(string(a)))}}
	return middleware.DeserializeOutput{RawResponse: resp}, middleware.Metadata{}, nil
}

// TestDeserializerLeavesNoBodyOnBuffer checks that once an answer Read
// leaves to the SDK's deserializer was handed to it, what the SDK did not
// read of the body is no longer readable after HandleDeserialize returns:
// the body read the pooled buffer, which went back to Bodies, and the
// SDK's middlewares around the deserializer drain the body after it.
func TestDeserializerLeavesNoBodyOnBuffer(t *testing.T) {
	sdk := &partialReader{}
	d := &Deserializer{Shape: &testShape, Entry: func(Entry) {}, Bodies: new(Buffers), sdk: sdk}
	answer := `{"Records":[]} trailing data the SDK ignores`
	out, _, err := d.HandleDeserialize(context.Background(), middleware.DeserializeInput{}, answered(answer))
	if err != nil {
		t.Fatal(err)
	}
	if d.Read {
		t.Fatal("Read read an answer with trailing data")
	}
	if sdk.read != answer[:4] {
		t.Fatalf("the SDK's deserializer read %q, want %q", sdk.read, answer[:4])
	}
	rest, err := io.ReadAll(out.RawResponse.(*smithyhttp.Response).Body)
	if err != nil || len(rest) != 0 {
		t.Fatalf("the body read %q (%v) after HandleDeserialize returned, want nothing", rest, err)
	}
}
