package schemas

import (
	"fmt"
	"slices"
	"strings"
	"sync"
)

// Catalogue is the set of event kinds sluice knows. It is immutable and safe
// for concurrent use.
type Catalogue struct {
	kinds     []*Kind
	byName    map[string]*Kind
	principal *node
}

var defaultCatalogue = sync.OnceValue(func() *Catalogue {
	c, err := build()
	if err != nil {
		// The table is compiled in; TestCatalogueBuilds proves this cannot happen.
		panic(err)
	}
	return c
})

// Default returns the catalogue of the specification, built once.
func Default() *Catalogue { return defaultCatalogue() }

// Kinds returns every kind, sorted by name. The slice must not be modified.
func (c *Catalogue) Kinds() []*Kind { return c.kinds }

// Kind returns the kind with the name, such as "http_request_complete.v0".
func (c *Catalogue) Kind(name string) (*Kind, bool) {
	k, ok := c.byName[name]
	return k, ok
}

// Names returns the names of every kind, sorted.
func (c *Catalogue) Names() []string {
	names := make([]string, len(c.kinds))
	for i, k := range c.kinds {
		names[i] = k.Name
	}
	return names
}

func build() (*Catalogue, error) {
	c := &Catalogue{byName: map[string]*Kind{}}
	for _, t := range trafficKinds {
		k, err := newKind(t.name, ClassTraffic, strings.TrimSuffix(t.name, ".v0"), t.desc, t.fields)
		if err != nil {
			return nil, err
		}
		c.add(k)
	}
	for _, a := range auditKinds {
		for _, suffix := range a.kinds {
			name := a.family + "_" + suffix + ".v0"
			k, err := newKind(name, ClassAudit, a.family, auditDescription(a.desc, suffix), a.fields)
			if err != nil {
				return nil, err
			}
			k.EmittedBySluice = a.bySluice
			c.add(k)
		}
	}
	slices.SortFunc(c.kinds, func(a, b *Kind) int { return strings.Compare(a.Name, b.Name) })
	c.principal = newGroup("principal")
	for _, f := range principalSpec {
		if err := c.principal.insert(f.path, f.typ, false, 0, ValueAny); err != nil {
			return nil, fmt.Errorf("principal: %w", err)
		}
	}
	return c, nil
}

func (c *Catalogue) add(k *Kind) {
	c.kinds = append(c.kinds, k)
	c.byName[k.Name] = k
}

func auditDescription(resource, suffix string) string {
	switch suffix {
	case "start":
		return "An agent session starts, or fails to start."
	case "stop":
		return "An agent session stops."
	case "deleted":
		return "Emitted when " + resource + " is deleted; the object is the resource as it was before."
	}
	return "Emitted when " + resource + " is " + suffix + "; the object is the resource after the change."
}

func newKind(name string, class Class, family, desc string, specs []fieldSpec) (*Kind, error) {
	k := &Kind{
		Name:        name,
		Class:       class,
		Family:      family,
		Description: desc,
		root:        newGroup("object"),
		byPath:      map[string]*Field{},
	}
	for _, s := range specs {
		path := strings.ReplaceAll(s.path, "[]", "")
		secret := class == ClassAudit && isSecret(path)
		maxBytes, filterable := filterablePaths[path]
		filterable = filterable && class == ClassTraffic
		if !filterable {
			maxBytes = 0
		}
		switch {
		case filterable && s.typ == TypeString && maxBytes <= 0:
			return nil, fmt.Errorf("kind %s: filterable string field %q has no maximum length", name, path)
		case maxBytes > 0 && s.typ != TypeString:
			return nil, fmt.Errorf("kind %s: field %q has a maximum length but is not a string", name, path)
		}
		value := fieldValues[path]
		if want := valueTypes[value]; value != ValueAny && s.typ != want {
			return nil, fmt.Errorf("kind %s: field %q has a rule of %s values but is %s", name, path, want, s.typ)
		}
		if err := k.root.insert(s.path, s.typ, secret, maxBytes, value); err != nil {
			return nil, fmt.Errorf("kind %s: %w", name, err)
		}
		var inList string
		if i := strings.Index(s.path, "[]"); i >= 0 {
			inList = s.path[:i]
		}
		k.Fields = append(k.Fields, Field{
			Path:        path,
			Type:        s.typ,
			Filterable:  filterable,
			MaxBytes:    maxBytes,
			Value:       value,
			Selectable:  class == ClassTraffic,
			Extension:   s.ext,
			Secret:      secret,
			InList:      inList,
			Description: s.desc,
		})
	}
	slices.SortFunc(k.Fields, func(a, b Field) int { return strings.Compare(a.Path, b.Path) })
	for i := range k.Fields {
		if _, dup := k.byPath[k.Fields[i].Path]; dup {
			return nil, fmt.Errorf("kind %s: field %q declared twice", name, k.Fields[i].Path)
		}
		k.byPath[k.Fields[i].Path] = &k.Fields[i]
	}
	return k, nil
}

// isSecret reports whether an audit field holds a secret, which events never
// carry: the tokens of API keys and tunnel credentials, and AWS secret keys.
func isSecret(path string) bool {
	return path == "token" || strings.HasSuffix(path, ".aws_secret_access_key")
}
