package deploy

import (
	"slices"
	"strings"

	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
)

// checkContract holds warren's pods to the cluster roles' contract: one
// image, `serve --role=api` in a Deployment and `--role=node` in a
// DaemonSet, the store and key from Secrets, probes on /health.
func checkContract(c *checker, s *set, ws []workload, external map[string]bool) {
	roles := map[string]int{}
	images := map[string]bool{}
	for _, w := range ws {
		for _, ctr := range w.pod.Spec.Containers {
			checkNoInlineSecrets(c, w, ctr)
			checkSecretRefs(c, s, w, ctr, external)
			if !isWarren(ctr) {
				continue
			}
			images[ctr.Image] = true
			role := checkServe(c, w, ctr)
			roles[role]++
			switch role {
			case "api":
				checkAPI(c, s, w, ctr)
			case "node":
				checkNode(c, w, ctr)
			}
		}
	}
	if roles["api"] != 1 || roles["node"] != 1 || len(roles) != 2 {
		c.fail("want one api and one node workload, got %v", roles)
	}
	if len(images) != 1 {
		c.fail("both roles must run one image, got %v", images)
	}
}

// checkServe checks what both roles share and returns the role.
func checkServe(c *checker, w workload, ctr corev1.Container) string {
	if len(ctr.Command) != 0 || len(ctr.Args) == 0 || ctr.Args[0] != "serve" {
		c.fail("%s %s: want the image's warren with args `serve …`, got command %q args %q", w.kind, w.name, ctr.Command, ctr.Args)
	}
	want := map[string]string{"listen": "0.0.0.0:3000", "store": "$(WARREN_STORE)"}
	for name, v := range want {
		if got, ok := flag(ctr.Args, name); !ok || got != v {
			c.fail("%s %s: want --%s=%s once, got %q", w.kind, w.name, name, v, ctr.Args)
		}
	}
	if d, ok := flag(ctr.Args, "domain"); !ok || d == "" {
		c.fail("%s %s: want --domain", w.kind, w.name)
	}
	if !slices.ContainsFunc(ctr.Ports, func(p corev1.ContainerPort) bool { return p.Name == "http" && p.ContainerPort == 3000 }) {
		c.fail("%s %s: want port http 3000", w.kind, w.name)
	}
	for name, p := range map[string]*corev1.Probe{"readiness": ctr.ReadinessProbe, "liveness": ctr.LivenessProbe, "startup": ctr.StartupProbe} {
		if p == nil && name == "startup" {
			continue
		}
		if p == nil || p.HTTPGet == nil || p.HTTPGet.Path != "/health" || p.HTTPGet.Port.String() != "http" {
			c.fail("%s %s: %s probe must be GET /health on port http", w.kind, w.name, name)
		}
	}
	for _, v := range []string{"WARREN_STORE", "WARREN_API_KEY", "WARREN_CLUSTER_SECRET"} {
		if e, ok := envVar(ctr, v); !ok || e.ValueFrom == nil || e.ValueFrom.SecretKeyRef == nil {
			c.fail("%s %s: %s must come from a Secret", w.kind, w.name, v)
		}
	}
	role, _ := flag(ctr.Args, "role")
	wantKind := map[string]string{"api": "Deployment", "node": "DaemonSet"}[role]
	if wantKind != w.kind {
		c.fail("%s %s: --role=%q belongs in a %q", w.kind, w.name, role, wantKind)
	}
	return role
}

func checkAPI(c *checker, s *set, w workload, ctr corev1.Container) {
	spec, sc := w.pod.Spec, ctr.SecurityContext
	if spec.SecurityContext == nil || spec.SecurityContext.RunAsNonRoot == nil || !*spec.SecurityContext.RunAsNonRoot {
		c.fail("api %s: pods must run as non-root", w.name)
	}
	if sc == nil || (sc.Privileged != nil && *sc.Privileged) ||
		sc.AllowPrivilegeEscalation == nil || *sc.AllowPrivilegeEscalation ||
		sc.ReadOnlyRootFilesystem == nil || !*sc.ReadOnlyRootFilesystem ||
		sc.Capabilities == nil || !slices.Contains(sc.Capabilities.Drop, "ALL") || len(sc.Capabilities.Add) > 0 {
		c.fail("api %s: want unprivileged, no escalation, read-only root, all capabilities dropped", w.name)
	}
	if spec.HostNetwork || spec.HostPID || spec.HostIPC {
		c.fail("api %s: must not share the host's namespaces", w.name)
	}
	for _, v := range spec.Volumes {
		if v.HostPath != nil {
			c.fail("api %s: mounts host path %s", w.name, v.HostPath.Path)
		}
	}
	if !slices.ContainsFunc(each[*policyv1.PodDisruptionBudget](s), func(p *policyv1.PodDisruptionBudget) bool {
		return selects(p.Spec.Selector, w)
	}) {
		c.fail("api %s: no PodDisruptionBudget", w.name)
	}
}

func checkNode(c *checker, w workload, ctr corev1.Container) {
	if sc := ctr.SecurityContext; sc == nil || sc.Privileged == nil || !*sc.Privileged {
		c.fail("node %s: must be privileged", w.name)
	}
	want := map[string]string{
		"node-name":     "$(NODE_NAME)",
		"advertise-url": "http://$(POD_IP):3000",
	}
	for name, v := range want {
		if got, ok := flag(ctr.Args, name); !ok || got != v {
			c.fail("node %s: want --%s=%s, got %q", w.name, name, v, ctr.Args)
		}
	}
	for v, field := range map[string]string{"NODE_NAME": "spec.nodeName", "POD_IP": "status.podIP"} {
		if e, ok := envVar(ctr, v); !ok || e.ValueFrom == nil || e.ValueFrom.FieldRef == nil || e.ValueFrom.FieldRef.FieldPath != field {
			c.fail("node %s: %s must come from %s", w.name, v, field)
		}
	}
	dataDir, _ := flag(ctr.Args, "data-dir")
	cacheDir, _ := flag(ctr.Args, "cache-dir")
	for _, p := range []string{"/sys/fs/cgroup", "/dev", dataDir, cacheDir} {
		if !mountsHostPath(w.pod.Spec, ctr, p) {
			c.fail("node %s: must mount host path %q at the same place", w.name, p)
		}
	}
}

// mountsHostPath says whether ctr mounts the host's dir at the same path.
func mountsHostPath(spec corev1.PodSpec, ctr corev1.Container, dir string) bool {
	if dir == "" {
		return false
	}
	for _, v := range spec.Volumes {
		if v.HostPath == nil || v.HostPath.Path != dir {
			continue
		}
		if slices.ContainsFunc(ctr.VolumeMounts, func(m corev1.VolumeMount) bool {
			return m.Name == v.Name && m.MountPath == dir && !m.ReadOnly
		}) {
			return true
		}
	}
	return false
}

// checkNoInlineSecrets: no store URL, password or key written into a pod spec.
func checkNoInlineSecrets(c *checker, w workload, ctr corev1.Container) {
	secretish := func(s string) bool {
		return strings.Contains(s, "://") && strings.Contains(s, "@") || strings.HasPrefix(s, "e2b_")
	}
	for _, e := range ctr.Env {
		name := strings.ToUpper(e.Name)
		if e.Value != "" && (secretish(e.Value) || strings.Contains(name, "PASSWORD") ||
			strings.Contains(name, "KEY") || strings.Contains(name, "STORE")) {
			c.fail("%s %s/%s: env %s is inlined; it belongs in a Secret", w.kind, w.name, ctr.Name, e.Name)
		}
	}
	for _, a := range append(slices.Clone(ctr.Command), ctr.Args...) {
		if secretish(a) || strings.Contains(a, "postgres://") {
			c.fail("%s %s/%s: argument %q carries a secret", w.kind, w.name, ctr.Name, a)
		}
	}
}

// checkSecretRefs: every Secret a pod reads is defined with that key, or
// is one the values name as the operator's own.
func checkSecretRefs(c *checker, s *set, w workload, ctr corev1.Container, external map[string]bool) {
	for _, e := range ctr.Env {
		if e.ValueFrom == nil {
			continue
		}
		if r := e.ValueFrom.SecretKeyRef; r != nil && !external[r.Name] && !secretHasKey(s, r.Name, r.Key) {
			c.fail("%s %s: env %s reads Secret %s key %s, which is not defined", w.kind, w.name, e.Name, r.Name, r.Key)
		}
		if r := e.ValueFrom.ConfigMapKeyRef; r != nil {
			cm, ok := s.byName["ConfigMap/"+r.Name].(*corev1.ConfigMap)
			if !ok || cm.Data[r.Key] == "" {
				c.fail("%s %s: env %s reads ConfigMap %s key %s, which is not defined", w.kind, w.name, e.Name, r.Name, r.Key)
			}
		}
	}
}

func secretHasKey(s *set, name, key string) bool {
	sec, ok := s.byName["Secret/"+name].(*corev1.Secret)
	if !ok {
		return false
	}
	_, inData := sec.Data[key]
	_, inString := sec.StringData[key]
	return inData || inString
}
