package schemas

import (
	"slices"
	"testing"
)

func TestSuggest(t *testing.T) {
	tests := []struct {
		name string
		want string // among the suggestions; "" for none
	}{
		{"http_request_completed.v0", "http_request_complete.v0"},
		{"tls_cert_created", "tls_certificate_created.v0"},
		{"api_key_created", "api_key_created.v0"},
		{"event_subscription", "event_subscription_created.v0"},
		{"HTTP_REQUEST_COMPLETE.V0", "http_request_complete.v0"},
		{"zzzzzzzzzzzzzzzzzzzzzzzzzzzzzzz", ""},
		{"", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := Default().Suggest(tt.name, 5)
			if len(got) > 5 {
				t.Fatalf("%d suggestions, want at most 5", len(got))
			}
			if tt.want == "" && len(got) > 0 || tt.want != "" && !slices.Contains(got, tt.want) {
				t.Fatalf("Suggest(%q) = %v, want %q among them", tt.name, got, tt.want)
			}
		})
	}
}
