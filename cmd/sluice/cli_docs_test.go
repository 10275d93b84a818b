package main

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
)

// TestCLIDocsCoverEveryCommand walks sluice's commands from newRootCommand
// and checks that the documentation cliDocs names for each writes its path
// and each of its flags (--name), so that a command or flag added without a
// word in the docs fails here: docs/cli.md once lacked
// destinations dead-letters, destinations redrive and tail's --emulator.
func TestCLIDocsCoverEveryCommand(t *testing.T) {
	// Where each command is documented for its users: the file, from the
	// repository's root, and the heading of the section that documents it
	// (empty for the whole file). A command is documented when its path and
	// every flag it defines (hidden ones aside) are written there; in a row
	// of a table when table is set.
	type docPlace struct {
		file, section string
		table         bool
	}
	cliDocs := map[string]docPlace{
		"destinations":    {file: "docs/cli.md"},
		"subscriptions":   {file: "docs/cli.md"},
		"agent-ingresses": {file: "docs/cli.md"},
		"app-sessions":    {file: "docs/cli.md"},
		"api-keys":        {file: "docs/cli.md"},
		"bot-users":       {file: "docs/cli.md"},
		"credentials":     {file: "docs/cli.md"},
		"publish":         {file: "docs/cli.md", section: "## Sending events: `sluice publish`"},
		"healthcheck":     {file: "docs/cli.md", section: "## Checking a process: `sluice healthcheck`"},
		"tail":            {file: "docs/cli.md", section: "## Reading what a destination holds: `sluice tail`"},
		"serve":           {file: "README.md", section: "## Configuration", table: true},
		"accounts":        {file: "README.md", section: "## Accounts"},
		"schemas":         {file: "README.md", section: "## The event catalogue"},
		"emulator":        {file: "docs/emulator.md", section: "## Running it", table: true},
	}
	cliDocs["edges"] = docPlace{file: "docs/cli.md"}
	cliDocs["backends"] = docPlace{file: "docs/cli.md"}
	cliDocs["tunnel-sessions"] = docPlace{file: "docs/cli.md"}
	cliDocs["endpoints"] = docPlace{file: "docs/cli.md"}
	cliDocs["tls-certificates"] = docPlace{file: "docs/cli.md"}
	cliDocs["reserved-domains"] = docPlace{file: "docs/cli.md"}
	cliDocs["policy"] = docPlace{file: "docs/cli.md", section: "## Checking a traffic policy: `sluice policy check`"}
	cliDocs["nats-auth"] = docPlace{file: "docs/operations.md", section: "## TLS and NATS authentication"}
	cliDocs["acme-challenges"] = docPlace{file: "docs/operations.md", section: "## DNS"}
	// The commands left out of cliDocs, and why.
	cliUndocumented := map[string]string{}
	root := newRootCommand()
	for _, top := range root.Commands() {
		if top.Hidden || top.Name() == "help" || top.Name() == "completion" {
			continue
		}
		if _, ok := cliUndocumented[top.Name()]; ok {
			continue
		}
		where, ok := cliDocs[top.Name()]
		if !ok {
			t.Errorf("sluice %s: no documentation named in cliDocs; document it (docs/cli.md for a client of the API) and add it there", top.Name())
			continue
		}
		text, err := docSection(where.file, where.section)
		if err != nil {
			t.Errorf("sluice %s: %v", top.Name(), err)
			continue
		}
		place := where.file
		if where.section != "" {
			place += ` section "` + where.section + `"`
		}
		flagText := text
		if where.table {
			flagText = markdownTableRows(text)
			place += "'s table"
		}
		walkCommands(top, func(cmd *cobra.Command) {
			path := strings.TrimPrefix(cmd.CommandPath(), "sluice ")
			if !mentionsCommand(text, path) {
				t.Errorf("%s does not mention the command %q", place, "sluice "+path)
			}
			cmd.LocalFlags().VisitAll(func(f *pflag.Flag) {
				if f.Hidden || f.Name == "help" {
					return
				}
				if !mentionsFlag(flagText, f.Name) {
					t.Errorf("%s does not mention --%s of %q (%s)", place, f.Name, "sluice "+path, f.Usage)
				}
			})
		})
	}
}

// TestCLIDocsCheckFails checks the checks of TestCLIDocsCoverEveryCommand
// on made-up documentation, so that it cannot pass for a doc that lacks a
// command or a flag.
func TestCLIDocsCheckFails(t *testing.T) {
	doc := "| `destinations create` | ... `--api-url` and `--since` |\n" +
		"| `subscriptions create`, `list`, `delete ID...` | |\n" +
		"```sh\nsluice accounts add-key --account \"$AC\"\n```\n"
	for _, c := range []struct {
		path string
		want bool
	}{
		{"destinations create", true},
		{"subscriptions list", true},
		{"subscriptions delete", true},
		{"accounts add-key", true},
		{"destinations redrive", false},
		{"subscriptions get", false},
		{"destinations", true},
		{"accounts", true},
		{"tail", false},
	} {
		if got := mentionsCommand(doc, c.path); got != c.want {
			t.Errorf("mentionsCommand(%q) = %v, want %v", c.path, got, c.want)
		}
	}
	for _, c := range []struct {
		name string
		want bool
	}{
		{"api-url", true},
		{"since", true},
		{"account", true},
		{"api", false},
		{"url", false},
		{"emulator", false},
	} {
		if got := mentionsFlag(doc, c.name); got != c.want {
			t.Errorf("mentionsFlag(%q) = %v, want %v", c.name, got, c.want)
		}
	}
	md := "# T\n## A\n| `--a` | x |\n```sh\n# a comment, not a heading\n```\n### Sub\n`--sub`\n## B\n| `--b` | |\n"
	section, ok := markdownSection(md, "## A")
	want := "## A\n| `--a` | x |\n```sh\n# a comment, not a heading\n```\n### Sub\n`--sub`"
	if !ok || section != want {
		t.Errorf("markdownSection(## A) = %q, %v; want %q", section, ok, want)
	}
	if rows := markdownTableRows(section); rows != "| `--a` | x |" {
		t.Errorf("markdownTableRows = %q, want the one row", rows)
	}
	if _, ok := markdownSection(md, "## C"); ok {
		t.Errorf("markdownSection found a heading md lacks")
	}
}

// walkCommands calls fn for cmd and each of its commands, depth first,
// leaving out hidden ones and cobra's own.
func walkCommands(cmd *cobra.Command, fn func(*cobra.Command)) {
	if cmd.Hidden || cmd.Name() == "help" || cmd.Name() == "completion" {
		return
	}
	fn(cmd)
	for _, sub := range cmd.Commands() {
		walkCommands(sub, fn)
	}
}

// mentionsFlag reports whether text writes --name, not as part of a longer
// flag (--api is not in --api-url).
func mentionsFlag(text, name string) bool {
	return regexp.MustCompile(`(^|[^A-Za-z0-9-])--` + regexp.QuoteMeta(name) + `($|[^A-Za-z0-9-])`).MatchString(text)
}

// mentionsCommand reports whether text names the command at path (without
// "sluice "): in a code span (`destinations redrive ID`, `sluice tail`), at
// the start of a line of a shell block (sluice accounts list), or as a
// sibling in a list that starts with its parent, as docs/cli.md's table
// writes `subscriptions create`, `list`, `get ID`.
func mentionsCommand(text, path string) bool {
	end := "($|[` \\]])"
	q := regexp.QuoteMeta(path)
	if regexp.MustCompile("(?m)(`(sluice )?|^(\\$ )?sluice )" + q + end).MatchString(text) {
		return true
	}
	parent, leaf, ok := strings.Cut(path, " ")
	if !ok {
		return false
	}
	if i := strings.LastIndex(path, " "); i >= 0 {
		parent, leaf = path[:i], path[i+1:]
	}
	inList := regexp.MustCompile("`(sluice )?" + regexp.QuoteMeta(parent) + " ")
	sibling := regexp.MustCompile("`" + regexp.QuoteMeta(leaf) + end)
	for _, line := range strings.Split(text, "\n") {
		if inList.MatchString(line) && sibling.MatchString(line) {
			return true
		}
	}
	return false
}

// markdownTableRows returns the lines of text that are rows of a Markdown table.
func markdownTableRows(text string) string {
	var rows []string
	for _, line := range strings.Split(text, "\n") {
		if strings.HasPrefix(strings.TrimSpace(line), "|") {
			rows = append(rows, line)
		}
	}
	return strings.Join(rows, "\n")
}

// docSection reads file (from the repository's root) and returns the
// section under heading; the whole file when heading is empty.
func docSection(file, heading string) (string, error) {
	b, err := os.ReadFile(filepath.Join("..", "..", filepath.FromSlash(file)))
	if err != nil {
		return "", err
	}
	if heading == "" {
		return string(b), nil
	}
	section, ok := markdownSection(string(b), heading)
	if !ok {
		return "", fmt.Errorf("%s has no heading %q: say in cliDocs where the command is documented now", file, heading)
	}
	return section, nil
}

// markdownSection returns the lines of md from the line heading (such as
// "## Accounts") up to the next heading of its level or above, outside
// fenced code blocks; false when md has no such heading.
func markdownSection(md, heading string) (string, bool) {
	level := strings.Index(heading, " ")
	lines := strings.Split(md, "\n")
	start := -1
	inFence := false
	for i, line := range lines {
		if strings.HasPrefix(line, "```") {
			inFence = !inFence
			continue
		}
		if inFence {
			continue
		}
		if start < 0 {
			if line == heading {
				start = i
			}
			continue
		}
		if n := len(line) - len(strings.TrimLeft(line, "#")); n > 0 && n <= level && strings.HasPrefix(line[n:], " ") {
			return strings.Join(lines[start:i], "\n"), true
		}
	}
	if start < 0 {
		return "", false
	}
	return strings.Join(lines[start:], "\n"), true
}
