package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"go/version"
	"maps"
	"net"
	"net/url"
	"os"
	"path"
	"path/filepath"
	"regexp"
	"runtime/debug"
	"slices"
	"strings"
	"testing"

	"github.com/compose-spec/compose-go/v2/cli"
	"github.com/nats-io/nats-server/v2/server"
	"github.com/spf13/pflag"
	"go.yaml.in/yaml/v3"

	"github.com/sluicehq/sluice/internal/natsserver"
)

// repoRoot is the repository root, seen from this package's directory,
// where the deployment files are.
const repoRoot = "../.."

// composeFile is the part of docker-compose.yml the tests check.
type composeFile struct {
	Services map[string]composeService `yaml:"services"`
	Volumes  map[string]any            `yaml:"volumes"`
}

type composeService struct {
	Image string `yaml:"image"`
	Build struct {
		Context    string `yaml:"context"`
		Dockerfile string `yaml:"dockerfile"`
	} `yaml:"build"`
	Command     []string          `yaml:"command"`
	Environment map[string]string `yaml:"environment"`
	Ports       []string          `yaml:"ports"`
	Volumes     []string          `yaml:"volumes"`
	DependsOn   map[string]struct {
		Condition string `yaml:"condition"`
	} `yaml:"depends_on"`
	Healthcheck struct {
		Test []string `yaml:"test"`
	} `yaml:"healthcheck"`
}

func readCompose(t *testing.T) composeFile {
	t.Helper()
	raw, err := os.ReadFile(filepath.Join(repoRoot, "docker-compose.yml"))
	if err != nil {
		t.Fatal(err)
	}
	var c composeFile
	if err := yaml.Unmarshal(raw, &c); err != nil {
		t.Fatalf("docker-compose.yml: %v", err)
	}
	return c
}

// parseServeArgs parses args as `sluice serve` would, failing the test on
// an unknown flag, a bad value, or flags that validate refuses.
func parseServeArgs(t *testing.T, where string, args []string) serveFlags {
	t.Helper()
	var f serveFlags
	fs := pflag.NewFlagSet("serve", pflag.ContinueOnError)
	fs.SetOutput(new(bytes.Buffer))
	f.register(fs)
	if err := fs.Parse(args); err != nil {
		t.Fatalf("%s: sluice serve %s: %v", where, strings.Join(args, " "), err)
	}
	if fs.NArg() > 0 {
		t.Fatalf("%s: sluice serve takes no arguments, got %q", where, fs.Args())
	}
	if err := f.validate(); err != nil {
		t.Fatalf("%s: sluice serve %s: %v", where, strings.Join(args, " "), err)
	}
	return f
}

// natsServerVersion is the version of the nats-server module sluice is
// built and tested with, such as v2.15.2.
func natsServerVersion(t *testing.T) string {
	t.Helper()
	info, ok := debug.ReadBuildInfo()
	if !ok {
		t.Fatal("no build info")
	}
	for _, dep := range info.Deps {
		if dep.Path == "github.com/nats-io/nats-server/v2" {
			return dep.Version
		}
	}
	t.Fatal("nats-server is not a dependency")
	return ""
}

// TestDockerCompose checks docker-compose.yml: three NATS nodes routed to
// each other with JetStream and a max_payload sluice can use, two sluice
// processes using all three with --replicas 3, the emulator as their AWS,
// their metrics on a listener of their own published on loopback only, and
// health checks on every service.
func TestDockerCompose(t *testing.T) {
	c := readCompose(t)
	var nodes, sluices []string
	for name, svc := range c.Services {
		switch {
		case strings.HasPrefix(svc.Image, "nats:"):
			nodes = append(nodes, name)
		case len(svc.Command) > 0 && svc.Command[0] == "serve":
			sluices = append(sluices, name)
		}
		// nats-auth runs once, before the nodes, and is done.
		if len(svc.Healthcheck.Test) == 0 && name != "nats-auth" {
			t.Errorf("service %s has no health check", name)
		}
	}
	slices.Sort(nodes)
	slices.Sort(sluices)
	if len(nodes) != 3 || len(sluices) != 2 {
		t.Fatalf("NATS nodes %v and sluice processes %v, want 3 and 2", nodes, sluices)
	}

	// The NATS nodes: one configuration file, a name each, a volume each.
	minor := strings.Join(strings.SplitN(strings.TrimPrefix(natsServerVersion(t), "v"), ".", 3)[:2], ".")
	var natsConf string
	dataDirs := map[string]string{}
	for _, name := range nodes {
		svc := c.Services[name]
		if tag := strings.TrimPrefix(svc.Image, "nats:"); !strings.HasPrefix(tag, minor+"-") && tag != minor {
			t.Errorf("%s: image %s, want nats:%s-alpine, the minor version of the nats-server module in go.mod", name, svc.Image, minor)
		}
		if want := []string{"--config", "/etc/nats/nats.conf", "--name", name}; !slices.Equal(svc.Command, want) {
			t.Errorf("%s: command %q, want %q", name, svc.Command, want)
		}
		conf, dataDir := natsNodeMounts(t, c, name, svc)
		if natsConf != "" && conf != natsConf {
			t.Errorf("%s reads %s, another node %s", name, conf, natsConf)
		}
		natsConf, dataDirs[name] = conf, dataDir
		if svc.DependsOn["nats-auth"].Condition != "service_completed_successfully" {
			t.Errorf("%s: depends_on nats-auth: %q, want service_completed_successfully: it includes the file nats-auth writes", name, svc.DependsOn["nats-auth"].Condition)
		}
	}
	authDir := checkComposeNATSAuth(t, c)
	opts := natsOptions(t, withAuthConfig(t, natsConf))
	if len(opts.Nkeys) != len(natsserver.Identities()) || len(opts.Users) != 0 || opts.NoAuthUser != "" {
		t.Errorf("%s: NATS users %d nkeys, %d others (no_auth_user %q); want sluice's %d identities alone", natsConf, len(opts.Nkeys), len(opts.Users), opts.NoAuthUser, len(natsserver.Identities()))
	}
	var routes []string
	for _, r := range opts.Routes {
		routes = append(routes, r.Host)
	}
	clientURLs := map[string]bool{}
	for _, name := range nodes {
		if opts.StoreDir != dataDirs[name] {
			t.Errorf("%s: JetStream stores in %s, but its volume is at %s", name, opts.StoreDir, dataDirs[name])
		}
		if want := net.JoinHostPort(name, fmt.Sprint(opts.Cluster.Port)); !slices.Contains(routes, want) {
			t.Errorf("cluster routes %v lack %s: every node must route to every other", routes, want)
		}
		clientURLs[fmt.Sprintf("nats://%s:%d", name, opts.Port)] = true
	}

	emulatorURL := checkComposeEmulator(t, c)
	hostPorts := map[string]string{}
	for _, name := range sluices {
		svc := c.Services[name]
		f := parseServeArgs(t, name, svc.Command[1:])
		got := map[string]bool{}
		for _, u := range strings.Split(f.natsURL, ",") {
			got[strings.TrimSpace(u)] = true
		}
		if !mapsEqual(got, clientURLs) {
			t.Errorf("%s: --nats-url %s, want every node: %v", name, f.natsURL, clientURLs)
		}
		if f.replicas != 3 {
			t.Errorf("%s: --replicas %d, want 3", name, f.replicas)
		}
		if want := path.Join(volumeMount(svc, "nats-auth"), "sluice.nk"); volumeMount(svc, "nats-auth") == "" || f.natsNkey != want {
			t.Errorf("%s: --nats-nkey %q, want sluice's seed in the volume nats-auth (%s): its volumes %v", name, f.natsNkey, authDir, svc.Volumes)
		}
		host, port, err := net.SplitHostPort(f.httpAddr)
		if err != nil || host != "0.0.0.0" {
			t.Errorf("%s: --http %s, want 0.0.0.0:PORT to be reached from outside the container", name, f.httpAddr)
		}
		metricsHost, metricsPort, err := net.SplitHostPort(f.metricsAddr)
		if err != nil || metricsHost != "0.0.0.0" {
			t.Errorf("%s: --metrics-http %q, want 0.0.0.0:PORT for a Prometheus in another container", name, f.metricsAddr)
		}
		published := map[string]bool{}
		for _, p := range svc.Ports {
			hostPart, containerPort := splitPublished(p)
			switch containerPort {
			case port:
			case metricsPort:
				if !strings.HasPrefix(p, "127.0.0.1:") {
					t.Errorf("%s publishes its metrics as %s, beyond the host's loopback: they name every account's ids", name, p)
				}
			default:
				t.Errorf("%s publishes %s, but serves on ports %s and %s", name, p, port, metricsPort)
			}
			published[containerPort] = true
			if other, ok := hostPorts[hostPart]; ok {
				t.Errorf("%s and %s both publish %s", name, other, hostPart)
			}
			hostPorts[hostPart] = name
		}
		if !published[port] {
			t.Errorf("%s does not publish its API's port %s", name, port)
		}
		checkProbe(t, name, svc.Healthcheck.Test, port, readyzPath)
		for _, dep := range append(slices.Clone(nodes), "emulator") {
			if svc.DependsOn[dep].Condition != "service_healthy" {
				t.Errorf("%s: depends_on %s: %q, want service_healthy", name, dep, svc.DependsOn[dep].Condition)
			}
		}
		if got := svc.Environment["AWS_ENDPOINT_URL"]; got != emulatorURL {
			t.Errorf("%s: AWS_ENDPOINT_URL %q, want the emulator's %s", name, got, emulatorURL)
		}
		for _, v := range []string{"AWS_REGION", "AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY"} {
			if svc.Environment[v] == "" {
				t.Errorf("%s: %s is not set", name, v)
			}
		}
		checkSluiceEnvironment(t, name, svc.Environment)
		if _, err := os.Stat(filepath.Join(repoRoot, svc.Build.Context, svc.Build.Dockerfile)); err != nil {
			t.Errorf("%s: build: %v", name, err)
		}
	}
	if len(hostPorts) != 4 {
		t.Errorf("the sluice processes publish %v, want two host ports each: the API's and the metrics'", hostPorts)
	}
}

// natsNodeMounts returns the host path of the configuration file a NATS
// node mounts at /etc/nats/nats.conf, and where its named volume is.
func natsNodeMounts(t *testing.T, c composeFile, name string, svc composeService) (conf, dataDir string) {
	t.Helper()
	for _, v := range svc.Volumes {
		parts := strings.Split(v, ":")
		switch {
		case len(parts) >= 2 && parts[1] == "/etc/nats/nats.conf":
			conf = filepath.Join(repoRoot, parts[0])
		case len(parts) >= 2 && parts[0] == "nats-auth":
			// The seeds and auth.conf, which nats.conf includes from ./auth.
			if parts[1] != "/etc/nats/auth" {
				t.Errorf("%s mounts nats-auth at %s, want /etc/nats/auth: nats.conf includes ./auth/auth.conf", name, parts[1])
			}
		case len(parts) >= 2 && !strings.HasPrefix(parts[0], "."):
			if _, ok := c.Volumes[parts[0]]; !ok {
				t.Errorf("%s mounts volume %s, which volumes does not declare", name, parts[0])
			}
			dataDir = parts[1]
		}
	}
	if conf == "" || dataDir == "" {
		t.Fatalf("%s: volumes %q, want the configuration file and a named volume for JetStream", name, svc.Volumes)
	}
	return conf, dataDir
}

// checkComposeNATSAuth checks the service that writes the NATS
// identities, and returns the directory it writes them in.
func checkComposeNATSAuth(t *testing.T, c composeFile) string {
	t.Helper()
	svc, ok := c.Services["nats-auth"]
	if !ok || len(svc.Command) < 3 || svc.Command[0] != "nats-auth" || svc.Command[1] != "--dir" {
		t.Fatalf("no nats-auth service running `sluice nats-auth --dir DIR`: %+v", svc)
	}
	dir := svc.Command[2]
	if volumeMount(svc, "nats-auth") != dir {
		t.Errorf("nats-auth writes in %s, but mounts the volume nats-auth at %q", dir, volumeMount(svc, "nats-auth"))
	}
	if _, ok := c.Volumes["nats-auth"]; !ok {
		t.Error("volumes does not declare nats-auth")
	}
	return dir
}

// volumeMount returns where svc mounts the named volume, "" if nowhere.
func volumeMount(svc composeService, volume string) string {
	for _, v := range svc.Volumes {
		if parts := strings.Split(v, ":"); len(parts) >= 2 && parts[0] == volume {
			return parts[1]
		}
	}
	return ""
}

// withAuthConfig copies the NATS configuration file at path into a new
// directory, with the auth/auth.conf that nats-auth writes beside it, as
// the nodes see them, and returns the copy's path.
func withAuthConfig(t *testing.T, path string) string {
	t.Helper()
	dir := t.TempDir()
	raw, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	conf := filepath.Join(dir, filepath.Base(path))
	if err := os.WriteFile(conf, raw, 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := natsserver.WriteAuthConfig(filepath.Join(dir, "auth"), nil); err != nil {
		t.Fatal(err)
	}
	return conf
}

// natsOptions parses a NATS configuration file as nats-server would, and
// checks what every node of sluice's cluster needs.
func natsOptions(t *testing.T, path string) *server.Options {
	t.Helper()
	opts, err := server.ProcessConfigFile(path)
	if err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	if opts.MaxPayload < natsserver.RequiredMaxPayload {
		t.Errorf("%s: max_payload %d, sluice needs at least %d", path, opts.MaxPayload, natsserver.RequiredMaxPayload)
	}
	if !opts.JetStream || opts.StoreDir == "" {
		t.Errorf("%s: JetStream is off or has no store_dir", path)
	}
	if opts.Cluster.Name == "" || opts.Cluster.Port == 0 || len(opts.Routes) == 0 {
		t.Errorf("%s: no cluster with a name, a port and routes", path)
	}
	return opts
}

// checkComposeEmulator checks the emulator service and returns the URL
// the sluice processes reach it at.
func checkComposeEmulator(t *testing.T, c composeFile) string {
	t.Helper()
	svc, ok := c.Services["emulator"]
	if !ok || len(svc.Command) == 0 || svc.Command[0] != "emulator" {
		t.Fatalf("no emulator service running `sluice emulator`: %+v", svc)
	}
	fs := newEmulatorCommand().Flags()
	fs.SetOutput(new(bytes.Buffer))
	if err := fs.Parse(svc.Command[1:]); err != nil {
		t.Fatalf("emulator: sluice %s: %v", strings.Join(svc.Command, " "), err)
	}
	if fs.Lookup("auto-create").Value.String() != "true" {
		t.Error("emulator: without --auto-create, every destination's stream would have to be created first")
	}
	host, port, err := net.SplitHostPort(fs.Lookup("listen").Value.String())
	if err != nil || host != "0.0.0.0" {
		t.Errorf("emulator: --listen %s, want 0.0.0.0:PORT for the other containers", fs.Lookup("listen").Value)
	}
	checkProbe(t, "emulator", svc.Healthcheck.Test, port, "/_emulator/healthz")
	for _, p := range svc.Ports {
		if !strings.HasPrefix(p, "127.0.0.1:") {
			t.Errorf("emulator publishes %s beyond the host's loopback: its admin API has no authentication", p)
		}
	}
	return "http://emulator:" + port
}

// checkProbe checks that a health check runs `sluice healthcheck` on the
// port and path.
func checkProbe(t *testing.T, name string, test []string, port, path string) {
	t.Helper()
	if len(test) < 3 || test[0] != "CMD" || test[1] != "sluice" || test[2] != "healthcheck" {
		t.Errorf("%s: health check %q, want CMD sluice healthcheck (the image has no shell)", name, test)
		return
	}
	fs := newHealthcheckCommand().Flags()
	if err := fs.Parse(test[3:]); err != nil {
		t.Errorf("%s: health check %q: %v", name, test, err)
		return
	}
	u, err := url.Parse(fs.Lookup("url").Value.String())
	if err != nil || u.Hostname() != "127.0.0.1" || u.Port() != port || u.Path != path {
		t.Errorf("%s: health check of %s, want http://127.0.0.1:%s%s", name, fs.Lookup("url").Value, port, path)
	}
}

// checkSluiceEnvironment checks that every SLUICE_ variable names a serve
// flag, or the bootstrap key.
func checkSluiceEnvironment(t *testing.T, name string, env map[string]string) {
	t.Helper()
	fs := pflag.NewFlagSet("serve", pflag.ContinueOnError)
	new(serveFlags).register(fs)
	known := map[string]bool{bootstrapKeyEnv: true}
	fs.VisitAll(func(f *pflag.Flag) { known[envName(f.Name)] = true })
	for v := range env {
		if strings.HasPrefix(v, envPrefix) && !known[v] {
			t.Errorf("%s: %s is no flag of sluice serve", name, v)
		}
	}
}

// splitPublished splits a published port [HOST:]HOST_PORT:CONTAINER_PORT
// into its host part and container port.
func splitPublished(p string) (host, container string) {
	i := strings.LastIndex(p, ":")
	return p[:i], p[i+1:]
}

func mapsEqual(a, b map[string]bool) bool {
	if len(a) != len(b) {
		return false
	}
	for k := range a {
		if !b[k] {
			return false
		}
	}
	return true
}

// TestDockerComposeConfig loads docker-compose.yml as `docker compose
// config` does, with compose-go, the loader Docker Compose itself is built
// on: the Compose specification's schema, interpolation, and the checks
// that every volume, network, secret and config a service names is
// declared. It runs everywhere, where the docker CLI, which needs an
// engine for most else, is rarely installed.
func TestDockerComposeConfig(t *testing.T) {
	opts, err := cli.NewProjectOptions([]string{filepath.Join(repoRoot, "docker-compose.yml")},
		cli.WithWorkingDirectory(repoRoot), cli.WithEnv([]string{"SLUICE_BOOTSTRAP_API_KEY="}))
	if err != nil {
		t.Fatal(err)
	}
	project, err := opts.LoadProject(t.Context())
	if err != nil {
		t.Fatalf("docker compose config: %v", err)
	}
	if _, err := project.MarshalYAML(); err != nil {
		t.Fatalf("docker compose config: %v", err)
	}
	want := slices.Sorted(maps.Keys(readCompose(t).Services))
	if got := project.ServiceNames(); !slices.Equal(slices.Sorted(slices.Values(got)), want) {
		t.Errorf("docker compose config: services %v, want %v", got, want)
	}
}

// TestDockerfile checks deploy/Dockerfile: a static, stripped binary built
// with a Go at least as new as go.mod's, on a distroless base as a user
// that is not root, serving on the port it exposes.
func TestDockerfile(t *testing.T) {
	raw, err := os.ReadFile(filepath.Join(repoRoot, "deploy", "Dockerfile"))
	if err != nil {
		t.Fatal(err)
	}
	stages := dockerfileStages(string(raw))
	if len(stages) < 2 {
		t.Fatalf("%d stages, want a build stage and a small final one", len(stages))
	}
	build, final := strings.Join(stages[0], "\n"), stages[len(stages)-1]
	for _, want := range []string{"CGO_ENABLED=0", "go build -trimpath", `-ldflags "-s -w"`, "./cmd/sluice"} {
		if !strings.Contains(build, want) {
			t.Errorf("the build stage lacks %s", want)
		}
	}
	goMod, err := os.ReadFile(filepath.Join(repoRoot, "go.mod"))
	if err != nil {
		t.Fatal(err)
	}
	goLine := regexp.MustCompile(`(?m)^go (\S+)$`).FindSubmatch(goMod)
	goArg := regexp.MustCompile(`(?m)^ARG GO_VERSION=(\S+)$`).FindStringSubmatch(string(raw))
	if goLine == nil || goArg == nil || version.Compare("go"+goArg[1], "go"+string(goLine[1])) < 0 {
		t.Errorf("ARG GO_VERSION %v is older than go.mod's go %s: the golang image would not build it", goArg, goLine[1])
	}

	instr := map[string]string{}
	for _, line := range final {
		op, rest, _ := strings.Cut(line, " ")
		instr[op] = rest
	}
	if instr["FROM"] != "gcr.io/distroless/static:nonroot" {
		t.Errorf("final base %q, want gcr.io/distroless/static:nonroot", instr["FROM"])
	}
	if !strings.HasPrefix(instr["USER"], "nonroot") {
		t.Errorf("USER %q, want nonroot", instr["USER"])
	}
	var entrypoint, cmd []string
	if err := json.Unmarshal([]byte(instr["ENTRYPOINT"]), &entrypoint); err != nil || len(entrypoint) != 1 || filepath.Base(entrypoint[0]) != "sluice" {
		t.Errorf("ENTRYPOINT %s, want the sluice binary in exec form", instr["ENTRYPOINT"])
	}
	if !strings.HasSuffix(instr["COPY"], " "+strings.Join(entrypoint, "")) {
		t.Errorf("COPY %s does not put the binary at the ENTRYPOINT %v", instr["COPY"], entrypoint)
	}
	if err := json.Unmarshal([]byte(instr["CMD"]), &cmd); err != nil || len(cmd) == 0 || cmd[0] != "serve" {
		t.Fatalf("CMD %s, want serve in exec form", instr["CMD"])
	}
	f := parseServeArgs(t, "CMD", cmd[1:])
	if host, port, _ := net.SplitHostPort(f.httpAddr); host != "0.0.0.0" || port != instr["EXPOSE"] {
		t.Errorf("CMD serves on %s, want 0.0.0.0 and the port EXPOSE says, %s", f.httpAddr, instr["EXPOSE"])
	}
}

// dockerfileStages returns the instructions of each stage of a
// Dockerfile, continuation lines joined, comments and blank lines left out.
func dockerfileStages(text string) [][]string {
	var stages [][]string
	var stage []string
	text = strings.ReplaceAll(text, "\\\n", " ")
	for _, line := range strings.Split(text, "\n") {
		line = strings.Join(strings.Fields(line), " ")
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		if strings.HasPrefix(line, "FROM ") && stage != nil {
			stages = append(stages, stage)
			stage = nil
		}
		if strings.HasPrefix(line, "FROM ") || stage != nil {
			stage = append(stage, line)
		}
	}
	return append(stages, stage)
}
