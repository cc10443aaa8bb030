package deploy

import (
	"fmt"
	"path"
	"slices"
	"strings"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/util/validation"
)

// checker collects every broken invariant rather than stopping at the first.
type checker struct{ errs []string }

func (c *checker) fail(format string, args ...any) {
	c.errs = append(c.errs, fmt.Sprintf(format, args...))
}

// workload is what the checks need of a Deployment, DaemonSet or StatefulSet.
type workload struct {
	kind, name string
	selector   *metav1.LabelSelector
	pod        corev1.PodTemplateSpec
}

func workloads(s *set) []workload {
	var ws []workload
	for _, d := range each[*appsv1.Deployment](s) {
		ws = append(ws, workload{"Deployment", d.Name, d.Spec.Selector, d.Spec.Template})
	}
	for _, d := range each[*appsv1.DaemonSet](s) {
		ws = append(ws, workload{"DaemonSet", d.Name, d.Spec.Selector, d.Spec.Template})
	}
	for _, d := range each[*appsv1.StatefulSet](s) {
		ws = append(ws, workload{"StatefulSet", d.Name, d.Spec.Selector, d.Spec.Template})
	}
	return ws
}

// selects says whether a label selector picks the workload's pods.
func selects(sel *metav1.LabelSelector, w workload) bool {
	if sel == nil {
		return false
	}
	s, err := metav1.LabelSelectorAsSelector(sel)
	return err == nil && !s.Empty() && s.Matches(labels.Set(w.pod.Labels))
}

// isWarren says whether a container runs warren's image (any registry, any tag).
func isWarren(c corev1.Container) bool {
	repo := c.Image
	if i := strings.IndexAny(repo, "@"); i >= 0 {
		repo = repo[:i]
	}
	if i := strings.LastIndex(repo, ":"); i > strings.LastIndex(repo, "/") {
		repo = repo[:i]
	}
	return path.Base(repo) == "warren"
}

// flag returns the value of --name=VALUE in args, and whether it is there once.
func flag(args []string, name string) (string, bool) {
	var vals []string
	for _, a := range args {
		if v, ok := strings.CutPrefix(a, "--"+name+"="); ok {
			vals = append(vals, v)
		}
	}
	if len(vals) != 1 {
		return "", false
	}
	return vals[0], true
}

func envVar(c corev1.Container, name string) (corev1.EnvVar, bool) {
	i := slices.IndexFunc(c.Env, func(e corev1.EnvVar) bool { return e.Name == name })
	if i < 0 {
		return corev1.EnvVar{}, false
	}
	return c.Env[i], true
}

// checkLabels: names are valid, every object carries the recommended labels
// and every label is well formed.
func checkLabels(c *checker, s *set) {
	for _, o := range s.all {
		m := o.obj
		if errs := validation.IsDNS1123Subdomain(m.GetName()); len(errs) > 0 {
			c.fail("%s: name %q: %v", o.source, m.GetName(), errs)
		}
		for _, k := range []string{"app.kubernetes.io/name", "app.kubernetes.io/part-of"} {
			if m.GetLabels()[k] == "" {
				c.fail("%s: %s/%s lacks label %s", o.source, o.kind, m.GetName(), k)
			}
		}
		for k, v := range m.GetLabels() {
			if errs := append(validation.IsQualifiedName(k), validation.IsValidLabelValue(v)...); len(errs) > 0 {
				c.fail("%s: label %s=%q: %v", o.source, k, v, errs)
			}
		}
	}
}

// checkWorkloads: selectors pick their own pods, which carry the component
// label, a ServiceAccount of the set and no API token; containers have
// requests and a memory limit.
func checkWorkloads(c *checker, s *set, ws []workload) {
	for _, w := range ws {
		if !selects(w.selector, w) {
			c.fail("%s %s: selector does not match its pod labels", w.kind, w.name)
		}
		if w.pod.Labels["app.kubernetes.io/component"] == "" {
			c.fail("%s %s: pods lack app.kubernetes.io/component", w.kind, w.name)
		}
		spec := w.pod.Spec
		if _, ok := s.byName["ServiceAccount/"+spec.ServiceAccountName]; !ok {
			c.fail("%s %s: ServiceAccount %q is not defined", w.kind, w.name, spec.ServiceAccountName)
		}
		if spec.AutomountServiceAccountToken == nil || *spec.AutomountServiceAccountToken {
			c.fail("%s %s: mounts an API token, which nothing uses", w.kind, w.name)
		}
		for _, ctr := range spec.Containers {
			r := ctr.Resources
			if r.Requests.Cpu().IsZero() || r.Requests.Memory().IsZero() || r.Limits.Memory().IsZero() {
				c.fail("%s %s/%s: wants cpu and memory requests and a memory limit", w.kind, w.name, ctr.Name)
			}
			if ctr.ReadinessProbe == nil || ctr.LivenessProbe == nil {
				c.fail("%s %s/%s: wants readiness and liveness probes", w.kind, w.name, ctr.Name)
			}
		}
	}
	for _, sa := range each[*corev1.ServiceAccount](s) {
		if sa.AutomountServiceAccountToken == nil || *sa.AutomountServiceAccountToken {
			c.fail("ServiceAccount %s: automountServiceAccountToken must be false", sa.Name)
		}
	}
}

// checkServices: every Service selects the pods of one workload and targets
// a port they declare; the API has a PodDisruptionBudget.
func checkServices(c *checker, s *set, ws []workload) {
	for _, svc := range each[*corev1.Service](s) {
		i := slices.IndexFunc(ws, func(w workload) bool {
			return selects(&metav1.LabelSelector{MatchLabels: svc.Spec.Selector}, w)
		})
		if i < 0 {
			c.fail("Service %s selects no workload's pods", svc.Name)
			continue
		}
		for _, p := range svc.Spec.Ports {
			if !hasPort(ws[i].pod.Spec, p.TargetPort.String()) {
				c.fail("Service %s: target port %s is not on %s", svc.Name, p.TargetPort.String(), ws[i].name)
			}
		}
	}
	for _, pdb := range each[*policyv1.PodDisruptionBudget](s) {
		if !slices.ContainsFunc(ws, func(w workload) bool { return selects(pdb.Spec.Selector, w) }) {
			c.fail("PodDisruptionBudget %s selects no workload's pods", pdb.Name)
		}
	}
}

func hasPort(spec corev1.PodSpec, target string) bool {
	for _, ctr := range spec.Containers {
		for _, p := range ctr.Ports {
			if p.Name == target || fmt.Sprint(p.ContainerPort) == target {
				return true
			}
		}
	}
	return false
}
