package main

import (
	"errors"
	"fmt"
	"path/filepath"

	"github.com/spf13/cobra"

	"github.com/sluicehq/sluice/internal/natsserver"
)

func newNATSAuthCommand() *cobra.Command {
	var dir string
	cmd := &cobra.Command{
		Use:   "nats-auth --dir DIR",
		Short: "Write the NATS identities of sluice for an external NATS server: seeds and the server's authorization block",
		Long: `Write in DIR the NKey seed of each NATS identity of sluice (sluice.nk,
producer.nk, edge.nk; mode 600, kept when they exist) and auth.conf, the
authorization block of nats-server's configuration that names each
identity's public key with its permissions, as the embedded server has
them (docs/operations.md). Include auth.conf in every node's
configuration, and give sluice serve and the CLI --nats-nkey DIR/sluice.nk,
producers producer.nk and the edge edge.nk. Run it again after an upgrade
of sluice: the deny list of the producer follows the event catalogue.`,
		Example: `  sluice nats-auth --dir ./nats-auth
  # in nats.conf: include ./nats-auth/auth.conf`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if dir == "" {
				return errors.New("--dir is empty: give the directory to write the seeds and auth.conf in")
			}
			path, err := natsserver.WriteAuthConfig(dir, nil)
			if err != nil {
				return err
			}
			out := cmd.OutOrStdout()
			fmt.Fprintf(out, "wrote %s: include it in the configuration of every NATS node\n", path)
			for _, id := range natsserver.Identities() {
				fmt.Fprintf(out, "seed of %s: %s (mode 600; keep it secret)\n", id, filepath.Join(dir, string(id)+".nk"))
			}
			return nil
		},
	}
	cmd.Flags().StringVar(&dir, "dir", "", "the directory to write the seeds and auth.conf in (made with mode 700 when missing)")
	return cmd
}
