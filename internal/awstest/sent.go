package awstest

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/aws/smithy-go/middleware"
	smithyhttp "github.com/aws/smithy-go/transport/http"

	"github.com/sluicehq/sluice/sinks/awsjson"
)

// placeholder is the SDK's serializer in the stack SentInput builds.
type placeholder struct{}

func (placeholder) ID() string { return "OperationSerializer" }

func (placeholder) HandleSerialize(ctx context.Context, in middleware.SerializeInput, next middleware.SerializeHandler) (middleware.SerializeOutput, middleware.Metadata, error) {
	return next.HandleSerialize(ctx, in)
}

// placeholderAnswer is the SDK's deserializer in the stack SentInput
// builds.
type placeholderAnswer struct{}

func (placeholderAnswer) ID() string { return "OperationDeserializer" }

func (placeholderAnswer) HandleDeserialize(ctx context.Context, in middleware.DeserializeInput, next middleware.DeserializeHandler) (middleware.DeserializeOutput, middleware.Metadata, error) {
	return next.HandleDeserialize(ctx, in)
}

// SentInput decodes into input the body that the awsjson.Serializer among
// a call's apiOptions (a client's Options.APIOptions once the call's
// options applied) sends in place of the SDK's serialization of the call's
// input: so that a fake client of a sink sees the records the sink sent.
// The body's JSON names are the SDK input's fields' (case aside), and a
// blob is base64, as encoding/json reads a []byte.
func SentInput(apiOptions []func(*middleware.Stack) error, input any) error {
	stack := middleware.NewStack("fake", smithyhttp.NewStackRequest)
	if err := stack.Serialize.Add(placeholder{}, middleware.After); err != nil {
		return err
	}
	if err := stack.Deserialize.Add(placeholderAnswer{}, middleware.After); err != nil {
		return err
	}
	for _, fn := range apiOptions {
		if err := fn(stack); err != nil {
			return err
		}
	}
	m, _ := stack.Serialize.Get("OperationSerializer")
	serializer, ok := m.(*awsjson.Serializer)
	if !ok {
		return errors.New("the call's options send no body of the sink's")
	}
	if err := json.Unmarshal(serializer.Body, input); err != nil {
		return fmt.Errorf("decoding the body of %s: %w", serializer.Target, err)
	}
	return nil
}
