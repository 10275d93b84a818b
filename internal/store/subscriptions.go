package store

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/sluicehq/sluice/filters"
	"github.com/sluicehq/sluice/internal/resource"
	"github.com/sluicehq/sluice/schemas"
)

// Subscription is an event subscription of an account (specification
// sections 2.8 and 4.4): the kinds of events it routes, and the
// destinations of the account it delivers them to.
type Subscription struct {
	// ID is "esb_" and a KSUID.
	ID string `json:"id"`
	// AccountID is the account that owns the subscription.
	AccountID string `json:"account_id"`
	// CreatedAt is when the subscription was created, in UTC.
	CreatedAt time.Time `json:"created_at"`
	// Description is free text, at most 255 characters.
	Description string `json:"description"`
	// Metadata is free text, at most 4096 characters.
	Metadata string `json:"metadata"`
	// Sources are the event kinds routed, each kind at most once, in the
	// order they were given.
	Sources []Source `json:"sources"`
	// DestinationIDs are the destinations of the account the events go to,
	// each at most once.
	DestinationIDs []string `json:"destination_ids"`
}

// Source is one event kind a subscription routes (a sub-resource of the
// subscription, named by its Type).
type Source struct {
	// Type is the event kind, such as "http_request_complete.v0".
	Type string `json:"type"`
	// Filter is a CEL expression over the event's object, bound to ev, that
	// an event must match to be delivered; "" delivers every event. Only
	// traffic kinds may have one.
	Filter string `json:"filter,omitempty"`
	// Fields are the dotted paths of the fields delivered, normalized
	// (filters.Normalize); empty delivers every field. Only traffic kinds
	// may have them.
	Fields []string `json:"fields,omitempty"`
}

// Source returns the source of the subscription of the event kind, and
// whether there is one.
func (sub Subscription) Source(kind string) (Source, bool) {
	i := slices.IndexFunc(sub.Sources, func(s Source) bool { return s.Type == kind })
	if i < 0 {
		return Source{}, false
	}
	return sub.Sources[i], true
}

// clone returns a deep copy of the subscription.
func (sub Subscription) clone() Subscription {
	sub.Sources = slices.Clone(sub.Sources)
	for i := range sub.Sources {
		sub.Sources[i].Fields = slices.Clone(sub.Sources[i].Fields)
	}
	sub.DestinationIDs = slices.Clone(sub.DestinationIDs)
	return sub
}

// check normalizes the subscription (empty lists instead of nil ones,
// normalized field selections) and returns a *ValidationError for the first
// field that breaks a rule, or nil. It does not check that the destinations
// exist.
func (sub *Subscription) check(env *filters.Env) error {
	spec := resource.EventSubscriptions()
	if err := checkText(spec.Field("description"), sub.Description); err != nil {
		return err
	}
	if err := checkText(spec.Field("metadata"), sub.Metadata); err != nil {
		return err
	}
	if sub.Sources == nil {
		sub.Sources = []Source{}
	}
	seen := make(map[string]int, len(sub.Sources))
	for i := range sub.Sources {
		path := fmt.Sprintf("sources[%d]", i)
		src := &sub.Sources[i]
		if err := src.check(env, path); err != nil {
			return err
		}
		if first, dup := seen[src.Type]; dup {
			return invalid(path+".type", "%s already has a source, sources[%d]: each event kind may appear once; merge the two", src.Type, first)
		}
		seen[src.Type] = i
	}
	if sub.DestinationIDs == nil {
		sub.DestinationIDs = []string{}
	}
	for j, id := range sub.DestinationIDs {
		field := fmt.Sprintf("destination_ids[%d]", j)
		if schemas.CheckID(schemas.PrefixDestination, id) != nil {
			return noSuchDestination(field, id)
		}
		if first := slices.Index(sub.DestinationIDs, id); first < j {
			return invalid(field, "%s is already destination_ids[%d]: name each destination once", id, first)
		}
	}
	return nil
}

// noSuchDestination is the *ValidationError of a destination id that names
// no destination of the account, matching ErrNotFound too.
func noSuchDestination(field, id string) *ValidationError {
	return &ValidationError{
		Field: field,
		Msg:   fmt.Sprintf("%q names no event destination of this account: create the destination first, or remove the id", id),
		Err:   ErrNotFound,
	}
}

// check checks the source at path and normalizes its field selection.
func (src *Source) check(env *filters.Env, path string) error {
	if src.Type == "" {
		return invalid(path+".type", "is required: give an event kind, such as http_request_complete.v0")
	}
	kind, ok := schemas.Default().Kind(src.Type)
	if !ok {
		return invalid(path+".type", "%q is not an event kind%s; the events reference lists them all", src.Type, didYouMean(src.Type))
	}
	if kind.Class != schemas.ClassTraffic && (src.Filter != "" || len(src.Fields) > 0) {
		field, what := path+".filter", "filter"
		if src.Filter == "" {
			field, what = path+".fields", "fields"
		}
		return &ValidationError{
			Field: field,
			Msg: fmt.Sprintf("%s is an audit event kind, and only sources of traffic kinds (%s) may have a %s: remove it",
				src.Type, strings.Join(trafficKinds(), ", "), what),
			Err: filters.ErrNotTraffic,
		}
	}
	if src.Filter != "" {
		if _, err := env.Compile(src.Type, src.Filter); err != nil {
			var compileErr *filters.CompileError
			if !errors.As(err, &compileErr) {
				return fmt.Errorf("compiling the filter of %s: %w", path, err)
			}
			return &ValidationError{Field: path + ".filter", Msg: compileErr.Error(), Err: err}
		}
	}
	if len(src.Fields) == 0 {
		src.Fields = nil
		return nil
	}
	if err := env.CheckFields(src.Type, src.Fields); err != nil {
		var fieldErr *filters.FieldError
		if !errors.As(err, &fieldErr) {
			return fmt.Errorf("checking the fields of %s: %w", path, err)
		}
		return &ValidationError{
			Field: fmt.Sprintf("%s.fields[%d]", path, badFieldIndex(env, src.Type, src.Fields)),
			Msg:   fieldErr.Msg,
			Err:   err,
		}
	}
	src.Fields = filters.Normalize(src.Fields)
	return nil
}

// badFieldIndex returns the index of the first path of a selection that
// CheckFields refuses: the shortest prefix of the selection it refuses ends
// there.
func badFieldIndex(env *filters.Env, kind string, paths []string) int {
	for j := range paths {
		if env.CheckFields(kind, paths[:j+1]) != nil {
			return j
		}
	}
	return 0
}

// trafficKinds returns the names of the traffic kinds of the catalogue.
func trafficKinds() []string {
	var names []string
	for _, k := range schemas.Default().Kinds() {
		if k.Class == schemas.ClassTraffic {
			names = append(names, k.Name)
		}
	}
	return names
}

// maxSuggestions bounds the kinds an unknown kind's message suggests.
const maxSuggestions = 3

// didYouMean returns ` (did you mean "a" or "b"?)` with the names of the
// catalogue's kinds closest to name, or "" if none is close.
func didYouMean(name string) string {
	near := schemas.Default().Suggest(name, maxSuggestions)
	if len(near) == 0 {
		return ""
	}
	quoted := make([]string, len(near))
	for i, kind := range near {
		quoted[i] = fmt.Sprintf("%q", kind)
	}
	return " (did you mean " + strings.Join(quoted, " or ") + "?)"
}
