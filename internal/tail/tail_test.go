package tail_test

import (
	"errors"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"

	"github.com/sluicehq/sluice/internal/tail"
	"github.com/sluicehq/sluice/sinks/desttype"
)

// TestNewReadsEveryType checks that New finds the reader of every type of
// destination target by its ARN, so that a type's package declaring Tail
// is all it takes for sluice tail to read it, and that an ARN of the same
// service but another resource is not taken for it.
func TestNewReadsEveryType(t *testing.T) {
	emulator := &aws.Config{BaseEndpoint: aws.String("http://127.0.0.1:1"), Credentials: credentials.NewStaticCredentialsProvider("k", "s", "")}
	for _, typ := range desttype.All() {
		t.Run(typ.Name, func(t *testing.T) {
			r, err := tail.New(t.Context(), tail.Config{ARN: typ.ARN.Example, AWS: emulator})
			if err != nil || r == nil {
				t.Fatalf("New(%s) = %v, %v; want its type's reader", typ.ARN.Example, r, err)
			}
			other := "arn:aws:" + typ.ARN.Service + ":us-east-1:123456789012:other/x"
			if _, err := tail.New(t.Context(), tail.Config{ARN: other, AWS: emulator}); !errors.Is(err, tail.ErrTarget) {
				t.Fatalf("New(%s) = %v, want ErrTarget", other, err)
			}
		})
	}
}
