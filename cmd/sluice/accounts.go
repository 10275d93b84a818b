package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"text/tabwriter"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/sluicehq/sluice/internal/store"
	"github.com/sluicehq/sluice/schemas"
)

const (
	// defaultAccountsNATSURL is where `sluice serve --nats-listen
	// 127.0.0.1:4222` exposes its embedded NATS server.
	defaultAccountsNATSURL = "nats://127.0.0.1:4222"
	// accountsConnectTimeout bounds dialling NATS, so that a wrong
	// --nats-url fails fast.
	accountsConnectTimeout = 5 * time.Second
	// accountsStoreTimeout bounds the talk with the store once connected.
	accountsStoreTimeout = 30 * time.Second
	// tokenShownOnce tells the operator to keep the token now.
	tokenShownOnce = "The API key's token is shown only this once; keep it secret:"
)

// accountsFlags are the flags of every accounts subcommand.
type accountsFlags struct {
	natsURL  string
	security natsSecurity
	json     bool
}

func (f *accountsFlags) register(fl *pflag.FlagSet) {
	f.registerNATS(fl)
	fl.BoolVar(&f.json, "json", false, "print JSON instead of a table")
}

// registerNATS defines the flags that reach the store of a running
// sluice through its NATS server, which every command talking to the
// store directly shares.
func (f *accountsFlags) registerNATS(fl *pflag.FlagSet) {
	fl.StringVar(&f.natsURL, "nats-url", defaultAccountsNATSURL, "the NATS server (comma-separated URLs) of a running sluice: what --nats-listen exposes, or its --nats-url")
	fl.StringVar(&f.security.creds, "nats-creds", "", "credentials file (JWT and NKey seed) for --nats-url, for decentralised JWT auth")
	fl.StringVar(&f.security.nkey, "nats-nkey", "", "NKey seed file for --nats-url: for the embedded NATS of sluice serve --nats-listen, its --data-dir/nats/sluice.nk")
	fl.StringVar(&f.security.tlsCA, "nats-tls-ca", "", "CA certificate file to verify --nats-url's servers")
	fl.StringVar(&f.security.tlsCert, "nats-tls-cert", "", "client certificate file for --nats-url (with --nats-tls-key)")
	fl.StringVar(&f.security.tlsKey, "nats-tls-key", "", "client key file for --nats-url (with --nats-tls-cert)")
}

func (f accountsFlags) validate() error {
	var errs []error
	if f.natsURL == "" {
		errs = append(errs, errors.New("--nats-url is empty: give the NATS server of a running sluice, such as "+defaultAccountsNATSURL))
	}
	if err := f.security.validate(); err != nil {
		errs = append(errs, err)
	}
	return errors.Join(errs...)
}

func newAccountsCommand() *cobra.Command {
	var f accountsFlags
	cmd := &cobra.Command{
		Use:   "accounts",
		Short: "Create and list accounts, through the NATS server of a running sluice",
		Args:  cobra.NoArgs,
	}
	f.register(cmd.PersistentFlags())
	cmd.AddCommand(newAccountsCreateCommand(&f), newAccountsListCommand(&f), newAccountsAddKeyCommand(&f))
	return cmd
}

func newAccountsCreateCommand(f *accountsFlags) *cobra.Command {
	var name, description string
	var quiet quietFlag
	cmd := &cobra.Command{
		Use:   "create --name NAME",
		Short: "Create an account and its first API key, whose token is printed only this once",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if name == "" {
				return errors.New("--name is empty: give the account's name, such as --name acme")
			}
			if description == "" {
				description = "first key of " + name
			}
			return withAccountStore(cmd.Context(), *f, func(ctx context.Context, st *store.Store) error {
				created, err := createAccount(ctx, st, name, description)
				if err != nil {
					return err
				}
				if quiet {
					return printCreatedWithToken(cmd.OutOrStdout(), created.AccountID, created.Token)
				}
				return printCreatedAccount(cmd.OutOrStdout(), cmd.ErrOrStderr(), created, f.json)
			})
		},
	}
	cmd.Flags().StringVar(&name, "name", "", "the account's name (required)")
	cmd.Flags().StringVar(&description, "description", "", `description of the account's first API key (default "first key of NAME")`)
	quiet.register(cmd.Flags())
	return cmd
}

func newAccountsListCommand(f *accountsFlags) *cobra.Command {
	return &cobra.Command{
		Use:   "list",
		Short: "List the accounts, newest first",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return withAccountStore(cmd.Context(), *f, func(ctx context.Context, st *store.Store) error {
				accounts, err := st.ListAccounts(ctx)
				if err != nil {
					return err
				}
				return printAccounts(cmd.OutOrStdout(), accounts, f.json)
			})
		},
	}
}

func newAccountsAddKeyCommand(f *accountsFlags) *cobra.Command {
	var accountID, description string
	cmd := &cobra.Command{
		Use:   "add-key --account ID",
		Short: "Give an account a new API key, whose token is printed only this once (for an account that lost its keys)",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if accountID == "" {
				return errors.New("--account is empty: give the account's id (ac_...), as sluice accounts list shows it")
			}
			return withAccountStore(cmd.Context(), *f, func(ctx context.Context, st *store.Store) error {
				added, err := addAPIKey(ctx, st, accountID, description)
				if err != nil {
					return err
				}
				return printCreatedAccount(cmd.OutOrStdout(), cmd.ErrOrStderr(), added, f.json)
			})
		},
	}
	cmd.Flags().StringVar(&accountID, "account", "", "the account's id (required)")
	cmd.Flags().StringVar(&description, "description", "added by an operator", "description of the key")
	return cmd
}

// addAPIKey creates an API key of the account.
func addAPIKey(ctx context.Context, st *store.Store, accountID, description string) (createdAccount, error) {
	account, err := st.GetAccount(ctx, accountID)
	if errors.Is(err, store.ErrNotFound) {
		return createdAccount{}, fmt.Errorf("there is no account %q; sluice accounts list shows them", accountID)
	}
	if err != nil {
		return createdAccount{}, err
	}
	key, err := st.CreateAPIKey(ctx, account.ID, store.APIKeyInput{Description: description}, "")
	if err != nil {
		return createdAccount{}, fmt.Errorf("adding an API key to account %s: %w", account.ID, err)
	}
	return createdAccount{AccountID: account.ID, Name: account.Name, CreatedAt: account.CreatedAt, APIKeyID: key.ID, Token: key.Token}, nil
}

// createdAccount is a new account and its first key, as create prints it.
type createdAccount struct {
	AccountID string    `json:"account_id"`
	Name      string    `json:"name"`
	CreatedAt time.Time `json:"created_at"`
	APIKeyID  string    `json:"api_key_id"`
	Token     string    `json:"token"`
}

// createAccount creates the account and its first API key.
func createAccount(ctx context.Context, st *store.Store, name, keyDescription string) (createdAccount, error) {
	account, err := st.CreateAccount(ctx, name)
	if err != nil {
		return createdAccount{}, err
	}
	key, err := st.CreateAPIKey(ctx, account.ID, store.APIKeyInput{Description: keyDescription}, "")
	if err != nil {
		return createdAccount{}, fmt.Errorf("account %s was created, but not its first API key (give it one with sluice accounts add-key --account %s): %w", account.ID, account.ID, err)
	}
	return createdAccount{
		AccountID: account.ID,
		Name:      account.Name,
		CreatedAt: account.CreatedAt,
		APIKeyID:  key.ID,
		Token:     key.Token,
	}, nil
}

// printCreatedAccount prints the account and its token to stdout, as a
// table or as JSON; in JSON, the warning that the token is shown only once
// goes to stderr.
func printCreatedAccount(stdout, stderr io.Writer, c createdAccount, asJSON bool) error {
	if asJSON {
		fmt.Fprintln(stderr, "sluice: the token is shown only this once; keep it secret")
		return json.NewEncoder(stdout).Encode(c)
	}
	tw := tabwriter.NewWriter(stdout, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "ACCOUNT\tNAME\tAPI KEY")
	fmt.Fprintf(tw, "%s\t%s\t%s\n", c.AccountID, c.Name, c.APIKeyID)
	if err := tw.Flush(); err != nil {
		return err
	}
	_, err := fmt.Fprintf(stdout, "\n%s\n\n    %s\n\n", tokenShownOnce, c.Token)
	return err
}

// printAccounts prints the accounts to w, as a table or as a JSON array.
func printAccounts(w io.Writer, accounts []store.Account, asJSON bool) error {
	if asJSON {
		if accounts == nil {
			accounts = []store.Account{}
		}
		return json.NewEncoder(w).Encode(accounts)
	}
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "ID\tNAME\tCREATED_AT")
	for _, a := range accounts {
		fmt.Fprintf(tw, "%s\t%s\t%s\n", a.ID, a.Name, a.CreatedAt.UTC().Format(schemas.TimeLayout))
	}
	return tw.Flush()
}

// withAccountStore connects to the NATS server of f, opens the store that a
// running sluice created, runs use on it, and closes the connection.
func withAccountStore(ctx context.Context, f accountsFlags, use func(context.Context, *store.Store) error) error {
	if err := f.validate(); err != nil {
		return err
	}
	security, err := f.security.options()
	if err != nil {
		return err
	}
	opts := append([]nats.Option{nats.Name("sluice accounts"), nats.Timeout(accountsConnectTimeout)}, security...)
	nc, err := nats.Connect(f.natsURL, opts...)
	if err != nil {
		return fmt.Errorf("connecting to --nats-url %s: %w: %s", f.natsURL, err, connectHint(err))
	}
	defer nc.Close()
	js, err := jetstream.New(nc)
	if err != nil {
		return fmt.Errorf("creating JetStream context: %w", err)
	}
	ctx, cancel := context.WithTimeout(ctx, accountsStoreTimeout)
	defer cancel()
	st, err := openExistingStore(ctx, js, nc.ConnectedUrlRedacted())
	if err != nil {
		return err
	}
	return use(ctx, st)
}

// connectHint says what to fix when connecting fails.
func connectHint(err error) string {
	if errors.Is(err, nats.ErrAuthorization) || errors.Is(err, nats.ErrAuthExpired) || errors.Is(err, nats.ErrAuthRevoked) {
		return "give --nats-nkey DATA_DIR/nats/sluice.nk, the seed sluice serve wrote in its --data-dir, or the --nats-creds or --nats-nkey of an identity that may use the JetStream of sluice"
	}
	return "is sluice serve running with --nats-listen 127.0.0.1:4222, or give --nats-url (and --nats-nkey or --nats-creds, --nats-tls-*) of the NATS server it uses"
}

// openExistingStore opens the store's bucket with the replicas it has, so
// that store.Open, which updates the bucket to its config, changes nothing.
// It does not create the bucket: `sluice serve` does, with its --replicas.
func openExistingStore(ctx context.Context, js jetstream.JetStream, url string) (*store.Store, error) {
	kv, err := js.KeyValue(ctx, store.Bucket)
	if errors.Is(err, jetstream.ErrBucketNotFound) {
		return nil, fmt.Errorf("the NATS server at %s has no bucket %s: start sluice serve on it first (it creates the bucket), or give the --nats-url that sluice serve uses", url, store.Bucket)
	}
	if err != nil {
		return nil, fmt.Errorf("finding bucket %s at %s: %w: does that NATS server run JetStream for sluice?", store.Bucket, url, err)
	}
	status, err := kv.Status(ctx)
	if err != nil {
		return nil, fmt.Errorf("reading the configuration of bucket %s: %w", store.Bucket, err)
	}
	return store.Open(ctx, js, store.Config{Replicas: status.Config().Replicas})
}
