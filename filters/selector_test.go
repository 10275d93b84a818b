package filters_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/sluicehq/sluice/filters"
	"github.com/sluicehq/sluice/schemas"
)

// The traffic kinds of the selector tests.
const (
	selHTTP = "http_request_complete.v0"
	selTCP  = "tcp_connection_closed.v0"
)

// readHeader is schemas.ReadHeader without the spans.
func readHeader(data []byte) (schemas.Header, error) {
	h, _, err := schemas.ReadHeader(data)
	return h, err
}

// selEnv returns a filter environment and cache of the default
// catalogue.
func selEnv(t testing.TB) (*filters.Env, *filters.Cache) {
	t.Helper()
	env, err := filters.NewEnv(schemas.Default())
	if err != nil {
		t.Fatalf("NewEnv: %v", err)
	}
	return env, filters.NewCache(env, 64)
}

// selNew returns the selector of src or fails the test.
func selNew(t testing.TB, env *filters.Env, cache *filters.Cache, src filters.Source) *filters.Selector {
	t.Helper()
	s, err := filters.NewSelector(env, cache, src)
	if err != nil {
		t.Fatalf("NewSelector(%+v): %v", src, err)
	}
	return s
}

// selEnvelope returns the stored form of an event of the kind with the object.
func selEnvelope(kind, object string) []byte {
	ev := schemas.Event{
		ID:        "ev_2YqAbCdEfGhIjKlMnOpQrStUvWx",
		Type:      kind,
		Timestamp: time.Date(2026, 11, 22, 10, 4, 5, 123e6, time.UTC),
		AccountID: "ac_2YpAbCdEfGhIjKlMnOpQrStUvWx",
		Object:    json.RawMessage(object),
	}
	return ev.AppendJSON(nil)
}

// selSamples returns stored events of the sampler: 1 KB requests, and
// events of each traffic kind with every field.
func selSamples(t testing.TB) [][]byte {
	t.Helper()
	s := schemas.NewSampler(7)
	var out [][]byte
	for range 3 {
		ev := s.HTTPRequest1KB()
		out = append(out, ev.AppendJSON(nil))
		for _, kind := range []string{selHTTP, selTCP} {
			ev, err := s.Event(kind)
			if err != nil {
				t.Fatal(err)
			}
			out = append(out, ev.AppendJSON(nil))
		}
	}
	return out
}

func TestReadHeader(t *testing.T) {
	ev := schemas.NewSampler(1).HTTPRequest1KB()
	h, err := readHeader(ev.AppendJSON(nil))
	if err != nil {
		t.Fatal(err)
	}
	want := schemas.Header{ID: ev.ID, Type: ev.Type, Timestamp: ev.Timestamp.Truncate(time.Millisecond).UTC(), AccountID: ev.AccountID}
	if !reflect.DeepEqual(h, want) {
		t.Errorf("ReadHeader = %+v, want %+v", h, want)
	}
}

func TestReadHeaderTimestamps(t *testing.T) {
	for _, tc := range []struct {
		ts   string
		want time.Time
		ok   bool
	}{
		{"2026-11-22T10:04:05.123Z", time.Date(2026, 11, 22, 10, 4, 5, 123e6, time.UTC), true},
		{"2024-02-29T23:59:59.999Z", time.Date(2024, 2, 29, 23, 59, 59, 999e6, time.UTC), true},
		{"2026-01-31T00:00:00.000Z", time.Date(2026, 1, 31, 0, 0, 0, 0, time.UTC), true},
		{"2026-11-22T10:04:05Z", time.Date(2026, 11, 22, 10, 4, 5, 0, time.UTC), true},
		{"2026-02-29T00:00:00.000Z", time.Time{}, false},
		{"2026-13-01T00:00:00.000Z", time.Time{}, false},
		{"2026-11-22T24:00:00.000Z", time.Time{}, false},
		{"yesterday", time.Time{}, false},
	} {
		t.Run(tc.ts, func(t *testing.T) {
			data := []byte(`{"event_id":"ev_1","event_type":"x","event_timestamp":"` + tc.ts + `","account_id":"ac_1","principal":null,"object":{}}`)
			h, err := readHeader(data)
			if !tc.ok {
				if !errors.Is(err, schemas.ErrMalformedEvent) {
					t.Fatalf("ReadHeader = %v, %v; want ErrMalformedEvent", h, err)
				}
				return
			}
			if err != nil || !h.Timestamp.Equal(tc.want) {
				t.Fatalf("ReadHeader = %v, %v; want %v", h.Timestamp, err, tc.want)
			}
		})
	}
}

func TestReadHeaderMalformed(t *testing.T) {
	for _, data := range []string{
		``,
		`{}`,
		`null`,
		`{"event_id":"ev_1"`,
		`{"event_type":"x","event_id":"ev_1","event_timestamp":"2026-11-22T10:04:05.123Z","account_id":"ac_1"}`,
		`{"event_id":"ev_\"1","event_type":"x","event_timestamp":"2026-11-22T10:04:05.123Z","account_id":"ac_1"}`,
		`{ "event_id":"ev_1","event_type":"x","event_timestamp":"2026-11-22T10:04:05.123Z","account_id":"ac_1"}`,
		`{"event_id":"ev_1","event_type":"x","event_timestamp":"2026-11-22T10:04:05.123Z","account_id":"ac_1`,
	} {
		if h, err := readHeader([]byte(data)); !errors.Is(err, schemas.ErrMalformedEvent) {
			t.Errorf("ReadHeader(%q) = %+v, %v; want ErrMalformedEvent", data, h, err)
		}
	}
}

func TestSelectWhole(t *testing.T) {
	env, cache := selEnv(t)
	for _, src := range []filters.Source{
		{Kind: selHTTP},
		{Kind: "event_destination_created.v0"}, // audit kinds are delivered whole
	} {
		t.Run(src.Kind, func(t *testing.T) {
			s := selNew(t, env, cache, src)
			ev, err := schemas.NewSampler(3).Event(src.Kind)
			if err != nil {
				t.Fatal(err)
			}
			data := ev.AppendJSON(nil)
			out, keep, err := s.Select(t.Context(), data, nil)
			if err != nil || !keep || !bytes.Equal(out, data) {
				t.Fatalf("Select = %s, %v, %v; want the event as it is", out, keep, err)
			}
			if &out[0] != &data[0] || cap(out) != len(out) {
				t.Error("Select copied an event it takes whole into a nil dst")
			}
			dst := []byte("prefix")
			out, keep, err = s.Select(t.Context(), data, dst)
			if err != nil || !keep || string(out) != "prefix"+string(data) {
				t.Fatalf("Select with dst = %s, %v, %v; want data appended", out, keep, err)
			}
		})
	}
}

func TestSelectFields(t *testing.T) {
	const object = `{"backend":{"connection_reused":true},` +
		`"conn":{"client_ip":"203.0.113.7","x_unknown":1,"server_ip":"192.0.2.1","server_port":443},` +
		`"http":{"request":{"method":"GET","url":{"host":"h","path":"/p"},"headers":{"A":["1"]}},"response":{"status_code":200,"headers":{}}},` +
		`"oauth":null,"tls":{"version":"1.3"},"traffic_policy":{"logs":[{"a":1},{"b":[2]}]},"x_top":{"y":1}}`
	for _, tc := range []struct {
		name   string
		fields []string
		want   string // the object delivered
	}{
		{"leaf", []string{"conn.client_ip"}, `{"conn":{"client_ip":"203.0.113.7"}}`},
		{"leaves in stored order", []string{"conn.server_port", "conn.client_ip"}, `{"conn":{"client_ip":"203.0.113.7","server_port":443}}`},
		{"group keeps unknown fields", []string{"conn"}, `{"conn":{"client_ip":"203.0.113.7","x_unknown":1,"server_ip":"192.0.2.1","server_port":443}}`},
		{"nested group", []string{"http.request"}, `{"http":{"request":{"method":"GET","url":{"host":"h","path":"/p"},"headers":{"A":["1"]}}}}`},
		{"deep leaf", []string{"http.request.url.path"}, `{"http":{"request":{"url":{"path":"/p"}}}}`},
		{"map leaf", []string{"http.response.headers"}, `{"http":{"response":{"headers":{}}}}`},
		{"list of objects", []string{"traffic_policy.logs"}, `{"traffic_policy":{"logs":[{"a":1},{"b":[2]}]}}`},
		{"several", []string{"conn.client_ip", "http.response.status_code", "tls"}, `{"conn":{"client_ip":"203.0.113.7"},"http":{"response":{"status_code":200}},"tls":{"version":"1.3"}}`},
		{"missing leaf", []string{"conn.server_name"}, `{}`},
		{"missing group", []string{"compression"}, `{}`},
		{"under null", []string{"oauth.user.id"}, `{}`},
		{"null group", []string{"oauth"}, `{"oauth":null}`},
		{"missing and present", []string{"conn.server_name", "tls.version"}, `{"tls":{"version":"1.3"}}`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			env, cache := selEnv(t)
			s := selNew(t, env, cache, filters.Source{Kind: selHTTP, Fields: filters.Normalize(tc.fields)})
			data := selEnvelope(selHTTP, object)
			out, keep, err := s.Select(t.Context(), data, nil)
			if err != nil || !keep {
				t.Fatalf("Select = %v, %v", keep, err)
			}
			if want := string(selEnvelope(selHTTP, tc.want)); string(out) != want {
				t.Errorf("Select =\n%s\nwant\n%s", out, want)
			}
			selCheckProjection(t, data, tc.fields, out)
		})
	}
}

func TestSelectFieldsOfSamples(t *testing.T) {
	env, cache := selEnv(t)
	selections := [][]string{
		{"conn.client_ip"},
		{"conn", "http.response.status_code"},
		{"http.request"},
		{"http.request.url.host", "http.request.headers", "tls.version", "traffic_policy.logs"},
		{"oauth.user.name", "conn.end_ts", "conn.bytes_in"},
	}
	for _, data := range selSamples(t) {
		h, err := readHeader(data)
		if err != nil {
			t.Fatal(err)
		}
		for _, fields := range selections {
			if env.CheckFields(h.Type, fields) != nil {
				continue
			}
			s := selNew(t, env, cache, filters.Source{Kind: h.Type, Fields: filters.Normalize(fields)})
			dst := []byte("reused")
			out, keep, err := s.Select(t.Context(), data, dst[:0])
			if err != nil || !keep {
				t.Fatalf("Select(%s) = %v, %v", fields, keep, err)
			}
			selCheckProjection(t, data, fields, out)
		}
	}
}

func TestSelectFilter(t *testing.T) {
	const object = `{"conn":{"client_ip":"203.0.113.7","server_ip":"192.0.2.1","server_name":"api.example.com","server_port":443}}`
	for _, tc := range []struct {
		name, filter, object string
		want                 bool
	}{
		{"string equal", `ev.conn.server_name == "api.example.com"`, object, true},
		{"string not equal", `ev.conn.server_name == "www.example.com"`, object, false},
		{"string function", `ev.conn.server_name.endsWith(".example.com")`, object, true},
		{"int equal", `ev.conn.server_port == 443`, object, true},
		{"int compare", `ev.conn.server_port > 1024`, object, false},
		{"ip in range", `inCIDR(ev.conn.client_ip, "203.0.113.0/24")`, object, true},
		{"ip out of range", `inCIDR(ev.conn.client_ip, "198.51.100.0/24")`, object, false},
		{"two fields", `inCIDR(ev.conn.server_ip, "192.0.2.0/24") && ev.conn.server_port == 443`, object, true},
		{"missing string is empty", `ev.conn.server_name == ""`, `{"conn":{"server_port":443}}`, true},
		{"missing int is zero", `ev.conn.server_port == 0`, `{"conn":{"client_ip":"203.0.113.7"}}`, true},
		{"missing ip is in no range", `inCIDR(ev.conn.client_ip, "0.0.0.0/0")`, `{}`, false},
		{"null is missing", `ev.conn.server_name == "" && ev.conn.server_port == 0`, `{"conn":{"server_name":null,"server_port":null}}`, true},
		{"null group is missing", `ev.conn.server_port == 0`, `{"conn":null}`, true},
		{"escaped string", `ev.conn.server_name == "a\"b"`, `{"conn":{"server_name":"a\"b"}}`, true},
		{"escaped key", `ev.conn.server_port == 443`, `{"\u0063onn":{"server_port":443}}`, true},
		{"field after others", `ev.conn.server_port == 8080`, `{"backend":{"connection_reused":true},"http":{"request":{"headers":{"X":["}"]}}},"conn":{"server_port":8080}}`, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			env, cache := selEnv(t)
			s := selNew(t, env, cache, filters.Source{Kind: selHTTP, Filter: tc.filter})
			data := selEnvelope(selHTTP, tc.object)
			dst := []byte("dst")
			out, keep, err := s.Select(t.Context(), data, dst)
			if err != nil || keep != tc.want {
				t.Fatalf("Select = %v, %v; want %v", keep, err, tc.want)
			}
			want := "dst"
			if keep {
				want += string(data)
			}
			if string(out) != want {
				t.Errorf("Select = %s, want %s", out, want)
			}
		})
	}
}

func TestSelectFilterAndFields(t *testing.T) {
	env, cache := selEnv(t)
	src := filters.Source{
		Kind:   selHTTP,
		Filter: `inCIDR(ev.conn.client_ip, "203.0.113.0/24") && ev.conn.server_port == 443`,
		Fields: filters.Normalize([]string{"http.request.method", "conn.client_ip"}),
	}
	s := selNew(t, env, cache, src)
	for _, tc := range []struct {
		object, want string
	}{
		{`{"conn":{"client_ip":"203.0.113.7","server_port":443},"http":{"request":{"method":"GET"}}}`, `{"conn":{"client_ip":"203.0.113.7"},"http":{"request":{"method":"GET"}}}`},
		{`{"conn":{"client_ip":"203.0.113.7","server_port":80},"http":{"request":{"method":"GET"}}}`, ""},
		{`{"conn":{"client_ip":"198.51.100.7","server_port":443}}`, ""},
	} {
		data := selEnvelope(selHTTP, tc.object)
		out, keep, err := s.Select(t.Context(), data, nil)
		if err != nil || keep != (tc.want != "") {
			t.Fatalf("Select(%s) = %v, %v", tc.object, keep, err)
		}
		if keep && string(out) != string(selEnvelope(selHTTP, tc.want)) {
			t.Errorf("Select(%s) = %s, want object %s", tc.object, out, tc.want)
		}
	}
}

func TestSelectErrors(t *testing.T) {
	env, cache := selEnv(t)
	cancelled, cancel := context.WithCancel(t.Context())
	cancel()
	const filter = `ev.conn.server_port == 443`
	for _, tc := range []struct {
		name    string
		src     filters.Source
		ctx     context.Context
		data    []byte
		wantErr error
	}{
		{"not an envelope", filters.Source{Kind: selHTTP}, nil, []byte(`{"object":{}}`), schemas.ErrMalformedEvent},
		{"another kind", filters.Source{Kind: selHTTP}, nil, selEnvelope(selTCP, `{}`), filters.ErrWrongKind},
		{"another kind, filtered", filters.Source{Kind: selHTTP, Filter: filter}, nil, selEnvelope(selTCP, `{}`), filters.ErrWrongKind},
		{"int field holds a string", filters.Source{Kind: selHTTP, Filter: filter}, nil, selEnvelope(selHTTP, `{"conn":{"server_port":"443"}}`), schemas.ErrMalformedEvent},
		{"string field holds a number", filters.Source{Kind: selHTTP, Filter: `ev.conn.server_name == ""`}, nil, selEnvelope(selHTTP, `{"conn":{"server_name":1}}`), schemas.ErrMalformedEvent},
		{"object not an object", filters.Source{Kind: selHTTP, Fields: []string{"conn"}}, nil, selEnvelope(selHTTP, `[]`), schemas.ErrMalformedEvent},
		{"truncated object", filters.Source{Kind: selHTTP, Fields: []string{"conn"}}, nil, selEnvelope(selHTTP, `{"conn":{"client_ip":"1`), schemas.ErrMalformedEvent},
		{"bytes after the envelope", filters.Source{Kind: selHTTP, Fields: []string{"conn"}}, nil, append(selEnvelope(selHTTP, `{}`), '}'), schemas.ErrMalformedEvent},
		{"cancelled", filters.Source{Kind: selHTTP, Filter: filter}, cancelled, selEnvelope(selHTTP, `{}`), context.Canceled},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := selNew(t, env, cache, tc.src)
			ctx := tc.ctx
			if ctx == nil {
				ctx = t.Context()
			}
			out, keep, err := s.Select(ctx, tc.data, []byte("dst"))
			if !errors.Is(err, tc.wantErr) || keep || string(out) != "dst" {
				t.Fatalf("Select = %q, %v, %v; want dst, false, %v", out, keep, err, tc.wantErr)
			}
		})
	}
}

// TestSelectRefusesRepeatedNames gives selectors stored events whose
// objects give a member name twice, as events stored before ingest refused
// them, or published past it, can. Where the selector reads the member (a
// field the filter reads, an object on its way, a member the selection
// walks or keeps) it refuses the event, naming the path, since readers
// keep either value or both: the filter would decide on the first value
// while a reader downstream sees the last. Where it does not read the
// member, the event goes out as it is stored.
func TestSelectRefusesRepeatedNames(t *testing.T) {
	env, cache := selEnv(t)
	const (
		name = `ev.conn.server_name == "allowed.example.com"`
		port = `ev.conn.server_port == 443`
		both = `inCIDR(ev.conn.client_ip, "203.0.113.0/24") && ev.conn.server_port == 443`
	)
	for _, tc := range []struct {
		name   string
		src    filters.Source
		object string
		path   string // named by the error; "" when the event is kept
		want   string // the object delivered when it is kept; "" for the object as stored
	}{
		{"filtered field", filters.Source{Kind: selHTTP, Filter: name},
			`{"conn":{"server_name":"allowed.example.com","server_name":"internal.example.org"}}`, "object.conn.server_name", ""},
		{"filtered field after the filter has all it reads", filters.Source{Kind: selHTTP, Filter: port},
			`{"conn":{"server_port":443,"server_name":"a","server_port":80}}`, "object.conn.server_port", ""},
		{"object on the filter's path", filters.Source{Kind: selHTTP, Filter: port},
			`{"conn":{"server_port":443},"http":{},"conn":{"server_port":80}}`, "object.conn", ""},
		{"object on the filter's path, first null", filters.Source{Kind: selHTTP, Filter: port},
			`{"conn":null,"conn":{"server_port":443}}`, "object.conn", ""},
		{"filtered field, escaped", filters.Source{Kind: selHTTP, Filter: port},
			`{"conn":{"server_port":443,"server_\u0070ort":80}}`, "object.conn.server_port", ""},
		{"object on the filter's path, escaped", filters.Source{Kind: selHTTP, Filter: both},
			`{"conn":{"server_port":443,"client_ip":"203.0.113.7"},"x":"\u0026","\u0063onn":{}}`, "object.conn", ""},
		{"filtered field after a name like it elsewhere", filters.Source{Kind: selHTTP, Filter: port},
			`{"conn":{"server_port":443,"x":{"server_port":1},"server_port":80}}`, "object.conn.server_port", ""},
		{"selected field", filters.Source{Kind: selHTTP, Fields: []string{"conn.client_ip"}},
			`{"conn":{"client_ip":"203.0.113.7","client_ip":"10.0.0.1"}}`, "object.conn.client_ip", ""},
		{"object on the selection's path", filters.Source{Kind: selHTTP, Fields: []string{"conn.client_ip"}},
			`{"conn":{"client_ip":"203.0.113.7"},"conn":{"client_ip":"10.0.0.1"}}`, "object.conn", ""},
		{"selected group", filters.Source{Kind: selHTTP, Fields: []string{"tls"}},
			`{"tls":{"version":"1.2"},"tls":{"version":"1.3"}}`, "object.tls", ""},
		{"selected field of a filtered event", filters.Source{Kind: selHTTP, Filter: port, Fields: []string{"http.request.method"}},
			`{"conn":{"server_port":443},"http":{"request":{"method":"GET","method":"POST"}}}`, "object.http.request.method", ""},

		{"whole event", filters.Source{Kind: selHTTP},
			`{"conn":{"server_name":"a","server_name":"b"}}`, "", ""},
		{"field the filter does not read", filters.Source{Kind: selHTTP, Filter: port},
			`{"conn":{"server_port":443,"server_name":"a","server_name":"b"},"x":1,"x":2}`, "", ""},
		{"names of the filter in an object it does not read", filters.Source{Kind: selHTTP, Filter: port},
			`{"conn":{"server_port":443},"x":{"conn":1,"conn":{"server_port":80}}}`, "", ""},
		{"field the selection does not keep", filters.Source{Kind: selHTTP, Fields: []string{"conn.client_ip"}},
			`{"conn":{"client_ip":"203.0.113.7","server_name":"a","server_name":"b"},"tls":1,"tls":2}`, "", `{"conn":{"client_ip":"203.0.113.7"}}`},
		// A group is kept as it is stored, as a whole event is: sluice
		// reads nothing in it.
		{"inside a selected group", filters.Source{Kind: selHTTP, Fields: []string{"tls"}},
			`{"tls":{"version":"1.2","version":"1.3"}}`, "", `{"tls":{"version":"1.2","version":"1.3"}}`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := selNew(t, env, cache, tc.src)
			data := selEnvelope(selHTTP, tc.object)
			// Twice: what the selector marks while reading one event must
			// not count for the next.
			for range 2 {
				out, keep, err := s.Select(t.Context(), data, []byte("dst"))
				if tc.path != "" {
					if !errors.Is(err, schemas.ErrMalformedEvent) || keep || string(out) != "dst" {
						t.Fatalf("Select = %q, %v, %v; want dst, false, ErrMalformedEvent", out, keep, err)
					}
					if msg := err.Error(); !strings.Contains(msg, tc.path+":") || !strings.Contains(msg, "twice") {
						t.Fatalf("error %q does not say that %s is given twice", msg, tc.path)
					}
					continue
				}
				want := "dst" + string(data)
				if tc.want != "" {
					want = "dst" + string(selEnvelope(selHTTP, tc.want))
				}
				if err != nil || !keep || string(out) != want {
					t.Fatalf("Select = %s, %v, %v; want %s", out, keep, err, want)
				}
			}
		})
	}
}

// TestSelectFilterRuntimeError: a filter that cannot decide is an error
// for the caller to deal with, not a silent rejection.
func TestSelectFilterRuntimeError(t *testing.T) {
	env, cache := selEnv(t)
	s := selNew(t, env, cache, filters.Source{Kind: selHTTP, Filter: `1000 / ev.conn.server_port > 100`})
	if _, keep, err := s.Select(t.Context(), selEnvelope(selHTTP, `{"conn":{"server_port":443}}`), nil); err != nil || keep {
		t.Fatalf("Select = %v, %v; want false, nil", keep, err)
	}
	_, keep, err := s.Select(t.Context(), selEnvelope(selHTTP, `{"conn":{}}`), nil)
	if err == nil || keep || errors.Is(err, schemas.ErrMalformedEvent) {
		t.Fatalf("Select dividing by a missing field = %v, %v; want the filter's error", keep, err)
	}
}

func TestNewSelectorErrors(t *testing.T) {
	env, cache := selEnv(t)
	for _, tc := range []struct {
		name    string
		src     filters.Source
		wantErr error
	}{
		{"invalid filter", filters.Source{Kind: selHTTP, Filter: `ev.conn.nope == 1`}, filters.ErrInvalidFilter},
		{"invalid field", filters.Source{Kind: selHTTP, Fields: []string{"conn.nope"}}, filters.ErrInvalidField},
		{"filter of an audit kind", filters.Source{Kind: "event_destination_created.v0", Filter: `true`}, filters.ErrNotTraffic},
		{"fields of an audit kind", filters.Source{Kind: "event_destination_created.v0", Fields: []string{"id"}}, filters.ErrNotTraffic},
		{"unknown kind with a filter", filters.Source{Kind: "nope.v0", Filter: `true`}, filters.ErrUnknownKind},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if _, err := filters.NewSelector(env, cache, tc.src); !errors.Is(err, tc.wantErr) {
				t.Fatalf("NewSelector = %v, want %v", err, tc.wantErr)
			}
		})
	}
	if _, err := filters.NewSelector(env, cache, filters.Source{}); err == nil {
		t.Error("NewSelector of a source without a kind: no error")
	}
}

// selCheckProjection fails the test unless out is data's envelope with only
// the selected fields of its object, as selReferenceProjection has it.
func selCheckProjection(t testing.TB, data []byte, fields []string, out []byte) {
	t.Helper()
	if !json.Valid(out) {
		t.Fatalf("Select returned invalid JSON: %s", out)
	}
	want := selReferenceProjection(t, data, fields)
	got := selDecode(t, out)
	if !reflect.DeepEqual(got, want) {
		g, _ := json.Marshal(got)
		w, _ := json.Marshal(want)
		t.Fatalf("Select(%v) =\n%s\nwant\n%s", fields, g, w)
	}
}

// selReferenceProjection is the envelope of data with only the selected fields
// of its object, computed the slow, obvious way over encoding/json maps.
func selReferenceProjection(t testing.TB, data []byte, fields []string) map[string]any {
	t.Helper()
	env := selDecode(t, data)
	if len(fields) == 0 {
		return env
	}
	object, _ := env["object"].(map[string]any)
	projected := map[string]any{}
	for _, path := range fields {
		names := strings.Split(path, ".")
		v, ok := selLookup(object, names)
		if !ok {
			continue
		}
		at := projected
		for _, name := range names[:len(names)-1] {
			next, ok := at[name].(map[string]any)
			if !ok {
				next = map[string]any{}
				at[name] = next
			}
			at = next
		}
		at[names[len(names)-1]] = v
	}
	env["object"] = projected
	return env
}

// selLookup returns the value at the path under object, and whether it is
// there.
func selLookup(object map[string]any, names []string) (any, bool) {
	var v any = object
	for _, name := range names {
		m, ok := v.(map[string]any)
		if !ok {
			return nil, false
		}
		if v, ok = m[name]; !ok {
			return nil, false
		}
	}
	return v, true
}

// selReferenceMatch evaluates the program over the fields of data's object,
// read the slow, obvious way.
func selReferenceMatch(t testing.TB, p *filters.Program, data []byte) (bool, error) {
	t.Helper()
	kind, _ := schemas.Default().Kind(p.Kind())
	object, _ := selDecode(t, data)["object"].(map[string]any)
	f := p.NewFields()
	for _, path := range p.Fields() {
		v, ok := selLookup(object, strings.Split(path, "."))
		if !ok || v == nil {
			continue
		}
		field, _ := kind.Field(path)
		var err error
		switch field.Type {
		case schemas.TypeString:
			err = f.SetString(path, v.(string))
		case schemas.TypeInt32, schemas.TypeInt64:
			n, perr := strconv.ParseInt(string(v.(json.Number)), 10, 64)
			if perr != nil {
				t.Fatalf("%s: %v", path, perr)
			}
			err = f.SetInt(path, n)
		default:
			t.Fatalf("selReferenceMatch does not read %s fields", field.Type)
		}
		if err != nil {
			t.Fatal(err)
		}
	}
	return p.Match(context.Background(), f)
}

func selDecode(t testing.TB, data []byte) map[string]any {
	t.Helper()
	d := json.NewDecoder(bytes.NewReader(data))
	d.UseNumber()
	var m map[string]any
	if err := d.Decode(&m); err != nil {
		t.Fatalf("decoding %s: %v", data, err)
	}
	return m
}

// selFuzzSources are the sources FuzzSelect picks from.
func selFuzzSources() []filters.Source {
	const filter = `inCIDR(ev.conn.client_ip, "203.0.113.0/24") && ev.conn.server_port == 443`
	fields := filters.Normalize([]string{"conn.client_ip", "http.request", "http.response.status_code", "tls.version", "traffic_policy"})
	return []filters.Source{
		{Kind: selHTTP},
		{Kind: selHTTP, Filter: filter},
		{Kind: selHTTP, Fields: fields},
		{Kind: selHTTP, Filter: filter, Fields: fields},
		{Kind: selHTTP, Filter: `ev.conn.server_name.startsWith("api.") || ev.conn.server_ip == ""`, Fields: []string{"conn"}},
		{Kind: selHTTP, Fields: []string{"http.request.url.path", "oauth.user.id"}},
	}
}

// FuzzSelect checks that Select never panics on any bytes, and that for a
// valid stored event (an object the catalogue accepts, without repeated
// keys) it decides and projects as the reference implementations do. The
// input is tried both as a whole stored event and as the object of one.
func FuzzSelect(f *testing.F) {
	for i, data := range selSamples(f) {
		f.Add(data, uint8(i))
	}
	f.Add([]byte(`{"conn":{"client_ip":"203.0.113.9","server_port":443},"http":{"request":{"method":"GET"}}}`), uint8(3))
	f.Add([]byte(`{"\u0063onn":{"client_ip":"203.0.113.9","server_port":443,"x":[{"}":"]"}]},"tls":null}`), uint8(1))
	env, cache := selEnv(f)
	sources := selFuzzSources()
	selectors := make([]*filters.Selector, len(sources))
	for i, src := range sources {
		selectors[i] = selNew(f, env, cache, src)
	}
	kind, _ := schemas.Default().Kind(selHTTP)
	f.Fuzz(func(t *testing.T, data []byte, choice uint8) {
		i := int(choice) % len(sources)
		s, src := selectors[i], sources[i]
		if out, keep, err := s.Select(t.Context(), data, nil); err == nil && keep {
			if object, ok := selStoredObject(data); ok && selValid(kind, object) {
				selCheckProjection(t, data, src.Fields, out)
			}
		}
		var object bytes.Buffer
		if json.Compact(&object, data) != nil || object.Len() == 0 || object.Bytes()[0] != '{' {
			return
		}
		event := selEnvelope(selHTTP, object.String())
		out, keep, err := s.Select(t.Context(), event, []byte{})
		if !selValid(kind, object.Bytes()) {
			return
		}
		wantKeep, wantErr := true, error(nil)
		if src.Filter != "" {
			p, perr := cache.Program(src.Kind, src.Filter)
			if perr != nil {
				t.Fatal(perr)
			}
			wantKeep, wantErr = selReferenceMatch(t, p, event)
		}
		if (err != nil) != (wantErr != nil) || keep != wantKeep {
			t.Fatalf("Select(%s) = %v, %v; want %v, %v", event, keep, err, wantKeep, wantErr)
		}
		if keep {
			selCheckProjection(t, event, src.Fields, out)
		}
	})
}

// selStoredObject returns the object of a stored event, if data is one.
func selStoredObject(data []byte) ([]byte, bool) {
	if _, err := readHeader(data); err != nil || !json.Valid(data) {
		return nil, false
	}
	var ev struct {
		Object json.RawMessage `json:"object"`
	}
	if json.Unmarshal(data, &ev) != nil || selDuplicateKeys(data) {
		return nil, false
	}
	return ev.Object, true
}

// selValid reports whether object is a valid object of the kind without
// repeated keys, whose meaning encoding/json and Select see alike.
func selValid(kind *schemas.Kind, object []byte) bool {
	_, err := kind.ValidateObject(object)
	return err == nil && !selDuplicateKeys(object)
}

// selDuplicateKeys reports whether an object of the JSON data repeats a
// key.
func selDuplicateKeys(data []byte) bool {
	type frame struct {
		keys    map[string]bool // nil in an array
		wantKey bool
	}
	var stack []*frame
	valueDone := func() {
		if len(stack) > 0 && stack[len(stack)-1].keys != nil {
			stack[len(stack)-1].wantKey = true
		}
	}
	d := json.NewDecoder(bytes.NewReader(data))
	for {
		tok, err := d.Token()
		if err != nil {
			return false
		}
		if n := len(stack); n > 0 && stack[n-1].wantKey {
			if tok == json.Delim('}') {
				stack = stack[:n-1]
				valueDone()
				continue
			}
			key, _ := tok.(string)
			if stack[n-1].keys[key] {
				return true
			}
			stack[n-1].keys[key] = true
			stack[n-1].wantKey = false
			continue
		}
		switch tok {
		case json.Delim('{'):
			stack = append(stack, &frame{keys: map[string]bool{}, wantKey: true})
		case json.Delim('['):
			stack = append(stack, &frame{})
		case json.Delim(']'):
			stack = stack[:len(stack)-1]
			valueDone()
		default:
			valueDone()
		}
	}
}

func TestSelDuplicateKeys(t *testing.T) {
	for data, want := range map[string]bool{
		`{"a":1,"b":{"a":2},"c":[{"a":3},{"a":4}]}`: false,
		`{"a":1,"a":2}`:                 true,
		`{"b":{"x":[1,{"y":1,"y":2}]}}`: true,
		`{"b":[{"a":1}],"a":{"b":{}}}`:  false,
	} {
		if got := selDuplicateKeys([]byte(data)); got != want {
			t.Errorf("selDuplicateKeys(%s) = %v, want %v", data, got, want)
		}
	}
}

// ExampleSelector shows what a worker does with each event it pulls: read
// its header, then filter it and select its fields into a reused buffer.
func ExampleSelector() {
	env, err := filters.NewEnv(schemas.Default())
	if err != nil {
		panic(err)
	}
	cache := filters.NewCache(env, 16)
	sel, err := filters.NewSelector(env, cache, filters.Source{
		Kind:   "http_request_complete.v0",
		Filter: `inCIDR(ev.conn.client_ip, "203.0.113.0/24")`,
		Fields: []string{"conn.client_ip", "http.response.status_code"},
	})
	if err != nil {
		panic(err)
	}
	var buf []byte
	for _, clientIP := range []string{"203.0.113.7", "198.51.100.1"} {
		data := selEnvelope("http_request_complete.v0",
			`{"conn":{"client_ip":"`+clientIP+`","server_port":443},"http":{"request":{"method":"GET"},"response":{"status_code":200}}}`)
		h, err := readHeader(data)
		if err != nil {
			panic(err)
		}
		out, keep, err := sel.Select(context.Background(), data, buf[:0])
		if err != nil {
			panic(err)
		}
		buf = out
		fmt.Println(h.ID, keep)
		if keep {
			fmt.Println(string(out))
		}
	}
	// Output:
	// ev_2YqAbCdEfGhIjKlMnOpQrStUvWx true
	// {"event_id":"ev_2YqAbCdEfGhIjKlMnOpQrStUvWx","event_type":"http_request_complete.v0","event_timestamp":"2026-11-22T10:04:05.123Z","account_id":"ac_2YpAbCdEfGhIjKlMnOpQrStUvWx","principal":null,"object":{"conn":{"client_ip":"203.0.113.7"},"http":{"response":{"status_code":200}}}}
	// ev_2YqAbCdEfGhIjKlMnOpQrStUvWx false
}

// TestSelectRefusesOverLongField gives a selector a stored event whose
// field the filter reads is longer than the catalogue allows: it is not
// evaluated, and the error names the field and its limit. A source that
// does not read the field takes the event as usual.
func TestSelectRefusesOverLongField(t *testing.T) {
	env, cache := selEnv(t)
	data := selEnvelope(selHTTP, `{"conn":{"server_name":"`+strings.Repeat("a", 254)+`","server_port":443}}`)
	s := selNew(t, env, cache, filters.Source{Kind: selHTTP, Filter: `ev.conn.server_name != ""`})
	_, keep, err := s.Select(t.Context(), data, nil)
	if keep || !errors.Is(err, filters.ErrFieldTooLong) || errors.Is(err, schemas.ErrMalformedEvent) {
		t.Fatalf("Select = %v, %v; want ErrFieldTooLong", keep, err)
	}
	if msg := err.Error(); !strings.Contains(msg, "object.conn.server_name") || !strings.Contains(msg, "limit of 253 bytes") {
		t.Errorf("error %q does not name the field and its limit", msg)
	}
	other := selNew(t, env, cache, filters.Source{Kind: selHTTP, Filter: `ev.conn.server_port == 443`})
	if _, keep, err := other.Select(t.Context(), data, nil); !keep || err != nil {
		t.Errorf("a filter on another field: Select = %v, %v; want the event kept", keep, err)
	}
}
