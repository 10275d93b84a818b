package store

import (
	"context"
	"crypto/rand"
	"errors"
	"fmt"
)

// edgeSecretKey holds the key the edges share.
const edgeSecretKey = "edge_secret"

// edgeSecretBytes is the length of the edges' key.
const edgeSecretBytes = 32

// EdgeSecret returns the key every edge process signs with what it hands
// an agent to take back later (a random subdomain, bound again after a
// reconnect), made the first time any edge asks, by the first of any
// number asking at once. It never leaves the store and the edges.
func (e Edges) EdgeSecret(ctx context.Context) ([]byte, error) {
	var v struct {
		Key []byte `json:"key"`
	}
	err := e.store.getJSON(ctx, edgeSecretKey, &v)
	if err == nil && len(v.Key) >= edgeSecretBytes {
		return v.Key, nil
	}
	if err != nil && !errors.Is(err, ErrNotFound) {
		return nil, fmt.Errorf("reading the edges' key: %w", err)
	}
	v.Key = make([]byte, edgeSecretBytes)
	if _, err := rand.Read(v.Key); err != nil {
		return nil, err
	}
	err = e.store.createJSON(ctx, edgeSecretKey, v)
	if errors.Is(err, ErrConflict) {
		// Another edge made it first: its key is the one.
		if err := e.store.getJSON(ctx, edgeSecretKey, &v); err != nil {
			return nil, fmt.Errorf("reading the edges' key: %w", err)
		}
		return v.Key, nil
	}
	if err != nil {
		return nil, fmt.Errorf("making the edges' key: %w", err)
	}
	return v.Key, nil
}
