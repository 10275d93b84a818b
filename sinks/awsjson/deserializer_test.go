package awsjson

import (
	"context"
	"errors"
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

// failingAnswer is the transport's side of a call whose answer's body
// fails after its first bytes, as when the call's context ends mid-read.
type failingAnswer struct {
	first string
	err   error
}

func (a failingAnswer) HandleDeserialize(context.Context, middleware.DeserializeInput) (middleware.DeserializeOutput, middleware.Metadata, error) {
	body := io.NopCloser(io.MultiReader(strings.NewReader(a.first), failingReader{a.err}))
	resp := &smithyhttp.Response{Response: &http.Response{StatusCode: http.StatusOK, Body: body}}
	return middleware.DeserializeOutput{RawResponse: resp}, middleware.Metadata{}, nil
}

// wholeReader is an SDK deserializer that reads the whole body and fails
// with the error that ended it.
type wholeReader struct{ read string }

func (*wholeReader) ID() string { return deserializerID }

func (w *wholeReader) HandleDeserialize(ctx context.Context, in middleware.DeserializeInput, next middleware.DeserializeHandler) (middleware.DeserializeOutput, middleware.Metadata, error) {
	out, md, err := next.HandleDeserialize(ctx, in)
	if err != nil {
		return out, md, err
	}
	b, err := io.ReadAll(out.RawResponse.(*smithyhttp.Response).Body)
	w.read = string(b)
	return out, md, err
}

// TestDeserializerHandsOnReadFailure checks that an answer whose body
// fails mid-read (the context ended) goes to the SDK's deserializer as it
// came: the bytes read, then the same error.
func TestDeserializerHandsOnReadFailure(t *testing.T) {
	sdk := &wholeReader{}
	d := &Deserializer{Shape: &testShape, Entry: func(Entry) {}, Bodies: new(Buffers), sdk: sdk}
	answer := failingAnswer{first: `{"Records":[{"SequenceNumber":"1"},`, err: context.Canceled}
	_, _, err := d.HandleDeserialize(context.Background(), middleware.DeserializeInput{}, answer)
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("HandleDeserialize = %v, want the body's error, %v", err, context.Canceled)
	}
	if d.Read || sdk.read != answer.first {
		t.Fatalf("Read %v, the SDK's deserializer read %q; want false and %q", d.Read, sdk.read, answer.first)
	}
}
