package natsserver

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/nats-io/nats-server/v2/server"
	"github.com/nats-io/nkeys"

	"github.com/sluicehq/sluice/schemas"
)

// Identity is one of the NATS users of the embedded server, each an NKey
// whose seed Start writes in the data dir (SeedFile), with the permissions
// Permissions gives it. The server takes no client without one.
type Identity string

// The identities of the embedded server.
const (
	// IdentitySluice is sluice's own processes and the CLI (sluice
	// accounts, sluice app-sessions): every subject, JetStream's API and
	// the store included.
	IdentitySluice Identity = "sluice"
	// IdentityProducer is a service publishing events with package
	// producer: it publishes on sluice.events.> the kinds that are not
	// sluice's own (schemas.Kind.EmittedBySluice), and receives its acks
	// on its inboxes (InboxPrefix). It reads nothing else.
	IdentityProducer Identity = "producer"
	// IdentityEdge is the edge: it publishes the events it emits (the
	// traffic kinds and the agent session kinds), calls the application
	// session service (package appsession) and receives the answers on
	// its inboxes (InboxPrefix). It reads nothing else.
	IdentityEdge Identity = "edge"
)

// Identities returns every identity, sluice's first.
func Identities() []Identity {
	return []Identity{IdentitySluice, IdentityProducer, IdentityEdge}
}

// InboxPrefix returns the prefix of the inboxes the identity's clients
// receive replies on, to give nats.CustomInboxPrefix: "" for
// IdentitySluice, which uses nats.go's default (_INBOX), and _INBOX_ and
// the identity's name for the others. Each identity may subscribe to its
// own inboxes only, so that none can read the replies another receives,
// such as sluice's reads of the store.
func (id Identity) InboxPrefix() string {
	if id == IdentitySluice {
		return ""
	}
	return "_INBOX_" + string(id)
}

// credentialsDir is the directory of the data dir the seeds are in.
const credentialsDir = "nats"

// SeedFile returns the file in dataDir holding the NKey seed of id, such
// as dataDir/nats/sluice.nk: what `sluice serve --nats-nkey`, the CLI's
// --nats-nkey and `nats --nkey` read. Start writes it, mode 600, at the
// first start, and reads it at every start after.
func SeedFile(dataDir string, id Identity) string {
	return filepath.Join(dataDir, credentialsDir, string(id)+".nk")
}

// Permissions returns what id may publish and subscribe to, with the kinds
// of catalogue c (schemas.Default() when nil):
//
//   - IdentitySluice: everything.
//   - IdentityProducer: publish on sluice.events.>, except the subject
//     sluice.events.*.K of each kind K sluice emits (as NATS cannot tell a
//     kind's tokens from the account's, the deny names each kind);
//     subscribe to its inboxes.
//   - IdentityEdge: publish on sluice.events.*.K for each traffic kind and
//     agent session kind K, and request the application session service
//     (appsession's subjects); subscribe to its inboxes.
func Permissions(id Identity, c *schemas.Catalogue) *server.Permissions {
	if c == nil {
		c = schemas.Default()
	}
	inbox := &server.SubjectPermission{Allow: []string{id.InboxPrefix() + ".>"}}
	switch id {
	case IdentitySluice:
		return &server.Permissions{
			Publish:   &server.SubjectPermission{Allow: []string{">"}},
			Subscribe: &server.SubjectPermission{Allow: []string{">"}},
		}
	case IdentityProducer:
		var deny []string
		for _, k := range c.Kinds() {
			if k.EmittedBySluice {
				deny = append(deny, eventSubject(k.Name))
			}
		}
		return &server.Permissions{
			Publish:   &server.SubjectPermission{Allow: []string{"sluice.events.>"}, Deny: deny},
			Subscribe: inbox,
		}
	case IdentityEdge:
		var allow []string
		for _, k := range c.Kinds() {
			if k.Class == schemas.ClassTraffic && !k.EmittedBySluice || k.Family == edgeAuditFamily {
				allow = append(allow, eventSubject(k.Name))
			}
		}
		allow = append(allow, appSessionSubjects...)
		return &server.Permissions{
			Publish:   &server.SubjectPermission{Allow: allow},
			Subscribe: inbox,
		}
	}
	// An unknown identity may do nothing.
	return &server.Permissions{
		Publish:   &server.SubjectPermission{Deny: []string{">"}},
		Subscribe: &server.SubjectPermission{Deny: []string{">"}},
	}
}

// edgeAuditFamily is the family of the audit kinds the edge emits: agent
// sessions starting and stopping.
const edgeAuditFamily = "agent_session"

// appSessionSubjects are the subjects of package appsession
// (appsession.SubjectRecord, SubjectRefresh, SubjectEnd), which this
// package cannot import: the edge may request them.
var appSessionSubjects = []string{
	"sluice.app_sessions.record",
	"sluice.app_sessions.refresh",
	"sluice.app_sessions.end",
}

// eventSubject is the subject of kind's events of every account, as
// pipeline.Subject names one account's.
func eventSubject(kind string) string { return "sluice.events.*." + kind }

// identities are the key pairs of the identities, read from the data dir
// or made there.
type identities struct {
	keys map[Identity]nkeys.KeyPair
}

// loadIdentities reads the seed of every identity from the data dir, and
// writes a new one for those that have none.
func loadIdentities(dataDir string) (*identities, error) {
	return identitiesIn(filepath.Join(dataDir, credentialsDir))
}

// identitiesIn reads the seed of every identity from dir (the file
// ID.nk), and writes a new one for those that have none.
func identitiesIn(dir string) (*identities, error) {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, fmt.Errorf("making the directory of the NATS credentials: %w", err)
	}
	ids := &identities{keys: make(map[Identity]nkeys.KeyPair)}
	for _, id := range Identities() {
		kp, err := loadSeed(filepath.Join(dir, string(id)+".nk"))
		if err != nil {
			return nil, fmt.Errorf("the NATS identity %s: %w", id, err)
		}
		ids.keys[id] = kp
	}
	return ids, nil
}

// loadSeed reads the user seed in path, or writes a new one there (mode
// 600) when the file does not exist. A file others than its owner can
// reach is refused.
func loadSeed(path string) (nkeys.KeyPair, error) {
	info, err := os.Stat(path)
	if errors.Is(err, fs.ErrNotExist) {
		return writeSeed(path)
	}
	if err != nil {
		return nil, err
	}
	if info.Mode().Perm()&0o077 != 0 {
		return nil, fmt.Errorf("seed file %s has mode %s: others than its owner can reach it; run chmod 600 %s", path, info.Mode().Perm(), path)
	}
	raw, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	kp, err := nkeys.ParseDecoratedNKey(raw)
	if err != nil {
		return nil, fmt.Errorf("reading seed file %s: %w", path, err)
	}
	if pub, err := kp.PublicKey(); err != nil || !nkeys.IsValidPublicUserKey(pub) {
		return nil, fmt.Errorf("seed file %s does not hold a user seed (SU...)", path)
	}
	return kp, nil
}

// writeSeed makes a new user key pair and writes its seed to path, which
// must not exist. The seed goes to a temporary file of mode 600 first,
// synced, and is then linked to path, so that a crash while writing
// leaves no seed file at all (the next start writes one) rather than a
// truncated one that every later start refuses.
func writeSeed(path string) (nkeys.KeyPair, error) {
	kp, err := nkeys.CreateUser()
	if err != nil {
		return nil, fmt.Errorf("making a key: %w", err)
	}
	seed, err := kp.Seed()
	if err != nil {
		return nil, err
	}
	f, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".*.tmp") // mode 600
	if err != nil {
		return nil, err
	}
	defer func() { _ = os.Remove(f.Name()) }()
	_, err = f.Write(append(bytes.Clone(seed), '\n'))
	if err == nil {
		err = f.Sync()
	}
	if closeErr := f.Close(); err == nil {
		err = closeErr
	}
	if err == nil {
		err = os.Link(f.Name(), path) // fails if path exists
	}
	if err != nil {
		return nil, fmt.Errorf("writing seed file %s: %w", path, err)
	}
	return kp, nil
}

// users returns the server's NKey users: each identity's public key with
// its permissions.
func (ids *identities) users() ([]*server.NkeyUser, error) {
	var users []*server.NkeyUser
	for _, id := range Identities() {
		pub, err := ids.keys[id].PublicKey()
		if err != nil {
			return nil, err
		}
		users = append(users, &server.NkeyUser{Nkey: pub, Permissions: Permissions(id, nil)})
	}
	return users, nil
}
