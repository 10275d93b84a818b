package main

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
)

func apiKeysKind() resourceKind {
	return resourceKind{
		command: "api-keys",
		plural:  "API keys",
		path:    "/api_keys",
		listKey: "api_keys",
		columns: []string{"ID", "CREATED_AT", "DESCRIPTION"},
		view:    viewAs[apiKeyView],
	}
}

// newAPIKeysCommand returns `sluice api-keys`, a client of /api_keys.
func newAPIKeysCommand() *cobra.Command {
	var f resourceFlags
	kind := apiKeysKind()
	cmd := newResourceCommand(kind,
		"Create, list, change and delete API keys through the API of a running sluice",
		`Manage the API keys of the account through the API of a running sluice
(/api_keys). A key's token is shown once, by create: sluice keeps only its
hash. Deleting a key stops its token at once, even the one these commands use.

--api-url and --api-key can be set as SLUICE_API_URL and SLUICE_API_KEY.`,
		&f)
	cmd.AddCommand(newAPIKeysCreateCommand(kind, &f), newAPIKeysUpdateCommand(kind, &f))
	return cmd
}

// apiKeyFlags are the flags of api-keys create and update.
type apiKeyFlags struct {
	body      bodyFlags
	described describedFlags
}

func (a *apiKeyFlags) register(fl *pflag.FlagSet) {
	a.body.register(fl)
	a.described.register(fl, limitInBytes)
}

func (a *apiKeyFlags) build(fl *pflag.FlagSet, stdin io.Reader) (map[string]any, error) {
	body, err := a.body.read(stdin)
	if err != nil {
		return nil, err
	}
	a.described.apply(fl, body)
	return body, nil
}

func newAPIKeysCreateCommand(kind resourceKind, f *resourceFlags) *cobra.Command {
	var a apiKeyFlags
	cmd := &cobra.Command{
		Use:   "create",
		Short: "Create an API key, whose token is printed only this once",
		Long: `Create an API key of the account: POST /api_keys. Its token is printed this
once: keep it secret. With --json, the API's answer, token included, goes to
standard output and the warning to standard error.`,
		Example: `  sluice api-keys create --description "ingest from edge-eu-1"`,
		Args:    cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			c, err := f.client()
			if err != nil {
				return err
			}
			body, err := a.build(cmd.Flags(), cmd.InOrStdin())
			if err != nil {
				return err
			}
			raw, err := sendBody(cmd.Context(), c, http.MethodPost, kind.path, body)
			if err != nil {
				return err
			}
			return printCreatedAPIKey(cmd.OutOrStdout(), cmd.ErrOrStderr(), raw, f.json)
		},
	}
	a.register(cmd.Flags())
	return cmd
}

// printCreatedAPIKey prints a new key and its token to stdout, as a table
// or as the API's JSON; in JSON, the warning that the token is shown only
// once goes to stderr.
func printCreatedAPIKey(stdout, stderr io.Writer, raw []byte, asJSON bool) error {
	var key apiKeyView
	if err := json.Unmarshal(raw, &key); err != nil {
		return fmt.Errorf("the API's answer is not an API key: %w", err)
	}
	if key.Token == nil || *key.Token == "" {
		return fmt.Errorf("the API created the key %s but its answer holds no token: delete the key, and check that --api-url is sluice", key.ID)
	}
	if asJSON {
		fmt.Fprintln(stderr, "sluice: the token is shown only this once; keep it secret")
		return writeRawJSON(stdout, raw)
	}
	if err := printFields(stdout, key.fields()); err != nil {
		return err
	}
	_, err := fmt.Fprintf(stdout, "\n%s\n\n    %s\n\n", tokenShownOnce, *key.Token)
	return err
}

func newAPIKeysUpdateCommand(kind resourceKind, f *resourceFlags) *cobra.Command {
	var a apiKeyFlags
	cmd := &cobra.Command{
		Use:     "update ID",
		Short:   "Change the description or metadata of an API key",
		Long:    "Change an API key: PATCH /api_keys/ID, with only the fields whose flags are given (or that --data holds).",
		Example: `  sluice api-keys update ak_... --description "retired on 2026-12-01"`,
		Args:    cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			c, err := f.client()
			if err != nil {
				return err
			}
			body, err := a.build(cmd.Flags(), cmd.InOrStdin())
			if err != nil {
				return err
			}
			if len(body) == 0 {
				return nothingToUpdate("--description or --metadata")
			}
			raw, err := sendBody(cmd.Context(), c, http.MethodPatch, kind.itemPath(args[0]), body)
			if err != nil {
				return err
			}
			return printResource(cmd.OutOrStdout(), kind.view, raw, f.json)
		},
	}
	a.register(cmd.Flags())
	return cmd
}

// apiKeyView is an API key as the API returns it. Token is set only in
// the answer to its creation.
type apiKeyView struct {
	ID          string  `json:"id"`
	URI         string  `json:"uri"`
	CreatedAt   string  `json:"created_at"`
	Description string  `json:"description"`
	Metadata    string  `json:"metadata"`
	Token       *string `json:"token"`
}

func (k apiKeyView) row() []string {
	return []string{k.ID, k.CreatedAt, k.Description}
}

// fields are the key's fields, never its token.
func (k apiKeyView) fields() []resourceField {
	return []resourceField{
		{"ID", k.ID}, {"URI", k.URI}, {"CREATED_AT", k.CreatedAt},
		{"DESCRIPTION", k.Description}, {"METADATA", k.Metadata},
	}
}
