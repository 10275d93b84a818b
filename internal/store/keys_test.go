package store

import "testing"

func TestParseConfigKey(t *testing.T) {
	tests := []struct {
		key               string
		kind, account, id string
		wantOK            bool
	}{
		{key: "destinations.ac_1.ed_2", kind: ConfigDestination, account: "ac_1", id: "ed_2", wantOK: true},
		{key: "subscriptions.ac_1.esb_2", kind: ConfigSubscription, account: "ac_1", id: "esb_2", wantOK: true},
		{key: "accounts.ac_1"},
		{key: "api_keys.ac_1.ak_2"},
		{key: "destinations.ac_1"},
	}
	for _, tt := range tests {
		kind, account, id, ok := parseConfigKey(tt.key)
		if ok != tt.wantOK || kind != tt.kind || account != tt.account || id != tt.id {
			t.Errorf("parseConfigKey(%q) = %q, %q, %q, %v", tt.key, kind, account, id, ok)
		}
	}
}
