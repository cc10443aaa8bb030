package oci

import (
	"slices"
	"strings"

	specs "github.com/opencontainers/runtime-spec/specs-go"
	"golang.org/x/sys/unix"

	"github.com/warren-sandbox/warren/internal/runtime"
)

// defaultCaps is Docker's default capability set. Root inside the sandbox
// keeps what `sudo` needs for ordinary admin work (chown, setuid/setgid,
// binding low ports, raw sockets for ping), but nothing that manages the
// host (no SYS_ADMIN, NET_ADMIN, SYS_PTRACE, SYS_MODULE...).
var defaultCaps = []string{
	"CAP_CHOWN", "CAP_DAC_OVERRIDE", "CAP_FSETID", "CAP_FOWNER", "CAP_MKNOD",
	"CAP_NET_RAW", "CAP_SETGID", "CAP_SETUID", "CAP_SETFCAP", "CAP_SETPCAP",
	"CAP_NET_BIND_SERVICE", "CAP_SYS_CHROOT", "CAP_KILL", "CAP_AUDIT_WRITE",
}

// defaultPath is set when the init's environment has no PATH.
const defaultPath = "PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"

// childOOMScoreAdj is the oom_score_adj of the processes envd starts: under
// host memory pressure sandboxes die before host services.
const childOOMScoreAdj = 500

// initOOMScoreAdj is the init's own. Under runc, envd is an ordinary process
// in the sandbox's memory cgroup; at the children's score the kernel, when
// the sandbox runs out of memory, may kill envd (and with it the whole
// sandbox) rather than the process that ate the memory. So envd keeps the
// host's default and raises each child to childOOMScoreAdj as it starts it
// (raising needs no privilege). Under runsc the host sees one process, the
// Sentry, which keeps the children's score.
func (b *Backend) initOOMScoreAdj() int {
	if b.name == Runsc {
		return childOOMScoreAdj
	}
	return 0
}

// initProcess builds the OCI process for the sandbox's init (envd): uid 0
// inside, Docker's capabilities (bounding, effective, permitted; none
// inheritable or ambient, as Docker does since CVE-2022-24769).
//
// NoNewPrivileges stays false on purpose: envd runs commands as the
// unprivileged "user", and that user's `sudo` relies on setuid-root, which
// no_new_privs would disable for the whole process tree. What limits root
// inside is the capability set, seccomp and (for runsc) gVisor itself.
func initProcess(p runtime.Process) *specs.Process {
	cwd := p.Cwd
	if cwd == "" {
		cwd = "/"
	}
	caps := slices.Clone(defaultCaps)
	return &specs.Process{
		Args: slices.Clone(p.Args),
		Env:  withDefaultEnv(p.Env),
		Cwd:  cwd,
		User: specs.User{UID: 0, GID: 0},
		Capabilities: &specs.LinuxCapabilities{
			Bounding:  caps,
			Effective: caps,
			Permitted: caps,
		},
		Rlimits:         nofileLimit(),
		NoNewPrivileges: false,
		OOMScoreAdj:     ptr(childOOMScoreAdj),
	}
}

// withDefaultEnv adds PATH and HOME when env lacks them.
func withDefaultEnv(env []string) []string {
	out := slices.Clone(env)
	has := func(key string) bool {
		return slices.ContainsFunc(out, func(kv string) bool { return strings.HasPrefix(kv, key+"=") })
	}
	if !has("PATH") {
		out = append(out, defaultPath)
	}
	if !has("HOME") {
		out = append(out, "HOME=/root")
	}
	return out
}

// MaxOpenFiles is each sandbox process's open-files limit (soft and hard),
// or warren's own hard limit when that is lower: the runtime sets rlimits
// after dropping CAP_SYS_RESOURCE, so it can never go above it. Servers
// like Jupyter want more than the usual 1024 soft default; a fixed bound,
// rather than whatever the host allows, keeps a sandbox's file table (and
// the kernel memory behind it) the same on every host.
const MaxOpenFiles = 65536

func nofileLimit() []specs.POSIXRlimit {
	n := uint64(MaxOpenFiles)
	var lim unix.Rlimit
	if err := unix.Getrlimit(unix.RLIMIT_NOFILE, &lim); err == nil && lim.Max != unix.RLIM_INFINITY {
		n = min(n, lim.Max)
	}
	return []specs.POSIXRlimit{{Type: "RLIMIT_NOFILE", Hard: n, Soft: n}}
}

func ptr[T any](v T) *T { return &v }
