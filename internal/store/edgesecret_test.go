package store_test

import (
	"bytes"
	"sync"
	"testing"
)

// TestEdgeSecretIsMadeOnce: edges asking at once all get the one key,
// and it stays.
func TestEdgeSecretIsMadeOnce(t *testing.T) {
	e := newEnv(t)
	keys := make([][]byte, 8)
	var wg sync.WaitGroup
	for i := range keys {
		wg.Go(func() {
			k, err := e.store.Edges().EdgeSecret(e.ctx)
			if err != nil {
				t.Error(err)
			}
			keys[i] = k
		})
	}
	wg.Wait()
	for _, k := range keys {
		if len(k) != 32 || !bytes.Equal(k, keys[0]) {
			t.Fatalf("keys %x, want one key of 32 bytes for all", keys)
		}
	}
	again, err := e.store.Edges().EdgeSecret(e.ctx)
	if err != nil || !bytes.Equal(again, keys[0]) {
		t.Fatalf("the key asked again: %x, %v", again, err)
	}
}
