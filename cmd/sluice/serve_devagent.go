package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"

	"github.com/sluicehq/sluice/internal/atomicfile"

	"github.com/sluicehq/sluice/internal/store"
)

// devAgentConfigFile is the agent configuration a --dev edge writes in
// its data dir's edge directory, beside the dev CA: sluice-agent on the
// same machine reads it when it has none of its own.
const devAgentConfigFile = "agent.yml"

// writeDevAgentConfig gives this machine's sluice-agent what it needs to
// connect to a --dev edge: when DIR/edge/agent.yml does not exist, it
// makes a tunnel credential of the bootstrap account ("default") and
// writes the file (mode 0600) with its authtoken, the edge's agent
// address and the dev CA. Deleting the file makes a new credential at the
// next start; deleting the credential revokes the file's token. It
// returns the file's path, or "" when it wrote none.
func writeDevAgentConfig(ctx context.Context, st *store.Store, dir, agentsAddr, caFile string) (string, error) {
	path := filepath.Join(dir, devAgentConfigFile)
	if _, err := os.Stat(path); err == nil {
		return "", nil
	} else if !errors.Is(err, fs.ErrNotExist) {
		return "", err
	}
	if abs, err := filepath.Abs(caFile); err == nil {
		caFile = abs
	}
	accounts, err := st.ListAccounts(ctx)
	if err != nil {
		return "", err
	}
	// The oldest account of the bootstrap's name: ListAccounts is
	// newest first.
	slices.Reverse(accounts)
	i := slices.IndexFunc(accounts, func(a store.Account) bool { return a.Name == store.BootstrapAccountName })
	if i < 0 {
		return "", nil
	}
	cred, err := st.CreateCredential(ctx, accounts[i].ID, store.Credential{
		Description: "sluice-agent on this machine: serve --dev wrote its token to edge/" + devAgentConfigFile + " of the data dir",
	})
	if err != nil {
		return "", fmt.Errorf("making the dev agent's credential: %w", err)
	}
	// Each value is a YAML double-quoted string (JSON's, which YAML
	// reads): an IPv6 address or a path with "# " stays one value.
	quote := func(v string) string {
		b, _ := json.Marshal(v)
		return string(b)
	}
	body := fmt.Sprintf(`# Written by sluice serve --dev for sluice-agent on this machine, which reads it
# when it has no configuration of its own. The authtoken is tunnel credential %s
# of account %s: delete the credential to revoke it, and this file to get a new one.
version: 2
authtoken: %s
server_addr: %s
root_cas: %s
`, cred.ID, accounts[i].ID, quote(cred.Token), quote(agentsAddr), quote(caFile))
	if err := atomicfile.Write(path, []byte(body), 0o600); err != nil {
		return "", err
	}
	return path, nil
}
