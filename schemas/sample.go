package schemas

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"maps"
	"math/rand/v2"
	"slices"
	"strings"
	"time"

	"github.com/segmentio/ksuid"
)

// sampleStream is the second word of the PCG state of every Sampler; the
// seed is the first.
const sampleStream = 0x5111ce5eed

// Sampler generates realistic sample events for tests and benchmarks. Its
// output depends only on its seed, its options and the calls made: two
// samplers with the same seed and options return the same events, and two
// with the same seed return the same events apart from their times (ids
// included, as they are made from the sampler's own timeline). A Sampler is
// not safe for concurrent use.
type Sampler struct {
	cat       *Catalogue
	rng       *rand.Rand
	n         int              // events generated so far
	base      time.Time        // the time of event 0 on the timeline ids are made from
	start     time.Time        // the time of event 0 as dated; zero: base
	now       func() time.Time // dates each event at its time less a jitter; nil: start or base
	idShift   time.Duration    // from the event's time to its time on the timeline
	account   string           // account_id of every event
	principal json.RawMessage
}

// SamplerOption dates the events of a Sampler otherwise than from
// 2026-11-22T10:00:00Z on.
type SamplerOption func(*Sampler)

// SampleStart dates event n at start plus n seconds and up to a second
// more, so that a seed makes the same events, times included, at every run.
func SampleStart(start time.Time) SamplerOption {
	return func(s *Sampler) { s.start = start }
}

// SampleClock dates each event at the time now returns when it is made,
// less up to a second, so that events look as if they just happened.
func SampleClock(now func() time.Time) SamplerOption {
	return func(s *Sampler) { s.now = now }
}

// NewSampler returns a Sampler of the Default catalogue's kinds whose
// randomness comes from a PCG generator seeded with seed. Its events are
// dated from 2026-11-22T10:00:00Z on, a second apart, unless an option
// says otherwise.
func NewSampler(seed uint64, opts ...SamplerOption) *Sampler {
	s := &Sampler{
		cat: Default(),
		rng: rand.New(rand.NewPCG(seed, sampleStream)),
		// The timeline ids are made from, and the events' times unless an
		// option dates them otherwise.
		base: time.Date(2026, time.November, 22, 10, 0, 0, 0, time.UTC),
	}
	for _, opt := range opts {
		opt(s)
	}
	s.account = s.id(PrefixAccount, s.base.AddDate(-1, 0, 0))
	key := s.id(PrefixAPIKey, s.base.AddDate(0, -2, 0))
	p := Principal{
		ID:      key,
		Subject: s.pick("alice@example.com", "ops-bot@example.com", "bob@example.org", "deploy@example.net"),
		Source:  "API",
		Credential: Ref{
			ID:  key,
			URI: sampleAPIBase + "/api_keys/" + key,
		},
	}
	s.principal = s.encode(p)
	return s
}

// sampleAPIBase is the base URL of the management API in sample events.
const sampleAPIBase = "https://api.sluice.local"

// Event returns a new event of the kind with every field of the kind
// present: realistic values, and null where the resource would hold null
// (tokens, secrets, fields of a module that did not run). Each call advances
// the event time by about a second, or takes the clock's time with
// SampleClock. It returns an error wrapping
// ErrUnknownKind for a kind the catalogue does not have.
func (s *Sampler) Event(kind string) (Event, error) {
	k, ok := s.cat.Kind(kind)
	if !ok {
		return Event{}, fmt.Errorf("%w: %q", ErrUnknownKind, kind)
	}
	ev, _ := s.event(k)
	return ev, nil
}

// HTTPRequest1KB returns an http_request_complete.v0 event whose envelope
// encodes to 1000±100 bytes (in practice within 25 bytes of 1000), the size
// benchmarks take as typical. Unlike Event it does not fill every field: it
// keeps the connection, request line, status, sizes and TLS parameters of a
// sample, as producers that leave out unused modules send them, then adds
// the sample's response and request headers while they fit, and pads the
// request with a Cookie header.
func (s *Sampler) HTTPRequest1KB() Event {
	const target = 1000
	k, ok := s.cat.Kind("http_request_complete.v0")
	if !ok {
		return Event{} // the Default catalogue has the kind
	}
	ev, full := s.event(k)
	obj := map[string]any{}
	for _, path := range []string{
		"backend.connection_reused", "conn.client_ip", "conn.server_ip", "conn.server_name", "conn.server_port",
		"conn.start_ts", "http.request.body_length", "http.request.method", "http.request.url.host",
		"http.request.url.path", "http.request.url.query", "http.request.url.raw", "http.request.url.scheme",
		"http.request.user_agent", "http.response.body_length", "http.response.status_code",
		"tls.cipher_suite", "tls.version",
	} {
		if v := getPath(full, path); v != nil {
			setPath(obj, path, v)
		}
	}
	ev.Object = s.encode(obj)
	if len(ev.AppendJSON(nil)) > target+40 {
		setPath(obj, "http.request.user_agent", "curl/8.5.0") // a long user agent and URL
	}
	size := func() int {
		ev.Object = s.encode(obj)
		return len(ev.AppendJSON(nil))
	}
	for _, side := range []string{"response", "request"} {
		all := nestedMap(full, "http", side, "headers")
		kept := nestedMap(obj, "http", side, "headers")
		for _, name := range slices.Sorted(maps.Keys(all)) {
			if kept[name] = all[name]; size() > target {
				delete(kept, name)
			}
		}
	}
	// The header adds `,"Cookie":["session=` and `"]` to the value.
	if n := target - size() - len(`,"Cookie":["session="]`); n > 0 {
		nestedMap(obj, "http", "request", "headers")["Cookie"] = []string{"session=" + s.hex(n)}
		size()
	}
	return ev
}

// getPath returns the value at the dotted path of obj, or nil.
func getPath(obj map[string]any, path string) any {
	var v any = obj
	for seg := range strings.SplitSeq(path, ".") {
		m, ok := v.(map[string]any)
		if !ok {
			return nil
		}
		v = m[seg]
	}
	return v
}

// event returns a new event of k and its object before encoding.
func (s *Sampler) event(k *Kind) (Event, map[string]any) {
	s.n++
	jitter := time.Duration(s.rng.IntN(1000)) * time.Millisecond
	offset := time.Duration(s.n)*time.Second + jitter
	at := s.base.Add(offset)
	switch {
	case s.now != nil:
		at = s.now().Add(-jitter)
	case !s.start.IsZero():
		at = s.start.Add(offset)
	}
	// Ids are made from the timeline whatever the event's time, so that a
	// seed makes the same ids.
	s.idShift = s.base.Add(offset).Sub(at)
	ev := Event{
		ID:        s.id(PrefixEvent, at),
		Type:      k.Name,
		Timestamp: at,
		AccountID: s.account,
	}
	var obj map[string]any
	if k.Class == ClassAudit {
		ev.Principal = s.principal
		obj = s.auditObject(k, at)
	} else {
		obj = s.trafficObject(k, at)
	}
	ev.Object = s.encode(obj)
	return ev, obj
}

// fill sets every field of k in obj that is not set yet, through value, and
// fills lists of objects through element.
func (s *Sampler) fill(k *Kind, obj map[string]any, value func(*Field) any, element func(list string, fields []*Field) map[string]any) {
	lists := map[string][]*Field{}
	var order []string
	for i := range k.Fields {
		f := &k.Fields[i]
		if f.InList != "" {
			if lists[f.InList] == nil {
				order = append(order, f.InList)
			}
			lists[f.InList] = append(lists[f.InList], f)
			continue
		}
		if !hasPath(obj, f.Path) {
			setPath(obj, f.Path, value(f))
		}
	}
	for _, list := range order {
		n := 1 + s.rng.IntN(3)
		elems := make([]map[string]any, n)
		for i := range elems {
			elems[i] = element(list, lists[list])
		}
		setPath(obj, list, elems)
	}
}

// typeValue returns a plausible value of a field the sampler knows nothing
// more about than its type.
func (s *Sampler) typeValue(f *Field, at time.Time) any {
	switch f.Type {
	case TypeBool:
		return s.rng.IntN(2) == 0
	case TypeString:
		return "example-" + s.hex(8)
	case TypeInt32, TypeInt64, TypeUint64:
		return s.rng.IntN(10000)
	case TypeFloat64:
		return float64(s.rng.IntN(100000)) / 100
	case TypeTimestamp:
		return stamp(at.Add(-time.Duration(s.rng.IntN(3600)) * time.Second))
	case TypeStringList:
		return []string{"example-" + s.hex(4), "example-" + s.hex(4)}
	case TypeStringMap:
		return map[string]string{"key": "value"}
	case TypeHeaderMap:
		return map[string][]string{"X-Example": {"value"}}
	case TypeMapList:
		return []map[string]any{{"key": "value"}}
	case TypeObject:
		return map[string]any{}
	}
	return nil
}

// id returns prefix and a KSUID of time t, moved onto the sampler's
// timeline, whose payload comes from the sampler's randomness.
func (s *Sampler) id(prefix string, t time.Time) string {
	var payload [16]byte
	binary.BigEndian.PutUint64(payload[:8], s.rng.Uint64())
	binary.BigEndian.PutUint64(payload[8:], s.rng.Uint64())
	k, _ := ksuid.FromParts(t.Add(s.idShift), payload[:]) // cannot fail: the payload has 16 bytes
	return prefix + k.String()
}

// pick returns one of the options, uniformly.
func (s *Sampler) pick(options ...string) string {
	return options[s.rng.IntN(len(options))]
}

// percent returns true p percent of the time.
func (s *Sampler) percent(p int) bool { return s.rng.IntN(100) < p }

// hex returns n random lowercase hexadecimal digits.
func (s *Sampler) hex(n int) string {
	const digits = "0123456789abcdef"
	b := make([]byte, n)
	for i := range b {
		b[i] = digits[s.rng.IntN(16)]
	}
	return string(b)
}

// base64 returns the standard base64 encoding of n random bytes, the first
// ones being head.
func (s *Sampler) base64(n int, head ...byte) string {
	const alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/"
	var b strings.Builder
	raw := make([]byte, n)
	copy(raw, head)
	for i := len(head); i < n; i++ {
		raw[i] = byte(s.rng.Uint32())
	}
	for i := 0; i+2 < n; i += 3 {
		v := uint(raw[i])<<16 | uint(raw[i+1])<<8 | uint(raw[i+2])
		b.WriteByte(alphabet[v>>18&63])
		b.WriteByte(alphabet[v>>12&63])
		b.WriteByte(alphabet[v>>6&63])
		b.WriteByte(alphabet[v&63])
	}
	return b.String()
}

// stamp formats t as sample timestamps are: RFC 3339, UTC, milliseconds.
func stamp(t time.Time) string { return t.UTC().Format(TimeLayout) }

// encode returns the compact JSON of v, with map keys sorted and without
// HTML escaping.
func (s *Sampler) encode(v any) json.RawMessage {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		// Sample values are maps, slices, strings, numbers and booleans.
		panic(fmt.Sprintf("schemas: encoding a sample: %v", err))
	}
	return bytes.TrimSuffix(b.Bytes(), []byte("\n"))
}

// setPath sets the dotted path of obj to v, creating intermediate objects.
func setPath(obj map[string]any, path string, v any) {
	segs := strings.Split(path, ".")
	nestedMap(obj, segs[:len(segs)-1]...)[segs[len(segs)-1]] = v
}

// hasPath reports whether the dotted path of obj is set, or one of its
// parents is set to something other than an object (such as null).
func hasPath(obj map[string]any, path string) bool {
	cur := obj
	for seg := range strings.SplitSeq(path, ".") {
		v, ok := cur[seg]
		if !ok {
			return false
		}
		next, isMap := v.(map[string]any)
		if !isMap {
			return true
		}
		cur = next
	}
	return true
}

// nestedMap returns the object at the keys of obj, creating it if needed.
func nestedMap(obj map[string]any, keys ...string) map[string]any {
	cur := obj
	for _, key := range keys {
		next, ok := cur[key].(map[string]any)
		if !ok {
			next = map[string]any{}
			cur[key] = next
		}
		cur = next
	}
	return cur
}
