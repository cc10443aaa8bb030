package deploy

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

const manifestDir = "kubernetes"

// loadManifests decodes every YAML file of dir but the kustomization.
func loadManifests(t *testing.T, dir string) *set {
	t.Helper()
	files, err := filepath.Glob(filepath.Join(dir, "*.yaml"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no manifests in %s (%v)", dir, err)
	}
	var objs []object
	for _, f := range files {
		if filepath.Base(f) == "kustomization.yaml" {
			continue
		}
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		o, err := decodeAll(f, data)
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

func report(t *testing.T, c *checker) {
	t.Helper()
	for _, e := range c.errs {
		t.Error(e)
	}
}

func TestManifests(t *testing.T) {
	s := loadManifests(t, manifestDir)
	ws := workloads(s)
	c := &checker{}
	checkLabels(c, s)
	checkWorkloads(c, s, ws)
	checkServices(c, s, ws)
	checkContract(c, s, ws, nil)
	for _, o := range s.all {
		if ns := o.obj.GetNamespace(); o.kind != "Namespace" && ns != "warren" {
			c.fail("%s: %s/%s in namespace %q, want warren", o.source, o.kind, o.obj.GetName(), ns)
		}
	}
	report(t, c)
	for _, want := range []string{"StatefulSet/warren-postgres", "Service/warren-node", "Secret/warren", "Namespace/warren"} {
		if _, ok := s.byName[want]; !ok {
			t.Errorf("missing %s", want)
		}
	}
}

// kustomization is the part of kustomize's Kustomization these manifests
// use; decoding strictly catches a misspelled field.
type kustomization struct {
	APIVersion string   `json:"apiVersion"`
	Kind       string   `json:"kind"`
	Namespace  string   `json:"namespace"`
	Resources  []string `json:"resources"`
	Images     []struct {
		Name    string `json:"name"`
		NewName string `json:"newName,omitempty"`
		NewTag  string `json:"newTag,omitempty"`
	} `json:"images"`
}

// TestKustomization: it lists exactly the manifest files, each once, and
// renames the image both roles use.
func TestKustomization(t *testing.T) {
	data, err := os.ReadFile(filepath.Join(manifestDir, "kustomization.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	var k kustomization
	if err := strictUnmarshal(data, &k); err != nil {
		t.Fatal(err)
	}
	if k.APIVersion != "kustomize.config.k8s.io/v1beta1" || k.Kind != "Kustomization" || k.Namespace != "warren" {
		t.Errorf("header: %+v", k)
	}
	files, _ := filepath.Glob(filepath.Join(manifestDir, "*.yaml"))
	var want []string
	for _, f := range files {
		if b := filepath.Base(f); b != "kustomization.yaml" {
			want = append(want, b)
		}
	}
	got := slices.Clone(k.Resources)
	slices.Sort(got)
	if !slices.Equal(got, want) {
		t.Errorf("resources %v, want the files %v", got, want)
	}
	if len(k.Images) != 1 || k.Images[0].Name != "warren" {
		t.Errorf("images: %+v, want one entry for warren", k.Images)
	}
}

// TestStrictDecodeRejectsTypos: a misspelled field anywhere fails the
// decode, so the checks above cannot pass over one silently.
func TestStrictDecodeRejectsTypos(t *testing.T) {
	orig, err := os.ReadFile(filepath.Join(manifestDir, "api.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	for _, typo := range [][2]string{
		{"      containers:", "      contianers:"},
		{"readOnlyRootFilesystem:", "readOnlyRootFileSystem:"},
		{"kind: Deployment", "kind: Deploymnet"},
		{"apiVersion: policy/v1", "apiVersion: policy/v1beta2"},
	} {
		bad := strings.Replace(string(orig), typo[0], typo[1], 1)
		if bad == string(orig) {
			t.Fatalf("%q not in api.yaml", typo[0])
		}
		dir := t.TempDir()
		if err := os.WriteFile(filepath.Join(dir, "api.yaml"), []byte(bad), 0o644); err != nil {
			t.Fatal(err)
		}
		data, _ := os.ReadFile(filepath.Join(dir, "api.yaml"))
		_, err := decodeAll("api.yaml", data)
		if err == nil {
			t.Errorf("%s: decoded without error", typo[1])
			continue
		}
		word := strings.Fields(strings.TrimSuffix(strings.TrimSpace(typo[1]), ":"))
		if !strings.Contains(err.Error(), strings.TrimSuffix(word[len(word)-1], ":")) {
			t.Errorf("%s: error does not name it: %v", typo[1], err)
		}
	}
}
