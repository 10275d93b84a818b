package store

import (
	"encoding/json"
	"errors"
	"reflect"
	"testing"
)

// FuzzCheck feeds arbitrary destinations and subscriptions to the checks
// the store runs before writing one: ARNs are parsed and CEL compiled here,
// so this is where untrusted input meets the most code. A check must never
// panic, must refuse with a *ValidationError naming a field and saying
// what is wrong, and must leave an accepted resource normalized: checking
// it again accepts it unchanged.
func FuzzCheck(f *testing.F) {
	f.Add([]byte(`{"format":"JSON","target":{"kinesis":{"auth":{"role":{"role_arn":"arn:aws:iam::123456789012:role/r"}},"stream_arn":"arn:aws:kinesis:us-east-1:123456789012:stream/s"}}}`), false)
	f.Add([]byte(`{"target":{"firehose":{"auth":{"creds":{"aws_access_key_id":"AKIA","aws_secret_access_key":"s"}},"delivery_stream_arn":"arn:aws-cn:firehose:cn-north-1:123456789012:deliverystream/d"}}}`), false)
	f.Add([]byte(`{"target":{"cloudwatch_logs":{"auth":{"role":{"role_arn":"arn:aws-us-gov:iam::123456789012:role/a/b"}},"log_group_arn":"arn:aws-us-gov:logs:us-gov-west-1:123456789012:log-group:/x:*"}}}`), false)
	f.Add([]byte(`{"sources":[{"type":"http_request_complete.v0","filter":"inCIDR(ev.conn.client_ip, '10.0.0.0/8') && ev.conn.server_port in [80, 443]","fields":["conn","http.request.method"]}]}`), true)
	f.Add([]byte(`{"sources":[{"type":"tcp_connection_closed.v0","filter":"ev.conn.server_name.matches('^a+$')"},{"type":"api_key_created.v0"}],"description":"é"}`), true)
	f.Add([]byte(`{"sources":[{"type":"http_request_complete.v0","fields":["conn.client_ip","conn"]}]}`), true)
	env, err := defaultFilters()
	if err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, body []byte, subscription bool) {
		var (
			value any
			check func() error
		)
		if subscription {
			var sub Subscription
			value, check = &sub, func() error { return sub.check(env) }
		} else {
			var d Destination
			value, check = &d, func() error { return d.check() }
		}
		if json.Unmarshal(body, value) != nil {
			return
		}
		err := check()
		if err != nil {
			var invalid *ValidationError
			if !errors.As(err, &invalid) || invalid.Msg == "" || invalid.Field == "" {
				t.Fatalf("check of %s: %v, want a *ValidationError naming a field", body, err)
			}
			return
		}
		before := reflect.ValueOf(value).Elem().Interface()
		if err := check(); err != nil {
			t.Fatalf("check of %s accepted it, then refused it normalized: %v", body, err)
		}
		if after := reflect.ValueOf(value).Elem().Interface(); !reflect.DeepEqual(before, after) {
			t.Fatalf("check of %s is not idempotent: %+v, then %+v", body, before, after)
		}
	})
}
