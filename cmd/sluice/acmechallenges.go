package main

import (
	"context"
	"fmt"
	"strings"

	"github.com/spf13/cobra"

	"github.com/sluicehq/sluice/internal/store"
	"github.com/sluicehq/sluice/schemas"
)

// newACMEChallengesCommand is `sluice acme-challenges`: the TXT values of
// ACME DNS-01 challenges that the DNS servers of serve --dns-listen answer
// at a custom wildcard domain's acme_challenge_cname_target, written in
// the store through the NATS server of a running sluice. It is for an
// operator issuing a certificate by hand (certbot --manual, its
// --manual-auth-hook and --manual-cleanup-hook), and for checking a
// delegation before sluice issues certificates itself.
func newACMEChallengesCommand() *cobra.Command {
	var f accountsFlags
	cmd := &cobra.Command{
		Use:   "acme-challenges",
		Short: "Add and remove the TXT values of ACME DNS-01 challenges that serve --dns-listen answers, through the NATS server of a running sluice",
		Args:  cobra.NoArgs,
	}
	f.registerNATS(cmd.PersistentFlags())
	for _, c := range []struct {
		use, short, done string
		change           func(store.Certificates, context.Context, string, string) error
	}{
		{"add", "Add a TXT value to <token>.acme.<first service domain>, the acme_challenge_cname_target of the reserved domain", "added", store.Certificates.AddACMEChallenge},
		{"remove", "Remove a TXT value from <token>.acme.<first service domain>", "removed", store.Certificates.RemoveACMEChallenge},
	} {
		cmd.AddCommand(&cobra.Command{
			Use:   c.use + " RESERVED_DOMAIN_ID|TOKEN VALUE",
			Short: c.short,
			Args:  cobra.ExactArgs(2),
			RunE: func(cmd *cobra.Command, args []string) error {
				token := challengeToken(args[0])
				return withAccountStore(cmd.Context(), f, func(ctx context.Context, st *store.Store) error {
					if err := c.change(st.Certificates(), ctx, token, args[1]); err != nil {
						return err
					}
					_, err := fmt.Fprintf(cmd.OutOrStdout(), "%s %q: token %s\n", c.done, args[1], token)
					return err
				})
			},
		})
	}
	return cmd
}

// challengeToken returns the token of target: the reserved domain's, for
// an id (rd_...), or target itself.
func challengeToken(target string) string {
	if strings.HasPrefix(target, schemas.PrefixReservedDomain) {
		return store.DomainToken(target)
	}
	return target
}
