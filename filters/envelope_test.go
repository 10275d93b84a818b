package filters_test

import (
	"context"
	"encoding/json"
	"errors"
	"testing"

	"github.com/sluicehq/sluice/filters"
)

func TestEnvelopeFilter(t *testing.T) {
	var event map[string]any
	if err := json.Unmarshal([]byte(`{"event_id":"ev_1","event_type":"http_request_complete.v0","account_id":"ac_1","principal":null,
		"object":{"conn":{"client_ip":"203.0.113.7","server_port":443},"http":{"request":{"method":"get"}}}}`), &event); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		expr string
		want bool
	}{
		{`ev.event_type == "http_request_complete.v0"`, true},
		{`ev.event_type.startsWith("tcp_")`, false},
		{`ev.object.conn.server_port == 443`, true},
		{`ev.object.conn.server_port > 1000`, false},
		{`inCIDR(ev.object.conn.client_ip, "203.0.113.0/24")`, true},
		{`ev.object.http.request.method == "get" && ev.principal == null`, true},
		{`ev.object.tls.version == "1.3"`, false}, // a field the event lacks
		{`has(ev.object.tls)`, false},
		{`ev.object.conn.server_port == "443"`, false}, // a type the field does not have
	}
	for _, tt := range tests {
		t.Run(tt.expr, func(t *testing.T) {
			f, err := filters.CompileEnvelope(tt.expr)
			if err != nil {
				t.Fatal(err)
			}
			got, err := f.Match(context.Background(), event)
			if err != nil {
				t.Fatal(err)
			}
			if got != tt.want {
				t.Fatalf("Match = %v, want %v", got, tt.want)
			}
		})
	}
}

func TestEnvelopeFilterErrors(t *testing.T) {
	tests := []struct {
		expr string
		want error
	}{
		{"", filters.ErrEmptyFilter},
		{"ev.event_type ==", filters.ErrInvalidFilter},
		{`"a string"`, filters.ErrNotBoolean},
		{`inCIDR(ev.object.conn.client_ip, "not a range")`, filters.ErrInvalidFilter},
		{`unknown == 1`, filters.ErrInvalidFilter},
	}
	for _, tt := range tests {
		t.Run(tt.expr, func(t *testing.T) {
			_, err := filters.CompileEnvelope(tt.expr)
			if !errors.Is(err, tt.want) {
				t.Fatalf("CompileEnvelope(%q) = %v, want %v", tt.expr, err, tt.want)
			}
		})
	}
}

func TestEnvelopeFilterCostLimit(t *testing.T) {
	f, err := filters.CompileEnvelope(`ev.object.list.all(a, ev.object.list.all(b, ev.object.list.all(c, a + b + c >= 0)))`)
	if err != nil {
		t.Fatal(err)
	}
	list := make([]any, 200)
	for i := range list {
		list[i] = float64(i)
	}
	_, err = f.Match(context.Background(), map[string]any{"object": map[string]any{"list": list}})
	if !errors.Is(err, filters.ErrCostLimit) {
		t.Fatalf("Match = %v, want ErrCostLimit", err)
	}
}
