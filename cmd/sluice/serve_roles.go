package main

import (
	"fmt"
	"strings"
)

// The roles of a serve process, the values of --roles.
const (
	roleAPI    = "api"    // the management API: destinations, subscriptions, API keys
	roleIngest = "ingest" // POST /events
	roleWorker = "worker" // the route reconciler and delivery
	roleEdge   = "edge"   // agents' sessions and their endpoints' public traffic
)

// allRoles are the roles, in the order they are shown.
func allRoles() []string { return []string{roleAPI, roleIngest, roleWorker, roleEdge} }

// defaultRoles is the default of --roles: every role but the edge, which
// serve adds where it knows where agents connect (settleEdge).
func defaultRoles() []string { return []string{roleAPI, roleIngest, roleWorker} }

// serveRoles says which roles a serve process runs. Every process serves
// /healthz, /readyz and /metrics, whatever its roles.
type serveRoles struct {
	api, ingest, worker, edge bool
}

// parseRoles reads the values of --roles, such as ["api", "ingest"].
// Blank values are skipped; an unknown role, or none at all, is an error.
func parseRoles(names []string) (serveRoles, error) {
	var r serveRoles
	for _, name := range names {
		switch strings.ToLower(strings.TrimSpace(name)) {
		case roleAPI:
			r.api = true
		case roleIngest:
			r.ingest = true
		case roleWorker:
			r.worker = true
		case roleEdge:
			r.edge = true
		case "":
		default:
			return serveRoles{}, fmt.Errorf("--roles: unknown role %q: the roles are %s, comma-separated", name, strings.Join(allRoles(), ", "))
		}
	}
	if r == (serveRoles{}) {
		return serveRoles{}, fmt.Errorf("--roles is empty: give one or more of %s, comma-separated (all of them by default)", strings.Join(allRoles(), ", "))
	}
	return r, nil
}

// String returns the roles as --roles takes them, such as "api,worker".
func (r serveRoles) String() string {
	var names []string
	for _, role := range []struct {
		name string
		on   bool
	}{{roleAPI, r.api}, {roleIngest, r.ingest}, {roleWorker, r.worker}, {roleEdge, r.edge}} {
		if role.on {
			names = append(names, role.name)
		}
	}
	return strings.Join(names, ",")
}
