package agentconfig

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"

	"go.yaml.in/yaml/v3"
)

// MaxFileSize is the largest configuration file Load reads, in bytes.
const MaxFileSize = 1 << 20

// Load reads the YAML files at paths, merges them in order, checks every
// key and returns the result with defaults filled in and Files set to
// paths.
//
// Later files win: mappings (the top level, tunnels, and each tunnel's
// keys) merge key by key, and any other value, lists included, replaces
// the earlier one whole. A key whose value is empty (null) is taken as
// absent. version must be set, to 2, in at least one file.
//
// Its error is an *Error, or several joined with errors.Join, each
// naming the file, line and column, the key, what is wrong and what is
// allowed; or the error of reading a file.
func Load(paths []string) (Config, error) {
	if len(paths) == 0 {
		return Config{}, errors.New("no configuration file given")
	}
	d := &decoder{file: map[*yaml.Node]string{}}
	var root *yaml.Node
	var errs []error
	for _, p := range paths {
		n, err := d.readFile(p)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		root = merge(d.file, root, n)
	}
	errs = append(errs, d.errs...)
	if len(errs) > 0 {
		return Config{}, errors.Join(errs...)
	}
	c := d.config(root, paths[0])
	if len(d.errs) > 0 {
		return Config{}, errors.Join(d.errs...)
	}
	c.Files = append([]string(nil), paths...)
	return c, nil
}

// readFile parses the file at path into its top-level mapping (nil when
// the file is empty), recording each node's file.
func (d *decoder) readFile(path string) (*yaml.Node, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("reading configuration: %w", err)
	}
	defer f.Close()
	data, err := io.ReadAll(io.LimitReader(f, MaxFileSize+1))
	if err != nil {
		return nil, fmt.Errorf("reading configuration: %w", err)
	}
	if len(data) > MaxFileSize {
		return nil, &Error{File: path, Msg: fmt.Sprintf("the file is larger than %d bytes", MaxFileSize)}
	}
	dec := yaml.NewDecoder(bytes.NewReader(data))
	var doc yaml.Node
	if err := dec.Decode(&doc); err != nil {
		if errors.Is(err, io.EOF) {
			return nil, nil
		}
		return nil, syntaxError(path, err)
	}
	var more yaml.Node
	if err := dec.Decode(&more); err == nil {
		return nil, &Error{File: path, Line: more.Line, Column: more.Column, Msg: "a second YAML document (after ---); a configuration file holds one"}
	}
	top := &doc
	if top.Kind == yaml.DocumentNode && len(top.Content) == 1 {
		top = top.Content[0]
	}
	if isNull(top) {
		return nil, nil
	}
	if top.Kind != yaml.MappingNode {
		return nil, &Error{File: path, Line: top.Line, Column: top.Column, Msg: "the file must be a mapping of keys, such as \"version: 2\""}
	}
	d.index(path, top, "")
	return top, nil
}

// syntaxError turns yaml's "yaml: line N: msg" into an *Error.
func syntaxError(path string, err error) error {
	msg := strings.TrimPrefix(err.Error(), "yaml: ")
	e := &Error{File: path, Msg: "invalid YAML: " + msg}
	if rest, ok := strings.CutPrefix(msg, "line "); ok {
		if num, text, ok := strings.Cut(rest, ": "); ok {
			if line, err := strconv.Atoi(num); err == nil {
				e.Line, e.Column, e.Msg = line, 1, "invalid YAML: "+text
			}
		}
	}
	return e
}

// index records path as the file of n and the nodes under it, replaces
// aliases with what they stand for, and refuses a key repeated in a
// mapping.
func (d *decoder) index(path string, n *yaml.Node, key string) {
	if _, seen := d.file[n]; seen {
		return
	}
	d.file[n] = path
	for i, c := range n.Content {
		for c.Kind == yaml.AliasNode && c.Alias != nil {
			c = c.Alias
		}
		n.Content[i] = c
	}
	if n.Kind != yaml.MappingNode {
		for _, c := range n.Content {
			d.index(path, c, key)
		}
		return
	}
	first := map[string]*yaml.Node{}
	for i := 0; i+1 < len(n.Content); i += 2 {
		k, v := n.Content[i], n.Content[i+1]
		d.file[k] = path
		if prev, ok := first[k.Value]; ok {
			d.fail(k, join(key, k.Value), "the key is repeated (first at line %d); give it once", prev.Line)
			continue
		}
		first[k.Value] = k
		d.index(path, v, join(key, k.Value))
	}
}

// merge returns src merged over dst: mappings key by key, anything else
// replaced by src unless src is null. It records the file of a mapping
// it makes as that of dst.
func merge(file map[*yaml.Node]string, dst, src *yaml.Node) *yaml.Node {
	switch {
	case src == nil || isNull(src):
		return dst
	case dst == nil || isNull(dst):
		return src
	case dst.Kind != yaml.MappingNode || src.Kind != yaml.MappingNode:
		return src
	}
	out := *dst
	out.Content = append([]*yaml.Node(nil), dst.Content...)
	file[&out] = file[dst]
	for i := 0; i+1 < len(src.Content); i += 2 {
		k, v := src.Content[i], src.Content[i+1]
		if j := valueIndex(&out, k.Value); j >= 0 {
			out.Content[j] = merge(file, out.Content[j], v)
			continue
		}
		out.Content = append(out.Content, k, v)
	}
	return &out
}

// valueIndex returns the index in m.Content of the value of key, or -1.
func valueIndex(m *yaml.Node, key string) int {
	for i := 0; i+1 < len(m.Content); i += 2 {
		if m.Content[i].Value == key {
			return i + 1
		}
	}
	return -1
}

// isNull reports whether n is an empty value: null, ~ or nothing.
func isNull(n *yaml.Node) bool {
	return n.Kind == yaml.ScalarNode && n.ShortTag() == "!!null"
}
