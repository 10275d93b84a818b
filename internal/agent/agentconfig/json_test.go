package agentconfig

import (
	"errors"
	"reflect"
	"strings"
	"testing"
)

// TestDecodeTunnelJSON decodes a tunnel as the local API receives it,
// the npm package ngrok's whole options object included.
func TestDecodeTunnelJSON(t *testing.T) {
	for _, c := range []struct {
		name, body string
		want       Tunnel
	}{
		{"npm wrapper", `{"proto":"http","addr":3000,"authtoken":"x","configPath":"/tmp/a.yml","name":"abc"}`,
			Tunnel{Name: "abc", Proto: "http", Addr: "http://localhost:3000", Inspect: true, Schemes: []string{"https", "http"}}},
		{"npm wrapper options", `{"name":"abc","proto":"http","addr":"8080","authtoken_from_env":true,"binPath":"/x","region":"us","port":8080,"host":"h","web_addr":"localhost:4040","onStatusChange":null,"onLogEvent":null,"onTerminated":null}`,
			Tunnel{Name: "abc", Proto: "http", Addr: "http://localhost:8080", Inspect: true, Schemes: []string{"https", "http"}}},
		{"npm auth", `{"name":"abc","proto":"http","addr":3000,"auth":"ann:password1"}`,
			Tunnel{Name: "abc", Proto: "http", Addr: "http://localhost:3000", Inspect: true, Schemes: []string{"https", "http"}, BasicAuth: []string{"ann:password1"}}},
		{"npm httpauth with basic_auth", `{"name":"abc","proto":"http","addr":3000,"httpauth":"bob:password2","basic_auth":["ann:password1"]}`,
			Tunnel{Name: "abc", Proto: "http", Addr: "http://localhost:3000", Inspect: true, Schemes: []string{"https", "http"}, BasicAuth: []string{"ann:password1", "bob:password2"}}},
		{"npm auth copied from httpauth", `{"name":"abc","proto":"http","addr":3000,"httpauth":"ann:password1","auth":"ann:password1"}`,
			Tunnel{Name: "abc", Proto: "http", Addr: "http://localhost:3000", Inspect: true, Schemes: []string{"https", "http"}, BasicAuth: []string{"ann:password1"}}},
		{"all keys", `{"name":"web","proto":"http","addr":"https://localhost:8443","domain":"App.example.com","inspect":false,"metadata":"m","description":"d","host_header":"rewrite","schemes":["http"]}`,
			Tunnel{Name: "web", Proto: "http", Addr: "https://localhost:8443", Domain: "app.example.com", Metadata: "m", Description: "d", HostHeader: "rewrite", Schemes: []string{"http"}}},
		{"tcp", `{"name":"ssh","proto":"tcp","addr":22,"remote_addr":"1.tcp.example.com:20000"}`,
			Tunnel{Name: "ssh", Proto: "tcp", Addr: "localhost:22", RemoteAddr: "1.tcp.example.com:20000"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			got, err := DecodeTunnelJSON([]byte(c.body))
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(got, c.want) {
				t.Errorf("got  %+v\nwant %+v", got, c.want)
			}
		})
	}
}

// TestDecodeTunnelJSONRefused refuses a bad body, naming the key.
func TestDecodeTunnelJSONRefused(t *testing.T) {
	for _, c := range []struct {
		name, body, err string
	}{
		{"unknown key", `{"name":"abc","proto":"http","addr":3000,"subdomian":"x"}`, `unknown key "subdomian"; allowed: name, proto, addr,`},
		{"typo", `{"name":"abc","proto":"http","adr":3000}`, `unknown key "adr" (did you mean "addr"?)`},
		{"name missing", `{"proto":"http","addr":3000}`, "name: is required"},
		{"name null", `{"name":null,"proto":"http","addr":3000}`, "name: is required"},
		{"name number", `{"name":1,"proto":"http","addr":3000}`, "name: must be a string"},
		{"bad name", `{"name":"a/b","proto":"http","addr":3000}`, `name: tunnel name "a/b" is not allowed`},
		{"proto missing", `{"name":"abc","addr":3000}`, "proto: is required"},
		{"proto tls", `{"name":"abc","proto":"tls","addr":3000}`, `proto: "tls" is not supported (supported: http, tcp)`},
		{"addr float", `{"name":"abc","proto":"http","addr":3000.5}`, "addr: \"3000.5\" is not an address"},
		{"addr bool", `{"name":"abc","proto":"http","addr":true}`, "addr: \"true\" is not an address"},
		{"hostname", `{"name":"abc","proto":"http","addr":3000,"hostname":"a.example.com"}`, "hostname: is not supported"},
		{"inspect on tcp", `{"name":"abc","proto":"tcp","addr":22,"inspect":true}`, "inspect: a tcp tunnel is not inspected"},
		{"auth number", `{"name":"abc","proto":"http","addr":3000,"auth":5}`, "auth: must be a string"},
		{"auth short", `{"name":"abc","proto":"http","addr":3000,"auth":"ann:short"}`, "basic_auth[0]: the password of \"ann\" is 5 bytes long"},
		{"not an object", `[1]`, "the body must be a JSON object"},
		{"not JSON", `{"name":`, "the body is not JSON"},
		{"two values", `{} {}`, "more than one JSON value"},
	} {
		t.Run(c.name, func(t *testing.T) {
			_, err := DecodeTunnelJSON([]byte(c.body))
			if err == nil || !strings.Contains(err.Error(), c.err) {
				t.Fatalf("error %v; want one saying %q", err, c.err)
			}
			var e *Error
			if !errors.As(err, &e) || e.Line != 0 || e.File != "" {
				t.Errorf("error %#v is not an *Error without a position", err)
			}
		})
	}
}
