package oci

import (
	"context"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"golang.org/x/sys/unix"
)

// memoryFlags are the flags runsc's checkpoint and restore subcommands get
// so that a resume does not wait for all of the sandbox's memory:
//
//   - checkpoint --compression=none: the pages go uncompressed to a pages
//     file of their own, which background loading needs (the default of
//     the runsc warren pins, said anyway: older ones compressed);
//   - restore --background: the restore returns once the kernel's state is
//     loaded and the sandbox runs while its Sentry loads the pages, those
//     the sandbox touches ahead of the rest;
//   - restore --direct, where the image's filesystem takes O_DIRECT: the
//     Sentry reads the pages file past the page cache. Read through the
//     cache, the loader's copying took the CPU the kernel's own restore
//     needed: on 2 cores a restore of 1 GiB spent 3 s loading the kernel's
//     state against 0.3 s with --direct, and the restore returned in 3.7-8.8 s
//     against 1.1-2.6 s (docs/architecture.md, "Pause, snapshots and forks").
//     The price: the pages then come from the disk (a just-written image
//     is flushed first), 170 MB/s on the 2-core test host, so loading all
//     of them takes longer, and a checkpoint waits for that: a pause soon
//     after a resume took 0.2 s more at 100 MiB and 3 s more at 1 GiB.
//
// checkpoint --exclude-committed-zero-pages is left out: gVisor then
// compares every committed page with zeros and records each one apart,
// which made a pause of 100 MiB of written memory 1.8x slower and of 1 GiB
// 5x (measured in one run against the default), for a smaller image only where much of the
// memory is zeros.
//
// runsc's restore command opens the image's files and hands their
// descriptors to the Sentry, which reads the pages through them: the files
// may be unlinked as soon as the restore returns (Start removes a
// sandbox's used image; a fork's snapshot image goes when the forks are
// up), and any number of restores may read one image at once. A page that
// cannot be read later makes gVisor kill the sandbox, which then shows as
// stopped without an image: failed, never half restored. A checkpoint of a
// sandbox still loading waits in the Sentry until every page is in.
type memoryFlags struct {
	checkpoint, restore []string
	// direct is set when this runsc can read the pages file with O_DIRECT;
	// restoreArgs adds --direct for an image whose filesystem takes it.
	direct  bool
	missing []string // flags of the list this runsc lacks
}

// wanted are the flags memoryFlags uses, per subcommand.
var wantedMemoryFlags = []struct{ sub, name, arg string }{
	{"checkpoint", "compression", "--compression=none"},
	{"restore", "background", "--background"},
	{"restore", "direct", "--direct"},
}

// probeMemoryFlags asks the runsc at bin which of wantedMemoryFlags it
// has, since a runsc refuses a flag it does not know (an older one would
// fail every pause). Runc, or EagerRestore: none.
func probeMemoryFlags(ctx context.Context, opts Options, bin string) memoryFlags {
	var f memoryFlags
	if opts.Runtime != Runsc || opts.EagerRestore {
		return f
	}
	help := map[string]map[string]bool{}
	for _, w := range wantedMemoryFlags {
		if help[w.sub] == nil {
			help[w.sub] = subcommandFlags(ctx, bin, w.sub)
		}
		switch {
		case !help[w.sub][w.name]:
			f.missing = append(f.missing, w.sub+" -"+w.name)
		case w.sub == "checkpoint":
			f.checkpoint = append(f.checkpoint, w.arg)
		case w.name == "direct":
			f.direct = true
		default:
			f.restore = append(f.restore, w.arg)
		}
	}
	return f
}

// restoreArgs are the restore flags for the image in imageDir: --direct
// only where the pages file opens with O_DIRECT (tmpfs and some others
// refuse it, and runsc would then fail the restore), and only with
// --background, whose pages file it reads.
func (f memoryFlags) restoreArgs(imageDir string) []string {
	if !f.direct || len(f.restore) == 0 {
		return f.restore
	}
	fd, err := unix.Open(filepath.Join(imageDir, "pages.img"), unix.O_RDONLY|unix.O_DIRECT|unix.O_CLOEXEC, 0)
	if err != nil {
		return f.restore
	}
	_ = unix.Close(fd)
	return append(slices.Clip(f.restore), "--direct")
}

// subcommandFlags are the flag names `bin sub --help` lists. runsc prints
// them one a line, indented, as "-name" (then the type), and exits non-zero
// after help, so the exit status says nothing.
func subcommandFlags(ctx context.Context, bin, sub string) map[string]bool {
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, bin, sub, "--help")
	cmd.Env = runtimeEnv()
	out, _ := cmd.CombinedOutput()
	names := map[string]bool{}
	for _, line := range strings.Split(string(out), "\n") {
		if !strings.HasPrefix(line, " ") && !strings.HasPrefix(line, "\t") {
			continue
		}
		fields := strings.Fields(line)
		if len(fields) > 0 && strings.HasPrefix(fields[0], "-") {
			names[strings.TrimLeft(fields[0], "-")] = true
		}
	}
	return names
}
