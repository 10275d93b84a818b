package main

import (
	"maps"
	"slices"
	"strconv"
	"strings"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/sluicehq/sluice/apiwire"
	"github.com/sluicehq/sluice/client"
	"github.com/sluicehq/sluice/internal/resource"
)

// newBackendsCommand returns `sluice backends`, whose one kind is
// tunnel-group.
func newBackendsCommand() *cobra.Command {
	return newKindsCommand("backends", "Create, list, change and delete the backends of HTTPS edge routes through the API of a running sluice",
		newFamilyCommand(tunnelGroupBackendsFamily()))
}

// newKindsCommand returns a command, use, that does nothing itself but
// hold the commands of the kinds of a resource, such as `sluice edges
// https`.
func newKindsCommand(use, short string, kinds ...*cobra.Command) *cobra.Command {
	cmd := &cobra.Command{Use: use, Short: short, Args: cobra.NoArgs}
	cmd.AddCommand(kinds...)
	return cmd
}

// tunnelGroupBackendsFamily declares `sluice backends tunnel-group`, a
// client of /backends/tunnel_group.
func tunnelGroupBackendsFamily() family[apiwire.TunnelGroupBackend, apiwire.TunnelGroupBackendInput] {
	return family[apiwire.TunnelGroupBackend, apiwire.TunnelGroupBackendInput]{
		spec: resource.TunnelGroupBackends(),
		kind: resourceKind{
			command: "tunnel-group",
			plural:  "tunnel group backends",
			columns: []string{"ID", "CREATED_AT", "LABELS", "TUNNELS", "DESCRIPTION"},
		},
		short: "Create, list, change and delete tunnel group backends",
		long: `Manage the tunnel group backends of the account through the API of a running
sluice (/backends/tunnel_group). A backend is a set of labels; its tunnels are
the account's labeled tunnels whose labels include all of them, which agents
bind (sluice-agent's labeled tunnels, or an SDK's labeled listener). A route
of an HTTPS edge sends its requests to a backend: "sluice edges https routes
backend set".

--api-url and --api-key can be set as SLUICE_API_URL and SLUICE_API_KEY.`,
		row: func(b apiwire.TunnelGroupBackend) []string {
			return []string{b.ID, b.CreatedAt, labelsText(b.Labels), strconv.Itoa(len(b.Tunnels)), b.Description}
		},
		fields: func(b apiwire.TunnelGroupBackend) []resourceField {
			tunnels := make([]string, len(b.Tunnels))
			for i, r := range b.Tunnels {
				tunnels[i] = r.ID
			}
			return []resourceField{
				{"ID", b.ID}, {"URI", b.URI}, {"CREATED_AT", b.CreatedAt},
				{"DESCRIPTION", b.Description}, {"METADATA", b.Metadata},
				{"LABELS", labelsText(b.Labels)}, {"TUNNELS", strings.Join(tunnels, ",")},
			}
		},
		body: func() bodyHook[apiwire.TunnelGroupBackend] { return &labelFlags{} },
		create: verbHelp{
			short:   "Create a tunnel group backend",
			long:    "Create a tunnel group backend of the account: POST /backends/tunnel_group. --labels is required.",
			example: `  sluice backends tunnel-group create --labels env=prod,app=web --description "web, production"`,
		},
		update: verbHelp{
			short:   "Change the description, metadata or labels of a tunnel group backend",
			long:    "Change a tunnel group backend: PATCH /backends/tunnel_group/ID, with only the fields whose flags are given (or that --data holds); --labels replaces the labels whole.",
			example: `  sluice backends tunnel-group update bkdtg_... --labels env=staging,app=web`,
		},
		updateFlags: "--description, --metadata or --labels",
	}
}

// labelsText returns the labels as name=value, sorted by name, separated
// by commas.
func labelsText(labels map[string]string) string {
	pairs := make([]string, 0, len(labels))
	for _, name := range slices.Sorted(maps.Keys(labels)) {
		pairs = append(pairs, name+"="+labels[name])
	}
	return strings.Join(pairs, ",")
}

// labelFlags sets labels with --labels name=value,....
type labelFlags struct{ labels map[string]string }

func (l *labelFlags) register(fl *pflag.FlagSet) {
	fl.StringToStringVar(&l.labels, "labels", nil, "the labels that select the backend's tunnels, name=value separated by commas, 1 to 10: names of lowercase letters, digits, '-', '_' and '.'; values of printable ASCII without spaces")
}

func (l *labelFlags) apply(fl *pflag.FlagSet, body map[string]any, _ func() (apiwire.TunnelGroupBackend, error)) error {
	if fl.Changed("labels") {
		body["labels"] = l.labels
	}
	return nil
}

// newRouteBackendCommand returns `sluice edges https routes backend`.
func newRouteBackendCommand(f *resourceFlags) *cobra.Command {
	return moduleCommand[apiwire.RouteBackend]{
		name: "backend", noun: "backend", path: apiwire.BackendModule,
		module: func(c *client.Client, edgeID, routeID string) client.Module[apiwire.RouteBackend, map[string]any] {
			return client.ModuleWithBody[map[string]any](c.RouteBackend(edgeID, routeID))
		},
		flags: []moduleFlag{
			{"backend-id", "the tunnel group backend whose tunnels take the route's requests (bkdtg_...); required", parseText},
			{"enabled", "whether it applies to traffic (default true)", parseBool},
		},
		fields: func(b apiwire.RouteBackend) []resourceField {
			return []resourceField{{"ENABLED", strconv.FormatBool(b.Enabled)}, {"BACKEND_ID", b.Backend.ID}, {"BACKEND_URI", b.Backend.URI}}
		},
		example: `  sluice edges https routes backend set edghtsrt_... --edge edghts_... --backend-id bkdtg_...`,
	}.command(f)
}

// newRouteTrafficPolicyCommand returns `sluice edges https routes
// traffic-policy`.
func newRouteTrafficPolicyCommand(f *resourceFlags) *cobra.Command {
	return moduleCommand[apiwire.RouteTrafficPolicy]{
		name: "traffic-policy", noun: "traffic policy", path: apiwire.TrafficPolicyModule,
		module: func(c *client.Client, edgeID, routeID string) client.Module[apiwire.RouteTrafficPolicy, map[string]any] {
			return client.ModuleWithBody[map[string]any](c.RouteTrafficPolicy(edgeID, routeID))
		},
		flags: []moduleFlag{
			{"value", "the policy document, YAML or JSON, with on_http_request and on_http_response rules; required (check one first with sluice policy check)", parseText},
			{"enabled", "whether it applies to traffic (default true)", parseBool},
		},
		fields: func(p apiwire.RouteTrafficPolicy) []resourceField {
			return []resourceField{{"ENABLED", strconv.FormatBool(p.Enabled)}, {"VALUE", p.Value}}
		},
		example: `  sluice edges https routes traffic-policy set edghtsrt_... --edge edghts_... --value "$(cat policy.yml)"`,
	}.command(f)
}

// parseText reads a module flag's text as it is; the API checks it.
func parseText(text string) (any, error) { return text, nil }
