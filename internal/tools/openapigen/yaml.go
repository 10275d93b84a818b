package main

import (
	"bytes"
	"strings"

	"go.yaml.in/yaml/v3"
)

// scalar returns a plain scalar, quoted by the encoder when it must be.
func scalar(v string) *yaml.Node {
	style := yaml.Style(0)
	if strings.Contains(v, "\n") {
		style = yaml.LiteralStyle
	}
	return &yaml.Node{Kind: yaml.ScalarNode, Value: v, Style: style}
}

// quoted returns a double-quoted scalar, as the document writes "null"
// and references.
func quoted(v string) *yaml.Node {
	return &yaml.Node{Kind: yaml.ScalarNode, Value: v, Style: yaml.DoubleQuotedStyle}
}

// refTo returns {$ref: "#/components/kind/name"}.
func refTo(kind, name string) *yaml.Node {
	return pairs("$ref", quoted("#/components/"+kind+"/"+name))
}

// flow returns a sequence written on one line, [a, b].
func flow(items ...*yaml.Node) *yaml.Node {
	return &yaml.Node{Kind: yaml.SequenceNode, Style: yaml.FlowStyle, Content: items}
}

func mapping() *yaml.Node { return &yaml.Node{Kind: yaml.MappingNode} }

// pairs returns a mapping of keys and values, alternating: a key is a
// string, a value a *yaml.Node.
func pairs(kv ...any) *yaml.Node {
	m := mapping()
	for i := 0; i+1 < len(kv); i += 2 {
		set(m, kv[i].(string), kv[i+1].(*yaml.Node))
	}
	return m
}

// get returns the value of key in the mapping m, or nil.
func get(m *yaml.Node, key string) *yaml.Node {
	for i := 0; i+1 < len(m.Content); i += 2 {
		if m.Content[i].Value == key {
			return m.Content[i+1]
		}
	}
	return nil
}

// set sets key to value in the mapping m: in its place when m has it,
// last otherwise.
func set(m *yaml.Node, key string, value *yaml.Node) {
	for i := 0; i+1 < len(m.Content); i += 2 {
		if m.Content[i].Value == key {
			m.Content[i+1] = value
			return
		}
	}
	m.Content = append(m.Content, scalar(key), value)
}

// prepend returns m with key set to value first.
func prepend(m *yaml.Node, key string, value *yaml.Node) *yaml.Node {
	out := pairs(key, value)
	out.Content = append(out.Content, m.Content...)
	return out
}

// encode writes n as YAML indented by depth levels of two spaces.
func encode(out *bytes.Buffer, n *yaml.Node, depth int) error {
	var buf bytes.Buffer
	enc := yaml.NewEncoder(&buf)
	enc.SetIndent(2)
	if err := enc.Encode(n); err != nil {
		return err
	}
	if err := enc.Close(); err != nil {
		return err
	}
	indent := strings.Repeat("  ", depth)
	for l := range strings.Lines(buf.String()) {
		if l != "\n" {
			out.WriteString(indent)
		}
		out.WriteString(l)
	}
	return nil
}
