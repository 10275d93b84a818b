package schemas

import (
	"strconv"
	"strings"
	"time"
)

// auditValue returns a realistic value of a field of an audited resource,
// chosen by the field's name, or by its type for a name it does not know.
func (s *Sampler) auditValue(r *resource, f *Field) any {
	name := f.Path[strings.LastIndex(f.Path, ".")+1:]
	family := r.kind.Family
	switch name {
	case "id":
		return r.id
	case "uri":
		return r.uri
	case "created_at":
		return stamp(r.created)
	case "description":
		return s.pick("production", "staging", "used by the billing service", "CI deploy pipeline", "temporary, remove after the migration")
	case "metadata":
		return s.pick(`{"team":"platform","env":"prod"}`, `{"owner":"billing"}`, `{"ticket":"OPS-1234"}`)
	case "token", "aws_secret_access_key":
		return nil // secrets are never in events
	case "ca_pem":
		return s.pem(1)
	case "certificate_pem":
		return s.pem(2)
	case "not_before", "valid_after":
		return stamp(r.created)
	case "not_after", "valid_until":
		return stamp(r.created.Add(validity(family)))
	case "issued_at":
		if s.percent(30) {
			return nil // uploaded by a user
		}
		return stamp(r.created)
	case "format":
		return "json"
	case "key_type":
		return r.keyType
	case "public_key":
		return s.sshPublicKey(r.keyType)
	case "certificate":
		return s.sshCertificate(r.keyType)
	case "ssh_certificate_authority_id":
		return s.id("sshca_", r.created.Add(-30*24*time.Hour))
	}
	if v, ok := s.certificateValue(r, name); ok {
		return v
	}
	if v, ok := s.networkValue(r, name); ok {
		return v
	}
	if v, ok := s.awsValue(r, name); ok {
		return v
	}
	return s.typeValue(f, r.at)
}

// validity returns how long certificates of an audit family are valid.
func validity(family string) time.Duration {
	switch family {
	case "certificate_authority":
		return 10 * 365 * 24 * time.Hour
	case "tls_certificate":
		return 90 * 24 * time.Hour
	}
	return 7 * 24 * time.Hour // SSH certificates
}

// certificateValue returns the value of a field of a certificate or a
// certificate authority.
func (s *Sampler) certificateValue(r *resource, name string) (any, bool) {
	ca := r.kind.Family == "certificate_authority"
	switch name {
	case "subject_common_name":
		if ca {
			return "Example Corp Internal CA", true
		}
		return r.host, true
	case "key_usages":
		if ca {
			return []string{"cert_sign", "crl_sign"}, true
		}
		return []string{"digital_signature", "key_encipherment"}, true
	case "extended_key_usages":
		if ca {
			return []string{"server_auth", "client_auth"}, true
		}
		return []string{"server_auth"}, true
	case "dns_names":
		if apex, ok := strings.CutPrefix(r.host, "www."); ok {
			return []string{r.host, apex}, true
		}
		return []string{r.host}, true
	case "ips":
		return []string{"203.0.113." + strconv.Itoa(1+s.rng.IntN(254))}, true
	case "private_key_type":
		return r.keyType, true
	case "issuer_common_name":
		return s.pick("R11", "E6", "Example Issuing CA G2"), true
	case "serial_number":
		return s.hex(32), true
	case "subject_organization":
		return "Example Inc.", true
	case "subject_organizational_unit":
		return s.pick("Platform", "Payments", "IT"), true
	case "subject_country":
		return r.place[0], true
	case "subject_province":
		return r.place[1], true
	case "subject_locality":
		return r.place[2], true
	case "principals":
		if r.kind.Family == "ssh_host_certificate" {
			return []string{r.host}, true
		}
		return []string{"ubuntu", "deploy"}, true
	case "critical_options":
		return map[string]string{"force-command": "/usr/local/bin/backup", "source-address": "203.0.113.0/24"}, true
	case "extensions":
		if r.kind.Family == "ssh_host_certificate" {
			return map[string]string{}, true
		}
		return map[string]string{"permit-pty": "", "permit-user-rc": ""}, true
	}
	return nil, false
}

// networkValue returns the value of a field about addresses and access.
func (s *Sampler) networkValue(r *resource, name string) (any, bool) {
	switch name {
	case "cidr":
		if s.percent(25) {
			return "2001:db8:" + strconv.FormatUint(uint64(s.rng.IntN(0x10000)), 16) + "::/48", true
		}
		return s.pick("203.0.113.0/24", "198.51.100.0/25", "203.0.113."+strconv.Itoa(1+s.rng.IntN(254))+"/32"), true
	case "action":
		return weighted(s, choice[string]{"allow", 80}, choice[string]{"deny", 20}), true
	case "enforced":
		return s.percent(70), true
	case "type":
		return s.pick("dashboard", "api", "agent"), true
	case "addr":
		return strconv.Itoa(1+s.rng.IntN(9)) + ".tcp.example.net:" + strconv.Itoa(10000+s.rng.IntN(20000)), true
	case "region":
		return weighted(s, choice[string]{"us", 60}, choice[string]{"eu", 20}, choice[string]{"ap", 10},
			choice[string]{"au", 5}, choice[string]{"jp", 5}), true
	case "acl":
		return []string{"bind:*." + strings.TrimPrefix(r.host, "www."), "bind:" + r.host}, true
	}
	return nil, false
}

// awsValue returns the value of a field of an event destination's target.
func (s *Sampler) awsValue(r *resource, name string) (any, bool) {
	const account = "123456789012"
	stream := func() string { return s.pick("sluice-events", "audit-log", "traffic-prod") }
	switch name {
	case "role_arn":
		return "arn:aws:iam::" + account + ":role/" + s.pick("SluiceDelivery", "event-delivery"), true
	case "aws_access_key_id":
		return "AKIA" + strings.ToUpper(s.hex(16)), true
	case "delivery_stream_arn":
		return "arn:aws:firehose:" + r.region + ":" + account + ":deliverystream/" + stream(), true
	case "stream_arn":
		return "arn:aws:kinesis:" + r.region + ":" + account + ":stream/" + stream(), true
	case "log_group_arn":
		return "arn:aws:logs:" + r.region + ":" + account + ":log-group:/sluice/" + stream(), true
	}
	return nil, false
}

// pem returns a chain of blocks PEM-encoded certificates of random content.
func (s *Sampler) pem(blocks int) string {
	var b strings.Builder
	for range blocks {
		b.WriteString("-----BEGIN CERTIFICATE-----\n")
		body := s.base64(450, 0x30, 0x82, 0x01, 0xc2) // DER certificates start with a SEQUENCE
		for len(body) > 64 {
			b.WriteString(body[:64])
			b.WriteByte('\n')
			body = body[64:]
		}
		b.WriteString(body)
		b.WriteString("\n-----END CERTIFICATE-----\n")
	}
	return b.String()
}

// sshAlgorithm returns the SSH name of a key type and the size of its key.
func sshAlgorithm(keyType string) (string, int) {
	switch keyType {
	case "rsa":
		return "ssh-rsa", 396
	case "ecdsa":
		return "ecdsa-sha2-nistp256", 72
	}
	return "ssh-ed25519", 36
}

// sshPublicKey returns a public key in authorized-keys format.
func (s *Sampler) sshPublicKey(keyType string) string {
	algo, size := sshAlgorithm(keyType)
	header := append([]byte{0, 0, 0, byte(len(algo))}, algo...)
	return algo + " " + s.base64(len(header)+size, header...) + " " + s.pick("alice@laptop", "deploy@ci", "ops@bastion")
}

// sshCertificate returns a signed certificate in authorized-keys format.
func (s *Sampler) sshCertificate(keyType string) string {
	algo, size := sshAlgorithm(keyType)
	algo += "-cert-v01@openssh.com"
	header := append([]byte{0, 0, 0, byte(len(algo))}, algo...)
	return algo + " " + s.base64(len(header)+size+300, header...)
}
