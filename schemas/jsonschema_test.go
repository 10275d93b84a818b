package schemas

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/santhosh-tekuri/jsonschema/v6"
)

// compileSchema compiles the JSON Schema of the kind, asserting formats
// such as date-time.
func compileSchema(t *testing.T, c *Catalogue, kind string) *jsonschema.Schema {
	t.Helper()
	doc, err := c.JSONSchema(kind)
	if err != nil {
		t.Fatalf("JSONSchema(%q): %v", kind, err)
	}
	parsed, err := jsonschema.UnmarshalJSON(bytes.NewReader(doc))
	if err != nil {
		t.Fatalf("JSON Schema of %s is not JSON: %v", kind, err)
	}
	compiler := jsonschema.NewCompiler()
	compiler.AssertFormat()
	url := JSONSchemaBaseURL + kind + ".json"
	if err := compiler.AddResource(url, parsed); err != nil {
		t.Fatalf("adding the JSON Schema of %s: %v", kind, err)
	}
	schema, err := compiler.Compile(url)
	if err != nil {
		t.Fatalf("compiling the JSON Schema of %s: %v", kind, err)
	}
	return schema
}

// validateJSON validates the JSON document against schema.
func validateJSON(t *testing.T, schema *jsonschema.Schema, doc []byte) error {
	t.Helper()
	inst, err := jsonschema.UnmarshalJSON(bytes.NewReader(doc))
	if err != nil {
		t.Fatalf("decoding %s: %v", doc, err)
	}
	return schema.Validate(inst)
}

func TestJSONSchemaAcceptsSamples(t *testing.T) {
	c := Default()
	sampler := NewSampler(7)
	for _, kind := range c.Names() {
		t.Run(kind, func(t *testing.T) {
			schema := compileSchema(t, c, kind)
			for range 50 {
				ev, err := sampler.Event(kind)
				if err != nil {
					t.Fatalf("Event: %v", err)
				}
				doc, err := ev.MarshalJSON()
				if err != nil {
					t.Fatalf("MarshalJSON: %v", err)
				}
				if err := validateJSON(t, schema, doc); err != nil {
					t.Fatalf("sample rejected by the JSON Schema: %v\n%s", err, doc)
				}
			}
		})
	}
	t.Run("HTTPRequest1KB", func(t *testing.T) {
		schema := compileSchema(t, c, "http_request_complete.v0")
		for range 50 {
			ev := sampler.HTTPRequest1KB()
			doc, _ := ev.MarshalJSON()
			if err := validateJSON(t, schema, doc); err != nil {
				t.Fatalf("sample rejected by the JSON Schema: %v\n%s", err, doc)
			}
		}
	})
}

func TestJSONSchemaChecksValues(t *testing.T) {
	tests := []struct {
		name   string
		kind   string
		change func(envelope, object map[string]any)
		valid  bool
	}{
		{"sample as is", "http_request_complete.v0", func(e, o map[string]any) {}, true},
		{"unknown object field kept", "http_request_complete.v0", func(e, o map[string]any) { setPath(o, "edge.pop", "fra1") }, true},
		{"declared field null", "http_request_complete.v0", func(e, o map[string]any) { setPath(o, "conn.server_port", nil) }, true},
		{"producer omits id, time, account, principal", "tcp_connection_closed.v0", func(e, o map[string]any) {
			delete(e, "event_id")
			delete(e, "event_timestamp")
			delete(e, "account_id")
			delete(e, "principal")
		}, true},
		{"audit principal null", "api_key_created.v0", func(e, o map[string]any) { e["principal"] = nil }, true},
		{"string where int32", "http_request_complete.v0", func(e, o map[string]any) { setPath(o, "conn.server_port", "443") }, false},
		{"int32 above range", "http_request_complete.v0", func(e, o map[string]any) { setPath(o, "conn.server_port", json.Number("2147483648")) }, false},
		{"int32 below range", "tcp_connection_closed.v0", func(e, o map[string]any) { setPath(o, "conn.server_port", json.Number("-2147483649")) }, false},
		{"int64 above range", "tcp_connection_closed.v0", func(e, o map[string]any) { setPath(o, "conn.bytes_in", json.Number("9223372036854775808")) }, false},
		{"fraction where int64", "tcp_connection_closed.v0", func(e, o map[string]any) { setPath(o, "conn.bytes_in", 1.5) }, false},
		{"wrong event_type", "http_request_complete.v0", func(e, o map[string]any) { e["event_type"] = "tcp_connection_closed.v0" }, false},
		{"malformed event_id", "http_request_complete.v0", func(e, o map[string]any) { e["event_id"] = "ev_123" }, false},
		{"account id with the wrong prefix", "http_request_complete.v0", func(e, o map[string]any) {
			e["account_id"] = "ak_" + strings.Repeat("a", 27)
		}, false},
		{"timestamp not RFC 3339", "tcp_connection_closed.v0", func(e, o map[string]any) { setPath(o, "conn.end_ts", "yesterday") }, false},
		{"event_timestamp not RFC 3339", "tcp_connection_closed.v0", func(e, o map[string]any) { e["event_timestamp"] = "22/11/2026" }, false},
		{"principal on a traffic event", "tcp_connection_closed.v0", func(e, o map[string]any) { e["principal"] = map[string]any{"id": "x"} }, false},
		{"object missing", "tcp_connection_closed.v0", func(e, o map[string]any) { delete(e, "object") }, false},
		{"unknown envelope field", "tcp_connection_closed.v0", func(e, o map[string]any) { e["extra"] = true }, false},
		{"header value not a list", "http_request_complete.v0", func(e, o map[string]any) {
			setPath(o, "http.request.headers", map[string]any{"Accept": "*/*"})
		}, false},
		{"string where bool", "ip_restriction_created.v0", func(e, o map[string]any) { setPath(o, "enforced", "yes") }, false},
		{"list of objects not a list", "event_subscription_created.v0", func(e, o map[string]any) {
			setPath(o, "sources", map[string]any{"type": "http_request_complete.v0"})
		}, false},
		{"number in a string list", "tunnel_credential_created.v0", func(e, o map[string]any) { setPath(o, "acl", []any{1}) }, false},
	}
	c := Default()
	sampler := NewSampler(11)
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ev, err := sampler.Event(tt.kind)
			if err != nil {
				t.Fatalf("Event: %v", err)
			}
			doc, _ := ev.MarshalJSON()
			var envelope map[string]any
			dec := json.NewDecoder(bytes.NewReader(doc))
			dec.UseNumber()
			if err := dec.Decode(&envelope); err != nil {
				t.Fatalf("decoding the sample: %v", err)
			}
			object, _ := envelope["object"].(map[string]any)
			tt.change(envelope, object)
			doc, err = json.Marshal(envelope)
			if err != nil {
				t.Fatalf("encoding the changed event: %v", err)
			}
			err = validateJSON(t, compileSchema(t, c, tt.kind), doc)
			if tt.valid && err != nil {
				t.Errorf("rejected, want accepted: %v\n%s", err, doc)
			}
			if !tt.valid && err == nil {
				t.Errorf("accepted, want rejected:\n%s", doc)
			}
		})
	}
}

func TestJSONSchemaUnknownKind(t *testing.T) {
	_, err := Default().JSONSchema("http_request.v0")
	if !errors.Is(err, ErrUnknownKind) {
		t.Fatalf("JSONSchema of an unknown kind: error %v, want ErrUnknownKind", err)
	}
}

func TestJSONSchemaIsStable(t *testing.T) {
	c := Default()
	for _, kind := range []string{"http_request_complete.v0", "event_subscription_updated.v0"} {
		t.Run(kind, func(t *testing.T) {
			first, err := c.JSONSchema(kind)
			if err != nil {
				t.Fatalf("JSONSchema: %v", err)
			}
			for range 10 {
				again, _ := c.JSONSchema(kind)
				if !bytes.Equal(first, again) {
					t.Fatalf("JSONSchema changed between calls")
				}
			}
			want := []string{`"$schema"`, `"$id"`, `"title"`, `"description"`, `"type"`, `"properties"`, `"required"`}
			last := -1
			for _, key := range want {
				i := bytes.Index(first, []byte(key))
				if i <= last {
					t.Fatalf("key %s is out of order in:\n%.400s", key, first)
				}
				last = i
			}
		})
	}
}

func TestExportJSONSchemas(t *testing.T) {
	c := Default()
	dir := filepath.Join(t.TempDir(), "schemas")
	if err := c.ExportJSONSchemas(dir); err != nil {
		t.Fatalf("ExportJSONSchemas: %v", err)
	}
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatalf("reading %s: %v", dir, err)
	}
	if len(entries) != len(c.Kinds()) {
		t.Errorf("%d files written, want one per kind (%d)", len(entries), len(c.Kinds()))
	}
	for _, kind := range c.Names() {
		got, err := os.ReadFile(filepath.Join(dir, kind+".schema.json"))
		if err != nil {
			t.Errorf("reading the schema of %s: %v", kind, err)
			continue
		}
		want, _ := c.JSONSchema(kind)
		if !bytes.Equal(got, want) {
			t.Errorf("%s.schema.json differs from JSONSchema(%q)", kind, kind)
		}
	}
}

// secretsNull returns an object of the kind with every secret field set to
// null, and true, or false when the kind has no secret field.
func secretsNull(k *Kind) (map[string]any, bool) {
	obj := map[string]any{}
	for _, f := range k.Fields {
		if f.Secret {
			setPath(obj, f.Path, nil)
		}
	}
	return obj, len(obj) > 0
}

// decoderEdgeCases are events the decoder accepts though samples never look
// like them: the JSON Schema must accept what the decoder stores of them.
var decoderEdgeCases = []struct {
	name  string
	event string
}{
	{"principal with null fields", `{"event_type":"api_key_created.v0","principal":{"id":null,"subject":null,"source":null,"credential":null},"object":{}}`},
	{"principal with a null credential id and uri", `{"event_type":"api_key_updated.v0","principal":{"id":"ak_1","credential":{"id":null,"uri":null}},"object":{"id":"ak_1"}}`},
	{"principal with unknown fields", `{"event_type":"api_key_deleted.v0","principal":{"source":"API","extra":{"x":[1]},"credential":{"id":"ak_1","kind":"api_key"}},"object":{}}`},
	{"principal null", `{"event_type":"api_key_created.v0","principal":null,"object":{"token":null}}`},
	{"empty principal", `{"event_type":"api_key_created.v0","principal":{},"object":{}}`},
	{"traffic principal null", `{"event_type":"tcp_connection_closed.v0","principal":null,"object":{"conn":{"client_ip":null}}}`},
	{"null intermediate object", `{"event_type":"http_request_complete.v0","object":{"http":null,"conn":{"client_ip":"192.0.2.1"}}}`},
	{"null target", `{"event_type":"event_destination_created.v0","object":{"target":null}}`},
	{"null target firehose", `{"event_type":"event_destination_updated.v0","object":{"target":{"firehose":null,"kinesis":{"auth":null}}}}`},
	{"null creds", `{"event_type":"event_destination_deleted.v0","object":{"target":{"cloudwatch_logs":{"auth":{"creds":null}}}}}`},
	{"null list of objects", `{"event_type":"event_subscription_created.v0","object":{"sources":null}}`},
	{"empty list of objects", `{"event_type":"event_subscription_updated.v0","object":{"sources":[]}}`},
	{"list element with null and unknown fields", `{"event_type":"event_subscription_created.v0","object":{"sources":[{"type":null,"extra":"kept"},{}]}}`},
	{"unknown fields everywhere", `{"event_type":"http_request_complete.v0","object":{"edge":{"pop":"fra1"},"http":{"request":{"method":"GET","x":[null,{}]}},"n":1e300}}`},
	{"unknown field replacing nothing", `{"event_type":"tunnel_credential_created.v0","object":{"token":null,"acl":null,"future":{"a":null}}}`},
	{"given id, offset timestamp and account", `{"event_id":"ev_2pN8GnlY3vWQbU4s6ZK0mXoJdHa","event_type":"tcp_connection_closed.v0","event_timestamp":"2026-11-22T10:04:05.123456+02:00","account_id":"ACCOUNT","object":{}}`},
	{"null id and timestamp", `{"event_id":null,"event_timestamp":null,"account_id":null,"event_type":"tcp_connection_closed.v0","object":{}}`},
	{"whitespace everywhere", "{ \"event_type\" : \"api_key_created.v0\" ,\n \"principal\" : { \"id\" : null } , \"object\" : { \"token\" : null } }"},
}

// TestJSONSchemaAcceptsDecoded decodes events as the ingest API does and
// validates the stored envelope against the kind's JSON Schema: the schema
// must accept everything the decoder stores.
func TestJSONSchemaAcceptsDecoded(t *testing.T) {
	c := Default()
	account := NewID(PrefixAccount)
	compiled := map[string]*jsonschema.Schema{}
	check := func(t *testing.T, body string) {
		t.Helper()
		ev := storeAsIngest(t, c, account, body)
		schema := compiled[ev.Type]
		if schema == nil {
			schema = compileSchema(t, c, ev.Type)
			compiled[ev.Type] = schema
		}
		if err := validateJSON(t, schema, ev.Data); err != nil {
			t.Errorf("the JSON Schema refuses what the decoder stored: %v\n%s", err, ev.Data)
		}
	}
	for _, tt := range decoderEdgeCases {
		t.Run(tt.name, func(t *testing.T) {
			check(t, strings.ReplaceAll(tt.event, "ACCOUNT", account))
		})
	}
	for _, k := range c.Kinds() {
		obj, ok := secretsNull(k)
		if !ok {
			continue
		}
		t.Run("every secret null/"+k.Name, func(t *testing.T) {
			event, err := json.Marshal(map[string]any{"event_type": k.Name, "object": obj})
			if err != nil {
				t.Fatal(err)
			}
			check(t, string(event))
		})
	}
}

// storeAsIngest returns the event as sluice stores it: decoded as the
// ingest API does, or, for a kind only sluice emits (which ingest
// refuses), encoded as sluice's own audit events are.
func storeAsIngest(t *testing.T, c *Catalogue, account, body string) Encoded {
	t.Helper()
	var wire struct {
		Type      string          `json:"event_type"`
		Principal json.RawMessage `json:"principal"`
		Object    json.RawMessage `json:"object"`
	}
	if err := json.Unmarshal([]byte(body), &wire); err != nil {
		t.Fatal(err)
	}
	if k, ok := c.Kind(wire.Type); ok && k.EmittedBySluice {
		enc, err := c.EncodeBySluice(Event{Type: wire.Type, AccountID: account, Principal: wire.Principal, Object: wire.Object})
		if err != nil {
			t.Fatalf("sluice refused its own event (%v); the edge case must be one it accepts:\n%s", err, body)
		}
		return enc
	}
	batch, err := c.DecodeBatch([]byte("["+body+"]"), DecodeOptions{AccountID: account})
	if err != nil {
		t.Fatalf("DecodeBatch: %v\n%s", err, body)
	}
	if len(batch.Errors) > 0 || len(batch.Events) != 1 {
		t.Fatalf("decoder refused the event (%v); the edge case must be one it accepts:\n%s", batch.Errors, body)
	}
	return batch.Events[0]
}

// TestJSONSchemaRefusesSecrets checks that the schema, like the decoder,
// refuses a secret field with a value.
func TestJSONSchemaRefusesSecrets(t *testing.T) {
	c := Default()
	account := NewID(PrefixAccount)
	values := []any{"sk_0123456789abcdef", "", false, map[string]any{}}
	secrets := 0
	for _, k := range c.Kinds() {
		for _, f := range k.Fields {
			if !f.Secret {
				continue
			}
			secrets++
			schema := compileSchema(t, c, k.Name)
			for _, value := range values {
				t.Run(fmt.Sprintf("%s/%s/%v", k.Name, f.Path, value), func(t *testing.T) {
					obj := map[string]any{}
					setPath(obj, f.Path, value)
					event, err := json.Marshal(map[string]any{"event_type": k.Name, "object": obj})
					if err != nil {
						t.Fatal(err)
					}
					if err := validateJSON(t, schema, event); err == nil {
						t.Errorf("the JSON Schema accepts a value in the secret:\n%s", event)
					}
					if k.EmittedBySluice {
						if _, err := c.EncodeBySluice(Event{Type: k.Name, AccountID: account, Object: mustMarshal(t, obj)}); err == nil {
							t.Errorf("sluice's own audit events may carry a value in the secret:\n%s", event)
						}
						return
					}
					batch, err := c.DecodeBatch(event, DecodeOptions{AccountID: account})
					if err == nil && len(batch.Errors) == 0 {
						t.Errorf("the decoder accepts a value in the secret:\n%s", event)
					}
				})
			}
		}
	}
	if secrets == 0 {
		t.Fatal("the catalogue has no secret field")
	}
}

func mustMarshal(t *testing.T, v any) json.RawMessage {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return b
}
