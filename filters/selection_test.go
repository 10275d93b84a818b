package filters

import (
	"errors"
	"slices"
	"strings"
	"testing"
)

func TestCheckFields(t *testing.T) {
	env := newTestEnv(t)
	tests := []struct {
		name  string
		kind  string
		paths []string
		want  error    // nil, or the sentinel the error matches
		path  string   // the path a *FieldError names
		msg   []string // substrings of the message
	}{
		{"fields", httpKind, []string{"conn.client_ip", "http.request.method", "http.response.status_code"}, nil, "", nil},
		{"groups", httpKind, []string{"conn", "http.request", "tls.client_cert.subject"}, nil, "", nil},
		{"group and a field in it", httpKind, []string{"http", "http.request.url.host"}, nil, "", nil},
		{"map and list fields whole", httpKind, []string{"http.request.headers", "traffic_policy.logs"}, nil, "", nil},
		{"tcp", tcpKind, []string{"conn.bytes_in", "conn.end_ts", "ip_policy"}, nil, "", nil},
		{"none", httpKind, nil, nil, "", nil},
		{"unknown field", httpKind, []string{"conn.client_ip", "conn.client"}, ErrInvalidField, "conn.client",
			[]string{`invalid field "conn.client" for http_request_complete.v0`, "under conn are conn.client_ip, conn.server_ip"}},
		{"unknown top level", httpKind, []string{"nope"}, ErrInvalidField, "nope",
			[]string{"valid paths include backend, basic_auth, circuit_breaker"}},
		{"field of the other kind", httpKind, []string{"conn.bytes_in"}, ErrInvalidField, "conn.bytes_in", nil},
		{"inside a map", httpKind, []string{"http.request.headers.Host"}, ErrInvalidField, "http.request.headers.Host",
			[]string{"under http.request are", "http.request.headers"}},
		{"duplicate", httpKind, []string{"conn", "http", "conn"}, ErrInvalidField, "conn", []string{"selected more than once"}},
		{"empty path", httpKind, []string{""}, ErrInvalidField, "", []string{"must not be empty"}},
		{"trailing dot", httpKind, []string{"conn."}, ErrInvalidField, "conn.", nil},
		{"audit kind", "api_key_created.v0", []string{"id"}, ErrNotTraffic, "", nil},
		{"unknown kind", "nope.v0", []string{"id"}, ErrUnknownKind, "", nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := env.CheckFields(tt.kind, tt.paths)
			if tt.want == nil {
				if err != nil {
					t.Fatalf("CheckFields(%v): %v", tt.paths, err)
				}
				return
			}
			if !errors.Is(err, tt.want) {
				t.Fatalf("CheckFields(%v) error = %v, want %v", tt.paths, err, tt.want)
			}
			for _, s := range tt.msg {
				if !strings.Contains(err.Error(), s) {
					t.Errorf("error %q does not contain %q", err, s)
				}
			}
			var fe *FieldError
			if errors.As(err, &fe) != (tt.want == ErrInvalidField) {
				t.Fatalf("error %T, want a *FieldError: %v", err, tt.want == ErrInvalidField)
			}
			if fe != nil && (fe.Path != tt.path || fe.Kind != tt.kind) {
				t.Errorf("FieldError names %q of %s, want %q of %s", fe.Path, fe.Kind, tt.path, tt.kind)
			}
		})
	}
}

func TestNormalize(t *testing.T) {
	tests := []struct {
		name        string
		paths, want []string
	}{
		{"empty", nil, []string{}},
		{"sorted", []string{"http.request.method", "conn.client_ip"}, []string{"conn.client_ip", "http.request.method"}},
		{"duplicates", []string{"conn", "conn"}, []string{"conn"}},
		{"covered by a group", []string{"conn.client_ip", "http", "conn", "http.request.method"}, []string{"conn", "http"}},
		{"covered by an inner group", []string{"http.request.url.host", "http.request", "http.response"}, []string{"http.request", "http.response"}},
		{"a prefix that is not a group", []string{"conn.client_ip", "conn.client"}, []string{"conn.client", "conn.client_ip"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := Normalize(tt.paths); !slices.Equal(got, tt.want) {
				t.Errorf("Normalize(%v) = %v, want %v", tt.paths, got, tt.want)
			}
		})
	}
}
