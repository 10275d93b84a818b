package main

import (
	"bytes"
	"errors"
	"io"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/nats-io/nats-server/v2/conf"
	"go.yaml.in/yaml/v3"
	"sigs.k8s.io/kustomize/api/krusty"
	"sigs.k8s.io/kustomize/kyaml/filesys"

	"github.com/sluicehq/sluice/internal/natsserver"
)

// kubernetesDir holds the Kubernetes manifests and the NATS chart's values.
var kubernetesDir = filepath.Join(repoRoot, "deploy", "kubernetes")

// natsValuesFile is the values file of the NATS Helm chart: not a manifest.
const natsValuesFile = "nats-values.yaml"

// k8sObject is what every manifest has.
type k8sObject struct {
	APIVersion string `yaml:"apiVersion"`
	Kind       string `yaml:"kind"`
	Metadata   struct {
		Name   string            `yaml:"name"`
		Labels map[string]string `yaml:"labels"`
	} `yaml:"metadata"`
	node *yaml.Node
	file string
}

// knownKinds are the kinds the manifests may hold, by apiVersion/kind.
var knownKinds = map[string]bool{
	"v1/ServiceAccount":                             true,
	"v1/Service":                                    true,
	"apps/v1/Deployment":                            true,
	"policy/v1/PodDisruptionBudget":                 true,
	"kustomize.config.k8s.io/v1beta1/Kustomization": true,
}

// readManifests decodes every document of every manifest in dir.
func readManifests(t *testing.T, dir string) []k8sObject {
	t.Helper()
	files, err := filepath.Glob(filepath.Join(dir, "*.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	var objects []k8sObject
	for _, file := range files {
		if filepath.Base(file) == natsValuesFile {
			continue
		}
		raw, err := os.ReadFile(file)
		if err != nil {
			t.Fatal(err)
		}
		dec := yaml.NewDecoder(bytes.NewReader(raw))
		for {
			node := new(yaml.Node)
			if err := dec.Decode(node); errors.Is(err, io.EOF) {
				break
			} else if err != nil {
				t.Fatalf("%s: %v", file, err)
			}
			var obj k8sObject
			if err := node.Decode(&obj); err != nil {
				t.Fatalf("%s: %v", file, err)
			}
			obj.node, obj.file = node, filepath.Base(file)
			objects = append(objects, obj)
		}
	}
	return objects
}

// decodeAs decodes obj into v, failing the test on an error.
func decodeAs(t *testing.T, obj k8sObject, v any) {
	t.Helper()
	if err := obj.node.Decode(v); err != nil {
		t.Fatalf("%s: %s %s: %v", obj.file, obj.Kind, obj.Metadata.Name, err)
	}
}

type labelSelector struct {
	MatchLabels map[string]string `yaml:"matchLabels"`
}

type k8sDeployment struct {
	Spec struct {
		Replicas int           `yaml:"replicas"`
		Selector labelSelector `yaml:"selector"`
		Template struct {
			Metadata struct {
				Labels      map[string]string `yaml:"labels"`
				Annotations map[string]string `yaml:"annotations"`
			} `yaml:"metadata"`
			Spec struct {
				TerminationGracePeriodSeconds int `yaml:"terminationGracePeriodSeconds"`
				SecurityContext               struct {
					RunAsNonRoot bool `yaml:"runAsNonRoot"`
					RunAsUser    int  `yaml:"runAsUser"`
				} `yaml:"securityContext"`
				Containers []k8sContainer `yaml:"containers"`
				Volumes    []struct {
					Name   string `yaml:"name"`
					Secret *struct {
						SecretName string `yaml:"secretName"`
					} `yaml:"secret"`
				} `yaml:"volumes"`
			} `yaml:"spec"`
		} `yaml:"template"`
	} `yaml:"spec"`
}

type k8sContainer struct {
	Name         string   `yaml:"name"`
	Args         []string `yaml:"args"`
	VolumeMounts []struct {
		Name      string `yaml:"name"`
		MountPath string `yaml:"mountPath"`
	} `yaml:"volumeMounts"`
	Env []struct {
		Name  string `yaml:"name"`
		Value string `yaml:"value"`
	} `yaml:"env"`
	EnvFrom []struct {
		SecretRef *struct {
			Name string `yaml:"name"`
		} `yaml:"secretRef"`
	} `yaml:"envFrom"`
	Ports []struct {
		Name          string `yaml:"name"`
		ContainerPort int    `yaml:"containerPort"`
	} `yaml:"ports"`
	StartupProbe   *k8sProbe `yaml:"startupProbe"`
	LivenessProbe  *k8sProbe `yaml:"livenessProbe"`
	ReadinessProbe *k8sProbe `yaml:"readinessProbe"`
	Resources      struct {
		Requests map[string]string `yaml:"requests"`
		Limits   map[string]string `yaml:"limits"`
	} `yaml:"resources"`
	SecurityContext struct {
		AllowPrivilegeEscalation *bool `yaml:"allowPrivilegeEscalation"`
		ReadOnlyRootFilesystem   bool  `yaml:"readOnlyRootFilesystem"`
		Capabilities             struct {
			Drop []string `yaml:"drop"`
		} `yaml:"capabilities"`
	} `yaml:"securityContext"`
}

type k8sProbe struct {
	HTTPGet *struct {
		Path string `yaml:"path"`
		Port string `yaml:"port"`
	} `yaml:"httpGet"`
}

type k8sService struct {
	Spec struct {
		Selector map[string]string `yaml:"selector"`
		Ports    []struct {
			Port       int    `yaml:"port"`
			TargetPort string `yaml:"targetPort"`
		} `yaml:"ports"`
	} `yaml:"spec"`
}

type k8sPodDisruptionBudget struct {
	Spec struct {
		MinAvailable int           `yaml:"minAvailable"`
		Selector     labelSelector `yaml:"selector"`
	} `yaml:"spec"`
}

type k8sKustomization struct {
	Resources []string `yaml:"resources"`
}

// TestKubernetesManifests checks deploy/kubernetes: known kinds with
// names, a Deployment of two sluice pods against the NATS chart's service
// with probes on the paths serve answers, metrics on a port of their own
// that Prometheus is told to scrape, limits and a locked-down security
// context, and a Service (without the metrics port) and
// PodDisruptionBudget that select its pods.
func TestKubernetesManifests(t *testing.T) {
	objects := readManifests(t, kubernetesDir)
	byKind := map[string][]k8sObject{}
	for _, obj := range objects {
		if !knownKinds[obj.APIVersion+"/"+obj.Kind] {
			t.Errorf("%s: unknown apiVersion and kind %s %s", obj.file, obj.APIVersion, obj.Kind)
		}
		if obj.Kind != "Kustomization" && obj.Metadata.Name == "" {
			t.Errorf("%s: a %s without metadata.name", obj.file, obj.Kind)
		}
		byKind[obj.Kind] = append(byKind[obj.Kind], obj)
	}
	for _, kind := range []string{"Deployment", "Service", "PodDisruptionBudget", "Kustomization"} {
		if len(byKind[kind]) != 1 {
			t.Fatalf("%d objects of kind %s, want 1", len(byKind[kind]), kind)
		}
	}

	var d k8sDeployment
	decodeAs(t, byKind["Deployment"][0], &d)
	podLabels := d.Spec.Template.Metadata.Labels
	if d.Spec.Replicas != 2 {
		t.Errorf("Deployment: %d replicas, want 2", d.Spec.Replicas)
	}
	if len(d.Spec.Selector.MatchLabels) == 0 || !selects(d.Spec.Selector.MatchLabels, podLabels) {
		t.Errorf("Deployment: selector %v does not select its pods %v", d.Spec.Selector.MatchLabels, podLabels)
	}
	pod := d.Spec.Template.Spec
	if !pod.SecurityContext.RunAsNonRoot || pod.SecurityContext.RunAsUser == 0 {
		t.Errorf("Deployment: pod securityContext %+v, want runAsNonRoot and a user other than root", pod.SecurityContext)
	}
	if len(pod.Containers) != 1 {
		t.Fatalf("Deployment: %d containers, want 1", len(pod.Containers))
	}
	c := pod.Containers[0]
	if len(c.Args) == 0 || c.Args[0] != "serve" {
		t.Fatalf("Deployment: args %q, want serve and its flags", c.Args)
	}
	f := parseServeArgs(t, "Deployment", c.Args[1:])
	if want := "nats://nats:" + strconv.Itoa(natsChartClientPort); f.natsURL != want {
		t.Errorf("Deployment: --nats-url %q, want the NATS chart's service %s", f.natsURL, want)
	}
	if f.replicas != 3 {
		t.Errorf("Deployment: --replicas %d, want 3", f.replicas)
	}
	// sluice's NATS identity: its seed, from the Secret sluice-nats.
	var seedDir string
	for _, m := range c.VolumeMounts {
		for _, v := range pod.Volumes {
			if v.Name == m.Name && v.Secret != nil && v.Secret.SecretName == "sluice-nats" {
				seedDir = m.MountPath
			}
		}
	}
	if seedDir == "" || f.natsNkey != seedDir+"/sluice.nk" {
		t.Errorf("Deployment: --nats-nkey %q, want sluice.nk of the Secret sluice-nats, mounted (at %q)", f.natsNkey, seedDir)
	}
	if grace := pod.TerminationGracePeriodSeconds; grace <= int(f.shutdownTimeout.Seconds()) {
		t.Errorf("Deployment: terminationGracePeriodSeconds %d, want more than --shutdown-timeout %s", grace, f.shutdownTimeout)
	}
	host, port, _ := strings.Cut(f.httpAddr, ":")
	portName := ""
	for _, p := range c.Ports {
		if strconv.Itoa(p.ContainerPort) == port {
			portName = p.Name
		}
	}
	if host != "0.0.0.0" || portName == "" {
		t.Errorf("Deployment: --http %s, want 0.0.0.0 and a port the container declares (%+v)", f.httpAddr, c.Ports)
	}
	metricsHost, metricsPort, _ := strings.Cut(f.metricsAddr, ":")
	metricsPortName := ""
	for _, p := range c.Ports {
		if strconv.Itoa(p.ContainerPort) == metricsPort {
			metricsPortName = p.Name
		}
	}
	if metricsHost != "0.0.0.0" || metricsPortName == "" {
		t.Errorf("Deployment: --metrics-http %q, want 0.0.0.0 and a port the container declares (%+v), for Prometheus to scrape", f.metricsAddr, c.Ports)
	}
	if a := d.Spec.Template.Metadata.Annotations; a["prometheus.io/scrape"] != "true" || a["prometheus.io/port"] != metricsPort || a["prometheus.io/path"] != metricsPath {
		t.Errorf("Deployment: pod annotations %v, want prometheus.io/scrape true on port %s, path %s", a, metricsPort, metricsPath)
	}
	for _, p := range []struct {
		name  string
		probe *k8sProbe
		path  string
	}{
		{"startupProbe", c.StartupProbe, healthzPath},
		{"livenessProbe", c.LivenessProbe, healthzPath},
		{"readinessProbe", c.ReadinessProbe, readyzPath},
	} {
		switch {
		case p.probe == nil && p.name == "startupProbe":
		case p.probe == nil || p.probe.HTTPGet == nil:
			t.Errorf("Deployment: no HTTP %s", p.name)
		case p.probe.HTTPGet.Path != p.path || (p.probe.HTTPGet.Port != portName && p.probe.HTTPGet.Port != port):
			t.Errorf("Deployment: %s on %s port %s, want %s on port %s", p.name, p.probe.HTTPGet.Path, p.probe.HTTPGet.Port, p.path, portName)
		}
	}
	for _, r := range []struct {
		what string
		list map[string]string
		keys []string
	}{{"requests", c.Resources.Requests, []string{"cpu", "memory"}}, {"limits", c.Resources.Limits, []string{"memory"}}} {
		for _, k := range r.keys {
			if r.list[k] == "" {
				t.Errorf("Deployment: no resources.%s.%s", r.what, k)
			}
		}
	}
	sc := c.SecurityContext
	if !sc.ReadOnlyRootFilesystem || sc.AllowPrivilegeEscalation == nil || *sc.AllowPrivilegeEscalation || !slices.Contains(sc.Capabilities.Drop, "ALL") {
		t.Errorf("Deployment: container securityContext: readOnlyRootFilesystem %v, allowPrivilegeEscalation set to false %v, capabilities dropped %v; want a read-only root, no privilege escalation, ALL dropped",
			sc.ReadOnlyRootFilesystem, sc.AllowPrivilegeEscalation != nil && !*sc.AllowPrivilegeEscalation, sc.Capabilities.Drop)
	}
	env := map[string]string{}
	for _, e := range c.Env {
		env[e.Name] = e.Value
	}
	checkSluiceEnvironment(t, "Deployment", env)
	checkMemoryLimit(t, env["GOMEMLIMIT"], c.Resources.Limits["memory"])
	if len(c.EnvFrom) == 0 || c.EnvFrom[0].SecretRef == nil || c.EnvFrom[0].SecretRef.Name == "" {
		t.Error("Deployment: no envFrom secretRef for the bootstrap key and AWS keys")
	}

	var svc k8sService
	decodeAs(t, byKind["Service"][0], &svc)
	if len(svc.Spec.Selector) == 0 || !selects(svc.Spec.Selector, podLabels) {
		t.Errorf("Service: selector %v does not select the pods %v", svc.Spec.Selector, podLabels)
	}
	for _, p := range svc.Spec.Ports {
		if p.TargetPort != portName && p.TargetPort != port {
			t.Errorf("Service: targetPort %s, want %s (and never the metrics port, whose metrics name every account's ids)", p.TargetPort, portName)
		}
	}

	var pdb k8sPodDisruptionBudget
	decodeAs(t, byKind["PodDisruptionBudget"][0], &pdb)
	if pdb.Spec.MinAvailable != 1 || len(pdb.Spec.Selector.MatchLabels) == 0 || !selects(pdb.Spec.Selector.MatchLabels, podLabels) {
		t.Errorf("PodDisruptionBudget: minAvailable %d selecting %v, want 1 selecting the pods %v", pdb.Spec.MinAvailable, pdb.Spec.Selector.MatchLabels, podLabels)
	}

	var k k8sKustomization
	decodeAs(t, byKind["Kustomization"][0], &k)
	files := map[string]bool{}
	for _, obj := range objects {
		if obj.Kind != "Kustomization" {
			files[obj.file] = true
		}
	}
	if got := slices.Sorted(maps.Keys(files)); !slices.Equal(slices.Sorted(slices.Values(k.Resources)), got) {
		t.Errorf("kustomization.yaml: resources %v, want every manifest: %v", k.Resources, got)
	}
}

// selects reports whether a selector's labels are all among labels.
func selects(selector, labels map[string]string) bool {
	for k, v := range selector {
		if labels[k] != v {
			return false
		}
	}
	return true
}

// checkMemoryLimit checks that GOMEMLIMIT, such as 460MiB, is under the
// container's memory limit, such as 512Mi.
func checkMemoryLimit(t *testing.T, goMemLimit, limit string) {
	t.Helper()
	if goMemLimit == "" {
		return
	}
	soft, err1 := strconv.Atoi(strings.TrimSuffix(goMemLimit, "MiB"))
	hard, err2 := strconv.Atoi(strings.TrimSuffix(limit, "Mi"))
	if err1 != nil || err2 != nil || soft >= hard {
		t.Errorf("GOMEMLIMIT %s, want a value in MiB under the memory limit %s (in Mi)", goMemLimit, limit)
	}
}

// natsChartClientPort is the client port of the NATS chart's service.
const natsChartClientPort = 4222

// TestNATSHelmValues checks the values of the NATS Helm chart: a 3-node
// cluster with JetStream on persistent volumes, and a max_payload sluice
// can use.
func TestNATSHelmValues(t *testing.T) {
	raw, err := os.ReadFile(filepath.Join(kubernetesDir, natsValuesFile))
	if err != nil {
		t.Fatal(err)
	}
	var v struct {
		Config struct {
			Cluster struct {
				Enabled  bool `yaml:"enabled"`
				Replicas int  `yaml:"replicas"`
			} `yaml:"cluster"`
			JetStream struct {
				Enabled   bool `yaml:"enabled"`
				FileStore struct {
					Enabled *bool `yaml:"enabled"`
					PVC     struct {
						Enabled *bool  `yaml:"enabled"`
						Size    string `yaml:"size"`
					} `yaml:"pvc"`
				} `yaml:"fileStore"`
			} `yaml:"jetstream"`
			Merge map[string]any `yaml:"merge"`
		} `yaml:"config"`
		Container struct {
			Patch []jsonPatch `yaml:"patch"`
		} `yaml:"container"`
		PodTemplate struct {
			Patch []jsonPatch `yaml:"patch"`
		} `yaml:"podTemplate"`
	}
	if err := yaml.Unmarshal(raw, &v); err != nil {
		t.Fatalf("%s: %v", natsValuesFile, err)
	}
	cfg := v.Config
	if !cfg.Cluster.Enabled || cfg.Cluster.Replicas != 3 {
		t.Errorf("config.cluster: enabled %v, replicas %d; want a cluster of 3", cfg.Cluster.Enabled, cfg.Cluster.Replicas)
	}
	fs := cfg.JetStream.FileStore
	if !cfg.JetStream.Enabled || (fs.Enabled != nil && !*fs.Enabled) || (fs.PVC.Enabled != nil && !*fs.PVC.Enabled) || fs.PVC.Size == "" {
		t.Errorf("config.jetstream: %+v, want JetStream on, with file storage on a persistent volume of a set size", cfg.JetStream)
	}
	// The chart passes << 4MB >> to nats.conf as 4MB, unquoted.
	payload, _ := cfg.Merge["max_payload"].(string)
	payload = strings.TrimSpace(strings.TrimSuffix(strings.TrimPrefix(payload, "<<"), ">>"))
	parsed, err := conf.Parse("max_payload: " + payload)
	if err != nil {
		t.Fatalf("config.merge.max_payload %q: %v", cfg.Merge["max_payload"], err)
	}
	if n, _ := parsed["max_payload"].(int64); n < natsserver.RequiredMaxPayload {
		t.Errorf("config.merge.max_payload %q is %d bytes, sluice needs at least %d", cfg.Merge["max_payload"], n, natsserver.RequiredMaxPayload)
	}

	// sluice's NATS identities: the ConfigMap nats-auth (auth.conf of
	// sluice nats-auth), mounted beside the chart's nats.conf and included.
	if got := cfg.Merge["$include"]; got != "./auth/auth.conf" {
		t.Errorf("config.merge.$include %v, want ./auth/auth.conf", got)
	}
	mounted := slices.ContainsFunc(v.Container.Patch, func(p jsonPatch) bool {
		return p.Op == "add" && p.Path == "/volumeMounts/-" && p.Value["name"] == "nats-auth" && p.Value["mountPath"] == "/etc/nats-config/auth"
	})
	volume := slices.ContainsFunc(v.PodTemplate.Patch, func(p jsonPatch) bool {
		cm, _ := p.Value["configMap"].(map[string]any)
		return p.Op == "add" && p.Path == "/spec/volumes/-" && p.Value["name"] == "nats-auth" && cm["name"] == "nats-auth"
	})
	if !mounted || !volume {
		t.Errorf("the ConfigMap nats-auth: mounted at /etc/nats-config/auth %t, a volume of the pods %t; want both", mounted, volume)
	}
}

// jsonPatch is one operation of a JSON patch of the NATS chart's values.
type jsonPatch struct {
	Op    string         `yaml:"op"`
	Path  string         `yaml:"path"`
	Value map[string]any `yaml:"value"`
}

// TestKustomizeBuild builds the kustomization as `kubectl kustomize`
// does, with the kustomize library kubectl embeds (krusty): the image it
// sets must reach the Deployment.
func TestKustomizeBuild(t *testing.T) {
	k := krusty.MakeKustomizer(krusty.MakeDefaultOptions())
	resources, err := k.Run(filesys.MakeFsOnDisk(), kubernetesDir)
	if err != nil {
		t.Fatalf("kubectl kustomize: %v", err)
	}
	out, err := resources.AsYaml()
	if err != nil {
		t.Fatalf("kubectl kustomize: %v", err)
	}
	if !bytes.Contains(out, []byte("image: registry.example.com/sluice:latest")) {
		t.Errorf("kubectl kustomize: the image of kustomization.yaml is not in the Deployment:\n%s", out)
	}
}
