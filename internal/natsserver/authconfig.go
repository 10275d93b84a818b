package natsserver

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strconv"

	"github.com/nats-io/nats-server/v2/server"

	"github.com/sluicehq/sluice/schemas"
)

// AuthConfigFile is the name of the file WriteAuthConfig writes.
const AuthConfigFile = "auth.conf"

// WriteAuthConfig gives an external NATS server or cluster the identities
// of the embedded one: it writes in dir the seed of every identity (ID.nk,
// mode 600, kept when it exists already, as Start does) and AuthConfigFile,
// an authorization block for nats-server's configuration naming each
// identity's public key with its Permissions, from catalogue c
// (schemas.Default() when nil). It returns the path of AuthConfigFile.
func WriteAuthConfig(dir string, c *schemas.Catalogue) (string, error) {
	ids, err := identitiesIn(dir)
	if err != nil {
		return "", err
	}
	conf, err := ids.authConfig(c)
	if err != nil {
		return "", err
	}
	path := filepath.Join(dir, AuthConfigFile)
	// Public keys and permissions only: the NATS servers read it.
	if err := os.WriteFile(path, conf, 0o644); err != nil {
		return "", fmt.Errorf("writing %s: %w", path, err)
	}
	return path, nil
}

// authConfig renders the authorization block of the identities.
func (ids *identities) authConfig(c *schemas.Catalogue) ([]byte, error) {
	var b bytes.Buffer
	b.WriteString("# The NATS identities of sluice (docs/operations.md), written by\n")
	b.WriteString("# `sluice nats-auth`: public keys and permissions, no secret. Include it in\n")
	b.WriteString("# every node's configuration: include ./auth.conf\n")
	b.WriteString("authorization {\n  users = [\n")
	for _, id := range Identities() {
		pub, err := ids.keys[id].PublicKey()
		if err != nil {
			return nil, err
		}
		perms := Permissions(id, c)
		fmt.Fprintf(&b, "    # %s\n    {\n      nkey: %s\n      permissions: {\n", id, pub)
		writeSubjects(&b, "publish", perms.Publish)
		writeSubjects(&b, "subscribe", perms.Subscribe)
		b.WriteString("      }\n    }\n")
	}
	b.WriteString("  ]\n}\n")
	return b.Bytes(), nil
}

// writeSubjects writes the allow and deny lists of one direction.
func writeSubjects(b *bytes.Buffer, direction string, p *server.SubjectPermission) {
	fmt.Fprintf(b, "        %s: {\n", direction)
	for _, list := range []struct {
		name     string
		subjects []string
	}{{"allow", p.Allow}, {"deny", p.Deny}} {
		if len(list.subjects) == 0 {
			continue
		}
		fmt.Fprintf(b, "          %s: [\n", list.name)
		for _, s := range list.subjects {
			fmt.Fprintf(b, "            %s\n", strconv.Quote(s))
		}
		b.WriteString("          ]\n")
	}
	b.WriteString("        }\n")
}
