package schemas

import (
	"bytes"
	"fmt"
	"maps"
	"slices"
	"strings"
)

// DocsCommand is the command that regenerates docs/events.md from the
// catalogue.
const DocsCommand = "go run ./cmd/sluice schemas docs > docs/events.md"

// Markdown returns the events reference, docs/events.md: what an event is,
// the envelope, then the fields of every traffic kind and of every audit
// family.
func (c *Catalogue) Markdown() []byte {
	var b bytes.Buffer
	writeIntro(&b)
	writeEnvelope(&b)
	b.WriteString("\n## Traffic events\n\n")
	b.WriteString("The edge emits a traffic event for every HTTP request and every TCP connection. " +
		"A subscription's source of a traffic kind may have a CEL filter over the fields marked filterable, " +
		"and may select which fields to deliver; every traffic field can be selected. " +
		"A filterable string field has a maximum length, shown with its type: sluice refuses an event " +
		"with a longer value (HTTP 400 naming the field and the limit), so that no event can make a filter cost more than the limit it was checked against.\n")
	for _, k := range c.kinds {
		if k.Class == ClassTraffic {
			writeTrafficKind(&b, k)
		}
	}
	b.WriteString("\n## Audit events\n\n")
	b.WriteString("An audit event reports a change to the account's configuration. The created, updated and deleted " +
		"kinds of a resource carry the same fields: the resource after the change, or, for `_deleted`, before it. " +
		"Audit events cannot be filtered and their fields cannot be selected. " +
		"Fields marked *(extension)* are sluice additions to what the specification lists.\n\n")
	b.WriteString("Fields whose type says *always null (secret)*, the tokens of API keys and tunnel credentials " +
		"and the AWS secret access keys of event destinations, are always null: events never carry secrets, " +
		"and sluice refuses an event that has any other value in one.\n")
	families := map[string][]*Kind{}
	var own []string
	for _, k := range c.kinds {
		if k.Class == ClassAudit {
			families[k.Family] = append(families[k.Family], k)
		}
		if k.EmittedBySluice {
			own = append(own, "`"+k.Name+"`")
		}
	}
	b.WriteString("\n### Kinds only sluice emits\n\n")
	b.WriteString("sluice emits the audit events of its own resources, the ones its management API changes, " +
		"and no one else may: `POST /events` and the Go `producer` refuse them whatever the credentials " +
		"(`ERR_SLUICE_301` with a message saying so), so that a delivered event of these kinds is always sluice's own. " +
		"Subscribe to them to receive them. They are:\n\n")
	b.WriteString(strings.Join(own, ", ") + ".\n")
	for _, name := range slices.Sorted(maps.Keys(families)) {
		writeAuditFamily(&b, families[name])
	}
	return b.Bytes()
}

func writeIntro(b *bytes.Buffer) {
	b.WriteString("# Events reference\n\n")
	b.WriteString("<!-- Code generated from the catalogue in schemas/; DO NOT EDIT. -->\n\n")
	b.WriteString("sluice delivers two classes of events. **Traffic** events are emitted by the edge for every HTTP " +
		"request and TCP connection; **audit** events are emitted when the configuration of an account changes. " +
		"An event subscription picks event kinds (its sources) and routes them to event destinations: " +
		"Amazon Data Firehose, Kinesis Data Streams or CloudWatch Logs.\n\n")
	b.WriteString("This file is generated from the event catalogue in `schemas/catalogue_table.go`. " +
		"Do not edit it; after changing the catalogue, regenerate it with\n\n")
	fmt.Fprintf(b, "```sh\n%s\n```\n\n", DocsCommand)
	b.WriteString("JSON Schemas (draft 2020-12) of the envelope of every kind are printed by " +
		"`sluice schemas show KIND` and written by `sluice schemas export DIR`.\n")
}

func writeEnvelope(b *bytes.Buffer) {
	b.WriteString("\n## The envelope\n\n")
	b.WriteString("Every event is one JSON object, the same in every destination: one Kinesis record, " +
		"one CloudWatch Logs event, or one newline-terminated Firehose record.\n\n")
	b.WriteString("```json\n" +
		`{"event_id":"ev_2pN8GnlY3vWQbU4s6ZK0mXoJdHa","event_type":"http_request_complete.v0",` + "\n" +
		` "event_timestamp":"2026-11-22T10:04:05.123Z","account_id":"ac_2pN5uJ0cV1fBq8Ty3LwR7sKzXeD",` + "\n" +
		` "principal":null,"object":{"conn":{"client_ip":"203.0.113.7","server_port":443},"http":{"request":{"method":"get"}}}}` +
		"\n```\n\n")
	writeRows(b, []string{"Field", "Type", "Description"}, [][]string{
		{"`event_id`", "`string`", "`ev_` and a 27-character KSUID, so sorting by id sorts by time. Unique: delivery is at least once, deduplicate on it."},
		{"`event_type`", "`string`", "The event kind, such as `http_request_complete.v0`."},
		{"`event_timestamp`", "`string`", "When the event happened: RFC 3339, UTC, millisecond precision; within the event window (below)."},
		{"`account_id`", "`string`", "The account the event belongs to: `ac_` and a KSUID."},
		{"`principal`", "`object` or `null`", "Who made the change, for audit events (below); null for traffic events."},
		{"`object`", "`object`", "The payload, whose fields the tables below list per kind."},
	})
	fmt.Fprintf(b, "\n**The event window.** sluice refuses an event (HTTP 400 naming it and the field) whose `event_timestamp`, "+
		"or a timestamp field whose type says *in the event window*, is before %s or more than %s after sluice received it. "+
		"CloudWatch Logs refuses a log event more than 2 hours ahead of when it is put (and one before 1970, or older than 14 days); "+
		"Kinesis Data Streams and Firehose take any time. So an event from the future is refused at ingest, not dead-lettered by "+
		"CloudWatch Logs destinations alone, and a year such as 1970 or 9999 is a clock or encoding gone wrong. "+
		"Events older than 14 days are taken: Kinesis and Firehose destinations deliver them, CloudWatch Logs destinations dead-letter them as too old.\n",
		MinEventTime.Format("2006-01-02"), "2 hours")
	b.WriteString("\nA field named `http.request.method` below is `object.http.request.method` in the envelope; " +
		"`sources[].type` is the `type` of each element of the list `object.sources`. " +
		"Any field may be null or absent, and a list of objects may be null, but not an element of it. " +
		"Fields not listed here may appear: they are kept and delivered.\n")
	b.WriteString("\n### Principal\n\n")
	rows := make([][]string, 0, len(principalSpec))
	for _, f := range principalSpec {
		rows = append(rows, []string{"`" + f.path + "`", "`" + f.typ.String() + "`", markdownText(f.desc)})
	}
	writeRows(b, []string{"Field", "Type", "Description"}, rows)
}

func writeTrafficKind(b *bytes.Buffer, k *Kind) {
	fmt.Fprintf(b, "\n### `%s`\n\n%s\n\n", k.Name, markdownText(k.Description))
	rows := make([][]string, 0, len(k.Fields))
	for _, f := range k.Fields {
		filterable := ""
		if f.Filterable {
			filterable = "yes"
		}
		rows = append(rows, []string{fieldName(&f), fieldType(&f), filterable, markdownText(f.Description)})
	}
	writeRows(b, []string{"Field", "Type", "Filterable", "Description"}, rows)
}

func writeAuditFamily(b *bytes.Buffer, kinds []*Kind) {
	fmt.Fprintf(b, "\n### `%s`\n\n", kinds[0].Family)
	if kinds[0].EmittedBySluice {
		b.WriteString("Emitted by sluice itself: publishing these kinds is refused.\n\n")
	}
	for _, k := range kinds {
		fmt.Fprintf(b, "- `%s`: %s\n", k.Name, markdownText(k.Description))
	}
	b.WriteByte('\n')
	rows := make([][]string, 0, len(kinds[0].Fields))
	for _, f := range kinds[0].Fields {
		rows = append(rows, []string{fieldName(&f), fieldType(&f), markdownText(f.Description)})
	}
	writeRows(b, []string{"Field", "Type", "Description"}, rows)
}

// fieldType returns the field's type as the tables show it; a secret is
// marked always null.
func fieldType(f *Field) string {
	if f.Secret {
		return "`" + f.Type.String() + "`, *always null (secret)*"
	}
	var rule string
	switch f.Value {
	case ValuePort:
		rule = ", a port: 1 to 65535"
	case ValueIP:
		rule = ", an IPv4 or IPv6 address without a zone"
	case ValueRecent:
		rule = ", in the event window"
	}
	if f.MaxBytes > 0 {
		return fmt.Sprintf("`%s`%s, at most %d bytes", f.Type, rule, f.MaxBytes)
	}
	return "`" + f.Type.String() + "`" + rule
}

// fieldName returns the field's name as the tables show it: a field inside
// a list of objects is written list[].field, and an extension is marked.
func fieldName(f *Field) string {
	name := f.Path
	if f.InList != "" {
		name = f.InList + "[]" + strings.TrimPrefix(f.Path, f.InList)
	}
	name = "`" + name + "`"
	if f.Extension {
		name += " *(extension)*"
	}
	return name
}

func writeRows(b *bytes.Buffer, header []string, rows [][]string) {
	b.WriteString("| " + strings.Join(header, " | ") + " |\n|")
	for range header {
		b.WriteString("---|")
	}
	b.WriteByte('\n')
	for _, row := range rows {
		b.WriteString("| " + strings.Join(row, " | ") + " |\n")
	}
}

// markdownText escapes the characters of s that Markdown or a table would
// take for syntax.
func markdownText(s string) string {
	return strings.NewReplacer(
		`\`, `\\`, "|", `\|`, "<", `\<`, ">", `\>`, "*", `\*`, "_", `\_`, "`", "\\`",
	).Replace(s)
}
