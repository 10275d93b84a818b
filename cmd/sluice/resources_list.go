package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/url"

	"github.com/spf13/cobra"

	"github.com/sluicehq/sluice/apiwire"
	"github.com/sluicehq/sluice/client"
)

// maxListLimit is the most items a page of the API holds.
const maxListLimit = apiwire.MaxListLimit

// listFlags are the flags of a list command.
type listFlags struct {
	limit    int    // items per page; 0: the API's default
	beforeID string // list the items older than this one
	all      bool   // follow next_page_uri to the last page
	filter   string // a CEL filter over each item, obj; "": none
}

func (l listFlags) validate() error {
	if l.limit < 0 || l.limit > maxListLimit {
		return fmt.Errorf("--limit %d: must be from 1 to %d (0 or none: the API's default, %d)", l.limit, maxListLimit, maxListLimit)
	}
	return nil
}

// options are the client's options of the first page.
func (l listFlags) options() client.ListOptions {
	return client.ListOptions{Limit: l.limit, BeforeID: l.beforeID, Filter: l.filter}
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
page whose next_page_uri is null.

--filter lists only the %[1]s for which a CEL expression over each, named
obj and with the fields of its JSON, is true, such as
--filter 'obj.description.startsWith("prod")'. Each page holds up to
--limit that match, and the next pages keep the filter. A filter that does
not compile is refused with the position of the problem (docs/api.md,
Filtering lists).`, kind.plural),
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			c, err := f.client(cmd.ErrOrStderr())
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
	fl.StringVar(&l.filter, "filter", "", `list only the items for which this CEL expression over each, obj, is true, such as 'obj.description.startsWith("prod")'`)
	return cmd
}

// rawItems is the collection of kind, its items as the API wrote them,
// for --json to print them so.
func rawItems(c *client.Client, kind resourceKind) client.Collection[json.RawMessage] {
	path := kind.path
	if kind.pathOf != nil {
		path = kind.pathOf()
	}
	return client.NewCollection[json.RawMessage](c, path, kind.listKey)
}

// pageError says that a reply is not a page of kind, when it is not.
func pageError(kind resourceKind, err error) error {
	var decodeErr *client.DecodeError
	if !errors.As(err, &decodeErr) {
		return err
	}
	target := decodeErr.URL
	if u, parseErr := url.Parse(target); parseErr == nil {
		target = u.RequestURI()
	}
	return fmt.Errorf("the answer of GET %s is not a page of %s: %w", target, kind.plural, decodeErr.Err)
}

// runList lists the pages the flags ask for and prints them.
func runList(ctx context.Context, c *client.Client, kind resourceKind, l listFlags, asJSON bool, stdout, stderr io.Writer) error {
	var page apiwire.Page[json.RawMessage]
	var raw []byte
	var err error
	if l.all {
		page, err = rawItems(c, kind).ListAll(ctx, l.options())
	} else {
		page, err = rawItems(c, kind).List(ctx, l.options(), client.Reply(&raw))
	}
	if err != nil {
		return pageError(kind, err)
	}
	items, next := page.Items, deref(page.NextPageURI)
	if asJSON {
		if !l.all {
			return writeRawJSON(stdout, raw)
		}
		if items == nil {
			items = []json.RawMessage{}
		}
		return writeJSONValue(stdout, map[string]any{kind.listKey: items, "uri": page.URI, "next_page_uri": nil})
	}
	rows := make([][]string, len(items))
	for i, raw := range items {
		row, err := kind.row(raw)
		if err != nil {
			return err
		}
		rows[i] = row
	}
	if err := printTable(stdout, kind.columns, rows); err != nil {
		return err
	}
	if next != "" {
		hint := "give --all to list every page"
		if u, err := url.Parse(next); err == nil && u.Query().Get("before_id") != "" {
			hint += ", or --before-id " + u.Query().Get("before_id") + " for the next one"
			if l.filter != "" {
				hint += " with the same --filter"
			}
		}
		fmt.Fprintf(stderr, "sluice: there are more %s: %s\n", kind.plural, hint)
	}
	return nil
}
