package apiwire

import (
	"encoding/json"
	"testing"
)

// TestAgentIngressInputNull checks that an agent ingress's body tells a
// certificate_management_policy of null from one not sent, and reads a
// policy sent.
func TestAgentIngressInputNull(t *testing.T) {
	for _, c := range []struct {
		body       string
		sent, null bool
	}{
		{`{}`, false, false},
		{`{"description":"d"}`, false, false},
		{`{"certificate_management_policy":null}`, true, true},
		{`{"certificate_management_policy": null }`, true, true},
		{`{"certificate_management_policy":{"authority":"letsencrypt","private_key_type":"ecdsa"}}`, true, false},
	} {
		var in AgentIngressInput
		if err := json.Unmarshal([]byte(c.body), &in); err != nil {
			t.Fatalf("%s: %v", c.body, err)
		}
		sent := in.CertificateManagementPolicy != nil
		if sent != c.sent || sent && (*in.CertificateManagementPolicy == nil) != c.null {
			t.Errorf("%s: policy sent %v (null %v), want sent %v (null %v)", c.body, sent, sent && *in.CertificateManagementPolicy == nil, c.sent, c.null)
		}
		if c.sent && !c.null && (*in.CertificateManagementPolicy).PrivateKeyType != "ecdsa" {
			t.Errorf("%s: policy %+v", c.body, **in.CertificateManagementPolicy)
		}
	}
	var in AgentIngressInput
	if err := json.Unmarshal([]byte(`{"description":"d","domain":"a.example.com"}`), &in); err != nil || *in.Description != "d" || *in.Domain != "a.example.com" {
		t.Errorf("fields not read: %v %+v", err, in)
	}
}
