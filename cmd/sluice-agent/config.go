package main

import (
	"fmt"

	"github.com/spf13/cobra"

	"github.com/sluicehq/sluice/internal/agent/agentconfig"
)

func newConfigCommand(g *globals) *cobra.Command {
	cmd := &cobra.Command{Use: "config", Short: "Check the configuration, or save an authtoken in it"}
	cmd.AddCommand(&cobra.Command{
		Use:   "check",
		Short: "Validate the configuration files and print them merged (exit 1 on errors)",
		Example: `  sluice-agent config check
  sluice-agent config check --config base.yml,dev.yml`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			cfg, err := g.loadConfig()
			if err != nil {
				return err
			}
			out, err := cfg.YAML()
			if err != nil {
				return err
			}
			w := cmd.OutOrStdout()
			if len(cfg.Files) == 0 {
				fmt.Fprintln(w, "# no configuration file: the defaults")
			} else {
				for _, f := range cfg.Files {
					fmt.Fprintf(w, "# %s\n", absPath(f))
				}
			}
			_, err = w.Write(out)
			return err
		},
	}, newAddAuthtokenCommand(g, "add-authtoken TOKEN"))
	return cmd
}

// newAuthtokenCommand is `sluice-agent authtoken TOKEN`, the older
// spelling of config add-authtoken that tools still run.
func newAuthtokenCommand(g *globals) *cobra.Command {
	cmd := newAddAuthtokenCommand(g, "authtoken TOKEN")
	cmd.Hidden = true
	return cmd
}

func newAddAuthtokenCommand(g *globals, use string) *cobra.Command {
	return &cobra.Command{
		Use:     use,
		Short:   "Save the authtoken in the configuration file (the first --config, or the default file)",
		Example: `  sluice-agent config add-authtoken "$(sluice credentials create --json | jq -r .token)"`,
		Args:    cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			path := agentconfig.DefaultPath()
			if len(g.configs) > 0 {
				path = g.configs[0]
			}
			if err := agentconfig.SaveAuthtoken(path, args[0]); err != nil {
				return err
			}
			fmt.Fprintf(cmd.OutOrStdout(), "Authtoken saved to configuration file: %s\n", absPath(path))
			return nil
		},
	}
}
