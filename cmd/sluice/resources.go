package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/url"
	"os"

	"github.com/spf13/pflag"

	"github.com/sluicehq/sluice/client"
)

// The commands of this file and of destinations.go, subscriptions.go,
// subscription_sources.go and apikeys.go are a thin client of the
// management API (package client): each call is one HTTP request (two for
// an update that completes a destination's target), and what they print is
// what the API answered.

// apiURLHint says what to check when the API cannot be reached.
const apiURLHint = "is sluice serve running there? Give its address with --api-url (or SLUICE_API_URL)"

// resourceFlags are the flags of every command of the management API:
// destinations, subscriptions and api-keys.
type resourceFlags struct {
	apiURL string
	apiKey string
	json   bool
}

func (f *resourceFlags) register(fl *pflag.FlagSet) {
	fl.StringVar(&f.apiURL, "api-url", "http://127.0.0.1:8080", "base URL of the sluice API")
	fl.StringVar(&f.apiKey, "api-key", "", "API key of the account (prefer SLUICE_API_KEY: flags show in process lists)")
	fl.BoolVar(&f.json, "json", false, "print the API's JSON answer as it is, instead of a table")
}

// client returns a client of the API the flags name, whose errors of a
// request that got no answer say to check --api-url, and which sends a
// request the API refused with 429 again (rateLimitRetry, telling stderr
// when it waits a second time), changed by opts; or what is wrong with the
// flags.
func (f resourceFlags) client(stderr io.Writer, opts ...client.Option) (*client.Client, error) {
	var errs []error
	if f.apiKey == "" {
		errs = append(errs, errors.New("--api-key is required (or set SLUICE_API_KEY)"))
	}
	if u, err := url.Parse(f.apiURL); err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		errs = append(errs, fmt.Errorf("--api-url %q: want an http or https URL such as http://127.0.0.1:8080", f.apiURL))
	}
	if err := errors.Join(errs...); err != nil {
		return nil, err
	}
	opts = append([]client.Option{client.WithUnreachableHint(apiURLHint), client.WithRateLimitRetry(rateLimitRetry(stderr))}, opts...)
	return client.New(f.apiURL, f.apiKey, opts...), nil
}

// resourceKind is a collection of the API, for the commands that every
// collection has: list, get and delete.
type resourceKind struct {
	command string   // the command's name: "destinations"
	plural  string   // for help and messages: "event destinations"
	path    string   // the collection's path: "/event_destinations"
	listKey string   // the field of a page that holds the items: "event_destinations"
	columns []string // the header of the table of list
	// row decodes one resource of the API's answers, and returns its cells
	// in the table of list, under columns.
	row func(raw []byte) ([]string, error)
	// pathOf, when set, returns the path at run time, which a flag of a
	// nested family chooses (family.parent).
	pathOf func() string
}

// resourceField is a line of the table of one resource.
type resourceField struct{ name, value string }

// rowOf returns the cells of a resource of the API that decodes as a T,
// in the table of list: row's.
func rowOf[T any](row func(T) []string) func(raw []byte) ([]string, error) {
	return func(raw []byte) ([]string, error) {
		var v T
		if err := json.Unmarshal(raw, &v); err != nil {
			return nil, fmt.Errorf("the API's answer is not the resource it should be: %w", err)
		}
		return row(v), nil
	}
}

// bodyFlags is --data, the JSON body of a create or update, on which the
// command's other flags set fields.
type bodyFlags struct {
	data string
}

func (b *bodyFlags) register(fl *pflag.FlagSet) {
	fl.StringVar(&b.data, "data", "", "the request's JSON body: an object, @FILE to read it from FILE, or - from standard input; the other flags set their fields on it")
}

// read returns the object of --data; an empty one without --data.
func (b bodyFlags) read(stdin io.Reader) (map[string]any, error) {
	text := []byte(b.data)
	switch {
	case b.data == "":
		return map[string]any{}, nil
	case b.data == "-":
		raw, err := io.ReadAll(stdin)
		if err != nil {
			return nil, fmt.Errorf("--data -: reading standard input: %w", err)
		}
		text = raw
	case b.data[0] == '@':
		raw, err := os.ReadFile(b.data[1:])
		if err != nil {
			return nil, fmt.Errorf("--data %s: %w", b.data, err)
		}
		text = raw
	}
	body, err := decodeObject(text)
	if err != nil {
		return nil, fmt.Errorf("--data: %w", err)
	}
	return body, nil
}

// flagGiven reports whether the flag was given, on the command line or in
// its environment variable: update sends only the fields given.
func flagGiven(fl *pflag.FlagSet, name string) bool {
	f := fl.Lookup(name)
	if f == nil {
		return false
	}
	_, inEnv := os.LookupEnv(envName(name))
	return f.Changed || inEnv
}

// nothingToUpdate is the error of an update with no field to change.
func nothingToUpdate(flags string) error {
	return fmt.Errorf("nothing to update: give %s, or --data", flags)
}
