package store

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/nats-io/nats.go/jetstream"
)

// EdgeTimeout is how long after its last heartbeat (HeartbeatEdge) an edge
// process counts as gone: the tunnel sessions and endpoints it holds are
// hidden from then on, and RemoveDeadEdgeRecords removes them, which frees
// the room they took under the account's limits. An edge heartbeats every
// EdgeTimeout/3, so that two missed heartbeats do not end its sessions.
const EdgeTimeout = 15 * time.Second

// Edges are the records of the edge processes: their heartbeats, the
// secret they share, the directory of where each serves its endpoints,
// and the changes each edge follows. Only the edge role uses them.
type Edges struct{ store *Store }

// Edges returns the store's records of edge processes.
func (s *Store) Edges() Edges { return Edges{s} }

// MaxEdgeID is the longest id of an edge process, in bytes.
const MaxEdgeID = 64

// edgeHeartbeat is the value of edge_heartbeats.<edge_id>: when the edge
// was last alive, by the clock of the store that wrote it.
type edgeHeartbeat struct {
	EdgeID string    `json:"edge_id"`
	At     time.Time `json:"at"`
	// Peer is where the other edges forward the public requests of the
	// endpoints this edge's agents serve (HOST:PORT), "" for nowhere.
	Peer string `json:"peer,omitempty"`
}

const allEdgeHeartbeats = "edge_heartbeats.*"

func edgeHeartbeatKey(edgeID string) string { return "edge_heartbeats." + edgeID }

// checkEdgeID returns a *ValidationError of edge_id unless id is 1 to
// MaxEdgeID letters, digits, '-' or '_': a token of a key.
func checkEdgeID(id string) error {
	if id == "" || len(id) > MaxEdgeID {
		return invalid("edge_id", "must be 1 to %d bytes, and is %d", MaxEdgeID, len(id))
	}
	for _, c := range []byte(id) {
		if !('a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || c == '-' || c == '_') {
			return invalid("edge_id", "must be letters, digits, '-' and '_' only, such as a KSUID")
		}
	}
	return nil
}

// HeartbeatEdge records that the edge process edgeID is alive now, by the
// store's clock: one small key per edge. The tunnel sessions and endpoints
// an edge holds are hidden once it has not heartbeaten for EdgeTimeout, so
// an edge heartbeats before it records any, and every EdgeTimeout/3.
//
// peer is where the other edges forward the public requests of the
// endpoints the edge serves (EdgeDirectory), "" for nowhere.
//
// It returns a *ValidationError (matching ErrInvalid) for an edgeID that
// is not 1 to MaxEdgeID letters, digits, '-' or '_', or an error saying
// what failed.
func (e Edges) HeartbeatEdge(ctx context.Context, edgeID, peer string) error {
	if err := checkEdgeID(edgeID); err != nil {
		return err
	}
	if len(peer) > MaxPublicURL {
		return invalid("peer", "must be at most %d bytes, and is %d", MaxPublicURL, len(peer))
	}
	value, err := json.Marshal(edgeHeartbeat{EdgeID: edgeID, At: e.store.now(), Peer: peer})
	if err != nil {
		return fmt.Errorf("encoding the heartbeat of edge %s: %w", edgeID, err)
	}
	if _, err := e.store.kv.Put(ctx, edgeHeartbeatKey(edgeID), value); err != nil {
		return fmt.Errorf("recording the heartbeat of edge %s: %w", edgeID, err)
	}
	return nil
}

// liveEdges returns what reports whether an edge has heartbeaten within
// EdgeTimeout, reading every edge's heartbeat once.
func (s *Store) liveEdges(ctx context.Context) (func(edgeID string) bool, error) {
	beats, err := listRecords[edgeHeartbeat](ctx, s, allEdgeHeartbeats)
	if err != nil {
		return nil, fmt.Errorf("reading the edges' heartbeats: %w", err)
	}
	since := s.now().Add(-EdgeTimeout)
	alive := make(map[string]bool, len(beats))
	for _, b := range beats {
		alive[b.EdgeID] = b.At.After(since)
	}
	return func(edgeID string) bool { return alive[edgeID] }, nil
}

// hiddenOffEdge is the hidden hook of the families an edge holds: a
// resource of an edge that has not heartbeaten for EdgeTimeout is gone.
func hiddenOffEdge[T any](edgeID func(v T) string) func(ctx context.Context, s *Store) (func(v T) bool, error) {
	return func(ctx context.Context, s *Store) (func(v T) bool, error) {
		alive, err := s.liveEdges(ctx)
		if err != nil {
			return nil, err
		}
		return func(v T) bool { return !alive(edgeID(v)) }, nil
	}
}

// RemoveDeadEdgeRecords deletes every endpoint and tunnel session, of
// every account, whose edge has not heartbeaten for EdgeTimeout, then the
// heartbeats of such edges, and returns how many records it deleted.
// Several processes may run it at once; each delete is a compare-and-swap
// on the revision read, so a heartbeat or a write meanwhile keeps what it
// touched. Edges run it every EdgeTimeout or so.
func (e Edges) RemoveDeadEdgeRecords(ctx context.Context) (int, error) {
	alive, err := e.store.liveEdges(ctx)
	if err != nil {
		return 0, err
	}
	removed := 0
	var errs []error
	deleteDead := func(entry jetstream.KeyValueEntry, edgeID string) {
		if alive(edgeID) {
			return
		}
		err := e.store.kv.Delete(ctx, entry.Key(), jetstream.LastRevision(entry.Revision()))
		switch {
		case err == nil:
			removed++
		case !isRevisionMismatch(err):
			errs = append(errs, fmt.Errorf("deleting %s: %w", entry.Key(), err))
		}
	}
	for _, kind := range []string{endpoints.kind, tunnelSessions.kind} {
		err := e.store.eachEntry(ctx, kind+".>", func(entry jetstream.KeyValueEntry) {
			var held struct {
				EdgeID string `json:"edge_id"`
			}
			if err := json.Unmarshal(entry.Value(), &held); err != nil {
				errs = append(errs, fmt.Errorf("decoding %s: %w", entry.Key(), err))
				return
			}
			deleteDead(entry, held.EdgeID)
		})
		if err != nil {
			errs = append(errs, fmt.Errorf("listing %s: %w", kind, err))
		}
	}
	// The heartbeats go last: an edge without one is gone as well.
	err = e.store.eachEntry(ctx, allEdgeHeartbeats, func(entry jetstream.KeyValueEntry) {
		var b edgeHeartbeat
		if err := json.Unmarshal(entry.Value(), &b); err != nil {
			errs = append(errs, fmt.Errorf("decoding %s: %w", entry.Key(), err))
			return
		}
		if alive(b.EdgeID) {
			return
		}
		if err := e.store.kv.Delete(ctx, entry.Key(), jetstream.LastRevision(entry.Revision())); err != nil && !isRevisionMismatch(err) {
			errs = append(errs, fmt.Errorf("deleting %s: %w", entry.Key(), err))
		}
	})
	if err != nil {
		errs = append(errs, fmt.Errorf("listing the edges' heartbeats: %w", err))
	}
	return removed, errors.Join(errs...)
}
