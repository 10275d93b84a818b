package main

import (
	"fmt"
	"net/netip"
	"strings"

	"github.com/spf13/pflag"

	"github.com/sluicehq/sluice/internal/api"
	"github.com/sluicehq/sluice/internal/dnsname"
)

// domainFlags are the service's own domains, --service-domains: a
// reserved domain may be a name under one but never one, nor a wildcard
// covering one, and the CNAME targets of custom domains are names under
// the first.
type domainFlags struct {
	serviceDomains []string
}

func (f *domainFlags) register(fl *pflag.FlagSet) {
	fl.StringSliceVar(&f.serviceDomains, "service-domains", api.DefaultServiceDomains, "the service's own domains, comma-separated: accounts reserve names under them, never them; custom domains' CNAME targets are names under the first")
}

// validate returns what is wrong with --service-domains, and lower-cases
// them. None takes the default (api.Config.ServiceDomains). A service
// domain may be a public suffix (an operator may list its domain in the
// Public Suffix List's private section), never an IP address.
func (f *domainFlags) validate() error {
	for i, d := range f.serviceDomains {
		clean, err := dnsname.Check(d, dnsname.Pattern)
		if _, notAddress := netip.ParseAddr(strings.Trim(clean, "[]")); err != nil || notAddress == nil {
			return fmt.Errorf("--service-domains %q is not a fully qualified domain name such as sluice.app", d)
		}
		f.serviceDomains[i] = clean
	}
	return nil
}
