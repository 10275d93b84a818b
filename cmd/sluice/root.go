package main

import (
	"fmt"
	"io"
	"log/slog"
	"os"
	"strings"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
)

// envPrefix starts the environment variable of every flag.
const envPrefix = "SLUICE_"

func newRootCommand() *cobra.Command {
	root := &cobra.Command{
		Use:           "sluice",
		Short:         "sluice stores audit and traffic events in NATS JetStream, validated against its event catalogue",
		SilenceUsage:  true,
		SilenceErrors: true,
		Version:       binaryVersion(),
		PersistentPreRunE: func(cmd *cobra.Command, _ []string) error {
			return flagsFromEnv(cmd.Flags())
		},
	}
	root.AddCommand(newServeCommand(), newSchemasCommand(), newPublishCommand(), newAccountsCommand(), newDestinationsCommand(), newSubscriptionsCommand(), newAgentIngressesCommand(), newAppSessionsCommand(), newAPIKeysCommand(), newBotUsersCommand(), newCredentialsCommand(), newTunnelSessionsCommand(), newEndpointsCommand(), newEdgesCommand(), newBackendsCommand(), newReservedDomainsCommand(), newTLSCertificatesCommand(), newTailCommand(), newPolicyCommand(), newACMEChallengesCommand())
	// No SetVersionTemplate, nor any other template: cobra then prints
	// without text/template, whose calls of methods by name keep every
	// method of the binary linked (9.7 MB of 39).
	root.AddCommand(newEmulatorCommand())
	root.AddCommand(newHealthcheckCommand())
	root.AddCommand(newNATSAuthCommand())
	return root
}

// envName is the environment variable of a flag: --data-dir is SLUICE_DATA_DIR.
func envName(flag string) string {
	return envPrefix + strings.ToUpper(strings.ReplaceAll(flag, "-", "_"))
}

// flagsFromEnv sets every flag not given on the command line from its
// environment variable, if set.
func flagsFromEnv(flags *pflag.FlagSet) error {
	var err error
	flags.VisitAll(func(f *pflag.Flag) {
		if err != nil || f.Changed || f.Name == "help" {
			return
		}
		v, ok := os.LookupEnv(envName(f.Name))
		if !ok {
			return
		}
		if setErr := f.Value.Set(v); setErr != nil {
			err = fmt.Errorf("environment variable %s=%q: %w", envName(f.Name), v, setErr)
		}
	})
	return err
}

// logFlags are the flags of every command that logs.
type logFlags struct {
	level  string
	format string
}

func (l *logFlags) register(flags *pflag.FlagSet) {
	flags.StringVar(&l.level, "log-level", "info", "log level: debug, info, warn or error")
	flags.StringVar(&l.format, "log-format", "auto", "log format: json, text, or auto (text on a terminal, JSON otherwise)")
}

// logger returns a logger writing to w as the flags say.
func (l *logFlags) logger(w io.Writer) (*slog.Logger, error) {
	var level slog.Level
	if err := level.UnmarshalText([]byte(l.level)); err != nil {
		return nil, fmt.Errorf("--log-level %q: use debug, info, warn or error", l.level)
	}
	opts := &slog.HandlerOptions{Level: level}
	format := l.format
	if format == "auto" {
		format = "json"
		if f, ok := w.(*os.File); ok && isTerminal(f) {
			format = "text"
		}
	}
	switch format {
	case "json":
		return slog.New(slog.NewJSONHandler(w, opts)), nil
	case "text":
		return slog.New(slog.NewTextHandler(w, opts)), nil
	}
	return nil, fmt.Errorf("--log-format %q: use json, text or auto", l.format)
}

func isTerminal(f *os.File) bool {
	info, err := f.Stat()
	return err == nil && info.Mode()&os.ModeCharDevice != 0
}
