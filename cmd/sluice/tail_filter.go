package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"maps"
	"slices"
	"strings"

	"github.com/sluicehq/sluice/client"
	"github.com/sluicehq/sluice/filters"
	"github.com/sluicehq/sluice/schemas"
)

// kindFilters are tail's --filter and --type: the filter compiled for each
// kind of the catalogue, as a subscription's filter of that kind with the
// envelope's fields (filters.CompileReading), and the kinds to print.
type kindFilters struct {
	expr     string                            // --filter; "" keeps every event
	filters  map[string]*filters.ReadingFilter // by kind: the kinds the filter fits
	refusals map[string]error                  // by kind: why it does not fit the others
	types    []string                          // --type; nil prints every kind
}

// newKindFilters compiles the filter for every kind of the catalogue and
// refuses at once what can be refused before reading: a --type that is not
// a kind, a filter that does not fit a kind of --type, or one that fits no
// kind at all.
func newKindFilters(expr string, types []string) (*kindFilters, error) {
	catalogue := schemas.Default()
	for _, kind := range types {
		if _, ok := catalogue.Kind(kind); !ok {
			return nil, fmt.Errorf("--type %q is not an event kind; sluice schemas lists them (such as http_request_complete.v0)", kind)
		}
	}
	k := &kindFilters{expr: expr, types: types}
	if expr == "" {
		return k, nil
	}
	env, err := filters.NewEnv(catalogue)
	if err != nil {
		return nil, err
	}
	k.filters, k.refusals = map[string]*filters.ReadingFilter{}, map[string]error{}
	for _, name := range catalogue.Names() {
		f, err := env.CompileReading(name, expr)
		if err != nil {
			k.refusals[name] = err
			continue
		}
		k.filters[name] = f
	}
	for _, kind := range types {
		if err := k.refusals[kind]; err != nil {
			return nil, fmt.Errorf("--filter does not fit events of --type %s: %w", kind, err)
		}
	}
	if len(k.filters) == 0 {
		kind := likelyKind(env, catalogue.Names(), k.refusals)
		return nil, fmt.Errorf("--filter fits no event kind; as a filter of %s: %w; "+
			"write it as a subscription's filter: ev is the event's object (ev.conn.server_port), %s the envelope's fields",
			kind, k.refusals[kind], strings.Join(filters.EnvelopeFields(), ", "))
	}
	return k, nil
}

// likelyKind is the kind whose refusal most likely says what is wrong with
// a filter that fits no kind: the first whose fields it names rightly (its
// refusal is not about a field it lacks), or else the first of those with
// the most filterable fields, whose refusal lists them.
func likelyKind(env *filters.Env, names []string, refusals map[string]error) string {
	for _, name := range names {
		if !strings.Contains(refusals[name].Error(), "undeclared reference") {
			return name
		}
	}
	best, most := names[0], -1
	for _, name := range names {
		if fields, err := env.FilterableFields(name); err == nil && len(fields) > most {
			best, most = name, len(fields)
		}
	}
	return best
}

// match reports whether to print the event of the kind whose envelope is
// data. It returns an error for an event of a kind the filter does not fit
// or whose fields do not have the catalogue's types: such an event would
// be left out silently.
func (k *kindFilters) match(ctx context.Context, kind string, data []byte) (bool, error) {
	if k.types != nil && !slices.Contains(k.types, kind) {
		return false, nil
	}
	if k.expr == "" {
		return true, nil
	}
	f, ok := k.filters[kind]
	if !ok {
		why := k.refusals[kind]
		if why == nil {
			why = fmt.Errorf("%w: %q is not in this sluice's catalogue", filters.ErrUnknownKind, kind)
		}
		return false, fmt.Errorf("--filter does not fit events of %s, which this destination holds: %w; "+
			"give --type with the kinds it is for, to print only those", kind, why)
	}
	ok, err := f.Match(ctx, data)
	if err != nil && !errors.Is(err, context.Canceled) {
		return false, fmt.Errorf("--filter on an event of %s: %w", kind, err)
	}
	return ok, err
}

// destinationSource is a source of a subscription that sends to the
// destination tail reads.
type destinationSource struct {
	subscription string
	fields       []string // its field selection; nil: every field
}

// refuseUnfit returns an error if the filter does not fit a kind that a
// subscription sends to the destination: sent holds the sources of each
// such kind.
func (k *kindFilters) refuseUnfit(destination string, sent map[string][]destinationSource) error {
	if k.expr == "" || k.types != nil {
		return nil
	}
	for _, kind := range slices.Sorted(maps.Keys(sent)) {
		if why := k.refusals[kind]; why != nil {
			return fmt.Errorf("--filter does not fit events of %s, which subscription %s sends to %s: %w; "+
				"give --type with the kinds it is for, to print only those", kind, sent[kind][0].subscription, destination, why)
		}
	}
	return nil
}

// warnUnselected writes a warning for each field the filter reads that a
// source's field selection leaves out of the events it sends to the
// destination: in those events the filter reads the field's zero value.
func (k *kindFilters) warnUnselected(w io.Writer, destination string, sent map[string][]destinationSource) error {
	for _, kind := range slices.Sorted(maps.Keys(sent)) {
		f, ok := k.filters[kind]
		if !ok || (k.types != nil && !slices.Contains(k.types, kind)) {
			continue
		}
		for _, path := range f.Fields() {
			for _, src := range sent[kind] {
				if src.fields == nil || slices.ContainsFunc(src.fields, func(selected string) bool {
					return path == selected || strings.HasPrefix(path, selected+".")
				}) {
					continue
				}
				if _, err := fmt.Fprintf(w, "sluice tail: warning: --filter reads ev.%s, which subscription %s leaves out of the %s events it sends to %s "+
					"(its fields: %s), so in them the filter reads it as its zero value (\"\", 0, false)\n",
					path, src.subscription, kind, destination, strings.Join(src.fields, ", ")); err != nil {
					return err
				}
			}
		}
	}
	return nil
}

// destinationKinds asks the API which sources of the account's
// subscriptions send to the destination, by kind.
func destinationKinds(ctx context.Context, flags resourceFlags, errOut io.Writer, destination string) (map[string][]destinationSource, error) {
	c, err := flags.client(errOut)
	if err != nil {
		return nil, err
	}
	subscriptions, err := c.EventSubscriptions().ListAll(ctx, client.ListOptions{Limit: maxListLimit})
	if err != nil {
		return nil, pageError(subscriptionsKind(), err)
	}
	sent := map[string][]destinationSource{}
	for _, sub := range subscriptions.Items {
		if !slices.ContainsFunc(sub.Destinations, func(d schemas.Ref) bool { return d.ID == destination }) {
			continue
		}
		for _, source := range sub.Sources {
			sent[source.Type] = append(sent[source.Type], destinationSource{subscription: sub.ID, fields: source.Fields})
		}
	}
	return sent, nil
}
