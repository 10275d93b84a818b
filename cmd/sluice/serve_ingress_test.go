package main

import (
	"slices"
	"testing"

	"github.com/spf13/pflag"

	"github.com/sluicehq/sluice/internal/api"
	"github.com/sluicehq/sluice/internal/check"
	"github.com/sluicehq/sluice/internal/store"
)

// TestIngressFlags: --ingress-ns-targets, --regions and --service-domains
// (or their SLUICE_ variables) make the API's configuration of agent
// ingresses, in lower case, with the documented defaults; names that are
// not domain names, and --max-agent-ingresses below 0, are refused.
func TestIngressFlags(t *testing.T) {
	parse := func(t *testing.T, args ...string) (ingressFlags, domainFlags, limitFlags) {
		t.Helper()
		var (
			f ingressFlags
			d domainFlags
			l limitFlags
		)
		fl := pflag.NewFlagSet("serve", pflag.ContinueOnError)
		f.register(fl)
		d.register(fl)
		l.register(fl)
		if err := fl.Parse(args); err != nil {
			t.Fatal(err)
		}
		if err := flagsFromEnv(fl); err != nil {
			t.Fatal(err)
		}
		return f, d, l
	}
	f, d, l := parse(t)
	if c := f.config(d.serviceDomains); !slices.Equal(c.NSTargets, api.DefaultIngressNSTargets) || !slices.Equal(c.Regions, api.DefaultRegions) || !slices.Equal(c.ServiceDomains, api.DefaultServiceDomains) ||
		l.storeLimits().AgentIngresses != store.DefaultMaxAgentIngresses {
		t.Fatalf("defaults: %+v, %d", c, l.storeLimits().AgentIngresses)
	}
	f, d, l = parse(t, "--ingress-ns-targets", "NS1.Example.net,ns2.example.net.", "--regions", "us,EU", "--service-domains", "tunnels.example", "--max-agent-ingresses", "7")
	if c := f.config(d.serviceDomains); !slices.Equal(c.NSTargets, []string{"ns1.example.net", "ns2.example.net"}) || !slices.Equal(c.Regions, []string{"us", "eu"}) ||
		!slices.Equal(c.ServiceDomains, []string{"tunnels.example"}) || l.storeLimits().AgentIngresses != 7 || f.validate() != nil {
		t.Fatalf("from the flags: %+v, %v", c, f.validate())
	}
	t.Setenv("SLUICE_REGIONS", "ap")
	if f, _, _ := parse(t); !slices.Equal(f.config(nil).Regions, []string{"ap"}) {
		t.Fatalf("SLUICE_REGIONS: %v", f.config(nil).Regions)
	}
	f, _, _ = parse(t, "--regions", "us.east", "--ingress-ns-targets", "ns_1.example.net")
	err := f.validate()
	check.ErrorContains(t, err, `--regions "us.east"`)
	check.ErrorContains(t, err, "--ingress-ns-targets")
	_, _, l = parse(t, "--max-agent-ingresses", "-1")
	if errs := l.validate(); len(errs) != 1 {
		t.Fatalf("--max-agent-ingresses -1: %v", errs)
	}
}
