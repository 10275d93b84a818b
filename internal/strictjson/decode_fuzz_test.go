package strictjson

import (
	"encoding/json"
	"errors"
	"reflect"
	"strings"
	"testing"

	"github.com/sluicehq/sluice/apiwire"
	"github.com/sluicehq/sluice/schemas"
)

// destinationInput is internal/api's body of a destination, with the
// types of store.Target copied here: the leaf's test binary links neither.
type destinationInput struct {
	Description *string `json:"description"`
	Metadata    *string `json:"metadata"`
	Format      *string `json:"format"`
	Target      *target `json:"target"`
}

type target struct {
	Firehose       *firehoseTarget       `json:"firehose,omitempty"`
	Kinesis        *kinesisTarget        `json:"kinesis,omitempty"`
	CloudWatchLogs *cloudWatchLogsTarget `json:"cloudwatch_logs,omitempty"`
}

type firehoseTarget struct {
	Auth              awsAuth `json:"auth"`
	DeliveryStreamARN string  `json:"delivery_stream_arn"`
}

type kinesisTarget struct {
	Auth      awsAuth `json:"auth"`
	StreamARN string  `json:"stream_arn"`
}

type cloudWatchLogsTarget struct {
	Auth        awsAuth `json:"auth"`
	LogGroupARN string  `json:"log_group_arn"`
}

type awsAuth struct {
	Role  *awsRole  `json:"role,omitempty"`
	Creds *awsCreds `json:"creds,omitempty"`
}

type awsRole struct {
	RoleARN string `json:"role_arn"`
}

type awsCreds struct {
	AccessKeyID     string `json:"aws_access_key_id"`
	SecretAccessKey string `json:"aws_secret_access_key,omitempty"`
}

// requestBodies are the types management request bodies decode into, as
// fuzz inputs choose them.
var requestBodies = []func() any{
	func() any { return new(destinationInput) },
	func() any { return new(apiwire.SubscriptionInput) },
	func() any { return new(apiwire.SourceInput) },
	func() any { return new(apiwire.SourceUpdate) },
	func() any { return new(apiwire.APIKeyInput) },
}

// FuzzDecodeObject feeds arbitrary bodies to Decode, with the text check
// of internal/api: it must never panic, must refuse with an *Error of a
// known kind that says which member is at fault, and must accept only a
// JSON object every member of which is a field of the body's type, named
// exactly, holding the value encoding/json decodes.
func FuzzDecodeObject(f *testing.F) {
	for _, seed := range []struct {
		body  string
		which uint8
	}{
		{`{"description":"d","metadata":"m","format":"JSON","target":{"kinesis":{"auth":{"role":{"role_arn":"arn:aws:iam::123456789012:role/r"}},"stream_arn":"arn:aws:kinesis:us-east-1:123456789012:stream/s"}}}`, 0},
		{`{"target":{"firehose":{"auth":{"creds":{"aws_access_key_id":"AKIA","aws_secret_access_key":"s"}},"delivery_stream_arn":"x"}}}`, 0},
		{`{"description":"é","sources":[{"type":"http_request_complete.v0","filter":"ev.conn.server_port == 443","fields":["conn"]}],"destination_ids":["ed_1"]}`, 1},
		{`{"sources":null,"destination_ids":[]}`, 1},
		{`{"type":"tcp_connection_closed.v0","fields":null}`, 2},
		{`{"filter":"","fields":[]}`, 3},
		{`{"description":"ci","metadata":"{}"}`, 4},
		{` {"Description":"x"}`, 4},
		{`{"description":"a","description":"b"}`, 4},
		{`{"sources":[{"type":"x","TYPE":"y"}]}`, 1},
		{`{"target":{"kinesis":{"auth":{"role":{"role_arn":1}}}}}`, 0},
		{`{} {}`, 3},
		{`null`, 2},
		{`{"sources":[{"type":"x"},{"type":7}],"destination_ids":["ed_1",[]]}`, 1},
		{`{"target":{"kinesis":{"auth":{"creds":{"aws_access_key_id":true}}}}}`, 0},
		{`{"fields":["conn",{"a":1}]}`, 3},
	} {
		f.Add([]byte(seed.body), seed.which)
	}
	f.Fuzz(func(t *testing.T, body []byte, which uint8) {
		v := requestBodies[int(which)%len(requestBodies)]()
		if err := Decode(body, v, Options{CheckText: schemas.CheckJSON}); err != nil {
			checkError(t, body, err)
			return
		}
		var sent map[string]any
		if err := json.Unmarshal(body, &sent); err != nil {
			t.Fatalf("accepted %q, which is not a JSON object: %v", body, err)
		}
		canonical, err := json.Marshal(v)
		if err != nil {
			t.Fatal(err)
		}
		var decoded map[string]any
		if err := json.Unmarshal(canonical, &decoded); err != nil {
			t.Fatal(err)
		}
		if path, ok := within(sent, decoded, ""); !ok {
			t.Fatalf("accepted %q, but %s is not decoded as sent: %s", body, path, canonical)
		}
	})
}

// checkError fails t unless err, Decode's refusal of body, is an *Error
// of a known kind with the fields its kind says, a member at fault named
// in its text.
func checkError(t *testing.T, body []byte, err error) {
	t.Helper()
	var e *Error
	if !errors.As(err, &e) {
		t.Fatalf("refused %q with %T %v, not an *Error", body, err, err)
	}
	switch e.Kind {
	case UnknownMember, Duplicate:
		// The member may be named "", at the top.
	case SameButCase:
		if e.Candidate == "" || e.Member == "" {
			t.Fatalf("refused %q with %+v, which names no member or candidate", body, e)
		}
	case WrongType, OutOfRange:
		if e.Want == "" || e.Got == "" {
			t.Fatalf("refused %q with %+v, which says not what it expected and got", body, e)
		}
	case Empty, BadText, Unreadable:
		if e.Err == nil {
			t.Fatalf("refused %q with %+v, which has no error underneath", body, e)
		}
		return
	case NotObject:
		if e.Start == '{' {
			t.Fatalf("refused %q as not an object, though it starts with {", body)
		}
		return
	case Trailing:
		if e.Offset <= 0 || e.Offset > int64(len(body)) {
			t.Fatalf("refused %q with trailing data after byte %d", body, e.Offset)
		}
		return
	default:
		t.Fatalf("refused %q with %+v, of no known kind", body, e)
	}
	if !strings.Contains(e.Error(), e.Member) {
		t.Fatalf("refused %q with %q, which does not name its member %q", body, e.Error(), e.Member)
	}
}

// within reports whether every member of the object sent is in decoded,
// under the same name and with the same value, a member absent from
// decoded (omitempty) being a zero value; it returns the path of the
// first that is not.
func within(sent, decoded any, path string) (string, bool) {
	switch s := sent.(type) {
	case map[string]any:
		d, ok := decoded.(map[string]any)
		if !ok {
			return path, s == nil && decoded == nil
		}
		for k, sv := range s {
			dv, present := d[k]
			if !present {
				if !isZero(sv) {
					return path + "." + k, false
				}
				continue
			}
			if p, ok := within(sv, dv, path+"."+k); !ok {
				return p, false
			}
		}
		return "", true
	case []any:
		d, ok := decoded.([]any)
		if !ok {
			return path, len(s) == 0 && decoded == nil
		}
		if len(s) != len(d) {
			return path, false
		}
		for i := range s {
			if p, ok := within(s[i], d[i], path+"[]"); !ok {
				return p, false
			}
		}
		return "", true
	case nil:
		return path, decoded == nil || isZero(decoded)
	}
	return path, reflect.DeepEqual(sent, decoded)
}

func isZero(v any) bool {
	switch v := v.(type) {
	case nil:
		return true
	case string:
		return v == ""
	case []any:
		return len(v) == 0
	case map[string]any:
		return len(v) == 0
	case bool:
		return !v
	case float64:
		return v == 0
	}
	return false
}
