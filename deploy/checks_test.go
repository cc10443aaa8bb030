package deploy

import (
	"strings"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
)

// TestChecksCatchViolations breaks the plain manifests one way at a time
// and expects the checks to say so: they are not vacuous.
func TestChecksCatchViolations(t *testing.T) {
	api := func(s *set) *corev1.Container {
		return &s.byName["Deployment/warren-api"].(*appsv1.Deployment).Spec.Template.Spec.Containers[0]
	}
	node := func(s *set) *appsv1.DaemonSet { return s.byName["DaemonSet/warren-node"].(*appsv1.DaemonSet) }
	yes := true
	for _, tc := range []struct {
		name   string
		break_ func(s *set)
		want   string
	}{
		{"privileged api", func(s *set) { api(s).SecurityContext.Privileged = &yes }, "want unprivileged"},
		{"api as root", func(s *set) {
			s.byName["Deployment/warren-api"].(*appsv1.Deployment).Spec.Template.Spec.SecurityContext.RunAsNonRoot = nil
		}, "non-root"},
		{"inlined store URL", func(s *set) {
			api(s).Env[0] = corev1.EnvVar{Name: "WARREN_STORE", Value: "postgres://u:p@db/warren"}
		}, "inlined"},
		{"probe path", func(s *set) { api(s).ReadinessProbe.HTTPGet.Path = "/" }, "readiness probe must be GET /health"},
		{"no liveness probe", func(s *set) { node(s).Spec.Template.Spec.Containers[0].LivenessProbe = nil }, "liveness probe"},
		{"node role in the api", func(s *set) { api(s).Args[1] = "--role=node" }, `belongs in a "DaemonSet"`},
		{"missing --store", func(s *set) { api(s).Args[3] = "--store=sqlite" }, "--store=$(WARREN_STORE)"},
		{"unprivileged node", func(s *set) { node(s).Spec.Template.Spec.Containers[0].SecurityContext = nil }, "must be privileged"},
		{"no cgroup mount", func(s *set) {
			spec := &node(s).Spec.Template.Spec
			spec.Containers[0].VolumeMounts = spec.Containers[0].VolumeMounts[1:]
		}, `"/sys/fs/cgroup"`},
		{"no advertise URL", func(s *set) {
			ctr := &node(s).Spec.Template.Spec.Containers[0]
			ctr.Args = ctr.Args[:6]
		}, "--advertise-url"},
		{"missing Secret key", func(s *set) {
			api(s).Env[1].ValueFrom.SecretKeyRef.Key = "API_KEY"
		}, "key API_KEY, which is not defined"},
		{"Service selects nothing", func(s *set) {
			s.byName["Service/warren-node"].(*corev1.Service).Spec.Selector["app.kubernetes.io/component"] = "nodes"
		}, "selects no workload"},
		{"token mounted", func(s *set) { node(s).Spec.Template.Spec.AutomountServiceAccountToken = &yes }, "API token"},
		{"no memory limit", func(s *set) { api(s).Resources.Limits = nil }, "memory limit"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := loadManifests(t, manifestDir)
			tc.break_(s)
			ws := workloads(s)
			c := &checker{}
			checkWorkloads(c, s, ws)
			checkServices(c, s, ws)
			checkContract(c, s, ws, nil)
			joined := strings.Join(c.errs, "\n")
			if !strings.Contains(joined, tc.want) {
				t.Errorf("no error naming %q; got:\n%s", tc.want, joined)
			}
		})
	}
}
