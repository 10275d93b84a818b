package apiwire

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
)

// MaxListLimit is the most items a page of the API holds, and its default.
const MaxListLimit = 100

// Page is a page of a list, newest first:
// {"KEY": [...], "uri": "...", "next_page_uri": "..." or null}.
type Page[T any] struct {
	// Key is the name of the field of the items, such as keys (for
	// /api_keys). It must be set before a page is decoded.
	Key string
	// Items are the page's items.
	Items []T
	// URI is the page's full URL.
	URI string
	// NextPageURI is the full URL of the next page; nil on the last.
	NextPageURI *string
}

// MarshalJSON writes the page as the API does, without escaping <, > and &.
func (p Page[T]) MarshalJSON() ([]byte, error) {
	return encodeParts(jsonPart{"{", p.Key}, jsonPart{":", p.Items}, jsonPart{`,"uri":`, p.URI},
		jsonPart{`,"next_page_uri":`, p.NextPageURI}, jsonPart{"}", nil})
}

// jsonPart is text, then value as JSON unless value is nil.
type jsonPart struct {
	text  string
	value any
}

// encodeParts writes a JSON text of parts, in their order, the values
// without escaping <, > and &, as the API writes its bodies.
func encodeParts(parts ...jsonPart) ([]byte, error) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	for _, part := range parts {
		buf.WriteString(part.text)
		if part.value == nil {
			continue
		}
		if err := enc.Encode(part.value); err != nil {
			return nil, err
		}
		buf.Truncate(buf.Len() - 1) // Encode's newline
	}
	return buf.Bytes(), nil
}

// UnmarshalJSON reads a page whose items are in the field p.Key.
func (p *Page[T]) UnmarshalJSON(raw []byte) error {
	if p.Key == "" {
		return errors.New("apiwire: Page.Key is not set")
	}
	var body map[string]json.RawMessage
	if err := json.Unmarshal(raw, &body); err != nil {
		return err
	}
	for _, field := range []struct {
		key  string
		into any
	}{{p.Key, &p.Items}, {"uri", &p.URI}, {"next_page_uri", &p.NextPageURI}} {
		if err := json.Unmarshal(body[field.key], field.into); err != nil {
			return fmt.Errorf("%s: %w", field.key, err)
		}
	}
	return nil
}
