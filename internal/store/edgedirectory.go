package store

import (
	"context"
	"encoding/json"
	"log/slog"
	"net"
	"strings"
	"sync"

	"github.com/nats-io/nats.go/jetstream"
)

// EdgeDirectory knows which edge process serves each HTTP and HTTPS
// endpoint and each labeled tunnel, and where the other edges reach it (HeartbeatEdge's peer), from
// a watch of the endpoints and the edges' heartbeats: an edge that takes a
// public request for a host its own agents do not serve asks it where to
// forward the request (edge.Peers). It forgets everything while it does
// not watch, and knows only edges that heartbeat within EdgeTimeout.
//
// Run it with Run; it is safe for concurrent use.
type EdgeDirectory struct {
	s    *Store
	self string // this edge's id, never an answer

	mu        sync.Mutex
	endpoints map[string]directoryEndpoint   // by the endpoint's key
	hosts     map[string]map[string]struct{} // keys of the endpoints, by "scheme host"
	edges     map[string]edgeHeartbeat       // by edge id
	// labeled are the labeled tunnels, by account and by key.
	labeled map[string]map[string]directoryTunnel
}

type directoryTunnel struct {
	labels map[string]string
	edgeID string
}

type directoryEndpoint struct {
	host, edgeID, accountID string // host is "scheme host"
}

// NewEdgeDirectory returns the directory an edge (edgeID) reads; it knows
// nothing until Run has read the store.
func (e Edges) NewEdgeDirectory(edgeID string) *EdgeDirectory {
	d := &EdgeDirectory{s: e.store, self: edgeID}
	d.reset()
	return d
}

func (d *EdgeDirectory) reset() {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.endpoints = make(map[string]directoryEndpoint)
	d.hosts = make(map[string]map[string]struct{})
	d.edges = make(map[string]edgeHeartbeat)
	d.labeled = make(map[string]map[string]directoryTunnel)
}

// Find returns the peer address of a live edge other than this one that
// serves the endpoint of the scheme ("http" or "https") at host, and the
// account of the endpoint.
func (d *EdgeDirectory) Find(scheme, host string) (peer, accountID string, ok bool) {
	since := d.s.now().Add(-EdgeTimeout)
	d.mu.Lock()
	defer d.mu.Unlock()
	for key := range d.hosts[scheme+" "+strings.ToLower(host)] {
		ep := d.endpoints[key]
		if beat, ok := d.edges[ep.edgeID]; ok && ep.edgeID != d.self && beat.Peer != "" && beat.At.After(since) {
			return beat.Peer, ep.accountID, true
		}
	}
	return "", "", false
}

// FindLabeled returns the peer address of a live edge other than this one
// that serves a labeled tunnel of the account whose labels selects.
func (d *EdgeDirectory) FindLabeled(accountID string, selects func(labels map[string]string) bool) (string, bool) {
	since := d.s.now().Add(-EdgeTimeout)
	d.mu.Lock()
	defer d.mu.Unlock()
	for _, t := range d.labeled[accountID] {
		if beat, ok := d.edges[t.edgeID]; ok && t.edgeID != d.self && beat.Peer != "" && beat.At.After(since) && selects(t.labels) {
			return beat.Peer, true
		}
	}
	return "", false
}

// Run watches the endpoints and the edges' heartbeats until ctx ends,
// watching again when a watch ends (it knows nothing meanwhile).
func (d *EdgeDirectory) Run(ctx context.Context, log *slog.Logger) {
	d.s.followKeys(ctx, log, "endpoints for forwarding between edges (requests for other edges' endpoints get 404 meanwhile)",
		[]string{endpointsKind + ".>", allEdgeHeartbeats}, nil, keyFollower{
			entry: func(entry jetstream.KeyValueEntry) {
				if entry != nil { // nil: the initial values are in
					d.apply(entry)
				}
			},
			ended: d.reset,
		})
}

// apply takes one change of an endpoint or a heartbeat.
func (d *EdgeDirectory) apply(entry jetstream.KeyValueEntry) {
	d.mu.Lock()
	defer d.mu.Unlock()
	key := entry.Key()
	deleted := entry.Operation() != jetstream.KeyValuePut
	if edgeID, ok := strings.CutPrefix(key, "edge_heartbeats."); ok {
		var beat edgeHeartbeat
		if deleted || json.Unmarshal(entry.Value(), &beat) != nil {
			delete(d.edges, edgeID)
			return
		}
		d.edges[edgeID] = beat
		return
	}
	if account, _, ok := strings.Cut(strings.TrimPrefix(key, endpointsKind+"."), "."); ok && d.labeled[account] != nil {
		delete(d.labeled[account], key)
		if len(d.labeled[account]) == 0 {
			delete(d.labeled, account)
		}
	}
	if old, ok := d.endpoints[key]; ok {
		delete(d.endpoints, key)
		delete(d.hosts[old.host], key)
		if len(d.hosts[old.host]) == 0 {
			delete(d.hosts, old.host)
		}
	}
	var e Endpoint
	if deleted || json.Unmarshal(entry.Value(), &e) != nil {
		return
	}
	if e.Proto == ProtoLabeled {
		if d.labeled[e.AccountID] == nil {
			d.labeled[e.AccountID] = make(map[string]directoryTunnel)
		}
		d.labeled[e.AccountID][key] = directoryTunnel{labels: e.Labels, edgeID: e.EdgeID}
		return
	}
	if e.Proto != "http" && e.Proto != "https" {
		return
	}
	host, _, err := net.SplitHostPort(e.Hostport)
	if err != nil {
		return
	}
	at := e.Proto + " " + strings.ToLower(host)
	d.endpoints[key] = directoryEndpoint{host: at, edgeID: e.EdgeID, accountID: e.AccountID}
	if d.hosts[at] == nil {
		d.hosts[at] = make(map[string]struct{})
	}
	d.hosts[at][key] = struct{}{}
}
