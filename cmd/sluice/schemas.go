package main

import (
	"encoding/json"
	"fmt"
	"strings"
	"text/tabwriter"

	"github.com/spf13/cobra"

	"github.com/sluicehq/sluice/schemas"
)

// newSchemasCommand returns `sluice schemas`, which shows the event
// catalogue: its kinds, their JSON Schemas and the events reference.
func newSchemasCommand() *cobra.Command {
	c := schemas.Default()
	cmd := &cobra.Command{
		Use:   "schemas",
		Short: "Show the event catalogue: kinds, JSON Schemas and the events reference",
		Args:  cobra.NoArgs,
	}
	cmd.AddCommand(
		newSchemasListCommand(c),
		newSchemasShowCommand(c),
		newSchemasExportCommand(c),
		newSchemasDocsCommand(c),
	)
	return cmd
}

// schemasKindSummary is one kind in the output of `sluice schemas list --json`.
type schemasKindSummary struct {
	Name        string `json:"name"`
	Class       string `json:"class"`
	Family      string `json:"family"`
	Description string `json:"description"`
	Fields      int    `json:"fields"`
}

func newSchemasListCommand(c *schemas.Catalogue) *cobra.Command {
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "list",
		Short: "List the event kinds and their class (traffic or audit)",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			out := cmd.OutOrStdout()
			if asJSON {
				kinds := make([]schemasKindSummary, 0, len(c.Kinds()))
				for _, k := range c.Kinds() {
					kinds = append(kinds, schemasKindSummary{k.Name, k.Class.String(), k.Family, k.Description, len(k.Fields)})
				}
				enc := json.NewEncoder(out)
				enc.SetIndent("", "  ")
				return enc.Encode(kinds)
			}
			w := tabwriter.NewWriter(out, 0, 0, 2, ' ', 0)
			for _, k := range c.Kinds() {
				fmt.Fprintf(w, "%s\t%s\n", k.Name, k.Class)
			}
			return w.Flush()
		},
	}
	cmd.Flags().BoolVar(&asJSON, "json", false, "print a JSON array of the kinds with their family, description and number of fields")
	return cmd
}

func newSchemasShowCommand(c *schemas.Catalogue) *cobra.Command {
	return &cobra.Command{
		Use:   "show KIND",
		Short: "Print the JSON Schema (draft 2020-12) of the envelope of an event kind",
		Args:  cobra.ExactArgs(1),
		ValidArgsFunction: func(_ *cobra.Command, args []string, _ string) ([]string, cobra.ShellCompDirective) {
			if len(args) > 0 {
				return nil, cobra.ShellCompDirectiveNoFileComp
			}
			return c.Names(), cobra.ShellCompDirectiveNoFileComp
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			if _, ok := c.Kind(args[0]); !ok {
				return unknownKindError(c, args[0])
			}
			doc, err := c.JSONSchema(args[0])
			if err != nil {
				return err
			}
			_, err = cmd.OutOrStdout().Write(doc)
			return err
		},
	}
}

func newSchemasExportCommand(c *schemas.Catalogue) *cobra.Command {
	return &cobra.Command{
		Use:   "export DIR",
		Short: "Write the JSON Schema of every event kind to DIR/<kind>.schema.json",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := c.ExportJSONSchemas(args[0]); err != nil {
				return err
			}
			fmt.Fprintf(cmd.ErrOrStderr(), "wrote %d JSON Schemas to %s\n", len(c.Kinds()), args[0])
			return nil
		},
	}
}

func newSchemasDocsCommand(c *schemas.Catalogue) *cobra.Command {
	return &cobra.Command{
		Use:   "docs",
		Short: "Print the events reference (docs/events.md) in Markdown",
		Long: "Print the events reference in Markdown. docs/events.md is this output; regenerate it with\n\n\t" +
			schemas.DocsCommand,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			_, err := cmd.OutOrStdout().Write(c.Markdown())
			return err
		},
	}
}

// unknownKindError returns an error wrapping schemas.ErrUnknownKind that
// names the kinds closest to name.
func unknownKindError(c *schemas.Catalogue, name string) error {
	suggestions := c.Suggest(name, 5)
	if len(suggestions) == 0 {
		return fmt.Errorf("%w %q; `sluice schemas list` shows every kind", schemas.ErrUnknownKind, name)
	}
	return fmt.Errorf("%w %q; did you mean %s? (`sluice schemas list` shows every kind)",
		schemas.ErrUnknownKind, name, strings.Join(suggestions, ", "))
}
