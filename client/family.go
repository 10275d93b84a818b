package client

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strconv"

	"github.com/sluicehq/sluice/apiwire"
)

// Collection is a list of the API, such as /api_keys or the dead letters
// of a destination, whose items are T, read a page at a time. Its zero
// value is not usable: get one from NewCollection or a Client method.
type Collection[T any] struct {
	client  *Client
	path    string // "/api_keys"
	listKey string // the field of a page that holds the items, such as "keys"
}

// NewCollection returns the list at path, such as /bot_users, whose pages
// hold the items in the field listKey, such as bot_users.
func NewCollection[T any](c *Client, path, listKey string) Collection[T] {
	return Collection[T]{client: c, path: path, listKey: listKey}
}

// Path returns the collection's path, such as /api_keys.
func (f Collection[T]) Path() string { return f.path }

// ListKey returns the field of a page that holds the items, such as
// keys.
func (f Collection[T]) ListKey() string { return f.listKey }

// Family is a collection of the API, such as /api_keys, whose items are
// T and whose create and update bodies are In: a Collection whose items
// are also created, read, updated and deleted one by one. Its zero value
// is not usable: get one from NewFamily or a Client method such as
// APIKeys.
type Family[T, In any] struct {
	Collection[T]
}

// NewFamily returns the collection at path, such as /bot_users, whose pages
// hold the items in the field listKey, such as bot_users.
func NewFamily[T, In any](c *Client, path, listKey string) Family[T, In] {
	return Family[T, In]{NewCollection[T](c, path, listKey)}
}

// WithBodies returns the collection f whose create and update bodies are
// In2 instead of In: other types of the same JSON, such as a map of what a
// user typed.
func WithBodies[In2, T, In any](f Family[T, In]) Family[T, In2] {
	return Family[T, In2](f)
}

// ItemPath returns the path of the item id, such as /api_keys/ak_....
func (f Family[T, In]) ItemPath(id string) string { return f.path + "/" + url.PathEscape(id) }

// Create creates an item: POST to the collection. It returns the errors
// of Client.Do.
func (f Family[T, In]) Create(ctx context.Context, in In, opts ...CallOption) (T, error) {
	var out T
	err := f.client.Do(ctx, http.MethodPost, f.path, in, &out, opts...)
	return out, err
}

// Get returns the item id. It returns the errors of Client.Do: an *Error
// of status 404 when the account has no such item.
func (f Family[T, In]) Get(ctx context.Context, id string, opts ...CallOption) (T, error) {
	var out T
	err := f.client.Do(ctx, http.MethodGet, f.ItemPath(id), nil, &out, opts...)
	return out, err
}

// Update changes the fields of the item id that in sets: PATCH. It
// returns the errors of Client.Do.
func (f Family[T, In]) Update(ctx context.Context, id string, in In, opts ...CallOption) (T, error) {
	var out T
	err := f.client.Do(ctx, http.MethodPatch, f.ItemPath(id), in, &out, opts...)
	return out, err
}

// Delete deletes the item id. It returns the errors of Client.Do.
func (f Family[T, In]) Delete(ctx context.Context, id string, opts ...CallOption) error {
	return f.client.Do(ctx, http.MethodDelete, f.ItemPath(id), nil, nil, opts...)
}

// ListOptions choose the first page of a list.
type ListOptions struct {
	// Limit is the number of items per page, from 1 to MaxListLimit; 0 is
	// the API's default, MaxListLimit.
	Limit int
	// BeforeID lists the items older than this one, the last of the
	// previous page; "" from the newest.
	BeforeID string
	// Filter lists only the items for which this CEL expression over the
	// item, named obj, is true, such as obj.description.startsWith("prod");
	// "" lists every item. The lists of resource families take it
	// (docs/api.md#filtering-lists); each page's NextPageURI keeps it.
	Filter string
}

// query is the query string of the first page, "" or "?...".
func (o ListOptions) query() string {
	q := url.Values{}
	if o.Limit > 0 {
		q.Set("limit", strconv.Itoa(o.Limit))
	}
	if o.BeforeID != "" {
		q.Set("before_id", o.BeforeID)
	}
	if o.Filter != "" {
		q.Set("filter", o.Filter)
	}
	if len(q) == 0 {
		return ""
	}
	return "?" + q.Encode()
}

// List returns the first page of the items, newest first. It returns the
// errors of Client.Do.
func (f Collection[T]) List(ctx context.Context, o ListOptions, opts ...CallOption) (apiwire.Page[T], error) {
	return f.page(ctx, f.path+o.query(), opts...)
}

// Next returns the page after p, following its NextPageURI. Only its path
// and query are followed, at the client's base URL: the API builds the URL
// from its public address, which may not be the one the client reaches it
// at, and the API key must go nowhere else. It returns ErrLastPage when p
// is the last page, and the errors of Client.Do.
func (f Collection[T]) Next(ctx context.Context, p apiwire.Page[T], opts ...CallOption) (apiwire.Page[T], error) {
	if p.NextPageURI == nil || *p.NextPageURI == "" {
		return apiwire.Page[T]{}, ErrLastPage
	}
	next := *p.NextPageURI
	u, err := url.Parse(next)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") {
		return apiwire.Page[T]{}, fmt.Errorf("the API's next_page_uri %q is not an http or https URL", next)
	}
	return f.page(ctx, u.RequestURI(), opts...)
}

// ErrLastPage is the error of Next on the last page.
var ErrLastPage = errors.New("client: the page is the last")

// ListAll returns one page that holds the items of the first page o
// chooses and of every page after it, following NextPageURI to the last:
// its URI is the first page's, its NextPageURI nil. It returns the errors
// of Next.
func (f Collection[T]) ListAll(ctx context.Context, o ListOptions, opts ...CallOption) (apiwire.Page[T], error) {
	page, err := f.List(ctx, o, opts...)
	if err != nil {
		return apiwire.Page[T]{}, err
	}
	items, err := f.Rest(ctx, page, opts...)
	if err != nil {
		return apiwire.Page[T]{}, err
	}
	return apiwire.Page[T]{Key: f.listKey, Items: items, URI: page.URI}, nil
}

// Rest returns the items of first and of every page after it. It returns
// the errors of Next.
func (f Collection[T]) Rest(ctx context.Context, first apiwire.Page[T], opts ...CallOption) ([]T, error) {
	items, page := first.Items, first
	seen := map[string]bool{}
	for page.NextPageURI != nil && *page.NextPageURI != "" {
		next := *page.NextPageURI
		if seen[next] {
			return nil, fmt.Errorf("the API gave the next_page_uri %s twice; stopping", next)
		}
		seen[next] = true
		var err error
		if page, err = f.Next(ctx, page, opts...); err != nil {
			return nil, err
		}
		items = append(items, page.Items...)
	}
	return items, nil
}

// page gets the page at target.
func (f Collection[T]) page(ctx context.Context, target string, opts ...CallOption) (apiwire.Page[T], error) {
	p := apiwire.Page[T]{Key: f.listKey}
	err := f.client.Do(ctx, http.MethodGet, target, nil, &p, opts...)
	return p, err
}
