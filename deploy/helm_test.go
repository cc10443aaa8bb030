package deploy

import (
	"maps"
	"regexp"
	"slices"
	"sort"
	"strings"
	"testing"

	"helm.sh/helm/v3/pkg/chart"
	"helm.sh/helm/v3/pkg/chart/loader"
	"helm.sh/helm/v3/pkg/chartutil"
	"helm.sh/helm/v3/pkg/engine"
	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/yaml"
)

const chartDir = "helm/warren"

func loadChart(t *testing.T) *chart.Chart {
	t.Helper()
	ch, err := loader.LoadDir(chartDir)
	if err != nil {
		t.Fatal(err)
	}
	if err := ch.Validate(); err != nil {
		t.Fatal(err)
	}
	return ch
}

// render renders the chart as `helm install r1 -n warren -f values` would
// (values checked against values.schema.json, missing keys are errors) and
// returns the rendered files by name.
func render(ch *chart.Chart, valuesYAML string) (map[string]string, error) {
	vals, err := chartutil.ReadValues([]byte(valuesYAML))
	if err != nil {
		return nil, err
	}
	opts := chartutil.ReleaseOptions{Name: "r1", Namespace: "warren", IsInstall: true, Revision: 1}
	rv, err := chartutil.ToRenderValues(ch, vals, opts, chartutil.DefaultCapabilities)
	if err != nil {
		return nil, err
	}
	return engine.Engine{Strict: true}.Render(ch, rv)
}

// decodeRendered decodes every rendered manifest strictly.
func decodeRendered(t *testing.T, files map[string]string) *set {
	t.Helper()
	var objs []object
	for _, name := range slices.Sorted(maps.Keys(files)) {
		if !strings.HasSuffix(name, ".yaml") {
			continue
		}
		o, err := decodeAll(name, []byte(files[name]))
		if err != nil {
			t.Fatal(err)
		}
		objs = append(objs, o...)
	}
	s, err := newSet(objs)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// chartCase is one set of values and what must hold of its rendering
// beyond the common invariants.
type chartCase struct {
	name     string
	values   string
	external []string // Secrets the operator provides
	check    func(t *testing.T, s *set)
}

var chartCases = []chartCase{
	{name: "defaults", check: checkInClusterPostgres},
	{
		name:   "external database URL",
		values: "postgres: {enabled: false, external: {url: 'postgres://w:pw@db.example:5432/w?sslmode=require'}}",
		check: func(t *testing.T, s *set) {
			noObject(t, s, "StatefulSet/r1-warren-postgres", "NetworkPolicy/r1-warren-postgres", "ServiceAccount/r1-warren-postgres")
			if got := secretValue(t, s, "r1-warren-store", "WARREN_STORE"); got != "postgres://w:pw@db.example:5432/w?sslmode=require" {
				t.Errorf("store URL %q", got)
			}
		},
	},
	{
		name: "existing Secrets",
		values: `postgres: {enabled: false, external: {existingSecret: my-db, existingSecretKey: url}}
apiKey: {existingSecret: my-key}
clusterSecret: {existingSecret: my-cluster, existingSecretKey: shared}`,
		external: []string{"my-db", "my-key", "my-cluster"},
		check: func(t *testing.T, s *set) {
			noObject(t, s, "Secret/r1-warren-store", "Secret/r1-warren-api-key", "Secret/r1-warren-cluster-secret", "StatefulSet/r1-warren-postgres")
			for _, w := range workloads(s) {
				e, _ := envVar(w.pod.Spec.Containers[0], "WARREN_STORE")
				if r := e.ValueFrom.SecretKeyRef; r.Name != "my-db" || r.Key != "url" {
					t.Errorf("%s: store from %s/%s", w.name, r.Name, r.Key)
				}
				e, _ = envVar(w.pod.Spec.Containers[0], "WARREN_CLUSTER_SECRET")
				if r := e.ValueFrom.SecretKeyRef; r.Name != "my-cluster" || r.Key != "shared" {
					t.Errorf("%s: cluster secret from %s/%s", w.name, r.Name, r.Key)
				}
			}
		},
	},
	{
		name:   "shared storage",
		values: "node: {sharedVolume: {nfs: {server: nfs.example.com, path: /exports/warren}}, sharedDir: /srv/shared}",
		check:  checkSharedStorage,
	},
	{
		name:   "LoadBalancer",
		values: "api: {replicas: 3, service: {type: LoadBalancer, loadBalancerSourceRanges: [203.0.113.0/24]}}",
		check: func(t *testing.T, s *set) {
			svc := s.byName["Service/r1-warren-api"].(*corev1.Service)
			if svc.Spec.Type != corev1.ServiceTypeLoadBalancer || !slices.Equal(svc.Spec.LoadBalancerSourceRanges, []string{"203.0.113.0/24"}) {
				t.Errorf("api Service: %+v", svc.Spec)
			}
		},
	},
	{
		name: "custom resources and image",
		values: `image: {repository: registry.example.com/team/warren, tag: "1.2.3"}
api: {resources: {requests: {cpu: 250m, memory: 256Mi}, limits: {cpu: "1", memory: 1Gi}}}
node: {resources: {requests: {cpu: "2", memory: 2Gi}, limits: {memory: 8Gi}}, nodeSelector: {pool: sandboxes}}`,
		check: func(t *testing.T, s *set) {
			for _, w := range workloads(s) {
				ctr := w.pod.Spec.Containers[0]
				if isWarren(ctr) && ctr.Image != "registry.example.com/team/warren:1.2.3" {
					t.Errorf("%s: image %s", w.name, ctr.Image)
				}
				want := map[string]string{"r1-warren-api": "1Gi", "r1-warren-node": "8Gi"}[w.name]
				if got := ctr.Resources.Limits.Memory().String(); want != "" && got != want {
					t.Errorf("%s: memory limit %s, want %s", w.name, got, want)
				}
				if w.name == "r1-warren-node" && w.pod.Spec.NodeSelector["pool"] != "sandboxes" {
					t.Errorf("node selector %v", w.pod.Spec.NodeSelector)
				}
			}
		},
	},
}

func TestChart(t *testing.T) {
	ch := loadChart(t)
	for _, tc := range chartCases {
		t.Run(tc.name, func(t *testing.T) {
			files, err := render(ch, tc.values)
			if err != nil {
				t.Fatal(err)
			}
			s := decodeRendered(t, files)
			ws := workloads(s)
			c := &checker{}
			checkLabels(c, s)
			checkWorkloads(c, s, ws)
			checkServices(c, s, ws)
			ext := map[string]bool{}
			for _, e := range tc.external {
				ext[e] = true
			}
			checkContract(c, s, ws, ext)
			report(t, c)
			if notes := files["warren/templates/NOTES.txt"]; !strings.Contains(notes, "kubectl label node") {
				t.Errorf("NOTES.txt: %q", notes)
			}
			tc.check(t, s)
		})
	}
}

// checkInClusterPostgres: the generated password is the one in the store
// URL, the URL names the Postgres Service, the key has E2B's format.
func checkInClusterPostgres(t *testing.T, s *set) {
	pw := secretValue(t, s, "r1-warren-store", "postgres-password")
	if len(pw) < 32 {
		t.Errorf("postgres password %q is too short", pw)
	}
	if url := secretValue(t, s, "r1-warren-store", "WARREN_STORE"); url != "postgres://warren:"+pw+"@r1-warren-postgres:5432/warren?sslmode=disable" {
		t.Errorf("store URL %q", url)
	}
	if key := secretValue(t, s, "r1-warren-api-key", "WARREN_API_KEY"); !regexp.MustCompile(`^e2b_[0-9a-f]{40}$`).MatchString(key) {
		t.Errorf("API key %q", key)
	}
	if secret := secretValue(t, s, "r1-warren-cluster-secret", "WARREN_CLUSTER_SECRET"); len(secret) < 32 {
		t.Errorf("cluster secret %q is shorter than warren accepts", secret)
	}
	for _, name := range []string{"StatefulSet/r1-warren-postgres", "Service/r1-warren-postgres", "NetworkPolicy/r1-warren-node", "PodDisruptionBudget/r1-warren-api"} {
		if _, ok := s.byName[name]; !ok {
			t.Errorf("missing %s", name)
		}
	}
}

func secretValue(t *testing.T, s *set, name, key string) string {
	t.Helper()
	sec, ok := s.byName["Secret/"+name].(*corev1.Secret)
	if !ok {
		t.Fatalf("no Secret %s", name)
	}
	if v, ok := sec.StringData[key]; ok {
		return v
	}
	return string(sec.Data[key])
}

func noObject(t *testing.T, s *set, names ...string) {
	t.Helper()
	for _, n := range names {
		if _, ok := s.byName[n]; ok {
			t.Errorf("%s rendered", n)
		}
	}
}

// TestChartRejects: the schema refuses misspelled and invalid values, the
// templates a missing database, and a typo in a template fails the decode.
func TestChartRejects(t *testing.T) {
	ch := loadChart(t)
	for values, want := range map[string]string{
		"api: {replica: 3}":                              "replica",
		"api: {service: {type: NodePort}}":               "type",
		"apiKey: {value: not-a-key}":                     "value",
		"clusterSecret: {value: inline}":                 "value",
		"postgres: {enabled: false}":                     "postgres.external.url",
		"postgres: {enabled: false, external: {url: x}}": "url",
	} {
		if _, err := render(ch, values); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: error %v, want one naming %q", values, err, want)
		}
	}
	tpl := slices.IndexFunc(ch.Templates, func(f *chart.File) bool { return f.Name == "templates/api.yaml" })
	if tpl < 0 {
		t.Fatal("no templates/api.yaml")
	}
	ch.Templates[tpl].Data = []byte(strings.Replace(string(ch.Templates[tpl].Data), "      containers:", "      contianers:", 1))
	files, err := render(ch, "")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := decodeAll("api.yaml", []byte(files["warren/templates/api.yaml"])); err == nil || !strings.Contains(err.Error(), "contianers") {
		t.Errorf("a misspelled field decoded: %v", err)
	}
}

// TestChartValuesDocumented: every top-level value has a comment in
// values.yaml and a place in the schema.
func TestChartValuesDocumented(t *testing.T) {
	ch := loadChart(t)
	var schema struct {
		Properties map[string]any `json:"properties"`
	}
	if err := yaml.Unmarshal(ch.Schema, &schema); err != nil {
		t.Fatal(err)
	}
	keys := slices.Collect(maps.Keys(ch.Values))
	sort.Strings(keys)
	var raw string
	for _, f := range ch.Raw {
		if f.Name == "values.yaml" {
			raw = string(f.Data)
		}
	}
	for _, k := range keys {
		if _, ok := schema.Properties[k]; !ok {
			t.Errorf("value %s is not in values.schema.json", k)
		}
		i := strings.Index(raw, "\n"+k+":")
		before := strings.Split(strings.TrimRight(raw[:max(i, 0)], "\n"), "\n")
		if i < 0 || !strings.HasPrefix(before[len(before)-1], "#") {
			t.Errorf("value %s has no comment right before it in values.yaml", k)
		}
	}
}

// checkSharedStorage: the node pods mount the shared volume where
// --shared-dir says; with the default values they do neither.
func checkSharedStorage(t *testing.T, s *set) {
	nodes := 0
	for _, w := range workloads(s) {
		if !strings.HasSuffix(w.name, "-node") {
			continue
		}
		nodes++
		c := w.pod.Spec.Containers[0]
		if !slices.Contains(c.Args, "--shared-dir=/srv/shared") {
			t.Errorf("%s: args %v, want --shared-dir=/srv/shared", w.name, c.Args)
		}
		mounted := slices.ContainsFunc(c.VolumeMounts, func(m corev1.VolumeMount) bool { return m.Name == "shared" && m.MountPath == "/srv/shared" })
		i := slices.IndexFunc(w.pod.Spec.Volumes, func(v corev1.Volume) bool { return v.Name == "shared" })
		if !mounted || i < 0 || w.pod.Spec.Volumes[i].NFS == nil || w.pod.Spec.Volumes[i].NFS.Server != "nfs.example.com" {
			t.Errorf("%s: the shared NFS volume is not mounted at /srv/shared: %+v", w.name, w.pod.Spec.Volumes)
		}
	}
	if nodes != 1 {
		t.Errorf("%d node workloads, want 1", nodes)
	}
}
