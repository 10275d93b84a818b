package main

import (
	"fmt"
	"strings"

	"github.com/spf13/cobra"

	"github.com/sluicehq/sluice/apiwire"
	"github.com/sluicehq/sluice/internal/acl"
	"github.com/sluicehq/sluice/internal/resource"
)

// credentialsFamily declares `sluice credentials`, a client of
// /credentials. A credential's token is shown once, by create
// (createdWithToken).
func credentialsFamily() family[apiwire.Credential, apiwire.CredentialInput] {
	f := family[apiwire.Credential, apiwire.CredentialInput]{
		spec: resource.Credentials(),
		kind: resourceKind{
			command: "credentials",
			plural:  "tunnel credentials",
			columns: []string{"ID", "CREATED_AT", "OWNER_ID", "ACL", "DESCRIPTION"},
		},
		short: "Create, list, change and delete tunnel credentials through the API of a running sluice",
		long: `Manage the tunnel credentials of the account through the API of a running
sluice (/credentials). A credential's token is the authtoken an agent
connects with: it is shown once, by create, and sluice keeps only its hash.
Its ACL limits what the agent may bind: "*" or no rule for anything,
bind:<domain>, bind:*.<domain> (every name under the domain, not the domain
itself), bind:<host>:<port> or bind:<label>=<value> (a labeled tunnel's
label; <value> * for any). Its owner is a bot user of the account.

--api-url and --api-key can be set as SLUICE_API_URL and SLUICE_API_KEY.`,
		row: func(c apiwire.Credential) []string {
			return []string{c.ID, c.CreatedAt, ownerOf(c), strings.Join(c.ACL, ","), c.Description}
		},
		// The credential's fields, never its token.
		fields: func(c apiwire.Credential) []resourceField {
			return []resourceField{
				{"ID", c.ID}, {"URI", c.URI}, {"CREATED_AT", c.CreatedAt},
				{"DESCRIPTION", c.Description}, {"METADATA", c.Metadata},
				{"ACL", strings.Join(c.ACL, ",")}, {"OWNER_ID", ownerOf(c)},
			}
		},
		create: verbHelp{
			short: "Create a tunnel credential, whose token is printed only this once",
			long: `Create a tunnel credential of the account: POST /credentials. Its token is
printed this once: keep it secret. With --json, the API's answer, token
included, goes to standard output and the warning to standard error.`,
			example: `  sluice credentials create --description "edge-eu-1" --owner-id bot_... --acl 'bind:*.example.com'`,
		},
		update: verbHelp{
			short:   "Change the description, metadata, ACL or owner of a tunnel credential",
			long:    "Change a tunnel credential: PATCH /credentials/ID, with only the fields whose flags are given (or that --data holds).",
			example: `  sluice credentials update cr_... --acl 'bind:app.example.com,bind:example.com:8443'`,
		},
		updateFlags: "--description, --metadata, --acl or --owner-id",
		commands: func(f *resourceFlags) []*cobra.Command {
			return []*cobra.Command{newCredentialsAllowsCommand(f)}
		},
	}
	f.created = createdWithToken[apiwire.Credential]{
		kind: "a tunnel credential", short: "credential", warning: tokenOfCredentialShownOnce,
		id:     func(c apiwire.Credential) string { return c.ID },
		token:  func(c apiwire.Credential) *string { return c.Token },
		fields: f.fields,
	}.print
	return f
}

// newCredentialsCommand returns `sluice credentials`.
func newCredentialsCommand() *cobra.Command { return newFamilyCommand(credentialsFamily()) }

// ownerOf is the credential's owner, or "".
func ownerOf(c apiwire.Credential) string {
	if c.OwnerID == nil {
		return ""
	}
	return *c.OwnerID
}

// tokenOfCredentialShownOnce tells the operator to keep the token now.
const tokenOfCredentialShownOnce = "The credential's token is shown only this once; keep it secret:"

// newCredentialsAllowsCommand returns `sluice credentials allows ID
// TARGET`: whether the credential's ACL lets an agent bind a domain or an
// address, as the edge decides it (acl.Allows). A target that is neither
// is refused before the credential is read.
func newCredentialsAllowsCommand(f *resourceFlags) *cobra.Command {
	return &cobra.Command{
		Use:   "allows ID DOMAIN|HOST:PORT",
		Short: "Say whether a tunnel credential may bind a domain or an address",
		Long: `Say whether the ACL of a tunnel credential lets an agent holding its token
bind a domain or a host:port address, as the edge decides it. It prints
"allowed" and exits 0, or prints "denied" and exits 1.

The target is parsed first, as the edge parses it at every bind: a domain
name (labels of a to z, 0 to 9 and hyphens, in any case, one final dot
ignored), a wildcard domain (*. and a domain name) or a host:port address
(a port from 1 to 65535 after a domain name, an IPv4 address or an IPv6
address in brackets, compared in its shortest form, so [0:0::1]:22 is
[::1]:22). Anything else (a "/", "?", "#", "@", "%", a space or a control
character, a "*" elsewhere than as the whole first label, an IPv6 zone) is
not a target: it is printed as an error, and the command exits 1 without
asking the API.`,
		Example: `  sluice credentials allows cr_... app.example.com
  sluice credentials allows cr_... '[2001:db8::1]:22'`,
		Args: cobra.ExactArgs(2),
		RunE: func(cmd *cobra.Command, args []string) error {
			target, err := acl.ParseTarget(args[1])
			if err != nil {
				return err
			}
			c, err := f.client(cmd.ErrOrStderr())
			if err != nil {
				return err
			}
			cred, err := c.Credentials().Get(cmd.Context(), args[0])
			if err != nil {
				return err
			}
			allowed, err := acl.Allows(cred.ACL, target)
			if err != nil {
				return err
			}
			if !allowed {
				return fmt.Errorf("denied: the ACL of %s (%s) does not let it bind %s", cred.ID, strings.Join(cred.ACL, ","), target)
			}
			_, err = fmt.Fprintln(cmd.OutOrStdout(), "allowed")
			return err
		},
	}
}
