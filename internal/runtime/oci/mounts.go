package oci

import (
	specs "github.com/opencontainers/runtime-spec/specs-go"

	"github.com/warren-sandbox/warren/internal/runtime"
)

// defaultMounts are Docker's standard container mounts. The runtime creates
// the usual device nodes (null, zero, full, random, urandom, tty) in the
// /dev tmpfs and links /dev/ptmx to the devpts instance.
func defaultMounts() []specs.Mount {
	return []specs.Mount{
		{Destination: "/proc", Type: "proc", Source: "proc", Options: []string{"nosuid", "noexec", "nodev"}},
		{Destination: "/dev", Type: "tmpfs", Source: "tmpfs", Options: []string{"nosuid", "strictatime", "mode=755", "size=65536k"}},
		{Destination: "/dev/pts", Type: "devpts", Source: "devpts", Options: []string{"nosuid", "noexec", "newinstance", "ptmxmode=0666", "mode=0620", "gid=5"}},
		{Destination: "/dev/shm", Type: "tmpfs", Source: "shm", Options: []string{"nosuid", "noexec", "nodev", "mode=1777", "size=65536k"}},
		{Destination: "/dev/mqueue", Type: "mqueue", Source: "mqueue", Options: []string{"nosuid", "noexec", "nodev"}},
		{Destination: "/sys", Type: "sysfs", Source: "sysfs", Options: []string{"nosuid", "noexec", "nodev", "ro"}},
		{Destination: "/sys/fs/cgroup", Type: "cgroup", Source: "cgroup", Options: []string{"nosuid", "noexec", "nodev", "relatime", "ro"}},
	}
}

// bindMounts turns the spec's binds into read-only, nosuid, nodev bind
// mounts (envd's binary is executable, so no noexec).
func bindMounts(binds []runtime.Bind) []specs.Mount {
	out := make([]specs.Mount, 0, len(binds))
	for _, b := range binds {
		out = append(out, bindMount(b.Source, b.Target, "ro"))
	}
	return out
}

// volumeMounts turns the spec's volume mounts into read-write, nosuid,
// nodev bind mounts. Under runsc they are gofer mounts with the default
// file access "shared" (warren passes no --file-access-mounts), so the
// sentry revalidates what it caches against the host, and --overlay2=none
// keeps gVisor's overlay off them: a write reaches the host at once.
func volumeMounts(mounts []runtime.Mount) []specs.Mount {
	out := make([]specs.Mount, 0, len(mounts))
	for _, m := range mounts {
		out = append(out, bindMount(m.Source, m.Target, "rw"))
	}
	return out
}

// bindMount is a nosuid, nodev bind mount of source at target, access
// "ro" or "rw".
func bindMount(source, target, access string) specs.Mount {
	return specs.Mount{Destination: target, Type: "bind", Source: source, Options: []string{"rbind", access, "nosuid", "nodev"}}
}

// maskedPaths and readonlyPaths are Docker's defaults: kernel interfaces
// under /proc and /sys that leak host information or allow host changes.
var (
	maskedPaths = []string{
		"/proc/asound", "/proc/acpi", "/proc/interrupts", "/proc/kcore",
		"/proc/keys", "/proc/latency_stats", "/proc/timer_list",
		"/proc/timer_stats", "/proc/sched_debug", "/proc/scsi",
		"/sys/firmware", "/sys/devices/virtual/powercap",
	}
	readonlyPaths = []string{
		"/proc/bus", "/proc/fs", "/proc/irq", "/proc/sys", "/proc/sysrq-trigger",
	}
)

// deviceRules are the device cgroup rules: deny everything, then allow the
// nodes a container gets (runc adds the same defaults; listing them keeps
// the bundle self-describing). -1 is a wildcard minor.
func deviceRules() []specs.LinuxDeviceCgroup {
	rule := func(typ string, major, minor int64, access string) specs.LinuxDeviceCgroup {
		return specs.LinuxDeviceCgroup{Allow: true, Type: typ, Major: &major, Minor: &minor, Access: access}
	}
	return []specs.LinuxDeviceCgroup{
		{Allow: false, Access: "rwm"},
		rule("c", 1, 3, "rwm"),    // null
		rule("c", 1, 5, "rwm"),    // zero
		rule("c", 1, 7, "rwm"),    // full
		rule("c", 1, 8, "rwm"),    // random
		rule("c", 1, 9, "rwm"),    // urandom
		rule("c", 5, 0, "rwm"),    // tty
		rule("c", 5, 2, "rwm"),    // ptmx
		rule("c", 136, -1, "rwm"), // pts/*
	}
}
