package awsjson

import (
	"bytes"
	"context"
	"fmt"
	"net/http"

	"github.com/aws/smithy-go/middleware"
	smithyhttp "github.com/aws/smithy-go/transport/http"
)

// serializerID is the ID of the middleware of an SDK client's stack that
// serializes the call's input.
const serializerID = "OperationSerializer"

// Serializer stands in for an SDK client's OperationSerializer middleware
// in one call: it makes the request of an awsJson 1.1 call with Body as its
// body, setting what smithy-go's awsjson.Protocol.SerializeRequest sets for
// the services of sluice's sinks (smithy-go v1.28.8): method POST, path "/"
// unless the endpoint has one, X-Amz-Target, Content-Type. The input the
// client was given still serves the SDK's validation and endpoint
// resolution (a Kinesis stream's ARN), and is not sent.
//
// Body must stay unchanged until the call returns. When the client sends
// through sinks.BodyCopyingHTTPClient, as every sink's client does, the
// transport reads a copy, so that Body may be reused once the call
// returned, even when the transport is still writing the request then
// (TestBodyReadAfterWriteReturned, in sinks/kinesis).
type Serializer struct {
	// Target is the X-Amz-Target header: the service's schema name and
	// the operation, "Kinesis_20131202.PutRecords".
	Target string
	// Body is the call's JSON body.
	Body []byte
}

// ID returns the ID of the SDK's serializer, which Serializer replaces.
func (*Serializer) ID() string { return serializerID }

// HandleSerialize sets the request's method, path, headers and body.
func (s *Serializer) HandleSerialize(ctx context.Context, in middleware.SerializeInput, next middleware.SerializeHandler) (middleware.SerializeOutput, middleware.Metadata, error) {
	req, ok := in.Request.(*smithyhttp.Request)
	if !ok {
		return middleware.SerializeOutput{}, middleware.Metadata{}, fmt.Errorf("unexpected transport type %T", in.Request)
	}
	req.Method = http.MethodPost
	if req.URL.Path == "" {
		req.URL.Path = "/"
	}
	req.Header.Set("X-Amz-Target", s.Target)
	req.Header.Set("Content-Type", "application/x-amz-json-1.1")
	streamed, err := req.SetStream(bytes.NewReader(s.Body))
	if err != nil {
		return middleware.SerializeOutput{}, middleware.Metadata{}, fmt.Errorf("setting the request body: %w", err)
	}
	*req = *streamed
	return next.HandleSerialize(ctx, in)
}

// Swap replaces the SDK's serializer of stack with s: a function for a
// client's Options.APIOptions of one call.
func (s *Serializer) Swap(stack *middleware.Stack) error {
	if _, err := stack.Serialize.Swap(serializerID, s); err != nil {
		return fmt.Errorf("replacing the SDK's serializer: %w", err)
	}
	return nil
}
