package selftest

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"net"
	"net/netip"
	"net/url"
	"os"
	goruntime "runtime"
	"slices"
	"strconv"
	"strings"
	"time"
)

// Env is what the probes share: the client and two sandboxes on the same
// server ("a" is probed, "b" is its neighbour).
type Env struct {
	C    *Client
	A, B *Sandbox
	// Template is what extra sandboxes are made from.
	Template string
}

// Probe is one escape attempt. Run returns nil when the sandbox was held
// (and the control, if any, worked), or what went wrong.
type Probe struct {
	Name string
	Why  string
	Run  func(ctx context.Context, e *Env) error
}

// Probes is the isolation suite, in the order it runs.
var Probes = []Probe{
	{"mount", "root in a sandbox cannot mount filesystems", probeMount},
	{"kernel-module", "no sandbox process can load a kernel module", probeModule},
	{"host-processes", "a sandbox sees only its own processes (no ptrace or signal target outside)", probeHostProcesses},
	{"capabilities", "user processes have no capabilities; root's lack CAP_SYS_ADMIN", probeCapabilities},
	{"proc-sys", "/proc/sys is read-only, even for root", probeProcSys},
	{"devices", "only the usual character devices exist, no host disks or kernel memory", probeDevices},
	{"neighbour-files", "a sandbox cannot find another sandbox's files", probeNeighbourFiles},
	{"template-write", "writing the template's files changes only this sandbox", probeTemplateWrite},
	{"neighbour-network", "a sandbox cannot open connections to another sandbox (the host can)", probeNeighbourNetwork},
	{"spoofing", "packets a sandbox sends with its neighbour's source address are dropped (raw sockets, as root)", probeSpoof},
	{"egress", "denyOut CIDRs and allowOut domains hold against a server behind the host (its own netns)", probeEgress},
	{"host-network", "a sandbox cannot open connections to the host's address on its bridge, warren's port included", probeHostNetwork},
	{"envd-traversal", "'..' in a /files path stays inside the sandbox", probeEnvdTraversal},
	{"envd-symlink", "a symlink to / read through envd shows the sandbox's files, not the host's", probeEnvdSymlink},
	{"memory", "a process over the memory limit is killed; the sandbox goes on", probeMemory},
	{"pids", "a fork bomb is contained; the sandbox and its neighbour go on", probePids},
	{"open-files", "a process's open files stop at EMFILE (at most 65536); the sandbox goes on", probeOpenFiles},
	{"disk", "a sandbox's disk is its own: filling it gives ENOSPC inside and 507 on upload, then it recovers", probeDisk},
	{"memory-bomb", "many processes allocating at once stay inside; a sandbox that dies of it is reported gone, never left hanging", probeMemoryBomb},
	{"cpu-neighbour", "a sandbox spinning on every CPU leaves its neighbour's command latency within 2x", probeCPUNeighbour},
	{"stdout-flood", "256 MiB of output streams out; the sandbox, its neighbour and warren go on", probeStdoutFlood},
}

func token() string {
	b := make([]byte, 6)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}

// must runs script and fails unless it exits 0.
func must(ctx context.Context, s *Sandbox, user, script string) (string, error) {
	r, err := s.Run(ctx, user, script)
	if err != nil {
		return "", fmt.Errorf("running %q: %w", script, err)
	}
	if r.ExitCode != 0 {
		return "", fmt.Errorf("control %q failed: %s", script, r)
	}
	return strings.TrimSpace(r.Stdout), nil
}

// refused runs script, which must fail (non-zero exit).
func refused(ctx context.Context, s *Sandbox, user, script string) error {
	r, err := s.Run(ctx, user, script)
	if err != nil {
		return fmt.Errorf("running %q: %w", script, err)
	}
	if r.ExitCode == 0 {
		return fmt.Errorf("%q succeeded: %s", script, r)
	}
	return nil
}

func probeMount(ctx context.Context, e *Env) error {
	if id, err := must(ctx, e.A, "root", "id -u"); err != nil || id != "0" {
		return fmt.Errorf("control: root is uid %q, %v", id, err)
	}
	return refused(ctx, e.A, "root", "mkdir -p /tmp/m && mount -t tmpfs none /tmp/m")
}

func probeModule(ctx context.Context, e *Env) error {
	// init_module (175 on x86-64) with an empty image: EPERM without
	// CAP_SYS_MODULE, ENOSYS under gVisor; anything but success.
	return refused(ctx, e.A, "root", `python3 -c 'import ctypes, sys; sys.exit(0 if ctypes.CDLL(None).syscall(175, 0, 0, 0) == 0 else 1)'`)
}

func probeHostProcesses(ctx context.Context, e *Env) error {
	self := os.Getpid()
	out, err := must(ctx, e.A, "root", fmt.Sprintf(`n=$(ls /proc | grep -c '^[0-9]'); c=$(tr '\0' ' ' < /proc/%d/cmdline 2>/dev/null); echo "$n|$c"`, self))
	if err != nil {
		return err
	}
	n, cmdline, _ := strings.Cut(out, "|")
	if count, _ := strconv.Atoi(n); count > 64 {
		return fmt.Errorf("the sandbox sees %s processes", n)
	}
	host, _ := os.ReadFile("/proc/self/cmdline")
	if mine := strings.TrimSpace(strings.ReplaceAll(string(host), "\x00", " ")); cmdline != "" && cmdline == mine {
		return fmt.Errorf("the sandbox sees the prober's own host process %d (%s)", self, cmdline)
	}
	return nil
}

func probeCapabilities(ctx context.Context, e *Env) error {
	user, err := must(ctx, e.A, "user", "awk '/^CapEff/ {print $2}' /proc/self/status")
	if err != nil {
		return err
	}
	if v, _ := strconv.ParseUint(user, 16, 64); v != 0 {
		return fmt.Errorf("user process capabilities %s, want none", user)
	}
	root, err := must(ctx, e.A, "root", "awk '/^CapEff/ {print $2}' /proc/self/status")
	if err != nil {
		return err
	}
	if v, _ := strconv.ParseUint(root, 16, 64); v&(1<<21) != 0 {
		return fmt.Errorf("root has CAP_SYS_ADMIN (CapEff %s)", root)
	}
	return nil
}

func probeProcSys(ctx context.Context, e *Env) error {
	return refused(ctx, e.A, "root", "echo 1 > /proc/sys/kernel/sysrq")
}

func probeDevices(ctx context.Context, e *Env) error {
	out, err := must(ctx, e.A, "root", "ls /dev")
	if err != nil {
		return err
	}
	for _, bad := range []string{"sda", "vda", "nvme0", "mem", "kmem", "kmsg", "port", "loop0", "dm-0"} {
		for _, f := range strings.Fields(out) {
			if f == bad {
				return fmt.Errorf("/dev/%s exists in the sandbox", bad)
			}
		}
	}
	return nil
}

func probeNeighbourFiles(ctx context.Context, e *Env) error {
	t := token()
	if _, err := must(ctx, e.B, "user", "echo secret > /tmp/neighbour-"+t); err != nil {
		return err
	}
	out, err := must(ctx, e.A, "root", fmt.Sprintf(`find / -xdev -name 'neighbour-%s' 2>/dev/null; ls /proc/*/root/tmp/neighbour-%[1]s 2>/dev/null; true`, t))
	if err != nil {
		return err
	}
	if out != "" {
		return fmt.Errorf("found the neighbour's file: %s", out)
	}
	return nil
}

func probeTemplateWrite(ctx context.Context, e *Env) error {
	t := token()
	path := "/usr/local/bin/probe-" + t
	if _, err := must(ctx, e.A, "root", fmt.Sprintf("echo x > %s && test -f %[1]s", path)); err != nil {
		return err
	}
	c, err := e.C.Create(ctx, e.Template, nil)
	if err != nil {
		return fmt.Errorf("creating a fresh sandbox: %w", err)
	}
	defer c.Kill(context.WithoutCancel(ctx))
	return refused(ctx, c, "root", "test -e "+path)
}

// addr returns the sandbox's IPv4 address and default gateway.
func addr(ctx context.Context, s *Sandbox) (ip, gw netip.Addr, err error) {
	out, err := must(ctx, s, "root", `python3 -c '
import socket, struct
for line in open("/proc/net/route").read().splitlines()[1:]:
    f = line.split()
    if f[1] == "00000000":
        print(socket.inet_ntoa(struct.pack("<L", int(f[2], 16))))
' ; hostname -I`)
	if err != nil {
		return ip, gw, err
	}
	f := strings.Fields(out)
	if len(f) < 2 {
		return ip, gw, fmt.Errorf("no gateway and address in %q", out)
	}
	if gw, err = netip.ParseAddr(f[0]); err != nil {
		return ip, gw, err
	}
	ip, err = netip.ParseAddr(f[1])
	return ip, gw, err
}

// dialFrom tries a TCP connection from inside s; true when it connected.
func dialFrom(ctx context.Context, s *Sandbox, target netip.AddrPort) (bool, error) {
	r, err := s.Run(ctx, "user", fmt.Sprintf("timeout 3 bash -c '</dev/tcp/%s/%d'", target.Addr(), target.Port()))
	if err != nil {
		return false, err
	}
	return r.ExitCode == 0, nil
}

func probeNeighbourNetwork(ctx context.Context, e *Env) error {
	bIP, _, err := addr(ctx, e.B)
	if err != nil {
		return err
	}
	port := 8123
	if _, err := must(ctx, e.B, "user", fmt.Sprintf("nohup python3 -m http.server %d >/dev/null 2>&1 & sleep 1", port)); err != nil {
		return err
	}
	target := netip.AddrPortFrom(bIP, uint16(port))
	// Control: the host reaches the neighbour's server.
	var conn net.Conn
	for i := 0; i < 30; i++ {
		if conn, err = net.DialTimeout("tcp", target.String(), time.Second); err == nil {
			conn.Close()
			break
		}
		time.Sleep(100 * time.Millisecond)
	}
	if err != nil {
		return fmt.Errorf("control: the host cannot reach %s: %w", target, err)
	}
	ok, err := dialFrom(ctx, e.A, target)
	if err != nil {
		return err
	}
	if ok {
		return fmt.Errorf("sandbox reached its neighbour at %s", target)
	}
	return nil
}

func probeHostNetwork(ctx context.Context, e *Env) error {
	_, gw, err := addr(ctx, e.A)
	if err != nil {
		return err
	}
	ln, err := net.Listen("tcp", netip.AddrPortFrom(gw, 0).String())
	if err != nil {
		return fmt.Errorf("listening on the bridge address %s: %w", gw, err)
	}
	defer ln.Close()
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			c.Close()
		}
	}()
	target := netip.MustParseAddrPort(ln.Addr().String())
	ok, err := dialFrom(ctx, e.A, target)
	if err != nil {
		return err
	}
	if ok {
		return fmt.Errorf("sandbox opened a connection to the host at %s", target)
	}
	// warren's own port, on the bridge address and on the address the
	// probe reached warren at (when that is not loopback, which is the
	// sandbox's own).
	targets := []netip.AddrPort{}
	if u, err := url.Parse(e.C.URL); err == nil {
		if ap, err := netip.ParseAddrPort(u.Host); err == nil {
			targets = append(targets, netip.AddrPortFrom(gw, ap.Port()))
			if !ap.Addr().IsLoopback() {
				targets = append(targets, ap)
			}
		}
	}
	for _, t := range targets {
		ok, err := dialFrom(ctx, e.A, t)
		if err != nil {
			return err
		}
		if ok {
			return fmt.Errorf("sandbox opened a connection to warren's port at %s", t)
		}
	}
	return nil
}

func probeEnvdTraversal(ctx context.Context, e *Env) error {
	t := token()
	status, body, err := e.A.Upload(ctx, "/home/user/../../../../../tmp/traversal-"+t, "inside")
	if err != nil {
		return err
	}
	if status >= 300 {
		return nil // refused outright: also held
	}
	if _, err := os.Stat("/tmp/traversal-" + t); err == nil {
		os.Remove("/tmp/traversal-" + t)
		return fmt.Errorf("upload with '..' wrote the host's /tmp (%d %s)", status, body)
	}
	if out, err := must(ctx, e.A, "user", "cat /tmp/traversal-"+t); err != nil || out != "inside" {
		return fmt.Errorf("upload with '..' did not land in the sandbox's /tmp: %q, %v", out, err)
	}
	return nil
}

func probeEnvdSymlink(ctx context.Context, e *Env) error {
	if _, err := must(ctx, e.A, "user", "ln -sfn / /tmp/rootlink"); err != nil {
		return err
	}
	want, err := must(ctx, e.A, "user", "cat /etc/hostname")
	if err != nil {
		return err
	}
	status, got, err := e.A.Download(ctx, "/tmp/rootlink/etc/hostname")
	if err != nil {
		return err
	}
	host, _ := os.ReadFile("/etc/hostname")
	if status == 200 && strings.TrimSpace(got) != want {
		return fmt.Errorf("read through the symlink %q, the sandbox has %q (host %q)", strings.TrimSpace(got), want, strings.TrimSpace(string(host)))
	}
	return nil
}

func probeMemory(ctx context.Context, e *Env) error {
	r, err := e.A.Run(ctx, "user", `python3 -c 'b = bytearray(8 << 30)'`)
	if err != nil {
		return err
	}
	if r.ExitCode == 0 {
		return fmt.Errorf("allocating 8 GiB succeeded: %s", r)
	}
	if _, err := must(ctx, e.A, "user", "echo alive"); err != nil {
		return fmt.Errorf("the sandbox did not survive: %w", err)
	}
	return nil
}

func probePids(ctx context.Context, e *Env) error {
	s, err := e.C.Create(ctx, e.Template, nil)
	if err != nil {
		return err
	}
	defer s.Kill(context.WithoutCancel(ctx))
	// Each child forks on; the pids limit stops the tree. timeout ends the
	// first process only, so the sandbox is killed afterwards.
	r, err := s.Run(ctx, "user", `timeout 5 python3 -c '
import os, time
while True:
    try:
        os.fork()
    except OSError:
        time.sleep(0.05)
' >/dev/null 2>&1; n=$(ls /proc | grep -c '^[0-9]'); echo $n`)
	if err != nil {
		return fmt.Errorf("the sandbox stopped answering during a fork bomb: %w", err)
	}
	if n, _ := strconv.Atoi(strings.TrimSpace(r.Stdout)); n > 4096 {
		return fmt.Errorf("%d processes in the sandbox", n)
	}
	start := time.Now()
	if _, err := must(ctx, e.B, "user", "echo neighbour alive"); err != nil {
		return fmt.Errorf("the neighbour did not answer during the fork bomb: %w", err)
	}
	if d := time.Since(start); d > 10*time.Second {
		return fmt.Errorf("the neighbour took %v to run a command", d)
	}
	return nil
}

// commandLatency is the median time of n `true` commands in s.
func commandLatency(ctx context.Context, s *Sandbox, n int) (time.Duration, error) {
	var ds []time.Duration
	for range n {
		start := time.Now()
		if _, err := must(ctx, s, "user", "true"); err != nil {
			return 0, err
		}
		ds = append(ds, time.Since(start))
	}
	slices.Sort(ds)
	return ds[len(ds)/2], nil
}

// steadyLatency is the lower of two rounds' median command latencies: a
// neighbour that is starved stays slow in both, while one scheduler hiccup
// (a few ms, on a two-CPU host) spoils at most one.
func steadyLatency(ctx context.Context, s *Sandbox) (time.Duration, error) {
	a, err := commandLatency(ctx, s, 15)
	if err != nil {
		return 0, err
	}
	b, err := commandLatency(ctx, s, 15)
	return min(a, b), err
}

func probeCPUNeighbour(ctx context.Context, e *Env) error {
	quiet, err := steadyLatency(ctx, e.B)
	if err != nil {
		return err
	}
	// As many spinning processes as the host has CPUs, for 8 s; the
	// sandbox's CPU quota is what must hold them back.
	spin := fmt.Sprintf(`for i in $(seq %d); do (timeout 8 sh -c 'while :; do :; done' &) ; done; sleep 1`, goruntime.NumCPU())
	if _, err := must(ctx, e.A, "user", spin); err != nil {
		return err
	}
	busy, err := steadyLatency(ctx, e.B)
	if err != nil {
		return err
	}
	if busy > 2*quiet+5*time.Millisecond {
		return fmt.Errorf("neighbour's command took %v with the spinner, %v without", busy, quiet)
	}
	return nil
}

func probeStdoutFlood(ctx context.Context, e *Env) error {
	start := time.Now()
	r, err := e.A.Run(ctx, "user", `head -c 256M /dev/zero | tr '\0' x; echo`)
	if err != nil {
		return fmt.Errorf("the flooding command did not finish: %w", err)
	}
	// Control: the flood really reached the client (Run keeps 1 MiB).
	if r.ExitCode != 0 || len(r.Stdout) < 1<<20 {
		return fmt.Errorf("control: the flood did not arrive (%d bytes, exit %d)", len(r.Stdout), r.ExitCode)
	}
	took := time.Since(start)
	if _, err := must(ctx, e.A, "user", "echo alive"); err != nil {
		return fmt.Errorf("the sandbox did not survive its flood: %w", err)
	}
	if _, err := must(ctx, e.B, "user", "echo neighbour alive"); err != nil {
		return fmt.Errorf("the neighbour did not survive the flood: %w", err)
	}
	if took > 90*time.Second {
		return fmt.Errorf("256 MiB of output took %v", took)
	}
	return nil
}
