package filters

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"
)

func TestCacheReturnsTheSameProgram(t *testing.T) {
	c := NewCache(newTestEnv(t), 10)
	const expr = `ev.conn.server_port == 443`
	p1, err := c.Program(httpKind, expr)
	if err != nil {
		t.Fatalf("Program: %v", err)
	}
	p2, err := c.Program(httpKind, expr)
	if err != nil {
		t.Fatalf("Program: %v", err)
	}
	if p1 != p2 {
		t.Error("the same kind and expression gave two programs")
	}
	p3, err := c.Program(tcpKind, expr)
	if err != nil {
		t.Fatalf("Program: %v", err)
	}
	if p3 == p1 || p3.Kind() != tcpKind {
		t.Errorf("another kind gave the program of %s", p3.Kind())
	}
	if c.Len() != 2 {
		t.Errorf("Len() = %d, want 2", c.Len())
	}
}

func TestCacheDoesNotKeepErrors(t *testing.T) {
	c := NewCache(newTestEnv(t), 10)
	for range 2 {
		if _, err := c.Program(httpKind, `ev.conn.server_port`); !errors.Is(err, ErrNotBoolean) {
			t.Fatalf("Program: error = %v, want ErrNotBoolean", err)
		}
		if _, err := c.Program("api_key_created.v0", `true`); !errors.Is(err, ErrNotTraffic) {
			t.Fatalf("Program: error = %v, want ErrNotTraffic", err)
		}
	}
	if c.Len() != 0 {
		t.Errorf("Len() = %d after errors only, want 0", c.Len())
	}
}

func TestCacheEvictsLeastRecentlyUsed(t *testing.T) {
	c := NewCache(newTestEnv(t), 2)
	get := func(expr string) *Program {
		t.Helper()
		p, err := c.Program(httpKind, expr)
		if err != nil {
			t.Fatalf("Program(%q): %v", expr, err)
		}
		return p
	}
	a := get(`ev.conn.server_port == 1`)
	b := get(`ev.conn.server_port == 2`)
	if get(`ev.conn.server_port == 1`) != a { // a is now the most recent
		t.Fatal("a was recompiled")
	}
	get(`ev.conn.server_port == 3`) // evicts b
	if c.Len() != 2 {
		t.Fatalf("Len() = %d, want 2", c.Len())
	}
	if get(`ev.conn.server_port == 1`) != a {
		t.Error("a was evicted, though used more recently than b")
	}
	if get(`ev.conn.server_port == 2`) == b {
		t.Error("b was kept, though least recently used")
	}
}

func TestCacheConcurrentUse(t *testing.T) {
	c := NewCache(newTestEnv(t), 8)
	exprs := make([]string, 12) // more than the cache holds, to evict under contention
	for i := range exprs {
		exprs[i] = fmt.Sprintf(`ev.conn.server_port == %d || ev.conn.server_name.endsWith(".example.com")`, i)
	}
	const workers, rounds = 8, 200
	var wg sync.WaitGroup
	errs := make(chan error, workers)
	for w := range workers {
		wg.Go(func() {
			f, err := c.env.NewFields(httpKind)
			if err != nil {
				errs <- err
				return
			}
			for r := range rounds {
				i := (w + r) % len(exprs)
				p, err := c.Program(httpKind, exprs[i])
				if err != nil {
					errs <- err
					return
				}
				f.Reset()
				if err := f.SetInt("conn.server_port", int64(i)); err != nil {
					errs <- err
					return
				}
				ok, err := p.Match(context.Background(), f)
				if err != nil || !ok {
					errs <- fmt.Errorf("Match(%q) = %v, %v; want true", exprs[i], ok, err)
					return
				}
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	if n := c.Len(); n > 8 {
		t.Errorf("Len() = %d, above the size of 8", n)
	}
	// Once in the cache, a program stays the same while it is used.
	p1, _ := c.Program(httpKind, exprs[0])
	p2, _ := c.Program(httpKind, exprs[0])
	if p1 != p2 {
		t.Error("two programs for the same filter")
	}
}

func TestCacheCompilesOnceUnderContention(t *testing.T) {
	c := NewCache(newTestEnv(t), 4)
	const workers = 16
	programs := make([]*Program, workers)
	var wg sync.WaitGroup
	start := make(chan struct{})
	for w := range workers {
		wg.Go(func() {
			<-start
			p, err := c.Program(httpKind, `inCIDR(ev.conn.client_ip, "10.0.0.0/8")`)
			if err != nil {
				t.Error(err)
			}
			programs[w] = p
		})
	}
	close(start)
	wg.Wait()
	for _, p := range programs[1:] {
		if p != programs[0] {
			t.Fatal("concurrent callers got different programs for the same filter")
		}
	}
}
