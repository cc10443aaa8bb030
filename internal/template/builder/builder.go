// Package builder turns a template definition (the E2B SDK's build request, or
// a Dockerfile converted to one) into a stack of read-only rootfs layers.
// Every RUN executes in a build sandbox made by the sandbox manager, so it
// has the same isolation as a user's sandbox; COPY is written on the host
// into a fresh layer from the uploaded files. Layers are cached by a key
// chained from the parent's key and the step, so an unchanged rebuild
// reuses them all and templates share the layers they have in common.
package builder

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sync"
	"time"

	"golang.org/x/sys/unix"

	"github.com/warren-sandbox/warren/api/wire"
	"github.com/warren-sandbox/warren/internal/errdefs"
	"github.com/warren-sandbox/warren/internal/log"
	"github.com/warren-sandbox/warren/internal/store"
)

// Runner runs RUN steps in build sandboxes. The server adapts the sandbox
// manager to it, so the builder never imports the manager.
type Runner interface {
	RunBuildStep(ctx context.Context, s RunStep) (int, error)
}

// RunStep is one RUN: a command in a fresh sandbox over read-only layers.
type RunStep struct {
	Layers        []string // read-only layers, top first
	Env           map[string]string
	User          string // "" = root
	Workdir       string // "" = /
	Shell         []string
	Command       string
	CPUCount      int
	MemoryMB      int
	AllowInternet bool
	Output        io.Writer // stdout and stderr, as they come
	// LayerDir receives the sandbox's writable layer when the command
	// succeeds; it must not exist.
	LayerDir string
}

// LayerStore keeps layers by cache key (layer.Store).
type LayerStore interface {
	Has(key string) bool
	Path(key string) string
	Create(ctx context.Context, key string, fill func(dir string) error) (string, error)
}

// Images resolves FROM image references to layer stacks (image.Puller).
type Images interface {
	// Resolve finds ref for a build of team: among the images team
	// imported, else in its registry.
	Resolve(ctx context.Context, team, ref string, auth *wire.RegistryAuth, progress func(string)) (*BaseImage, error)
}

// BaseImage is a resolved OCI image.
type BaseImage struct {
	Digest     string
	Layers     []string // top first
	Env        []string // KEY=VALUE
	WorkingDir string
	User       string
	Entrypoint []string
	Cmd        []string
}

// Options wire a Builder.
type Options struct {
	Store  store.Store
	Runner Runner
	Images Images // nil: FROM images are refused
	Layers LayerStore
	// FilesDir keeps uploaded COPY sources, one gzip tar per hash.
	FilesDir string
	// WorkDir is scratch space (views of images) and build logs.
	WorkDir string
	// AllowInternet is the build sandboxes' network setting.
	AllowInternet bool
	// LayerRoot is the layer store's directory, for collecting unused
	// layers; "" never collects.
	LayerRoot string
	// BuiltIn templates (base, code-interpreter-v1) cannot be rebuilt or
	// deleted through the API.
	BuiltIn     []string
	EnvdVersion string
	// MaxBuilds is how many builds a team may run at once (0: no limit);
	// nil: no limit.
	MaxBuilds func(ctx context.Context, team string) (int, error)
	// DefaultDiskMB is the disk of sandboxes whose template names none;
	// minFreeDiskMb grows a template's disk from there.
	DefaultDiskMB int
	// ObserveBuild, when set, is told how each build ended (BuildReady,
	// BuildError, or BuildCancelled) and how long it ran.
	ObserveBuild func(result string, took time.Duration)
	// LocalTemplate, when set, maps the recorded layers of a template a
	// build starts FROM to this node's own copies, pulling what is
	// missing (a cluster node; see lifecycle.Options.LocalTemplate). Nil
	// uses them as recorded.
	LocalTemplate func(ctx context.Context, tpl *store.Template) (*store.Template, error)
}

// BuildCancelled is the result ObserveBuild gets for a cancelled build,
// which the store records as BuildError.
const BuildCancelled = "cancelled"

// Builder runs template builds in the background, one goroutine each.
type Builder struct {
	opts Options
	mu   sync.Mutex
	jobs map[string]*job // running builds by build id
	wg   sync.WaitGroup
}

type job struct {
	cancel context.CancelFunc
	log    *Log
	team   string   // of the template, for MaxBuilds
	files  []string // upload hashes its COPY steps read, kept from collection
}

// New prepares the builder's directories.
func New(opts Options) (*Builder, error) {
	for _, d := range []string{opts.FilesDir, opts.WorkDir, filepath.Join(opts.WorkDir, "logs")} {
		if err := os.MkdirAll(d, 0o700); err != nil {
			return nil, fmt.Errorf("creating %s: %w", d, err)
		}
	}
	return &Builder{opts: opts, jobs: map[string]*job{}}, nil
}

// Recover marks builds that a previous server process left running as
// failed (their build sandboxes died with it, and the manager's reconcile
// destroys what is left of them) and removes what their steps held: views
// of images still mounted and half-received uploads. The layer store
// clears its own scratch dirs when opened.
func (b *Builder) Recover(ctx context.Context) error {
	if err := b.removeLeftovers(ctx); err != nil {
		return err
	}
	builds, err := b.opts.Store.ListBuilds(ctx, "")
	if err != nil {
		return fmt.Errorf("listing builds: %w", err)
	}
	for _, bl := range builds {
		if bl.Status != store.BuildBuilding && bl.Status != store.BuildWaiting {
			continue
		}
		bl.Status, bl.Reason = store.BuildError, "the server restarted during the build; start it again"
		bl.FinishedAt = time.Now().UTC()
		if err := b.opts.Store.UpdateBuild(ctx, bl); err != nil {
			return fmt.Errorf("marking build %s failed: %w", bl.ID, err)
		}
		log.G(ctx).Warn("build interrupted by a restart marked failed", "build", bl.ID, "template", bl.TemplateID)
	}
	return nil
}

// Start validates req and runs it in the background as build buildID of
// template templateID (both recorded already, the build waiting).
func (b *Builder) Start(ctx context.Context, templateID, buildID string, req *wire.BuildStart) error {
	bl, err := b.opts.Store.GetBuild(ctx, buildID)
	if err != nil {
		return err
	}
	if bl.TemplateID != templateID {
		return errdefs.New(errdefs.ErrNotFound, fmt.Sprintf("build '%s' of template '%s' not found", buildID, templateID))
	}
	if bl.Status != store.BuildWaiting {
		return errdefs.New(errdefs.ErrConflict, fmt.Sprintf("build '%s' was started already (it is %s)", buildID, bl.Status))
	}
	if err := b.validate(req); err != nil {
		return err
	}
	team, err := b.teamOf(ctx, templateID)
	if err != nil {
		return err
	}
	b.mu.Lock()
	defer b.mu.Unlock() // held to the job's registration: two starts cannot both take the last place
	if err := b.admit(ctx, team); err != nil {
		return err
	}
	logf, err := newLog(b.logPath(buildID))
	if err != nil {
		return err
	}
	bl.Request, _ = json.Marshal(req.Redacted())
	bl.Status = store.BuildBuilding
	if err := b.opts.Store.UpdateBuild(ctx, bl); err != nil {
		logf.close()
		return fmt.Errorf("recording build start: %w", err)
	}
	jctx, cancel := context.WithCancel(context.WithoutCancel(ctx))
	j := &job{cancel: cancel, log: logf, team: team, files: filesOf(team, req)}
	b.jobs[buildID] = j
	b.wg.Add(1)
	go b.runJob(jctx, j, bl, req)
	return nil
}

// Cancel stops a running build; it ends in the error state.
func (b *Builder) Cancel(buildID string) bool {
	b.mu.Lock()
	j := b.jobs[buildID]
	b.mu.Unlock()
	if j != nil {
		j.cancel()
	}
	return j != nil
}

// Wait blocks until every running build has ended (for shutdown and tests).
func (b *Builder) Wait() { b.wg.Wait() }

// Shutdown cancels running builds and waits for them.
func (b *Builder) Shutdown() {
	b.mu.Lock()
	for _, j := range b.jobs {
		j.cancel()
	}
	b.mu.Unlock()
	b.wg.Wait()
}

// Logs returns a build's log lines from offset on.
func (b *Builder) Logs(buildID string, offset int) ([]wire.BuildLogEntry, error) {
	b.mu.Lock()
	j := b.jobs[buildID]
	b.mu.Unlock()
	if j != nil {
		return j.log.Entries(offset), nil
	}
	all, err := readLog(b.logPath(buildID))
	if err != nil || offset >= len(all) {
		return nil, err
	}
	return all[max(offset, 0):], nil
}

func (b *Builder) logPath(buildID string) string {
	return filepath.Join(b.opts.WorkDir, "logs", buildID+".jsonl")
}

// RemoveLogs deletes the logs of builds (when their template is deleted).
func (b *Builder) RemoveLogs(buildIDs []string) {
	for _, id := range buildIDs {
		_ = os.Remove(b.logPath(id))
	}
}

// runJob runs the build and records its outcome.
func (b *Builder) runJob(ctx context.Context, j *job, bl *store.Build, req *wire.BuildStart) {
	defer b.wg.Done()
	defer func() {
		j.log.close()
		b.mu.Lock()
		delete(b.jobs, bl.ID)
		b.mu.Unlock()
		j.cancel()
		if n := b.CollectFiles(time.Now()); n > 0 {
			log.G(ctx).Info("removed uploads of COPY sources no build uses", "count", n)
		}
	}()
	ctx = log.With(ctx, "build", bl.ID, "template", bl.TemplateID)
	start := time.Now()
	res, err := b.run(ctx, j, req)
	sctx := context.WithoutCancel(ctx)
	if err == nil {
		err = b.finish(sctx, bl, req, res)
	}
	bl.FinishedAt = time.Now().UTC()
	if err != nil {
		var se *stepError
		bl.Status, bl.Reason = store.BuildError, err.Error()
		if errors.As(err, &se) {
			bl.ReasonStep = se.step
		}
		if ctx.Err() != nil {
			bl.Reason = "the build was cancelled"
		}
		j.log.Errorf(bl.ReasonStep, "Build failed: %s", bl.Reason)
		log.G(ctx).Warn("template build failed", "err", bl.Reason, "took", time.Since(start))
	} else {
		j.log.Infof("finalize", "Build finished in %s", time.Since(start).Round(time.Millisecond))
		log.G(ctx).Info("template built", "took", time.Since(start), "layers", len(bl.Layers))
	}
	if uerr := b.opts.Store.UpdateBuild(sctx, bl); uerr != nil {
		log.G(ctx).Error("recording build outcome", "err", uerr)
	}
	if b.opts.ObserveBuild != nil {
		result := bl.Status
		if err != nil && ctx.Err() != nil {
			result = BuildCancelled
		}
		b.opts.ObserveBuild(result, time.Since(start))
	}
}

// stepError is a failure attributed to one step, reported as the build
// status's reason.step.
type stepError struct {
	step string
	err  error
}

func (e *stepError) Error() string { return e.err.Error() }
func (e *stepError) Unwrap() error { return e.err }

// teamOf is the team that owns template id.
func (b *Builder) teamOf(ctx context.Context, id string) (string, error) {
	t, err := b.opts.Store.GetTemplate(ctx, id)
	if err != nil {
		return "", err
	}
	return store.TeamOf(t.TeamID), nil
}

// admit refuses a build past the team's limit (the caller holds b.mu).
func (b *Builder) admit(ctx context.Context, team string) error {
	if b.opts.MaxBuilds == nil {
		return nil
	}
	limit, err := b.opts.MaxBuilds(ctx, team)
	if err != nil || limit <= 0 {
		return err
	}
	running := 0
	for _, j := range b.jobs {
		if j.team == team {
			running++
		}
	}
	if running >= limit {
		return errdefs.New(errdefs.ErrQuotaExceeded, fmt.Sprintf(
			"team %s may run %d template builds at once and %d are running: wait for one to finish", team, limit, running))
	}
	return nil
}

// removeLeftovers unmounts and removes the views and removes the partial
// uploads a crashed server left (none exist while builds run).
func (b *Builder) removeLeftovers(ctx context.Context) error {
	views, err := filepath.Glob(filepath.Join(b.opts.WorkDir, "view-*"))
	if err != nil {
		return err
	}
	parts, err := filepath.Glob(filepath.Join(b.opts.FilesDir, "*.part"))
	if err != nil {
		return err
	}
	for _, v := range views {
		// Not mounted (EINVAL) is the usual case once the view was closed.
		if err := unix.Unmount(v, unix.MNT_DETACH); err != nil && !errors.Is(err, unix.EINVAL) {
			return fmt.Errorf("unmounting a view a crashed build left: %w", err)
		}
		if err := os.Remove(v); err != nil {
			return fmt.Errorf("removing a view a crashed build left: %w", err)
		}
	}
	for _, p := range parts {
		_ = os.Remove(p)
	}
	if n := len(views) + len(parts); n > 0 {
		log.G(ctx).Warn("removed what interrupted builds left", "views", len(views), "uploads", len(parts))
	}
	return nil
}
