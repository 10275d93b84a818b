package agentconfig

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"

	"go.yaml.in/yaml/v3"
)

// wrapperKeys are the keys that the npm package ngrok (4.3.3) posts
// along with a tunnel, its whole options object, and that a tunnel does
// not use.
var wrapperKeys = []string{
	"authtoken", "authtoken_from_env", "configPath", "binPath", "region", "port", "host",
	"onStatusChange", "onLogEvent", "onTerminated", "web_addr",
}

// authKeys are the npm package's keys of one user:password, taken as an
// entry of basic_auth.
var authKeys = []string{"auth", "httpauth"}

// DecodeTunnelJSON decodes the body of the local API's POST /api/tunnels:
// a JSON object of name and a tunnel's keys, as in a configuration
// file's tunnels, checked and normalized by the same rules (addr may be
// a JSON number; labels is a list of "name=value" strings).
//
// It also takes what the npm package ngrok posts along: auth and
// httpauth (one user:password) are entries of basic_auth, proto http
// with labels is ignored (the package adds it to every tunnel), and its
// other options (authtoken, configPath, region, port, …) are ignored.
// Any other key is refused.
//
// Its error is an *Error, or several joined with errors.Join, each naming
// the key; none shows an authtoken or a password.
func DecodeTunnelJSON(data []byte) (Tunnel, error) {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	var body any
	if err := dec.Decode(&body); err != nil {
		return Tunnel{}, &Error{Msg: fmt.Sprintf("the body is not JSON: %v", err)}
	}
	if dec.More() {
		return Tunnel{}, &Error{Msg: "the body holds more than one JSON value; give one object"}
	}
	obj, ok := body.(map[string]any)
	if !ok {
		return Tunnel{}, &Error{Msg: "the body must be a JSON object of a tunnel, such as {\"name\": \"web\", \"proto\": \"http\", \"addr\": 3000}"}
	}
	d := &decoder{}
	m := &yaml.Node{Kind: yaml.MappingNode, Tag: "!!map"}
	var auth []*yaml.Node
	name := jsonName(d, jsonNode(obj["name"]))
	keys := make([]string, 0, len(obj))
	for k := range obj {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	for _, k := range keys {
		v := jsonNode(obj[k])
		switch {
		case k == "name":
		case slices.Contains(authKeys, k):
			if !isNull(v) {
				auth = append(auth, v)
			}
		case slices.Contains(wrapperKeys, k):
		default:
			m.Content = append(m.Content, &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!str", Value: k}, v)
		}
	}
	if len(auth) > 0 {
		addBasicAuth(d, m, auth)
	}
	dropWrapperProto(m)
	t := d.tunnel(nil, m, "", append([]string{"name"}, tunnelKeys...))
	t.Name = name
	if len(d.errs) > 0 {
		return Tunnel{}, errors.Join(d.errs...)
	}
	return t, nil
}

// dropWrapperProto removes proto http from m when m has labels: the npm
// package sets proto to http on every tunnel that names none, so that a
// labeled tunnel it starts comes with one. Another proto with labels is
// left for the decoder to refuse.
func dropWrapperProto(m *yaml.Node) {
	p, l := valueIndex(m, "proto"), valueIndex(m, "labels")
	if p < 0 || l < 0 || isNull(m.Content[l]) || m.Content[p].Value != "http" || m.Content[p].ShortTag() != "!!str" {
		return
	}
	m.Content = slices.Delete(m.Content, p-1, p+1)
}

// jsonName returns the tunnel's name v holds.
func jsonName(d *decoder, v *yaml.Node) string {
	if isNull(v) {
		d.fail(v, "name", "is required: give %s", nameAllowed)
		return ""
	}
	if v.ShortTag() != "!!str" {
		d.fail(v, "name", "must be a string of %s", nameAllowed)
		return ""
	}
	if err := checkName(v.Value); err != nil {
		d.fail(v, "name", "%v", err)
		return ""
	}
	return v.Value
}

// addBasicAuth adds the npm package's auth values to m's basic_auth,
// each pair once.
func addBasicAuth(d *decoder, m *yaml.Node, auth []*yaml.Node) {
	for _, a := range auth {
		if a.Kind != yaml.ScalarNode || a.ShortTag() != "!!str" {
			d.fail(a, "auth", "must be a string, user:password")
			return
		}
	}
	j := valueIndex(m, "basic_auth")
	if j < 0 || isNull(m.Content[j]) {
		seq := &yaml.Node{Kind: yaml.SequenceNode, Tag: "!!seq"}
		if j < 0 {
			m.Content = append(m.Content, &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!str", Value: "basic_auth"}, seq)
		} else {
			m.Content[j] = seq
		}
		j = valueIndex(m, "basic_auth")
	}
	list := m.Content[j]
	if list.Kind != yaml.SequenceNode {
		return
	}
	for _, a := range auth {
		// The package copies httpauth to auth, so both hold the same pair.
		if !slices.ContainsFunc(list.Content, func(n *yaml.Node) bool { return n.Value == a.Value }) {
			list.Content = append(list.Content, a)
		}
	}
}

// jsonNode turns a value decoded from JSON (numbers as json.Number) into
// the YAML node a file would give for it.
func jsonNode(v any) *yaml.Node {
	switch v := v.(type) {
	case nil:
		return &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!null", Value: "null"}
	case bool:
		return &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!bool", Value: fmt.Sprint(v)}
	case json.Number:
		tag := "!!float"
		if !strings.ContainsAny(string(v), ".eE") {
			tag = "!!int"
		}
		return &yaml.Node{Kind: yaml.ScalarNode, Tag: tag, Value: string(v)}
	case string:
		return &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!str", Value: v}
	case []any:
		n := &yaml.Node{Kind: yaml.SequenceNode, Tag: "!!seq"}
		for _, e := range v {
			n.Content = append(n.Content, jsonNode(e))
		}
		return n
	case map[string]any:
		n := &yaml.Node{Kind: yaml.MappingNode, Tag: "!!map"}
		keys := make([]string, 0, len(v))
		for k := range v {
			keys = append(keys, k)
		}
		slices.Sort(keys)
		for _, k := range keys {
			n.Content = append(n.Content, &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!str", Value: k}, jsonNode(v[k]))
		}
		return n
	}
	return &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!null"}
}
