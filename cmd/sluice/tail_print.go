package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"

	"github.com/sluicehq/sluice/internal/tail"
)

// tailFormat is how sluice tail prints an event.
type tailFormat int

const (
	// formatLine, the default, is for people: one event a line, its time,
	// kind and id, then its object (and principal) as compact JSON; a
	// record that is not an event as it is.
	formatLine tailFormat = iota
	// formatJSON (--json) is for machines: each event's JSON, compact, one
	// document a line; a record that is not JSON is left out, with a word
	// on standard error.
	formatJSON
	// formatPretty (--pretty) is each event's JSON, indented.
	formatPretty
)

func outputFormat(f tailFlags) tailFormat {
	switch {
	case f.api.json:
		return formatJSON
	case f.pretty:
		return formatPretty
	}
	return formatLine
}

// eventPrinter prints the events the filters keep, up to a limit.
type eventPrinter struct {
	out, errOut io.Writer
	format      tailFormat
	kinds       *kindFilters
	limit       int
	printed     int
}

// envelopeView is what the line format shows of an event.
type envelopeView struct {
	ID        string          `json:"event_id"`
	Type      string          `json:"event_type"`
	Timestamp string          `json:"event_timestamp"`
	Principal json.RawMessage `json:"principal"`
	Object    json.RawMessage `json:"object"`
}

// print prints one record, if the filters keep it. A record that is not an
// event (not a JSON object with an event_type) is printed only when no
// --filter or --type is given.
func (p *eventPrinter) print(ctx context.Context, r tail.Record) error {
	data := bytes.TrimRight(r.Data, "\n")
	var ev envelopeView
	isEvent := json.Unmarshal(data, &ev) == nil && ev.Type != ""
	if p.kinds.expr != "" || p.kinds.types != nil {
		if !isEvent {
			return nil
		}
		ok, err := p.kinds.match(ctx, ev.Type, data)
		if err != nil || !ok {
			return err
		}
	}
	var line []byte
	switch {
	case p.format == formatJSON:
		var buf bytes.Buffer
		if err := json.Compact(&buf, data); err != nil {
			_, err := fmt.Fprintf(p.errOut, "sluice tail: left out a record of %s that is not JSON (--json prints only JSON)\n", r.Where)
			return err
		}
		line = buf.Bytes()
	case p.format == formatPretty:
		var buf bytes.Buffer
		line = data
		if json.Indent(&buf, data, "", "  ") == nil {
			line = buf.Bytes()
		}
	case isEvent:
		line = ev.line()
	default:
		line = data
	}
	if _, err := fmt.Fprintf(p.out, "%s\n", line); err != nil {
		return err
	}
	p.printed++
	if p.limit > 0 && p.printed >= p.limit {
		return errEnough
	}
	return nil
}

// line is the event as the line format shows it: time, kind, id, object
// and, for an audit event, principal=.
func (ev envelopeView) line() []byte {
	compact := func(raw json.RawMessage) []byte {
		var buf bytes.Buffer
		if json.Compact(&buf, raw) != nil {
			return raw
		}
		return buf.Bytes()
	}
	b := fmt.Appendf(nil, "%s %s %s", orDash(ev.Timestamp), ev.Type, orDash(ev.ID))
	if len(ev.Object) > 0 {
		b = append(append(b, ' '), compact(ev.Object)...)
	}
	if len(ev.Principal) > 0 && !bytes.Equal(ev.Principal, []byte("null")) {
		b = append(append(b, " principal="...), compact(ev.Principal)...)
	}
	return b
}

// orDash is s, or "-" when it is empty.
func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}
