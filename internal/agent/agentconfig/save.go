package agentconfig

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"unicode"

	"github.com/sluicehq/sluice/internal/atomicfile"

	"go.yaml.in/yaml/v3"
)

// EnvConfig is the environment variable that names the configuration
// file in place of the default.
const EnvConfig = "SLUICE_AGENT_CONFIG"

// DefaultPath returns the configuration file's path: $SLUICE_AGENT_CONFIG
// when set, else sluice-agent/sluice-agent.yml in the user's
// configuration directory (os.UserConfigDir), else sluice-agent.yml in
// the working directory when there is none.
func DefaultPath() string {
	if p := os.Getenv(EnvConfig); p != "" {
		return p
	}
	dir, err := os.UserConfigDir()
	if err != nil {
		return "sluice-agent.yml"
	}
	return filepath.Join(dir, "sluice-agent", "sluice-agent.yml")
}

// SaveAuthtoken sets the authtoken key of the configuration file at path
// to token, keeping the file's other keys and comments. It creates the
// file, with "version: 2", when there is none, and its directory (mode
// 0700) when missing. It replaces the file atomically, with one of mode
// 0600. No error it returns shows the token.
func SaveAuthtoken(path, token string) error {
	if token == "" || strings.ContainsFunc(token, func(r rune) bool { return unicode.IsSpace(r) || unicode.IsControl(r) }) {
		return errors.New("the authtoken is empty or holds a space or a control character; give it as the dashboard shows it")
	}
	data, err := os.ReadFile(path)
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("reading configuration: %w", err)
	}
	doc, err := parseForEdit(path, data)
	if err != nil {
		return err
	}
	top := doc.Content[0]
	if len(top.Content) == 0 {
		top.Content = append(top.Content, scalar("version", "!!str"), scalar("2", "!!int"))
	}
	value := scalar(token, "!!str")
	value.Style = yaml.DoubleQuotedStyle
	if j := valueIndex(top, "authtoken"); j >= 0 {
		value.LineComment = top.Content[j].LineComment
		top.Content[j] = value
	} else {
		top.Content = append(top.Content, scalar("authtoken", "!!str"), value)
	}
	var b bytes.Buffer
	enc := yaml.NewEncoder(&b)
	enc.SetIndent(2)
	if err := enc.Encode(doc); err != nil {
		return fmt.Errorf("encoding configuration: %w", err)
	}
	if err := enc.Close(); err != nil {
		return fmt.Errorf("encoding configuration: %w", err)
	}
	if real, err := filepath.EvalSymlinks(path); err == nil {
		path = real
	}
	return writeAtomic(path, b.Bytes())
}

// parseForEdit parses data, the file at path, into a document whose one
// content is a mapping, empty when data holds no keys.
func parseForEdit(path string, data []byte) (*yaml.Node, error) {
	dec := yaml.NewDecoder(bytes.NewReader(data))
	var doc, more yaml.Node
	if err := dec.Decode(&doc); err != nil && !errors.Is(err, io.EOF) {
		return nil, syntaxError(path, err)
	}
	if err := dec.Decode(&more); err == nil {
		return nil, &Error{File: path, Line: more.Line, Column: more.Column, Msg: "a second YAML document (after ---); a configuration file holds one"}
	}
	if doc.Kind != yaml.DocumentNode || len(doc.Content) == 0 {
		doc.Kind, doc.Content = yaml.DocumentNode, []*yaml.Node{{Kind: yaml.MappingNode, Tag: "!!map"}}
	}
	top := doc.Content[0]
	if isNull(top) {
		*top = yaml.Node{Kind: yaml.MappingNode, Tag: "!!map", HeadComment: top.HeadComment}
	}
	if top.Kind != yaml.MappingNode {
		return nil, &Error{File: path, Line: top.Line, Column: top.Column, Msg: "the file must be a mapping of keys, such as \"version: 2\""}
	}
	return &doc, nil
}

// scalar returns a scalar node of value and tag.
func scalar(value, tag string) *yaml.Node {
	return &yaml.Node{Kind: yaml.ScalarNode, Tag: tag, Value: value}
}

// writeAtomic replaces the file at path with data, mode 0600, making its
// directory (0700) if need be.
func writeAtomic(path string, data []byte) error {
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return fmt.Errorf("creating configuration directory: %w", err)
	}
	if err := atomicfile.Write(path, data, 0o600); err != nil {
		return fmt.Errorf("writing configuration: %w", err)
	}
	return nil
}
