package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/url"
	"strconv"

	"github.com/spf13/cobra"
)

// maxListLimit is the most items a page of the API holds.
const maxListLimit = 100

// listFlags are the flags of a list command.
type listFlags struct {
	limit    int    // items per page; 0: the API's default
	beforeID string // list the items older than this one
	all      bool   // follow next_page_uri to the last page
}

func (l listFlags) validate() error {
	if l.limit < 0 || l.limit > maxListLimit {
		return fmt.Errorf("--limit %d: must be from 1 to %d (0 or none: the API's default, %d)", l.limit, maxListLimit, maxListLimit)
	}
	return nil
}

// query is the query string of the first page, "" or "?...".
func (l listFlags) query() string {
	q := url.Values{}
	if l.limit > 0 {
		q.Set("limit", strconv.Itoa(l.limit))
	}
	if l.beforeID != "" {
		q.Set("before_id", l.beforeID)
	}
	if len(q) == 0 {
		return ""
	}
	return "?" + q.Encode()
}

func newListCommand(kind resourceKind, f *resourceFlags) *cobra.Command {
	var l listFlags
	cmd := &cobra.Command{
		Use:   "list",
		Short: "List the account's " + kind.plural + ", newest first",
		Long: fmt.Sprintf(`List the account's %s, newest first, a page of --limit at a time.

Without --all, one page is listed, and standard error says how to list the
next one if there is one. --all follows the API's next_page_uri to the last
page; with --json it prints one object holding every item, shaped as a
page whose next_page_uri is null.`, kind.plural),
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			c, err := f.client()
			if err != nil {
				return err
			}
			if err := l.validate(); err != nil {
				return err
			}
			return runList(cmd.Context(), c, kind, l, f.json, cmd.OutOrStdout(), cmd.ErrOrStderr())
		},
	}
	fl := cmd.Flags()
	fl.IntVar(&l.limit, "limit", 0, fmt.Sprintf("items per page, from 1 to %d (default: the API's, %d)", maxListLimit, maxListLimit))
	fl.StringVar(&l.beforeID, "before-id", "", "list the items older than this id (the last of the previous page)")
	fl.BoolVar(&l.all, "all", false, "list every page, following next_page_uri")
	return cmd
}

// listPage is a page of a list, as the API answered.
type listPage struct {
	raw   []byte
	items []json.RawMessage
	uri   string
	next  string // next_page_uri; "" on the last page
}

// fetchPage gets the page at target, a path and query of the API.
func fetchPage(ctx context.Context, c *apiClient, kind resourceKind, target string) (listPage, error) {
	raw, err := c.get(ctx, target)
	if err != nil {
		return listPage{}, err
	}
	var body map[string]json.RawMessage
	if err := json.Unmarshal(raw, &body); err != nil {
		return listPage{}, fmt.Errorf("the answer of GET %s is not a page of %s: %w", target, kind.plural, err)
	}
	page := listPage{raw: raw}
	var next *string
	for key, into := range map[string]any{kind.listKey: &page.items, "uri": &page.uri, "next_page_uri": &next} {
		if err := json.Unmarshal(body[key], into); err != nil {
			return listPage{}, fmt.Errorf("the answer of GET %s is not a page of %s: %s: %w", target, kind.plural, key, err)
		}
	}
	if next != nil {
		page.next = *next
	}
	return page, nil
}

// allItems returns the items of the first page and of every page after
// it, following next_page_uri to the last.
func allItems(ctx context.Context, c *apiClient, kind resourceKind, first listPage) ([]json.RawMessage, error) {
	items, next := first.items, first.next
	seen := map[string]bool{}
	for next != "" {
		u, err := url.Parse(next)
		if err != nil || (u.Scheme != "http" && u.Scheme != "https") {
			return nil, fmt.Errorf("the API's next_page_uri %q is not an http or https URL", next)
		}
		if seen[next] {
			return nil, fmt.Errorf("the API gave the next_page_uri %s twice; stopping", next)
		}
		seen[next] = true
		// Only its path and query are followed, at --api-url: the API
		// builds the URL from its public address, which may not be the one
		// this client reaches it at, and the API key must go nowhere else.
		page, err := fetchPage(ctx, c, kind, u.RequestURI())
		if err != nil {
			return nil, err
		}
		items, next = append(items, page.items...), page.next
	}
	return items, nil
}

// runList lists the pages the flags ask for and prints them.
func runList(ctx context.Context, c *apiClient, kind resourceKind, l listFlags, asJSON bool, stdout, stderr io.Writer) error {
	first, err := fetchPage(ctx, c, kind, kind.path+l.query())
	if err != nil {
		return err
	}
	items, next := first.items, first.next
	if l.all {
		if items, err = allItems(ctx, c, kind, first); err != nil {
			return err
		}
		next = ""
	}
	if asJSON {
		if !l.all {
			return writeRawJSON(stdout, first.raw)
		}
		if items == nil {
			items = []json.RawMessage{}
		}
		return writeJSONValue(stdout, map[string]any{kind.listKey: items, "uri": first.uri, "next_page_uri": nil})
	}
	rows := make([][]string, len(items))
	for i, raw := range items {
		v, err := kind.view(raw)
		if err != nil {
			return err
		}
		rows[i] = v.row()
	}
	if err := printTable(stdout, kind.columns, rows); err != nil {
		return err
	}
	if next != "" {
		hint := "give --all to list every page"
		if u, err := url.Parse(next); err == nil && u.Query().Get("before_id") != "" {
			hint += ", or --before-id " + u.Query().Get("before_id") + " for the next one"
		}
		fmt.Fprintf(stderr, "sluice: there are more %s: %s\n", kind.plural, hint)
	}
	return nil
}
