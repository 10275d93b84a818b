package main

import (
	"fmt"
	"math"
	"strconv"
	"strings"

	"github.com/spf13/cobra"

	"github.com/sluicehq/sluice/apiwire"
	"github.com/sluicehq/sluice/client"
	"github.com/sluicehq/sluice/internal/resource"
)

// newEdgesCommand returns `sluice edges`, whose one kind is https.
func newEdgesCommand() *cobra.Command {
	return newKindsCommand("edges", "Create, list, change and delete HTTPS edges, their routes and modules through the API of a running sluice",
		newFamilyCommand(httpsEdgesFamily()))
}

// httpsEdgesFamily declares `sluice edges https`, a client of
// /edges/https, with its routes as a command of their own.
func httpsEdgesFamily() family[apiwire.HTTPSEdge, apiwire.HTTPSEdgeInput] {
	return family[apiwire.HTTPSEdge, apiwire.HTTPSEdgeInput]{
		spec: resource.HTTPSEdges(),
		kind: resourceKind{
			command: "https",
			plural:  "HTTPS edges",
			columns: []string{"ID", "CREATED_AT", "HOSTPORTS", "DESCRIPTION"},
		},
		short: "Create, list, change and delete HTTPS edges",
		long: `Manage the HTTPS edges of the account through the API of a running sluice
(/edges/https). An edge takes HTTPS traffic on its hostports, <domain>:443,
each a reserved domain of the account or a name under one of its wildcards
(reserve them first: sluice reserved-domains create). Its routes are
"sluice edges https routes", and deleting an edge deletes them.

--api-url and --api-key can be set as SLUICE_API_URL and SLUICE_API_KEY.`,
		row: func(e apiwire.HTTPSEdge) []string {
			return []string{e.ID, e.CreatedAt, strings.Join(e.Hostports, ","), e.Description}
		},
		fields: func(e apiwire.HTTPSEdge) []resourceField {
			return []resourceField{
				{"ID", e.ID}, {"URI", e.URI}, {"CREATED_AT", e.CreatedAt},
				{"DESCRIPTION", e.Description}, {"METADATA", e.Metadata},
				{"HOSTPORTS", strings.Join(e.Hostports, ",")}, {"ROUTES", routeIDs(e)},
			}
		},
		create: verbHelp{
			short:   "Create an HTTPS edge",
			long:    "Create an HTTPS edge of the account: POST /edges/https.",
			example: `  sluice edges https create --description prod --hostports app.example.com:443,a.apps.example.com:443`,
		},
		update: verbHelp{
			short:   "Change the description, metadata or hostports of an HTTPS edge",
			long:    "Change an HTTPS edge: PATCH /edges/https/ID, with only the fields whose flags are given (or that --data holds); --hostports replaces the list whole.",
			example: `  sluice edges https update edghts_... --hostports app.example.com:443`,
		},
		updateFlags: "--description, --metadata or --hostports",
		commands: func(*resourceFlags) []*cobra.Command {
			return []*cobra.Command{newFamilyCommand(httpsRoutesFamily())}
		},
	}
}

// httpsRoutesFamily declares `sluice edges https routes --edge ID`, a
// client of /edges/https/{edge_id}/routes, with the routes' modules.
func httpsRoutesFamily() family[apiwire.HTTPSEdgeRoute, apiwire.HTTPSEdgeRouteInput] {
	return family[apiwire.HTTPSEdgeRoute, apiwire.HTTPSEdgeRouteInput]{
		spec: resource.HTTPSEdgeRoutes(),
		parent: &parentFlag[apiwire.HTTPSEdgeRoute, apiwire.HTTPSEdgeRouteInput]{
			flag: "edge", usage: "the id of the HTTPS edge of the routes (edghts_...)",
			collection: (*client.Client).HTTPSEdgeRoutes,
		},
		kind: resourceKind{
			command: "routes",
			plural:  "routes of an HTTPS edge",
			columns: []string{"ID", "CREATED_AT", "MATCH_TYPE", "MATCH", "MODULES"},
		},
		short: "Create, list, change and delete the routes of an HTTPS edge, and set their modules",
		long: `Manage the routes of an HTTPS edge, --edge, through the API of a running
sluice (/edges/https/{edge_id}/routes). A route takes the requests whose
path is its match (match type exact_path) or starts with it (path_prefix);
no two routes of an edge have one match type and match. Its modules are set
with "circuit-breaker", "websocket-tcp-converter", "backend" (the tunnel
group backend that takes its requests) and "traffic-policy".

--api-url and --api-key can be set as SLUICE_API_URL and SLUICE_API_KEY.`,
		row: func(r apiwire.HTTPSEdgeRoute) []string {
			return []string{r.ID, r.CreatedAt, r.MatchType, r.Match, modulesOf(r)}
		},
		fields: func(r apiwire.HTTPSEdgeRoute) []resourceField {
			return []resourceField{
				{"ID", r.ID}, {"URI", r.URI}, {"EDGE_ID", r.EdgeID}, {"CREATED_AT", r.CreatedAt},
				{"DESCRIPTION", r.Description}, {"METADATA", r.Metadata},
				{"MATCH_TYPE", r.MatchType}, {"MATCH", r.Match}, {"MODULES", modulesOf(r)},
			}
		},
		create: verbHelp{
			short:   "Create a route of an HTTPS edge",
			long:    "Create a route of the HTTPS edge --edge: POST /edges/https/{edge_id}/routes. It has no module until one is set.",
			example: `  sluice edges https routes create --edge edghts_... --match-type path_prefix --match /api`,
		},
		update: verbHelp{
			short:   "Change the description, metadata, match type or match of a route",
			long:    "Change a route: PATCH /edges/https/{edge_id}/routes/ID, with only the fields whose flags are given (or that --data holds).",
			example: `  sluice edges https routes update edghtsrt_... --edge edghts_... --match /v2`,
		},
		updateFlags: "--description, --metadata, --match-type or --match",
		commands: func(f *resourceFlags) []*cobra.Command {
			return []*cobra.Command{newCircuitBreakerCommand(f), newWebsocketTCPConverterCommand(f), newRouteBackendCommand(f), newRouteTrafficPolicyCommand(f)}
		},
	}
}

// routeIDs are the ids of the edge's routes, oldest first.
func routeIDs(e apiwire.HTTPSEdge) string {
	ids := make([]string, len(e.Routes))
	for i, r := range e.Routes {
		ids[i] = r.ID
	}
	return strings.Join(ids, ",")
}

// modulesOf names the route's modules that are set, enabled or not.
func modulesOf(r apiwire.HTTPSEdgeRoute) string {
	var set []string
	if c := r.CircuitBreaker; c != nil {
		set = append(set, "circuit_breaker"+enabledMark(c.Enabled))
	}
	if c := r.WebsocketTCPConverter; c != nil {
		set = append(set, "websocket_tcp_converter"+enabledMark(c.Enabled))
	}
	if b := r.Backend; b != nil {
		set = append(set, "backend"+enabledMark(b.Enabled))
	}
	if p := r.TrafficPolicy; p != nil {
		set = append(set, "traffic_policy"+enabledMark(p.Enabled))
	}
	return strings.Join(set, ",")
}

func enabledMark(enabled bool) string {
	if enabled {
		return ""
	}
	return "(disabled)"
}

// moduleCommand declares the commands of a module of a route: set, get
// and delete, with a flag for each field of the module.
type moduleCommand[T any] struct {
	name, noun string // "circuit-breaker", "circuit breaker"
	path       string // the last segment of its path: client.CircuitBreakerModule
	// module is the module of a route in the client, whose Put takes a
	// body of the flags given.
	module  func(c *client.Client, edgeID, routeID string) client.Module[T, map[string]any]
	flags   []moduleFlag
	fields  func(T) []resourceField
	example string
}

// moduleFlag is a flag that sets a field of a module's body.
type moduleFlag struct {
	name, usage string
	// parse returns the field's value of the flag's text.
	parse func(text string) (any, error)
}

func (m moduleCommand[T]) command(f *resourceFlags) *cobra.Command {
	cmd := &cobra.Command{
		Use:   m.name,
		Short: "Set, show or remove the " + m.noun + " of a route",
		Args:  cobra.NoArgs,
	}
	module := func(cmd *cobra.Command, routeID string) (client.Module[T, map[string]any], error) {
		c, err := f.client(cmd.ErrOrStderr())
		if err != nil {
			return client.Module[T, map[string]any]{}, err
		}
		edge, _ := cmd.Flags().GetString("edge") // --edge of routes, required there
		return m.module(c, edge, routeID), nil
	}
	values := make([]string, len(m.flags))
	set := &cobra.Command{
		Use:   "set ROUTE_ID",
		Short: "Set the " + m.noun + " of a route, replacing the one set; a flag not given takes its default",
		Long: fmt.Sprintf(`Set the %s of the route: PUT /edges/https/{edge_id}/routes/ID/%s.
The module is replaced whole: a field whose flag is not given takes its
default.`, m.noun, m.path),
		Example: m.example,
		Args:    cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			body := map[string]any{}
			for i, fl := range m.flags {
				if !flagGiven(cmd.Flags(), fl.name) {
					continue
				}
				v, err := fl.parse(values[i])
				if err != nil {
					return fmt.Errorf("--%s %q: %w", fl.name, values[i], err)
				}
				body[strings.ReplaceAll(fl.name, "-", "_")] = v
			}
			mod, err := module(cmd, args[0])
			if err != nil {
				return err
			}
			a, err := answerOf(func(opts ...client.CallOption) (T, error) { return mod.Put(cmd.Context(), body, opts...) })
			if err != nil {
				return err
			}
			return a.print(cmd.OutOrStdout(), m.fields, f.json)
		},
	}
	for i, fl := range m.flags {
		set.Flags().StringVar(&values[i], fl.name, "", fl.usage)
	}
	get := &cobra.Command{
		Use:   "get ROUTE_ID",
		Short: "Show the " + m.noun + " of a route",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			mod, err := module(cmd, args[0])
			if err != nil {
				return err
			}
			a, err := answerOf(func(opts ...client.CallOption) (T, error) { return mod.Get(cmd.Context(), opts...) })
			if err != nil {
				return err
			}
			return a.print(cmd.OutOrStdout(), m.fields, f.json)
		},
	}
	del := &cobra.Command{
		Use:   "delete ROUTE_ID",
		Short: "Remove the " + m.noun + " of a route",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			mod, err := module(cmd, args[0])
			if err != nil {
				return err
			}
			if err := mod.Delete(cmd.Context()); err != nil {
				return err
			}
			fmt.Fprintf(cmd.ErrOrStderr(), "removed the %s of %s\n", m.noun, args[0])
			return nil
		},
	}
	cmd.AddCommand(set, get, del)
	return cmd
}

// parseBool, parseUint32 and parseFloat read a module flag's value; the
// API checks its range.
func parseBool(text string) (any, error) { return strconv.ParseBool(text) }

func parseUint32(text string) (any, error) {
	n, err := strconv.ParseUint(text, 10, 32)
	if err != nil {
		return nil, fmt.Errorf("want a whole number from 0 to %d", uint32(1<<32-1))
	}
	return n, nil
}

func parseFloat(text string) (any, error) {
	n, err := strconv.ParseFloat(text, 64)
	if err != nil || math.IsNaN(n) || math.IsInf(n, 0) {
		return nil, fmt.Errorf("want a number such as 0.5")
	}
	return n, nil
}

// newCircuitBreakerCommand returns `sluice edges https routes
// circuit-breaker`.
func newCircuitBreakerCommand(f *resourceFlags) *cobra.Command {
	return moduleCommand[apiwire.CircuitBreaker]{
		name: "circuit-breaker", noun: "circuit breaker", path: apiwire.CircuitBreakerModule,
		module: func(c *client.Client, edgeID, routeID string) client.Module[apiwire.CircuitBreaker, map[string]any] {
			return client.ModuleWithBody[map[string]any](c.CircuitBreaker(edgeID, routeID))
		},
		flags: []moduleFlag{
			{"enabled", "whether it applies to traffic (default true)", parseBool},
			{"tripped-duration", "seconds to wait after the circuit trips before checking the upstream again, above 0 (default 10)", parseUint32},
			{"rolling-window", "seconds of the window its metrics are kept for, above 0 (default 10)", parseUint32},
			{"num-buckets", "buckets the window's metrics are kept in, 1 to 128 (default 10)", parseUint32},
			{"volume-threshold", "requests of a window that can trip the circuit (default 20)", parseUint32},
			{"error-threshold-percentage", "share of errors that trips the circuit, 0 to 1.0, not 0 to 100 (default 0.5)", parseFloat},
		},
		fields: func(c apiwire.CircuitBreaker) []resourceField {
			return []resourceField{
				{"ENABLED", strconv.FormatBool(c.Enabled)},
				{"TRIPPED_DURATION", strconv.FormatUint(uint64(c.TrippedDuration), 10)},
				{"ROLLING_WINDOW", strconv.FormatUint(uint64(c.RollingWindow), 10)},
				{"NUM_BUCKETS", strconv.FormatUint(uint64(c.NumBuckets), 10)},
				{"VOLUME_THRESHOLD", strconv.FormatUint(uint64(c.VolumeThreshold), 10)},
				{"ERROR_THRESHOLD_PERCENTAGE", strconv.FormatFloat(c.ErrorThresholdPercentage, 'g', -1, 64)},
			}
		},
		example: `  sluice edges https routes circuit-breaker set edghtsrt_... --edge edghts_... --error-threshold-percentage 0.25`,
	}.command(f)
}

// newWebsocketTCPConverterCommand returns `sluice edges https routes
// websocket-tcp-converter`.
func newWebsocketTCPConverterCommand(f *resourceFlags) *cobra.Command {
	return moduleCommand[apiwire.WebsocketTCPConverter]{
		name: "websocket-tcp-converter", noun: "websocket TCP converter", path: apiwire.WebsocketTCPConverterModule,
		module: func(c *client.Client, edgeID, routeID string) client.Module[apiwire.WebsocketTCPConverter, map[string]any] {
			return client.ModuleWithBody[map[string]any](c.WebsocketTCPConverter(edgeID, routeID))
		},
		flags: []moduleFlag{{"enabled", "whether it applies to traffic (default true)", parseBool}},
		fields: func(c apiwire.WebsocketTCPConverter) []resourceField {
			return []resourceField{{"ENABLED", strconv.FormatBool(c.Enabled)}}
		},
		example: `  sluice edges https routes websocket-tcp-converter set edghtsrt_... --edge edghts_...`,
	}.command(f)
}
