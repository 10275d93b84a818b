package docs

import (
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"unicode"
)

// repoRoot is the repository's root, from this package's directory.
const repoRoot = ".."

// TestNoCitationOfAMissingDesignDocument checks that no Go, Markdown or YAML
// file, nor the Makefile, cites the design document that lived outside the
// repository: docs/architecture.md is the design as built, and a citation
// of the other leads a reader nowhere.
func TestNoCitationOfAMissingDesignDocument(t *testing.T) {
	// The design document by its file name, or its sections by number.
	cites := regexp.MustCompile(`DESIGN\.md|(?i:\bdesign sections?\b)`)
	files := repoFiles(t, func(name string) bool {
		switch path.Ext(name) {
		case ".go", ".md", ".yaml", ".yml":
			return true
		}
		return path.Base(name) == "Makefile"
	})
	if len(files) < 50 {
		t.Fatalf("found %d files in %s, expected the repository's", len(files), repoRoot)
	}
	for _, name := range files {
		text := readRepoFile(t, name)
		for i, line := range strings.Split(text, "\n") {
			if m := cites.FindString(line); m != "" {
				t.Errorf("%s:%d cites the design document (%q), which is not in the repository: point at docs/architecture.md and its section instead", name, i+1, m)
			}
		}
	}
}

// TestMarkdownLinksResolve checks every relative link of the Markdown files
// (README.md, docs/*.md) and of docs/openapi.yaml's descriptions, and every
// docs/*.md a Go file names: the file it points at exists, and its #anchor, if any, is a
// heading of that file, by GitHub's rules.
func TestMarkdownLinksResolve(t *testing.T) {
	docs := append(repoFiles(t, func(name string) bool { return path.Ext(name) == ".md" }), "docs/openapi.yaml")
	if !slices.Contains(docs, "README.md") || !slices.Contains(docs, "docs/cli.md") {
		t.Fatalf("found the documents %v, expected README.md and docs/*.md", docs)
	}
	anchors := map[string]map[string]bool{} // per Markdown file, from the repository's root
	checked := 0
	check := func(where, from, target string) {
		t.Helper()
		checked++
		file, anchor, _ := strings.Cut(target, "#")
		if file == "" {
			file = from
		} else {
			file = path.Join(path.Dir(from), file)
		}
		if _, err := os.Stat(filepath.Join(repoRoot, filepath.FromSlash(file))); err != nil {
			t.Errorf("%s: link to %s: %s is not in the repository", where, target, file)
			return
		}
		if anchor == "" || path.Ext(file) != ".md" {
			return
		}
		if anchors[file] == nil {
			anchors[file] = headingAnchors(readRepoFile(t, file))
		}
		if !anchors[file][anchor] {
			t.Errorf("%s: link to %s: %s has no heading whose anchor is #%s (headings: %s)", where, target, file, anchor, strings.Join(sortedKeys(anchors[file]), ", "))
		}
	}
	for _, name := range docs {
		for _, l := range markdownLinks(readRepoFile(t, name)) {
			if isExternal(l.target) {
				continue
			}
			check(name+":"+strconv.Itoa(l.line), name, l.target)
		}
	}
	goCites := regexp.MustCompile(`(?:^|[^A-Za-z0-9_./-])(?:\.\./)*(docs/[A-Za-z0-9_-]+\.md(?:#[A-Za-z0-9_-]+)?)`)
	for _, name := range repoFiles(t, func(name string) bool { return path.Ext(name) == ".go" }) {
		for i, line := range strings.Split(readRepoFile(t, name), "\n") {
			for _, m := range goCites.FindAllStringSubmatch(line, -1) {
				check(name+":"+strconv.Itoa(i+1), "", m[1])
			}
		}
	}
	t.Logf("checked %d links", checked)
	if checked < 20 {
		t.Fatalf("checked %d links, expected the docs' many", checked)
	}
}

// TestHeadingAnchorsAndLinks checks the parsing the link test relies on,
// on made-up Markdown, so that it cannot pass by finding nothing.
func TestHeadingAnchorsAndLinks(t *testing.T) {
	md := "# sluice\n" +
		"## What one account may have\n" +
		"## Sending events: `sluice publish`\n" +
		"### TLS and NATS authentication\n" +
		"## Limits of `POST /events`\n" +
		"## A [linked](x.md) heading, (with) punctuation!\n" +
		"## Faults\n## Faults\n" +
		"```sh\n# not a heading\n[not](a-link.md)\n```\n" +
		"See [the API](api.md#errors), `[code](no.md)` and ![a](img.png \"title\"), [web](https://example.com).\n"
	gotAnchors := sortedKeys(headingAnchors(md))
	wantAnchors := []string{
		"a-linked-heading-with-punctuation",
		"faults",
		"faults-1",
		"limits-of-post-events",
		"sending-events-sluice-publish",
		"sluice",
		"tls-and-nats-authentication",
		"what-one-account-may-have",
	}
	if !slices.Equal(gotAnchors, wantAnchors) {
		t.Errorf("headingAnchors = %q, want %q", gotAnchors, wantAnchors)
	}
	var gotLinks []string
	for _, l := range markdownLinks(md) {
		gotLinks = append(gotLinks, l.target+"@"+strconv.Itoa(l.line))
	}
	wantLinks := []string{"x.md@6", "api.md#errors@13", "img.png@13", "https://example.com@13"}
	if !slices.Equal(gotLinks, wantLinks) {
		t.Errorf("markdownLinks = %q, want %q", gotLinks, wantLinks)
	}
}

// repoFiles returns the files of the repository (slash-separated, from its
// root) whose name keep accepts, leaving out hidden directories and
// node_modules.
func repoFiles(t *testing.T, keep func(name string) bool) []string {
	t.Helper()
	var files []string
	err := filepath.WalkDir(repoRoot, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, err := filepath.Rel(repoRoot, p)
		if err != nil {
			return err
		}
		rel = filepath.ToSlash(rel)
		if d.IsDir() {
			if rel != "." && (strings.HasPrefix(d.Name(), ".") || d.Name() == "node_modules") {
				return filepath.SkipDir
			}
			return nil
		}
		if keep(rel) {
			files = append(files, rel)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return files
}

func readRepoFile(t *testing.T, name string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(repoRoot, filepath.FromSlash(name)))
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// link is a Markdown link's target and the line it is on.
type link struct {
	target string
	line   int
}

var (
	codeSpan   = regexp.MustCompile("`+[^`]*`+")
	inlineLink = regexp.MustCompile(`\[[^\]]*\]\(\s*<?([^)\s>]+)>?(?:\s+"[^"]*")?\s*\)`)
)

// markdownLinks returns the targets of the inline links and images of md,
// outside fenced code blocks and code spans.
func markdownLinks(md string) []link {
	var links []link
	inFence := false
	for i, line := range strings.Split(md, "\n") {
		if strings.HasPrefix(strings.TrimSpace(line), "```") {
			inFence = !inFence
			continue
		}
		if inFence {
			continue
		}
		for _, m := range inlineLink.FindAllStringSubmatch(codeSpan.ReplaceAllString(line, "code"), -1) {
			links = append(links, link{target: m[1], line: i + 1})
		}
	}
	return links
}

// isExternal reports whether target leaves the repository: a URL with a
// scheme (https:, mailto:).
func isExternal(target string) bool {
	scheme, _, ok := strings.Cut(target, ":")
	return ok && !strings.ContainsAny(scheme, "/#.")
}

var atxHeading = regexp.MustCompile(`^ {0,3}(#{1,6})\s+(.*?)(?:\s+#+)?\s*$`)

// headingAnchors returns the anchors GitHub gives the headings of md: the
// heading's text as shown (code spans' text, links' text), lower-cased,
// with every character but letters, digits, spaces, '-' and '_' removed and
// each space made '-'; a repeated anchor gets -1, -2, ... after it.
func headingAnchors(md string) map[string]bool {
	anchors := map[string]bool{}
	seen := map[string]int{}
	inFence := false
	for _, line := range strings.Split(md, "\n") {
		if strings.HasPrefix(strings.TrimSpace(line), "```") {
			inFence = !inFence
			continue
		}
		m := atxHeading.FindStringSubmatch(line)
		if inFence || m == nil {
			continue
		}
		text := inlineLink.ReplaceAllStringFunc(m[2], func(s string) string { return s[1:strings.Index(s, "](")] })
		var b strings.Builder
		for _, r := range strings.ToLower(text) {
			switch {
			case r == ' ':
				b.WriteRune('-')
			case r == '-' || r == '_' || unicode.IsLetter(r) || unicode.IsDigit(r) || unicode.Is(unicode.Mn, r):
				b.WriteRune(r)
			}
		}
		anchor := b.String()
		if n := seen[anchor]; n > 0 {
			seen[anchor]++
			anchor += "-" + strconv.Itoa(n)
		} else {
			seen[anchor] = 1
		}
		anchors[anchor] = true
	}
	return anchors
}

func sortedKeys(m map[string]bool) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}
