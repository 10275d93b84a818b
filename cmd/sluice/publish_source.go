package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"

	"github.com/sluicehq/sluice/schemas"
)

// eventSource yields events as NDJSON lines that carry an event_id.
type eventSource interface {
	// next returns the next event and its origin (a line or sample number),
	// or io.EOF after the last.
	next() (event []byte, origin int, err error)
	// describe says where the event of an origin came from, for messages.
	describe(origin int) string
}

// publishMaxLineBytes is the longest event publish sends, as the ingest API
// measures it: its line without the newline, event_id included.
const publishMaxLineBytes = schemas.DefaultMaxEventBytes

// lineTooLongError is an input line over publishMaxLineBytes. The API would
// refuse the whole batch for it, so publish stops before sending it.
type lineTooLongError struct {
	where string // such as "line 3 of events.ndjson"
	max   int
}

func (e *lineTooLongError) Error() string {
	return fmt.Sprintf("%s is over the limit of %d bytes (%d MiB) per event, counting the event_id publish adds to a line without one; "+
		"nothing of it was sent: split the event or drop fields", e.where, e.max, e.max>>20)
}

// ndjsonSource reads events, one a line.
type ndjsonSource struct {
	r       *bufio.Reader
	name    string // the file's name, for messages
	line    int    // lines read
	maxLine int    // longest line, as sent
}

func newNDJSONSource(r io.Reader, name string) *ndjsonSource {
	return &ndjsonSource{r: bufio.NewReaderSize(r, 1<<16), name: name, maxLine: publishMaxLineBytes}
}

// next returns the next non-blank line, with an event_id. It returns a
// *lineTooLongError for a line over maxLine, having read no more of it
// than the limit and a buffer.
func (s *ndjsonSource) next() ([]byte, int, error) {
	for {
		raw, err := s.readLine()
		var tooLong *lineTooLongError
		if errors.As(err, &tooLong) {
			s.line++
			tooLong.where = s.describe(s.line)
			return nil, s.line, tooLong
		}
		if err != nil && !errors.Is(err, io.EOF) {
			return nil, 0, fmt.Errorf("reading %s: %w", s.name, err)
		}
		if len(raw) == 0 && err != nil {
			return nil, 0, io.EOF
		}
		s.line++
		if raw = bytes.TrimSpace(raw); len(raw) > 0 {
			event := withEventID(raw)
			if len(event) > s.maxLine {
				return nil, s.line, &lineTooLongError{where: s.describe(s.line), max: s.maxLine}
			}
			return event, s.line, nil
		}
	}
}

// readLine returns the next line with its newline, or io.EOF with the last
// one. It stops reading a line once its content, without surrounding
// spaces, is over maxLine bytes, and returns a *lineTooLongError (without
// where).
func (s *ndjsonSource) readLine() ([]byte, error) {
	var line []byte
	for {
		chunk, err := s.r.ReadSlice('\n')
		line = append(line, chunk...)
		if !errors.Is(err, bufio.ErrBufferFull) {
			return line, err
		}
		if len(line) > s.maxLine && len(bytes.TrimSpace(line)) > s.maxLine {
			return nil, &lineTooLongError{max: s.maxLine}
		}
	}
}

func (s *ndjsonSource) describe(line int) string {
	return fmt.Sprintf("line %d of %s", line, s.name)
}

// withEventID returns the event with an event_id: the line itself when it
// has one, else the event with a new id. A line that is not a JSON object is
// returned as it is, for the API to say what is wrong with it.
func withEventID(line []byte) []byte {
	var fields map[string]json.RawMessage
	if err := json.Unmarshal(line, &fields); err != nil || fields == nil {
		return line
	}
	if id, ok := fields["event_id"]; ok && string(id) != "null" {
		return line
	}
	id, err := json.Marshal(schemas.NewID(schemas.PrefixEvent))
	if err != nil {
		return line
	}
	fields["event_id"] = id
	out, err := compactJSON(fields)
	if err != nil {
		return line
	}
	return out
}

// compactJSON encodes v without a trailing newline and without escaping
// HTML characters, so that strings keep their bytes.
func compactJSON(v any) ([]byte, error) {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return bytes.TrimSuffix(b.Bytes(), []byte("\n")), nil
}

// sampleSource generates sample events.
type sampleSource struct {
	sampler *schemas.Sampler
	kinds   *kindMix
	count   int // events to generate; 0: no end
	n       int // events generated
}

// sampleEvent is a sample event as producers send it: without account_id,
// which sluice sets from the API key.
type sampleEvent struct {
	ID        string          `json:"event_id"`
	Type      string          `json:"event_type"`
	Timestamp string          `json:"event_timestamp"`
	Principal json.RawMessage `json:"principal,omitempty"`
	Object    json.RawMessage `json:"object"`
}

// newSampleSource returns count samples (0: no end) of the mix sample
// names, made from seed and dated as dates says.
func newSampleSource(c *schemas.Catalogue, sample string, count int, seed uint64, dates schemas.SamplerOption) (*sampleSource, error) {
	if seed == 0 {
		seed = rand.Uint64()
	}
	kinds, err := newKindMix(c, sample, seed)
	if err != nil {
		return nil, err
	}
	return &sampleSource{sampler: schemas.NewSampler(seed, dates), kinds: kinds, count: count}, nil
}

func (s *sampleSource) next() ([]byte, int, error) {
	if s.count > 0 && s.n >= s.count {
		return nil, 0, io.EOF
	}
	ev, err := s.sampler.Event(s.kinds.next())
	if err != nil {
		return nil, 0, err
	}
	s.n++
	line, err := compactJSON(sampleEvent{
		ID:        ev.ID,
		Type:      ev.Type,
		Timestamp: ev.Timestamp.UTC().Format(schemas.TimeLayout),
		Principal: ev.Principal,
		Object:    ev.Object,
	})
	if err != nil {
		return nil, 0, fmt.Errorf("encoding sample %d: %w", s.n, err)
	}
	return line, s.n, nil
}

func (s *sampleSource) describe(n int) string { return fmt.Sprintf("sample event %d", n) }

// trafficShare is the percentage of traffic events in the "mixed" sample.
const trafficShare = 90

// kindMix picks the kind of each sample event.
type kindMix struct {
	traffic, audit []string
	trafficPercent int // share of traffic kinds; the rest are audit kinds
	rng            *rand.Rand
}

// newKindMix returns the mix --sample names: one kind, "traffic" or "audit"
// (their kinds evenly), or "mixed" (trafficShare percent traffic). The
// audit kinds sluice emits about its own resources are left out: ingest
// refuses them, and naming one is an error.
func newKindMix(c *schemas.Catalogue, sample string, seed uint64) (*kindMix, error) {
	m := &kindMix{rng: rand.New(rand.NewPCG(seed, ^seed))}
	for _, k := range c.Kinds() {
		switch {
		case k.EmittedBySluice:
		case k.Class == schemas.ClassTraffic:
			m.traffic = append(m.traffic, k.Name)
		default:
			m.audit = append(m.audit, k.Name)
		}
	}
	if k, ok := c.Kind(sample); ok && k.EmittedBySluice {
		return nil, fmt.Errorf("--sample %s: %w: sluice emits it about its own resources and ingest refuses it; use mixed, traffic, audit or another kind of `sluice schemas list`", sample, schemas.ErrEmittedBySluice)
	}
	switch sample {
	case "mixed":
		m.trafficPercent = trafficShare
	case "traffic":
		m.trafficPercent = 100
	case "audit":
		m.trafficPercent = 0
	default:
		if _, ok := c.Kind(sample); !ok {
			return nil, fmt.Errorf("--sample %q: %w: use mixed, traffic, audit or a kind of `sluice schemas list`", sample, schemas.ErrUnknownKind)
		}
		m.traffic, m.trafficPercent = []string{sample}, 100
	}
	return m, nil
}

func (m *kindMix) next() string {
	if m.rng.IntN(100) < m.trafficPercent {
		return m.traffic[m.rng.IntN(len(m.traffic))]
	}
	return m.audit[m.rng.IntN(len(m.audit))]
}
