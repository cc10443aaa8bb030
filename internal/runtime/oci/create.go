package oci

import (
	"context"
	"errors"
	"fmt"
	"net/netip"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/warren-sandbox/warren/internal/crashpoint"
	"github.com/warren-sandbox/warren/internal/errdefs"
	"github.com/warren-sandbox/warren/internal/log"
	"github.com/warren-sandbox/warren/internal/network"
	"github.com/warren-sandbox/warren/internal/runtime"
)

// Create implements runtime.Backend.Create. The steps, each undone by the
// cleanup stack if a later one fails: state dir, network attachment,
// overlay rootfs with /etc/hostname and /etc/hosts, OCI bundle, container
// (with its cgroup), instance record.
func (b *Backend) Create(ctx context.Context, spec runtime.Spec) (_ *runtime.Instance, retErr error) {
	spec, err := b.normalize(spec)
	if err != nil {
		return nil, err
	}
	ctx = log.With(ctx, "sandbox", spec.ID, "backend", b.name)
	unlock := b.locks.lock(spec.ID)
	defer unlock()

	t := log.NewPhases()
	dir := b.dir(spec.ID)
	if err := os.Mkdir(dir, 0o700); err != nil {
		if errors.Is(err, os.ErrExist) {
			return nil, fmt.Errorf("sandbox %s: %w", spec.ID, errdefs.ErrAlreadyExists)
		}
		return nil, fmt.Errorf("creating state dir: %w", err)
	}
	var cu cleanup
	defer func() {
		if retErr != nil {
			if err := cu.run(ctx); err != nil {
				retErr = fmt.Errorf("%w (and cleaning up: %w)", retErr, err)
			}
		}
	}()
	cu.add("removing state dir", func(context.Context) error { return removeStateDir(dir) })

	att, err := b.net.Attach(ctx, spec.ID, spec.Network)
	if err != nil {
		return nil, fmt.Errorf("attaching network: %w", err)
	}
	cu.add("detaching network", func(ctx context.Context) error { return b.net.Detach(ctx, spec.ID) })
	crashpoint.Hit("oci.create.attached")
	t.Done("network")

	rec, pid, err := b.createContainer(ctx, &cu, spec, att, t)
	if err != nil {
		return nil, err
	}
	log.G(ctx).Debug("sandbox created", "ip", att.IP, "pid", pid, "stopped", spec.Stopped, "steps", t.String())
	if spec.Stopped {
		return rec.instance(runtime.StateStopped, 0), nil
	}
	return rec.instance(runtime.StateRunning, pid), nil
}

// createContainer prepares the rootfs and bundle, starts the container and
// records the instance.
func (b *Backend) createContainer(ctx context.Context, cu *cleanup, spec runtime.Spec, att *network.Attachment, t *log.Phases) (*record, int, error) {
	dir := b.dir(spec.ID)
	cu.add("unmounting rootfs", func(context.Context) error { return unmountAll(dir) })
	if b.opts.DiskQuota && spec.Resources.DiskMB > 0 {
		if err := b.makeDisk(dir, spec.Resources.DiskMB); err != nil {
			return nil, 0, err
		}
		t.Done("disk")
	}
	layers := []string{spec.Rootfs}
	if spec.From != nil {
		layers = spec.From.Layers
	}
	if err := mountOverlay(dir, layers); err != nil {
		return nil, 0, err
	}
	rootfs := filepath.Join(dir, rootfsDir)
	if err := writeIdentity(rootfs, spec.Hostname, b.resolver(att)); err != nil {
		return nil, 0, err
	}
	tmpBind := false
	if b.name == Runsc {
		var err error
		if tmpBind, err = prepareTmp(rootfs); err != nil {
			return nil, 0, err
		}
	}
	ociSpec := buildSpec(bundleParams{
		spec:       spec,
		rootfs:     rootfs,
		netnsPath:  att.NetnsPath,
		cgroupPath: b.cgroupPath(spec.ID),
		seccomp:    true,
		tmpBind:    tmpBind,
		nproc:      b.nprocLimit(spec.Resources),
		swap:       b.swap,
		initOOM:    b.initOOMScoreAdj(),
	})
	if err := writeSpec(dir, ociSpec); err != nil {
		return nil, 0, err
	}
	t.Done("rootfs")
	cu.add("deleting container", func(ctx context.Context) error { return b.deleteContainer(ctx, spec.ID) })
	rec := &record{
		ID:        spec.ID,
		Backend:   b.name,
		IP:        att.IP,
		Egress:    spec.Network.Clone(),
		Labels:    spec.Labels,
		CreatedAt: time.Now().UTC(),
		CPUCount:  spec.Resources.CPUCount,
		MemoryMB:  spec.Resources.MemoryMB,
		DiskMB:    spec.Resources.DiskMB,
		Layers:    layers,
		Mounts:    spec.Mounts,
	}
	pid, err := b.launchNew(ctx, spec, rec)
	if err != nil {
		return nil, 0, err
	}
	t.Done("runtime")
	if err := writeRecord(dir, rec); err != nil {
		return nil, 0, err
	}
	return rec, pid, nil
}

// launchNew starts a new container as spec says (booted, or restored
// from From's memory image) and returns its init's pid; with
// spec.Stopped it starts nothing and leaves rec as Stop would, with the
// image for Start to restore.
func (b *Backend) launchNew(ctx context.Context, spec runtime.Spec, rec *record) (int, error) {
	memory := spec.From != nil && spec.From.Memory && !spec.ColdBoot
	switch {
	case spec.Stopped:
		rec.Stopped = true
		if memory {
			if err := linkOrCopyDir(filepath.Join(spec.From.Dir, snapshotMemory), filepath.Join(b.dir(spec.ID), imageDir)); err != nil {
				return 0, fmt.Errorf("taking the memory image: %w", err)
			}
			rec.Checkpointed = true
		}
		return 0, nil
	case memory:
		return b.restore(ctx, spec.ID, filepath.Join(spec.From.Dir, snapshotMemory))
	default:
		return b.start(ctx, spec.ID, spec.Background)
	}
}

// start runs the container detached with its stdio in init.log and returns
// the init's host pid. In the background, the runtime's own processes run
// at the lowest CPU priority too (their children inherit it).
func (b *Backend) start(ctx context.Context, id string, background bool) (int, error) {
	return b.launch(ctx, id, "starting container", func(dir, pidPath string, logf *os.File) error {
		return b.cli.run(ctx, id, dir, pidPath, logf, background)
	})
}

// restore creates the container from the memory image in imageDir (runsc
// only) and returns the init's host pid.
func (b *Backend) restore(ctx context.Context, id, imageDir string) (int, error) {
	if b.name != Runsc {
		return 0, fmt.Errorf("restoring sandbox %s: %s cannot restore memory: %w", id, b.name, errdefs.ErrNotImplemented)
	}
	if _, err := os.Stat(filepath.Join(imageDir, "checkpoint.img")); err != nil {
		return 0, fmt.Errorf("restoring sandbox %s: memory image: %w", id, err)
	}
	// runsc moved eth0's address into its own stack when it first booted;
	// it reads the netns again now.
	if err := b.net.Reconfigure(ctx, id); err != nil {
		return 0, err
	}
	return b.launch(ctx, id, "restoring container", func(dir, pidPath string, logf *os.File) error {
		return b.cli.restore(ctx, id, dir, imageDir, pidPath, logf)
	})
}

// launch runs fn (a run or restore of container id), with init.log for its
// output, and returns the init's host pid.
func (b *Backend) launch(ctx context.Context, id, what string, fn func(dir, pidPath string, logf *os.File) error) (int, error) {
	dir := b.dir(id)
	if b.name == Runsc {
		if err := guardTmpBind(dir); err != nil {
			return 0, err
		}
	}
	logf, err := os.OpenFile(filepath.Join(dir, initLog), os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o600)
	if err != nil {
		return 0, fmt.Errorf("creating init log: %w", err)
	}
	defer logf.Close()
	pidPath := filepath.Join(dir, pidFile)
	_ = os.Remove(pidPath)
	if err := fn(dir, pidPath, logf); err != nil {
		return 0, fmt.Errorf("%s: %w: %s", what, err, tail(filepath.Join(dir, initLog), 2048))
	}
	if err := b.raiseMemoryLimit(dir, id); err != nil {
		return 0, err
	}
	b.watchLog(id)
	data, err := os.ReadFile(pidPath)
	if err != nil {
		return 0, fmt.Errorf("reading init pid: %w", err)
	}
	pid, err := strconv.Atoi(strings.TrimSpace(string(data)))
	if err != nil {
		return 0, fmt.Errorf("parsing init pid %q: %w", data, err)
	}
	return pid, nil
}

// tail returns up to n trailing bytes of a file, for error messages.
func tail(path string, n int64) string {
	f, err := os.Open(path)
	if err != nil {
		return ""
	}
	defer f.Close()
	if fi, err := f.Stat(); err == nil && fi.Size() > n {
		_, _ = f.Seek(-n, 2)
	}
	buf := make([]byte, n)
	k, _ := f.Read(buf)
	return strings.TrimSpace(string(buf[:k]))
}

// resolver is the nameserver a sandbox's resolv.conf names: warren's relay
// on the gateway, when the network runs one.
func (b *Backend) resolver(att *network.Attachment) netip.Addr {
	if b.net.Options().DNSUpstream == "" {
		return netip.Addr{}
	}
	return att.Gateway
}
