package main

import (
	"errors"
	"fmt"
	"strings"

	"github.com/spf13/pflag"

	"github.com/sluicehq/sluice/internal/api"
	"github.com/sluicehq/sluice/internal/dnsname"
)

// ingressFlags are the operator's configuration that agent ingresses show:
// the service's name servers and its regions. The service's own domains,
// which no agent ingress may have, are --service-domains (domainFlags),
// which reserved domains read too.
type ingressFlags struct {
	nsTargets []string
	regions   []string
}

func (f *ingressFlags) register(fl *pflag.FlagSet) {
	fl.StringSliceVar(&f.nsTargets, "ingress-ns-targets", api.DefaultIngressNSTargets, "the service's name servers, which agent ingresses show as ns_targets (the NS records delegating their domain), and which no account may reserve or hold a name under; comma-separated")
	fl.StringSliceVar(&f.regions, "regions", api.DefaultRegions, "the regions the service runs: an agent ingress of domain D shows tunnel.<region>.D for each in region_domains, existing ones included; comma-separated")
}

// validate returns what is wrong with the flags, each with what to do.
func (f ingressFlags) validate() error {
	var errs []error
	for _, list := range []struct {
		flag   string
		values []string
	}{{"--ingress-ns-targets", f.nsTargets}} {
		for _, v := range list.values {
			if _, err := dnsname.Check(v, 0); err != nil {
				errs = append(errs, fmt.Errorf("%s %q %w", list.flag, v, err))
			}
		}
	}
	for _, region := range f.regions {
		if _, err := dnsname.Check("tunnel."+region+".example.com", 0); err != nil || strings.Contains(region, ".") {
			errs = append(errs, fmt.Errorf("--regions %q: give a region name of a to z, 0 to 9 and hyphens, such as us or us-cal-1", region))
		}
	}
	return errors.Join(errs...)
}

// config is the API's configuration of agent ingresses, names in lower
// case, with the service's own domains serviceDomains.
func (f ingressFlags) config(serviceDomains []string) api.IngressConfig {
	lower := func(values []string) []string {
		out := make([]string, len(values))
		for i, v := range values {
			out[i] = strings.ToLower(strings.TrimSuffix(v, "."))
		}
		return out
	}
	return api.IngressConfig{NSTargets: lower(f.nsTargets), Regions: lower(f.regions), ServiceDomains: lower(serviceDomains)}
}
