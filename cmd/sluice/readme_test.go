package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"
)

// TestREADME runs the shell blocks of README.md, in order, against a real
// `sluice serve --dev`, as a newcomer would after starting it: so that the
// walk-through cannot go stale without CI saying so.
//
// How it runs them:
//
//   - sluice is built, and its directory put first in PATH, so that the
//     blocks' `sluice` is this tree's;
//   - `sluice serve --dev` runs with a fresh data dir on free ports,
//     exposing its embedded NATS (--nats-listen), and the test reads the
//     API key it prints on its first start;
//   - every ```sh block of the README whose info string is only "sh" runs,
//     in order of appearance, in one bash (set -euo pipefail), so that a
//     variable a block sets (ED=$(...)) is there for the next; the working
//     directory is a fresh temporary directory;
//   - the README is written for a newcomer on the default addresses, and
//     readmeLocal is the one place that turns it into this run's: it
//     replaces 127.0.0.1:8080 (the API), 127.0.0.1:4566 (the AWS emulator
//     of --dev) and 127.0.0.1:4222 (the embedded NATS) with the test
//     server's addresses, ./sluice-data/ (serve's default --data-dir,
//     where the NATS seeds are) with its data dir, and the placeholder
//     sk_... with the key the server printed (the README asks the reader
//     to paste it). The
//     environment has SLUICE_API_KEY, SLUICE_API_URL and SLUICE_NATS_URL
//     set to the same, as a newcomer's commands find them by default.
//
// A block runs green when bash exits 0 and its output holds no API error
// (an "error_code"), except when the block is followed directly (nothing
// but blank lines between) by an expected-output block showing an error:
// its output must then hold that block's ERR_SLUICE_ codes.
//
// A block that cannot run here is marked in the README with the info string
// "sh skip-test" (GitHub shows it as any sh block): starting sluice (the
// test runs its own), `make test` and other long runs, and commands that
// never end, such as a following tail. Prefer making a block runnable: a
// value a later command needs is captured in a variable from the command
// that prints it (`sluice destinations create -q` prints only the id).
//
// The blocks need bash, curl and jq; without them the test is skipped,
// except in CI (CI set), where it fails.
func TestREADME(t *testing.T) {
	if testing.Short() {
		t.Skip("builds sluice and runs the README's shell blocks against sluice serve --dev")
	}
	for _, tool := range []string{"bash", "curl", "jq"} {
		if _, err := exec.LookPath(tool); err != nil {
			if os.Getenv("CI") != "" {
				t.Fatalf("the README's blocks need %s: install it", tool)
			}
			t.Skipf("the README's blocks need %s, which is not installed", tool)
		}
	}
	readme, err := os.ReadFile(filepath.Join("..", "..", "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	blocks, err := readmeBlocks(string(readme))
	if err != nil {
		t.Fatal(err)
	}
	if len(blocks) < 5 {
		t.Fatalf("found %d runnable sh blocks in README.md, expected the walk-through's", len(blocks))
	}

	clearSluiceEnv(t)
	bin := buildSluice(t)
	dataDir := t.TempDir()
	p := startServe(t, bin, dataDir, "SLUICE_DEV=true", "SLUICE_DEV_AWS_LISTEN=127.0.0.1:0", "SLUICE_NATS_LISTEN=127.0.0.1:0")
	local := readmeLocal{
		dataDir:  dataDir,
		api:      p.url,
		emulator: loggedAttr(t, p, "aws_endpoint"),
		nats:     loggedAttr(t, p, "nats_url"),
		key:      bootstrapKey(t, p),
	}

	env := append(os.Environ(), // without SLUICE_ variables: clearSluiceEnv
		"PATH="+filepath.Dir(bin)+string(os.PathListSeparator)+os.Getenv("PATH"),
		"SLUICE_API_KEY="+local.key,
		"SLUICE_API_URL="+local.api,
		"SLUICE_NATS_URL="+local.nats,
	)
	ctx, cancel := context.WithTimeout(t.Context(), 2*time.Minute)
	defer cancel()
	start := time.Now()
	if err := runShellBlocks(ctx, blocks, local.rewrite, env, t.TempDir()); err != nil {
		t.Fatalf("%v\n\nsluice serve logged, last:\n%s", err, p.tail())
	}
	t.Logf("ran %d README blocks in %s", len(blocks), time.Since(start).Round(time.Millisecond))

	// No two destinations of the walk-through write to the same place: a
	// reader following it would see each event twice there.
	status, body := request(t, http.MethodGet, local.api+"/event_destinations?limit=100", local.key, "")
	var page struct {
		Destinations []struct {
			ID     string          `json:"id"`
			Target json.RawMessage `json:"target"`
		} `json:"event_destinations"`
	}
	if err := json.Unmarshal([]byte(body), &page); status != http.StatusOK || err != nil {
		t.Fatalf("listing the README's destinations: %d %s (%v)", status, body, err)
	}
	targets := make(map[string]string)
	for _, d := range page.Destinations {
		if other, ok := targets[string(d.Target)]; ok {
			t.Errorf("the README makes destinations %s and %s with the same target %s", other, d.ID, d.Target)
		}
		targets[string(d.Target)] = d.ID
	}
}

// TestRunShellBlocksFails shows that TestREADME fails on a broken block: a
// command that fails, an API error nobody expected, an expected error that
// did not come.
func TestRunShellBlocksFails(t *testing.T) {
	if _, err := exec.LookPath("bash"); err != nil {
		t.Skip("needs bash")
	}
	cases := []struct {
		name, readme, want string
	}{
		{"ok", "```sh\nX=1\n```\n\n```sh\necho $X\n```\n", ""},
		{"skipped", "```sh skip-test\nfalse\n```\n", ""},
		{"command fails", "# t\n\n```sh\ntrue\n```\n\n```sh\nfalse\ntrue\n```\n", "README.md line 8"},
		{"unset variable", "```sh\necho $NOPE\n```\n", "line 2"},
		{"pipe fails", "```sh\nfalse | cat\n```\n", "line 2"},
		{"unexpected API error", "```sh\necho '{\"error_code\":\"ERR_SLUICE_301\"}'\n```\n", "answered an API error"},
		{"expected API error", "```sh\necho '{\"error_code\":\"ERR_SLUICE_301\"}'\n```\n\n```json\n{\"error_code\":\"ERR_SLUICE_301\"}\n```\n", ""},
		{"expected error missing", "```sh\necho ok\n```\n\n```json\n{\"error_code\":\"ERR_SLUICE_333\",\n \"msg\": \"...\"}\n```\n", "ERR_SLUICE_333"},
		{"rewritten", "```sh\n[ 127.0.0.1:8080 = there ]\n```\n", ""},
		{"unknown marker", "```sh skip\ntrue\n```\n", "info string"},
		{"bash block", "```bash\ntrue\n```\n", "info string"},
	}
	rewrite := func(s string) string { return strings.ReplaceAll(s, "127.0.0.1:8080", "there") }
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			blocks, err := readmeBlocks(c.readme)
			if err == nil {
				err = runShellBlocks(t.Context(), blocks, rewrite, os.Environ(), t.TempDir())
			}
			switch {
			case c.want == "" && err != nil:
				t.Fatalf("want success, got %v", err)
			case c.want != "" && err == nil:
				t.Fatalf("want a failure saying %q, got success", c.want)
			case c.want != "" && !strings.Contains(err.Error(), c.want):
				t.Fatalf("want a failure saying %q, got %v", c.want, err)
			}
		})
	}
}

// readmeBlock is a runnable ```sh block of the README.
type readmeBlock struct {
	line     int    // of its first command
	script   string // its text
	expected string // the expected-output block right after it, if any
}

// readmeBlocks returns the runnable sh blocks of a Markdown text, in order:
// those whose info string is "sh" alone, each with the json or text block
// that follows it with nothing but blank lines between. A shell block with
// another info string than "sh" or "sh skip-test" is an error, so that a
// block is never left out by a typo.
func readmeBlocks(markdown string) ([]readmeBlock, error) {
	type fence struct {
		info, text string
		line       int
		after      int // index of the fence after it with nothing but blank lines between, or -1
	}
	var fences []fence
	lines := strings.Split(markdown, "\n")
	lastEnd := -1 // the line of the last closing fence
	for i := 0; i < len(lines); i++ {
		info, ok := strings.CutPrefix(lines[i], "```")
		if !ok {
			continue
		}
		f := fence{info: strings.TrimSpace(info), line: i + 2, after: -1}
		adjacent := len(fences) > 0 && lastEnd >= 0 && strings.TrimSpace(strings.Join(lines[lastEnd+1:i], "")) == ""
		var text []string
		for i++; i < len(lines) && !strings.HasPrefix(lines[i], "```"); i++ {
			text = append(text, lines[i])
		}
		f.text = strings.Join(text, "\n")
		if adjacent {
			fences[len(fences)-1].after = len(fences)
		}
		fences = append(fences, f)
		lastEnd = i
	}
	var blocks []readmeBlock
	for _, f := range fences {
		lang, _, _ := strings.Cut(f.info, " ")
		switch {
		case f.info == "sh":
		case f.info == "sh "+skipTest:
			continue
		case slices.Contains([]string{"sh", "bash", "shell", "console", "zsh"}, lang):
			return nil, fmt.Errorf("line %d: the info string %q of a shell block: want sh (the test runs it) or %q (it cannot run in a test)", f.line-1, f.info, "sh "+skipTest)
		default:
			continue
		}
		b := readmeBlock{line: f.line, script: f.text}
		if f.after >= 0 && (fences[f.after].info == "json" || fences[f.after].info == "text") {
			b.expected = fences[f.after].text
		}
		blocks = append(blocks, b)
	}
	return blocks, nil
}

// skipTest marks a shell block of the README that TestREADME does not run.
const skipTest = "skip-test"

// errorCodes matches the API's error codes in an output.
var errorCodes = regexp.MustCompile(`"error_code"\s*:\s*"(ERR_SLUICE_[0-9]+)"`)

// runShellBlocks runs the blocks, each rewritten, in one bash in dir with
// env, and says which block failed and why.
func runShellBlocks(ctx context.Context, blocks []readmeBlock, rewrite func(string) string, env []string, dir string) error {
	const marker = "::README block "
	var script strings.Builder
	script.WriteString("set -euo pipefail\n")
	for i, b := range blocks {
		fmt.Fprintf(&script, "echo '%s%d'\n%s\n", marker, i, rewrite(b.script))
	}
	cmd := exec.CommandContext(ctx, "bash", "-c", script.String())
	cmd.Dir, cmd.Env = dir, env
	cmd.WaitDelay = 5 * time.Second // for a command a block left running
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	runErr := cmd.Run()

	// Split the output by block.
	outputs := make([]string, len(blocks))
	current := -1
	sc := bufio.NewScanner(&out)
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		if n, ok := strings.CutPrefix(sc.Text(), marker); ok {
			fmt.Sscan(n, &current)
			continue
		}
		if current >= 0 {
			outputs[current] += sc.Text() + "\n"
		}
	}
	describe := func(i int, why string) error {
		return fmt.Errorf("README.md line %d: the block %s:\n%s\n--- its output:\n%s", blocks[i].line, why, blocks[i].script, outputs[i])
	}
	for i := range min(current+1, len(blocks)) {
		want := errorCodes.FindAllStringSubmatch(blocks[i].expected, -1)
		got := errorCodes.FindAllStringSubmatch(outputs[i], -1)
		if len(want) == 0 && len(got) > 0 {
			return describe(i, "answered an API error")
		}
		for _, w := range want {
			if !slices.ContainsFunc(got, func(g []string) bool { return g[1] == w[1] }) {
				return describe(i, fmt.Sprintf("should answer %s, as the README shows after it", w[1]))
			}
		}
	}
	switch {
	case ctx.Err() != nil:
		return describe(max(current, 0), fmt.Sprintf("did not end in time (%v)", ctx.Err()))
	case runErr != nil && current >= 0:
		return describe(current, fmt.Sprintf("failed (%v)", runErr))
	case runErr != nil:
		return fmt.Errorf("bash: %v\n%s", runErr, out.String())
	case current != len(blocks)-1:
		return fmt.Errorf("bash ended after block %d of %d", current+1, len(blocks))
	}
	return nil
}

// readmeLocal is how this run's server differs from the README's
// newcomer's.
type readmeLocal struct {
	dataDir  string // the data dir of sluice serve
	api      string // http://HOST:PORT of the API
	emulator string // http://HOST:PORT of the AWS emulator
	nats     string // nats://HOST:PORT of the embedded NATS
	key      string // the bootstrap API key
}

// rewrite turns a README block into one for this run: the default
// addresses become the test server's, and the key placeholder its key.
func (l readmeLocal) rewrite(block string) string {
	hostPort := func(u string) string { return u[strings.Index(u, "://")+3:] }
	return strings.NewReplacer(
		"127.0.0.1:8080", hostPort(l.api),
		"127.0.0.1:4566", hostPort(l.emulator),
		"127.0.0.1:4222", hostPort(l.nats),
		"./sluice-data/", l.dataDir+"/",
		"sk_...", l.key,
	).Replace(block)
}

// loggedAttr returns the first value of the string attribute key that the
// process logged, waiting a little for it.
func loggedAttr(t *testing.T, p *serveProcess, key string) string {
	t.Helper()
	var value string
	pollUntil(t, 10*time.Second, 20*time.Millisecond, "sluice serve to log "+key, func() bool {
		for _, line := range p.allLines() {
			var rec map[string]any
			if json.Unmarshal([]byte(line), &rec) == nil {
				if v, ok := rec[key].(string); ok && strings.Contains(v, "://") {
					value = v
					return true
				}
			}
		}
		return false
	}, p.tail)
	return value
}

// bootstrapKey returns the API key sluice serve printed on its first start.
func bootstrapKey(t *testing.T, p *serveProcess) string {
	t.Helper()
	token := regexp.MustCompile(`^\s+(sk_[A-Za-z0-9]{16,})\s*$`)
	var key string
	pollUntil(t, 10*time.Second, 20*time.Millisecond, "sluice serve to print its first API key", func() bool {
		for _, line := range p.allLines() {
			if m := token.FindStringSubmatch(line); m != nil {
				key = m[1]
				return true
			}
		}
		return false
	}, p.tail)
	return key
}

// allLines returns every line the process logged, from its start.
func (p *serveProcess) allLines() []string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return append(slices.Clone(p.stderr), p.later...)
}
