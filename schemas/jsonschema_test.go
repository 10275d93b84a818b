package schemas

import (
	"bytes"
	"encoding/json"
	"errors"
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
