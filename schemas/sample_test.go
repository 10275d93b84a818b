package schemas

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"testing"
	"unicode"
)

// sampleJSON returns the envelope of a new event of the kind.
func sampleJSON(t *testing.T, s *Sampler, kind string) []byte {
	t.Helper()
	ev, err := s.Event(kind)
	if err != nil {
		t.Fatalf("Event(%q): %v", kind, err)
	}
	doc, err := ev.MarshalJSON()
	if err != nil {
		t.Fatalf("MarshalJSON: %v", err)
	}
	return doc
}

// decodeObject decodes an event's object.
func decodeObject(t *testing.T, ev Event) map[string]any {
	t.Helper()
	var obj map[string]any
	if err := json.Unmarshal(ev.Object, &obj); err != nil {
		t.Fatalf("object of %s is not a JSON object: %v\n%s", ev.Type, err, ev.Object)
	}
	return obj
}

func TestSamplerIsDeterministic(t *testing.T) {
	for _, seed := range []uint64{0, 1, 42, 1 << 63} {
		t.Run(fmt.Sprint(seed), func(t *testing.T) {
			a, b := NewSampler(seed), NewSampler(seed)
			for round := range 3 {
				for _, kind := range Default().Names() {
					if x, y := sampleJSON(t, a, kind), sampleJSON(t, b, kind); !bytes.Equal(x, y) {
						t.Fatalf("round %d, %s: samplers of the same seed differ:\n%s\n%s", round, kind, x, y)
					}
				}
				x, _ := a.HTTPRequest1KB().MarshalJSON()
				y, _ := b.HTTPRequest1KB().MarshalJSON()
				if !bytes.Equal(x, y) {
					t.Fatalf("round %d: HTTPRequest1KB of the same seed differ:\n%s\n%s", round, x, y)
				}
			}
		})
	}
}

func TestSamplerSeedsDiffer(t *testing.T) {
	a, b := NewSampler(1), NewSampler(2)
	for _, kind := range Default().Names() {
		x, y := sampleJSON(t, a, kind), sampleJSON(t, b, kind)
		if bytes.Equal(x, y) {
			t.Errorf("%s: seeds 1 and 2 give the same event:\n%s", kind, x)
		}
	}
}

func TestSamplerUnknownKind(t *testing.T) {
	if _, err := NewSampler(1).Event("http_request.v0"); !errors.Is(err, ErrUnknownKind) {
		t.Fatalf("Event of an unknown kind: error %v, want ErrUnknownKind", err)
	}
}

// present reports whether the dotted path is in v: every key exists, the
// last one possibly with a null value, or a parent is null. Lists of
// objects must have the rest of the path in each element.
func present(v any, path string, f *Field) bool {
	if v == nil {
		return true // a null parent: the field is absent with it
	}
	head, rest, nested := strings.Cut(path, ".")
	obj, ok := v.(map[string]any)
	if !ok {
		return false
	}
	child, ok := obj[head]
	if !ok {
		return false
	}
	if !nested {
		return true
	}
	if list, isList := child.([]any); isList && f.InList != "" {
		if len(list) == 0 {
			return false
		}
		for _, elem := range list {
			if !present(elem, rest, f) {
				return false
			}
		}
		return true
	}
	return present(child, rest, f)
}

func TestSampleHasEveryField(t *testing.T) {
	s := NewSampler(3)
	for _, k := range Default().Kinds() {
		t.Run(k.Name, func(t *testing.T) {
			// An event destination has one target and one kind of
			// authentication, so only six events have all the fields.
			const events = 6
			seen := map[string]int{}
			for range events {
				ev, err := s.Event(k.Name)
				if err != nil {
					t.Fatalf("Event: %v", err)
				}
				obj := decodeObject(t, ev)
				for _, f := range k.Fields {
					if present(obj, f.Path, &f) {
						seen[f.Path]++
					}
				}
			}
			for _, f := range k.Fields {
				switch {
				case seen[f.Path] == 0:
					t.Errorf("field %s is in none of %d samples", f.Path, events)
				case seen[f.Path] < events && k.Family != "event_destination":
					t.Errorf("field %s is in %d of %d samples, want all", f.Path, seen[f.Path], events)
				}
			}
		})
	}
}

func TestSampleDestinationHasOneTarget(t *testing.T) {
	s := NewSampler(5)
	for range 12 {
		ev, err := s.Event("event_destination_created.v0")
		if err != nil {
			t.Fatalf("Event: %v", err)
		}
		targets, _ := decodeObject(t, ev)["target"].(map[string]any)
		if len(targets) != 1 {
			t.Fatalf("%d targets, want 1: %s", len(targets), ev.Object)
		}
		for _, target := range targets {
			auth, _ := target.(map[string]any)["auth"].(map[string]any)
			if len(auth) != 1 {
				t.Fatalf("%d kinds of authentication, want 1: %s", len(auth), ev.Object)
			}
			if creds, ok := auth["creds"].(map[string]any); ok && creds["aws_secret_access_key"] != nil {
				t.Fatalf("the secret access key is not null: %s", ev.Object)
			}
		}
	}
}

func TestSampleIsValid(t *testing.T) {
	s := NewSampler(9)
	for _, k := range Default().Kinds() {
		t.Run(k.Name, func(t *testing.T) {
			for range 20 {
				ev, err := s.Event(k.Name)
				if err != nil {
					t.Fatalf("Event: %v", err)
				}
				if err := CheckID(PrefixEvent, ev.ID); err != nil {
					t.Errorf("event_id: %v", err)
				}
				if err := CheckID(PrefixAccount, ev.AccountID); err != nil {
					t.Errorf("account_id: %v", err)
				}
				if ev.Type != k.Name {
					t.Errorf("event_type %q, want %q", ev.Type, k.Name)
				}
				checkPrincipal(t, k, ev.Principal)
				if unknown, err := k.ValidateObject(ev.Object); err != nil || unknown != 0 {
					t.Fatalf("ValidateObject = %d unknown fields, %v; want 0, nil\n%s", unknown, err, ev.Object)
				}
				checkSecretsNull(t, decodeObject(t, ev), "")
			}
		})
	}
}

// checkPrincipal checks the principal of a sample: null for traffic, an API
// key for audit.
func checkPrincipal(t *testing.T, k *Kind, raw json.RawMessage) {
	t.Helper()
	if k.Class == ClassTraffic {
		if len(raw) != 0 {
			t.Errorf("traffic event with principal %s", raw)
		}
		return
	}
	var p Principal
	if err := json.Unmarshal(raw, &p); err != nil {
		t.Fatalf("principal %s: %v", raw, err)
	}
	if err := CheckID(PrefixAPIKey, p.ID); err != nil || p.Source != "API" || p.Subject == "" ||
		p.Credential.ID != p.ID || p.Credential.URI != sampleAPIBase+"/api_keys/"+p.ID {
		t.Errorf("principal %s is not an API key's", raw)
	}
}

// checkSecretsNull checks that tokens and secret keys are null.
func checkSecretsNull(t *testing.T, v any, path string) {
	t.Helper()
	switch v := v.(type) {
	case map[string]any:
		for key, child := range v {
			if (key == "token" || key == "aws_secret_access_key") && child != nil {
				t.Errorf("%s.%s = %v, want null", path, key, child)
			}
			checkSecretsNull(t, child, path+"."+key)
		}
	case []any:
		for _, child := range v {
			checkSecretsNull(t, child, path+"[]")
		}
	}
}

func TestSampleHTTPRequestIsCoherent(t *testing.T) {
	s := NewSampler(13)
	for range 200 {
		ev, err := s.Event("http_request_complete.v0")
		if err != nil {
			t.Fatalf("Event: %v", err)
		}
		obj := decodeObject(t, ev)
		get := func(path string) any { return getPath(obj, path) }
		raw := fmt.Sprint(get("http.request.url.scheme"), "://", get("http.request.url.host"), get("http.request.url.path"))
		if q := get("http.request.url.query"); q != "" {
			raw += "?" + fmt.Sprint(q)
		}
		if got := get("http.request.url.raw"); got != raw {
			t.Errorf("url.raw = %v, want %s from its parts", got, raw)
		}
		if m := fmt.Sprint(get("http.request.method")); m != strings.ToLower(m) {
			t.Errorf("method %q is not lowercase", m)
		}
		if code, _ := get("http.response.status_code").(float64); code < 100 || code > 599 {
			t.Errorf("status code %v", code)
		}
		for _, side := range []string{"request", "response"} {
			headers, _ := get("http." + side + ".headers").(map[string]any)
			for name, values := range headers {
				for _, part := range strings.Split(name, "-") {
					if part == "" || !unicode.IsUpper(rune(part[0])) || part[1:] != strings.ToLower(part[1:]) {
						t.Errorf("%s header %q is not capitalized", side, name)
					}
				}
				for _, v := range values.([]any) {
					if s := v.(string); s != strings.ToLower(s) {
						t.Errorf("%s header %s value %q is not lowercase", side, name, s)
					}
				}
			}
		}
	}
}

func TestHTTPRequest1KB(t *testing.T) {
	http, _ := Default().Kind("http_request_complete.v0")
	for seed := range uint64(100) {
		s := NewSampler(seed)
		for range 5 {
			ev := s.HTTPRequest1KB()
			doc, _ := ev.MarshalJSON()
			if n := len(doc); n < 900 || n > 1100 {
				t.Fatalf("seed %d: envelope of %d bytes, want 1000±100:\n%s", seed, n, doc)
			}
			if _, err := http.ValidateObject(ev.Object); err != nil {
				t.Fatalf("seed %d: %v\n%s", seed, err, ev.Object)
			}
		}
	}
}

func ExampleSampler_Event() {
	s := NewSampler(1)
	ev, err := s.Event("tcp_connection_closed.v0")
	if err != nil {
		fmt.Println(err)
		return
	}
	var obj struct {
		Conn struct {
			ServerName string `json:"server_name"`
		} `json:"conn"`
	}
	if err := json.Unmarshal(ev.Object, &obj); err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(ev.Type, ev.Timestamp.Format(TimeLayout), obj.Conn.ServerName)
	// Output: tcp_connection_closed.v0 2026-11-22T10:00:01.047Z db.example.com
}
