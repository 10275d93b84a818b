package awsjson

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http"

	"github.com/aws/smithy-go/middleware"
	smithyhttp "github.com/aws/smithy-go/transport/http"
)

// deserializerID is the ID of the middleware of an SDK client's stack that
// deserializes the call's answer.
const deserializerID = "OperationDeserializer"

// Deserializer stands in for an SDK client's OperationDeserializer
// middleware in one call: it reads a successful answer (status 2xx) of
// Shape itself, calling Entry for each entry, and hands every other answer
// (an error, an answer Shape.Read leaves to the SDK) and every failure to
// send to the SDK's deserializer, unchanged, so that the call returns the
// SDK's errors.
//
// When it read the answer, Read is true and the call returns Output, the
// operation's output with nothing read into it; when not, the SDK's
// output. A Deserializer serves one call.
type Deserializer struct {
	// Shape is the answer's.
	Shape *AnswerShape
	// Entry is given each entry of the answer, in order (see
	// AnswerShape.Read: when Read ends false, the SDK reads the answer
	// again after some calls of Entry).
	Entry func(Entry)
	// Output is the call's empty output: &kinesis.PutRecordsOutput{}.
	Output any
	// Bodies holds the answers' bodies while they are read.
	Bodies *Buffers
	// Read says that the answer was read here, not by the SDK.
	Read bool

	sdk middleware.DeserializeMiddleware
}

// ID returns the ID of the SDK's deserializer, which Deserializer
// replaces.
func (*Deserializer) ID() string { return deserializerID }

// HandleDeserialize sends the request and reads the answer.
func (d *Deserializer) HandleDeserialize(ctx context.Context, in middleware.DeserializeInput, next middleware.DeserializeHandler) (middleware.DeserializeOutput, middleware.Metadata, error) {
	out, md, err := next.HandleDeserialize(ctx, in)
	resp, ok := out.RawResponse.(*smithyhttp.Response)
	if err != nil || !ok || resp.StatusCode < 200 || resp.StatusCode >= 300 {
		return d.sdk.HandleDeserialize(ctx, in, sent{out, md, err})
	}
	body := d.Bodies.Get()
	defer d.Bodies.Put(body)
	var readErr error
	*body, readErr = ReadAll(*body, resp.Body)
	resp.Body.Close()
	if readErr == nil && d.Shape.Read(*body, d.Entry) {
		d.Read = true
		out.Result = d.Output
		return out, md, nil
	}
	// The SDK reads the answer as it came, failure to read it included.
	resp.Body = io.NopCloser(io.MultiReader(bytes.NewReader(*body), failingReader{readErr}))
	out, md, err = d.sdk.HandleDeserialize(ctx, in, sent{out, md, nil})
	// That body reads the buffer, which goes back to Bodies on return: the
	// middlewares around this one (which drain an answer's body) and the
	// call's error (which keeps the response) read nothing of it.
	resp.Body = http.NoBody
	return out, md, err
}

// Swap replaces the SDK's deserializer of stack with d, keeping the SDK's
// for the answers d leaves to it: a function for a client's
// Options.APIOptions of one call.
func (d *Deserializer) Swap(stack *middleware.Stack) error {
	sdk, err := stack.Deserialize.Swap(deserializerID, d)
	if err != nil {
		return fmt.Errorf("replacing the SDK's deserializer: %w", err)
	}
	d.sdk = sdk
	return nil
}

// sent is the rest of a deserialize step that already ran: it returns its
// outcome again, for the SDK's deserializer.
type sent struct {
	out middleware.DeserializeOutput
	md  middleware.Metadata
	err error
}

func (s sent) HandleDeserialize(context.Context, middleware.DeserializeInput) (middleware.DeserializeOutput, middleware.Metadata, error) {
	return s.out, s.md, s.err
}

// failingReader is the end of a body that failed with err: io.EOF when
// err is nil.
type failingReader struct{ err error }

func (r failingReader) Read([]byte) (int, error) {
	if r.err == nil {
		return 0, io.EOF
	}
	return 0, r.err
}

// ReadAll appends what r reads to dst, up to io.EOF, growing dst as
// append does, and returns it with the error that ended the read (nil at
// io.EOF): io.ReadAll into a buffer of the caller's.
func ReadAll(dst []byte, r io.Reader) ([]byte, error) {
	for {
		if len(dst) == cap(dst) {
			dst = append(dst, 0)[:len(dst)]
		}
		n, err := r.Read(dst[len(dst):cap(dst)])
		dst = dst[:len(dst)+n]
		if err == io.EOF {
			return dst, nil
		}
		if err != nil {
			return dst, err
		}
	}
}
