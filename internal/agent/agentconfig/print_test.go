package agentconfig

import (
	"strings"
	"testing"
)

// TestYAML prints the configuration in effect, which loads back to the
// same, with the authtoken and passwords masked.
func TestYAML(t *testing.T) {
	const token = "2abcdefghijklmnopqrstuvwxyz_TOKEN"
	cfg, err := loadOne(t, "version: 2\nauthtoken: "+token+"\nweb_addr: false\nlog: agent.log\n"+
		"tunnels:\n  web:\n    proto: http\n    addr: 3000\n    basic_auth: ['ann:password1']\n  ssh:\n    proto: tcp\n    addr: 22\n")
	if err != nil {
		t.Fatal(err)
	}
	out, err := cfg.YAML()
	if err != nil {
		t.Fatal(err)
	}
	s := string(out)
	for _, want := range []string{"# merged from a.yml\n", "version: 2\n", "authtoken: 2abc…\n", "web_addr: false\n", "log: agent.log\n",
		"heartbeat_interval: 10s\n", "inspect_db_size: 52428800\n", "      - ann:********\n", "    host_header: preserve\n", "    inspect: true\n"} {
		if !strings.Contains(s, want) {
			t.Errorf("YAML\n%s\nlacks %q", s, want)
		}
	}
	if strings.Contains(s, token) || strings.Contains(s, "password1") {
		t.Errorf("YAML\n%s\nshows a secret", s)
	}
}

// TestMaskToken shows at most a token's first 4 characters.
func TestMaskToken(t *testing.T) {
	for token, want := range map[string]string{"": "", "short": "(set)", "0123456789abcdef": "0123…"} {
		if got := MaskToken(token); got != want {
			t.Errorf("MaskToken(%q) = %q; want %q", token, got, want)
		}
	}
}

// TestErrorsHideSecrets shows no authtoken or password in any error,
// whatever else is wrong.
func TestErrorsHideSecrets(t *testing.T) {
	const secret = "S3cretT0ken-value"
	for _, c := range []struct{ name, yaml string }{
		{"token with space", "version: 2\nauthtoken: '" + secret + " x'\n"},
		{"token with tab", "version: 2\nauthtoken: \"" + secret + "\\t\"\n"},
		{"token list", "version: 2\nauthtoken: ['" + secret + "']\n"},
		{"token mapping", "version: 2\nauthtoken: {a: '" + secret + "'}\n"},
		{"token repeated", "version: 2\nauthtoken: a\nauthtoken: '" + secret + "'\n"},
		{"token and bad version", "version: 3\nauthtoken: '" + secret + "'\n"},
		{"token without version", "authtoken: '" + secret + "'\n"},
		{"password short", "version: 2\ntunnels:\n  t:\n    proto: http\n    addr: 1\n    basic_auth: ['u:" + secret[:6] + "']\n"},
		{"password long", "version: 2\ntunnels:\n  t:\n    proto: http\n    addr: 1\n    basic_auth: ['u:" + strings.Repeat(secret, 9) + "']\n"},
		{"password twice", "version: 2\ntunnels:\n  t:\n    proto: http\n    addr: 1\n    basic_auth: ['u:" + secret + "', 'u:" + secret + "']\n"},
		{"password on tcp", "version: 2\ntunnels:\n  t:\n    proto: tcp\n    addr: 1\n    basic_auth: ['u:" + secret + "']\n"},
	} {
		t.Run(c.name, func(t *testing.T) {
			_, err := loadOne(t, c.yaml)
			if err == nil {
				t.Fatal("took it")
			}
			if strings.Contains(err.Error(), secret[:6]) {
				t.Errorf("error %q shows the secret", err)
			}
		})
	}
	for _, body := range []string{
		`{"name":"a","proto":"http","addr":3000,"authtoken":"` + secret + `","bad":1}`,
		`{"name":"a","proto":"tcp","addr":3000,"auth":"u:` + secret + `"}`,
		`{"name":"a","proto":"http","addr":3000,"auth":"u:` + secret[:6] + `"}`,
	} {
		if _, err := DecodeTunnelJSON([]byte(body)); err == nil || strings.Contains(err.Error(), secret[:6]) {
			t.Errorf("DecodeTunnelJSON(%s) = %v; want an error without the secret", body, err)
		}
	}
}
