package main

import (
	"strconv"

	"github.com/spf13/cobra"

	"github.com/sluicehq/sluice/apiwire"
	"github.com/sluicehq/sluice/internal/resource"
)

// botUsersFamily declares `sluice bot-users`, a client of /bot_users.
func botUsersFamily() family[apiwire.BotUser, apiwire.BotUserInput] {
	return family[apiwire.BotUser, apiwire.BotUserInput]{
		spec: resource.BotUsers(),
		kind: resourceKind{
			command: "bot-users",
			plural:  "bot users",
			columns: []string{"ID", "CREATED_AT", "ACTIVE", "NAME"},
		},
		short: "Create, list, change and delete bot users through the API of a running sluice",
		long: `Manage the bot users of the account through the API of a running sluice
(/bot_users). A bot user belongs to no person: it owns the credentials of an
agent. Its name is unique in the account, ignoring case.

--api-url and --api-key can be set as SLUICE_API_URL and SLUICE_API_KEY.`,
		row: func(b apiwire.BotUser) []string {
			return []string{b.ID, b.CreatedAt, strconv.FormatBool(b.Active), b.Name}
		},
		fields: func(b apiwire.BotUser) []resourceField {
			return []resourceField{
				{"ID", b.ID}, {"URI", b.URI}, {"CREATED_AT", b.CreatedAt},
				{"NAME", b.Name}, {"ACTIVE", strconv.FormatBool(b.Active)},
			}
		},
		create: verbHelp{
			short:   "Create a bot user, active",
			long:    "Create a bot user of the account: POST /bot_users. A new bot user is active.",
			example: `  sluice bot-users create --name ci-deployer`,
		},
		update: verbHelp{
			short:   "Rename a bot user, or make it active or inactive",
			long:    "Change a bot user: PATCH /bot_users/ID, with only the fields whose flags are given (or that --data holds).",
			example: `  sluice bot-users update bot_... --active=false`,
		},
		updateFlags: "--name or --active",
	}
}

// newBotUsersCommand returns `sluice bot-users`.
func newBotUsersCommand() *cobra.Command { return newFamilyCommand(botUsersFamily()) }
