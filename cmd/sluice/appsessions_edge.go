package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/sluicehq/sluice/appsession"
	"github.com/sluicehq/sluice/schemas"
)

// edgeSessionFlags are the flags of the commands that act as the edge
// does, over NATS rather than through the API: the NATS server and the
// account.
type edgeSessionFlags struct {
	nats      accountsFlags // --nats-url, --nats-creds, --nats-nkey, --nats-tls-*, --json
	accountID string
}

func (f *edgeSessionFlags) register(fl *pflag.FlagSet) {
	f.nats.register(fl)
	fl.StringVar(&f.accountID, "account-id", "", "the account of the session (ac_...; required), as the edge names it")
}

// with connects to --nats-url and calls use with a client of the
// session service.
func (f edgeSessionFlags) with(ctx context.Context, use func(context.Context, *appsession.Client) error) error {
	if err := f.nats.validate(); err != nil {
		return err
	}
	if f.accountID == "" {
		return errors.New("--account-id is empty: give the account's id (ac_...), as sluice accounts list shows it")
	}
	security, err := f.nats.security.options()
	if err != nil {
		return err
	}
	opts := append([]nats.Option{nats.Name("sluice app-sessions"), nats.Timeout(accountsConnectTimeout)}, security...)
	nc, err := nats.Connect(f.nats.natsURL, opts...)
	if err != nil {
		return fmt.Errorf("connecting to --nats-url %s: %w: %s", f.nats.natsURL, err, connectHint(err))
	}
	defer nc.Close()
	ctx, cancel := context.WithTimeout(ctx, accountsStoreTimeout)
	defer cancel()
	return use(ctx, appsession.New(nc))
}

// print prints the session the service answered with, its times in the
// one layout of every time the CLI and the API show.
func (f edgeSessionFlags) print(out io.Writer, s appsession.Session) error {
	shown := struct {
		ID         string `json:"id"`
		AccountID  string `json:"account_id"`
		CreatedAt  string `json:"created_at"`
		LastActive string `json:"last_active"`
		ExpiresAt  string `json:"expires_at"`
	}{s.ID, s.AccountID, s.CreatedAt.UTC().Format(schemas.TimeLayout), s.LastActive.UTC().Format(schemas.TimeLayout), s.ExpiresAt.UTC().Format(schemas.TimeLayout)}
	if f.nats.json {
		return json.NewEncoder(out).Encode(shown)
	}
	return printFields(out, []resourceField{{"ID", shown.ID}, {"ACCOUNT_ID", shown.AccountID}, {"CREATED_AT", shown.CreatedAt},
		{"LAST_ACTIVE", shown.LastActive}, {"EXPIRES_AT", shown.ExpiresAt}})
}

// edgeSessionCommands returns record, refresh and end: what the edge does
// with package appsession, for trying the API's sessions before an edge
// records real ones.
func edgeSessionCommands() []*cobra.Command {
	return []*cobra.Command{newSessionRecordCommand(), newSessionRefreshCommand(), newSessionEndCommand()}
}

func newSessionRecordCommand() *cobra.Command {
	var (
		f         edgeSessionFlags
		in        appsession.RecordRequest
		expiresIn time.Duration
	)
	cmd := &cobra.Command{
		Use:   "record --account-id ac_... --public-url URL --ip-address IP",
		Short: "Record a session as the edge does when a user logs in, over NATS (not through the API)",
		Long: `Record an application session as the edge does, over the NATS server of a
running sluice (--nats-url), with package appsession (docs/app-sessions.md):
for trying /app/sessions before an edge records real sessions. The
application user and endpoint ids are new ones unless given.`,
		Example: `  sluice app-sessions record --nats-url nats://127.0.0.1:4222 --account-id ac_... \
    --public-url https://app.example.com --ip-address 203.0.113.7 --country-code DE`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			in.AccountID, in.ExpiresAt = f.accountID, time.Now().Add(expiresIn)
			if in.ApplicationUserID == "" {
				in.ApplicationUserID = schemas.NewID(schemas.PrefixAppUser)
			}
			if in.EndpointID == "" {
				in.EndpointID = schemas.NewID(schemas.PrefixEndpoint)
			}
			return f.with(cmd.Context(), func(ctx context.Context, c *appsession.Client) error {
				s, err := c.Record(ctx, in)
				if err != nil {
					return err
				}
				return f.print(cmd.OutOrStdout(), s)
			})
		},
	}
	fl := cmd.Flags()
	f.register(fl)
	b := &in.BrowserSession
	fl.StringVar(&in.PublicURL, "public-url", "", "the URL of the hostport the endpoint serves, such as https://app.example.com (required)")
	fl.StringVar(&b.IPAddress, "ip-address", "", "the user's IP address (required)")
	fl.StringVar(&b.UserAgent.Raw, "user-agent", "", "the browser's User-Agent header")
	fl.StringVar(&b.Location.CountryCode, "country-code", "", "the ISO 3166-1 alpha-2 country of the address, such as DE")
	fl.StringVar(&in.ApplicationUserID, "application-user-id", "", "the user's id, usr_... (default: a new one)")
	fl.StringVar(&in.EndpointID, "endpoint-id", "", "the endpoint's id, ep_... (default: a new one)")
	fl.StringVar(&in.EdgeID, "edge-id", "", "the HTTPS edge's id, edghts_..., with --route-id; none for an agent-initiated endpoint")
	fl.StringVar(&in.RouteID, "route-id", "", "the HTTPS edge route's id, edghtsrt_..., with --edge-id")
	fl.DurationVar(&expiresIn, "expires-in", 24*time.Hour, "how long from now the session lasts (at most 720h)")
	return cmd
}

func newSessionRefreshCommand() *cobra.Command {
	var (
		f         edgeSessionFlags
		expiresIn time.Duration
	)
	cmd := &cobra.Command{
		Use:   "refresh ID --account-id ac_...",
		Short: "Record activity of a session as the edge does, over NATS; fails once the session has ended",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			in := appsession.RefreshRequest{AccountID: f.accountID, ID: args[0]}
			if expiresIn > 0 {
				in.ExpiresAt = time.Now().Add(expiresIn)
			}
			return f.with(cmd.Context(), func(ctx context.Context, c *appsession.Client) error {
				s, err := c.Refresh(ctx, in)
				if err != nil {
					return err
				}
				return f.print(cmd.OutOrStdout(), s)
			})
		},
	}
	f.register(cmd.Flags())
	cmd.Flags().DurationVar(&expiresIn, "expires-in", 0, "move the session's end to this long from now (default: keep it)")
	return cmd
}

func newSessionEndCommand() *cobra.Command {
	var f edgeSessionFlags
	cmd := &cobra.Command{
		Use:   "end ID --account-id ac_...",
		Short: "End a session as the edge does when the user logs out, over NATS",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			return f.with(cmd.Context(), func(ctx context.Context, c *appsession.Client) error {
				if err := c.End(ctx, appsession.EndRequest{AccountID: f.accountID, ID: args[0]}); err != nil {
					return err
				}
				fmt.Fprintln(cmd.ErrOrStderr(), "ended", args[0])
				return nil
			})
		},
	}
	f.register(cmd.Flags())
	return cmd
}
