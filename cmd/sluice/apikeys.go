package main

import (
	"github.com/spf13/cobra"

	"github.com/sluicehq/sluice/apiwire"
	"github.com/sluicehq/sluice/internal/resource"
)

// apiKeysFamily declares `sluice api-keys`, a client of /api_keys. A key's
// token is shown once, by create (createdWithToken).
func apiKeysFamily() family[apiwire.APIKey, apiwire.APIKeyInput] {
	f := family[apiwire.APIKey, apiwire.APIKeyInput]{
		spec: resource.APIKeys(),
		kind: resourceKind{
			command: "api-keys",
			plural:  "API keys",
			columns: []string{"ID", "CREATED_AT", "DESCRIPTION"},
		},
		short: "Create, list, change and delete API keys through the API of a running sluice",
		long: `Manage the API keys of the account through the API of a running sluice
(/api_keys). A key's token is shown once, by create: sluice keeps only its
hash. Deleting a key stops its token at once, even the one these commands use.

--api-url and --api-key can be set as SLUICE_API_URL and SLUICE_API_KEY.`,
		row: func(k apiwire.APIKey) []string { return []string{k.ID, k.CreatedAt, k.Description} },
		// The key's fields, never its token.
		fields: func(k apiwire.APIKey) []resourceField {
			return []resourceField{
				{"ID", k.ID}, {"URI", k.URI}, {"CREATED_AT", k.CreatedAt},
				{"DESCRIPTION", k.Description}, {"METADATA", k.Metadata},
			}
		},
		create: verbHelp{
			short: "Create an API key, whose token is printed only this once",
			long: `Create an API key of the account: POST /api_keys. Its token is printed this
once: keep it secret. With --json, the API's answer, token included, goes to
standard output and the warning to standard error.`,
			example: `  sluice api-keys create --description "ingest from edge-eu-1"`,
		},
		update: verbHelp{
			short:   "Change the description or metadata of an API key",
			long:    "Change an API key: PATCH /api_keys/ID, with only the fields whose flags are given (or that --data holds).",
			example: `  sluice api-keys update ak_... --description "retired on 2026-12-01"`,
		},
		updateFlags: "--description or --metadata",
	}
	f.created = createdWithToken[apiwire.APIKey]{
		kind: "an API key", short: "key", warning: tokenShownOnce,
		id:     func(k apiwire.APIKey) string { return k.ID },
		token:  func(k apiwire.APIKey) *string { return k.Token },
		fields: f.fields,
	}.print
	return f
}

// newAPIKeysCommand returns `sluice api-keys`.
func newAPIKeysCommand() *cobra.Command { return newFamilyCommand(apiKeysFamily()) }
