package oci

import (
	goruntime "runtime"

	specs "github.com/opencontainers/runtime-spec/specs-go"
	"golang.org/x/sys/unix"
)

// seccompAllowed is the unconditional allowlist of Docker's (moby's)
// default seccomp profile, profiles/seccomp/default.json, for a container
// with Docker's default capabilities: everything a normal program needs,
// without the syscalls that manage the kernel (modules, reboot, swap, clock,
// mounts, namespaces, keyrings, BPF, perf, userfaultfd, io_uring...).
// Names unknown on an architecture are ignored by the runtimes, so the
// 32-bit and multi-arch variants can sit in one list as in moby's.
var seccompAllowed = []string{
	"accept", "accept4", "access", "adjtimex", "alarm", "bind", "brk", "cachestat",
	"capget", "capset", "chdir", "chmod", "chown", "chown32", "clock_adjtime",
	"clock_adjtime64", "clock_getres", "clock_getres_time64", "clock_gettime",
	"clock_gettime64", "clock_nanosleep", "clock_nanosleep_time64", "close",
	"close_range", "connect", "copy_file_range", "creat", "dup", "dup2", "dup3",
	"epoll_create", "epoll_create1", "epoll_ctl", "epoll_ctl_old", "epoll_pwait",
	"epoll_pwait2", "epoll_wait", "epoll_wait_old", "eventfd", "eventfd2", "execve",
	"execveat", "exit", "exit_group", "faccessat", "faccessat2", "fadvise64",
	"fadvise64_64", "fallocate", "fanotify_mark", "fchdir", "fchmod", "fchmodat",
	"fchmodat2", "fchown", "fchown32", "fchownat", "fcntl", "fcntl64", "fdatasync",
	"fgetxattr", "flistxattr", "flock", "fork", "fremovexattr", "fsetxattr", "fstat",
	"fstat64", "fstatat64", "fstatfs", "fstatfs64", "fsync", "ftruncate",
	"ftruncate64", "futex", "futex_requeue", "futex_time64", "futex_wait",
	"futex_waitv", "futex_wake", "futimesat", "getcpu", "getcwd", "getdents",
	"getdents64", "getegid", "getegid32", "geteuid", "geteuid32", "getgid",
	"getgid32", "getgroups", "getgroups32", "getitimer", "getpeername", "getpgid",
	"getpgrp", "getpid", "getppid", "getpriority", "getrandom", "getresgid",
	"getresgid32", "getresuid", "getresuid32", "getrlimit", "get_robust_list",
	"getrusage", "getsid", "getsockname", "getsockopt", "get_thread_area", "gettid",
	"gettimeofday", "getuid", "getuid32", "getxattr", "inotify_add_watch",
	"inotify_init", "inotify_init1", "inotify_rm_watch", "io_cancel", "ioctl",
	"io_destroy", "io_getevents", "io_pgetevents", "io_pgetevents_time64",
	"ioprio_get", "ioprio_set", "io_setup", "io_submit", "ipc", "kill",
	"landlock_add_rule", "landlock_create_ruleset", "landlock_restrict_self",
	"lchown", "lchown32", "lgetxattr", "link", "linkat", "listen", "listxattr",
	"llistxattr", "_llseek", "lremovexattr", "lseek", "lsetxattr", "lstat", "lstat64",
	"madvise", "map_shadow_stack", "membarrier", "memfd_create", "memfd_secret",
	"mincore", "mkdir", "mkdirat", "mknod", "mknodat", "mlock", "mlock2", "mlockall",
	"mmap", "mmap2", "mprotect", "mq_getsetattr", "mq_notify", "mq_open",
	"mq_timedreceive", "mq_timedreceive_time64", "mq_timedsend",
	"mq_timedsend_time64", "mq_unlink", "mremap", "mseal", "msgctl", "msgget",
	"msgrcv", "msgsnd", "msync", "munlock", "munlockall", "munmap",
	"name_to_handle_at", "nanosleep", "newfstatat", "_newselect", "open", "openat",
	"openat2", "pause", "pidfd_open", "pidfd_send_signal", "pipe", "pipe2",
	"pkey_alloc", "pkey_free", "pkey_mprotect", "poll", "ppoll", "ppoll_time64",
	"prctl", "pread64", "preadv", "preadv2", "prlimit64", "process_mrelease",
	"pselect6", "pselect6_time64", "pwrite64", "pwritev", "pwritev2", "read",
	"readahead", "readlink", "readlinkat", "readv", "recv", "recvfrom", "recvmmsg",
	"recvmmsg_time64", "recvmsg", "remap_file_pages", "removexattr", "rename",
	"renameat", "renameat2", "restart_syscall", "rmdir", "rseq", "rt_sigaction",
	"rt_sigpending", "rt_sigprocmask", "rt_sigqueueinfo", "rt_sigreturn",
	"rt_sigsuspend", "rt_sigtimedwait", "rt_sigtimedwait_time64",
	"rt_tgsigqueueinfo", "sched_getaffinity", "sched_getattr", "sched_getparam",
	"sched_get_priority_max", "sched_get_priority_min", "sched_getscheduler",
	"sched_rr_get_interval", "sched_rr_get_interval_time64", "sched_setaffinity",
	"sched_setattr", "sched_setparam", "sched_setscheduler", "sched_yield",
	"seccomp", "select", "semctl", "semget", "semop", "semtimedop",
	"semtimedop_time64", "send", "sendfile", "sendfile64", "sendmmsg", "sendmsg",
	"sendto", "setfsgid", "setfsgid32", "setfsuid", "setfsuid32", "setgid",
	"setgid32", "setgroups", "setgroups32", "setitimer", "setpgid", "setpriority",
	"setregid", "setregid32", "setresgid", "setresgid32", "setresuid",
	"setresuid32", "setreuid", "setreuid32", "setrlimit", "set_robust_list",
	"setsid", "setsockopt", "set_thread_area", "set_tid_address", "setuid",
	"setuid32", "setxattr", "shmat", "shmctl", "shmdt", "shmget", "shutdown",
	"sigaltstack", "signalfd", "signalfd4", "sigprocmask", "sigreturn",
	"socketcall", "socketpair", "splice", "stat", "stat64", "statfs", "statfs64",
	"statx", "symlink", "symlinkat", "sync", "sync_file_range", "syncfs", "sysinfo",
	"tee", "tgkill", "time", "timer_create", "timer_delete", "timer_getoverrun",
	"timer_gettime", "timer_gettime64", "timer_settime", "timer_settime64",
	"timerfd_create", "timerfd_gettime", "timerfd_gettime64", "timerfd_settime",
	"timerfd_settime64", "times", "tkill", "truncate", "truncate64", "ugetrlimit",
	"umask", "uname", "unlink", "unlinkat", "utime", "utimensat",
	"utimensat_time64", "utimes", "vfork", "vmsplice", "wait4", "waitid", "waitpid",
	"write", "writev",
	// moby allows these on kernels >= 4.8, where ptrace can no longer be
	// used to bypass seccomp.
	"process_vm_readv", "process_vm_writev", "ptrace",
	// Granted by CAP_SYS_CHROOT, which is in the default capability set.
	"chroot",
}

// seccompArchAllowed are allowed only on some architectures.
var seccompArchAllowed = map[string][]string{
	"amd64": {"arch_prctl", "modify_ldt"},
	"386":   {"arch_prctl", "modify_ldt"},
	"arm64": {},
	"arm":   {"arm_fadvise64_64", "arm_sync_file_range", "sync_file_range2", "breakpoint", "cacheflush", "set_tls"},
}

// cloneNamespaceFlags are the CLONE_NEW* flags; without CAP_SYS_ADMIN moby
// allows clone only when none is set (unshare is not allowed at all).
const cloneNamespaceFlags = unix.CLONE_NEWNS | unix.CLONE_NEWUTS | unix.CLONE_NEWIPC |
	unix.CLONE_NEWUSER | unix.CLONE_NEWPID | unix.CLONE_NEWNET | unix.CLONE_NEWCGROUP

// seccompProfile returns moby's default profile for GOARCH: deny with EPERM
// by default, the allowlist above, and moby's argument-filtered rules.
func seccompProfile() *specs.LinuxSeccomp {
	eperm, enosys := uint(unix.EPERM), uint(unix.ENOSYS)
	allowed := append(append([]string{}, seccompAllowed...), seccompArchAllowed[goruntime.GOARCH]...)
	return &specs.LinuxSeccomp{
		DefaultAction:   specs.ActErrno,
		DefaultErrnoRet: &eperm,
		Architectures:   seccompArches(goruntime.GOARCH),
		Syscalls: []specs.LinuxSyscall{
			{Names: allowed, Action: specs.ActAllow},
			// personality: only the harmless personas moby lists.
			personality(0x0), personality(0x0008), personality(0x20000),
			personality(0x20008), personality(0xffffffff),
			// clone without namespace flags (masked equality with 0).
			{Names: []string{"clone"}, Action: specs.ActAllow, Args: []specs.LinuxSeccompArg{
				{Index: 0, Value: cloneNamespaceFlags, ValueTwo: 0, Op: specs.OpMaskedEqual},
			}},
			// clone3's flags are behind a pointer and cannot be filtered:
			// ENOSYS makes libc fall back to clone, as moby does.
			{Names: []string{"clone3"}, Action: specs.ActErrno, ErrnoRet: &enosys},
			// Any socket family except AF_VSOCK (host/guest channel).
			{Names: []string{"socket"}, Action: specs.ActAllow, Args: []specs.LinuxSeccompArg{
				{Index: 0, Value: unix.AF_VSOCK, Op: specs.OpNotEqual},
			}},
		},
	}
}

func personality(v uint64) specs.LinuxSyscall {
	return specs.LinuxSyscall{
		Names:  []string{"personality"},
		Action: specs.ActAllow,
		Args:   []specs.LinuxSeccompArg{{Index: 0, Value: v, Op: specs.OpEqualTo}},
	}
}

// seccompArches lists the native architecture and the compat ones a process
// could switch to, as moby's archMap does.
func seccompArches(goarch string) []specs.Arch {
	switch goarch {
	case "amd64":
		return []specs.Arch{specs.ArchX86_64, specs.ArchX86, specs.ArchX32}
	case "arm64":
		return []specs.Arch{specs.ArchAARCH64, specs.ArchARM}
	case "386":
		return []specs.Arch{specs.ArchX86}
	default:
		return nil // the runtime's native architecture only
	}
}
