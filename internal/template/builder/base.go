package builder

import (
	"context"
	"fmt"
	"io/fs"
	"maps"
	"path/filepath"
	"slices"
	"strings"

	"github.com/warren-sandbox/warren/internal/errdefs"
	"github.com/warren-sandbox/warren/internal/store"
)

// baseAliases are image names the SDKs use for E2B's own images, served
// by warren's templates: fromBaseImage() asks for e2bdev/base.
var baseAliases = map[string]string{
	"e2bdev/base":        "base",
	"e2bdev/base:latest": "base",
}

// base resolves a stage's FROM and makes sure the image has the `user`
// account sandboxes default to.
func (b *Builder) base(ctx context.Context, j *job, def stageDef, stages map[string]*fsState) (*fsState, error) {
	var st *fsState
	var err error
	switch {
	case def.fromStage != "":
		prev, ok := stages[def.fromStage]
		if !ok {
			return nil, errdefs.New(errdefs.ErrInvalidArgument, fmt.Sprintf("FROM names stage %q, which is not defined before it", def.fromStage))
		}
		return prev.clone(), nil
	case def.fromTemplate != "":
		j.log.Infof(stepBase(def), "FROM template %s", def.fromTemplate)
		st, err = b.fromTemplate(ctx, def.fromTemplate)
	case baseAliases[def.fromImage] != "":
		j.log.Infof(stepBase(def), "FROM %s (warren's %s template)", def.fromImage, baseAliases[def.fromImage])
		st, err = b.fromTemplate(ctx, baseAliases[def.fromImage])
	case def.fromImage != "" && def.fromImageRegistry == nil && b.isTemplate(ctx, def.fromImage):
		// A Dockerfile's FROM may name a warren template: they come
		// before registries, so `FROM base` is warren's base.
		j.log.Infof(stepBase(def), "FROM template %s", def.fromImage)
		st, err = b.fromTemplate(ctx, def.fromImage)
	case def.fromImage != "":
		j.log.Infof(stepBase(def), "FROM image %s", def.fromImage)
		st, err = b.fromImage(ctx, j, def)
	default:
		st, err = b.fromTemplate(ctx, "base")
	}
	if err != nil {
		return nil, err
	}
	return b.ensureAccount(ctx, st)
}

// isTemplate reports whether ref names a template (name or name:tag) with
// a ready build.
func (b *Builder) isTemplate(ctx context.Context, ref string) bool {
	tpl, err := store.ResolveTemplate(ctx, b.opts.Store, ref)
	return err == nil && tpl.RootfsPath != ""
}

func stepBase(def stageDef) string {
	if def.name == "" {
		return "base"
	}
	return ""
}

// fromTemplate starts from another template's current build (or the
// build a "name:tag" names).
func (b *Builder) fromTemplate(ctx context.Context, ref string) (*fsState, error) {
	name, tag, _ := cutTag(ref)
	tpl, err := b.opts.Store.GetTemplate(ctx, name)
	if err != nil {
		return nil, fmt.Errorf("template %q: %w", ref, err)
	}
	if tag != "" {
		if tpl, err = resolveTag(ctx, b.opts.Store, tpl.ID, tag); err != nil {
			return nil, err
		}
	}
	// The cache key is the recorded stack's, the same on every node.
	key := chain("template", recordedLayers(tpl))
	if b.opts.LocalTemplate != nil {
		if tpl, err = b.opts.LocalTemplate(ctx, tpl); err != nil {
			return nil, fmt.Errorf("template %q: %w", ref, err)
		}
	}
	layers := recordedLayers(tpl)
	user, workdir := tpl.User, tpl.Workdir
	if user == "" {
		user, workdir = "user", "/home/user"
	}
	ready := tpl.ReadyCmd
	if ready == "" && tpl.ReadyPort > 0 {
		ready = fmt.Sprintf("bash -c 'exec 3<>/dev/tcp/127.0.0.1/%d'", tpl.ReadyPort)
	}
	return &fsState{
		key:    key,
		layers: slices.Clone(layers), env: cloneEnv(tpl.Env),
		user: user, workdir: workdir, cpu: tpl.CPUCount, memory: tpl.MemoryMB,
		startCmd: tpl.StartCmd, readyCmd: ready,
	}, nil
}

// recordedLayers is tpl's read-only stack, top first.
func recordedLayers(tpl *store.Template) []string {
	if len(tpl.Layers) == 0 {
		return []string{tpl.RootfsPath}
	}
	return tpl.Layers
}

// fromImage pulls (or finds imported) an OCI image.
func (b *Builder) fromImage(ctx context.Context, j *job, def stageDef) (*fsState, error) {
	if b.opts.Images == nil {
		return nil, errdefs.New(errdefs.ErrNotImplemented, "this server cannot pull images")
	}
	img, err := b.opts.Images.Resolve(ctx, j.team, def.fromImage, def.fromImageRegistry, func(line string) {
		j.log.Infof(stepBase(def), "%s", line)
	})
	if err != nil {
		return nil, err
	}
	if len(img.Layers) == 0 {
		return nil, errdefs.New(errdefs.ErrInvalidArgument, fmt.Sprintf("image %s has no layers", def.fromImage))
	}
	env := map[string]string{}
	for _, kv := range img.Env {
		if k, v, ok := strings.Cut(kv, "="); ok {
			env[k] = v
		}
	}
	// E2B's builds run as `user` in /home/user unless the template says
	// otherwise; the image's USER and WORKDIR are not inherited.
	return &fsState{
		key: chain("image", img.Digest), layers: slices.Clone(img.Layers), env: env,
		user: "user", workdir: "/home/user",
	}, nil
}

func cloneEnv(m map[string]string) map[string]string {
	if m == nil {
		return map[string]string{}
	}
	return maps.Clone(m)
}

// dirBytes is the disk a layer holds (apparent size of its files).
func dirBytes(dir string) int64 {
	var n int64
	_ = filepath.WalkDir(dir, func(_ string, d fs.DirEntry, err error) error {
		if err == nil && d.Type().IsRegular() {
			if fi, err := d.Info(); err == nil {
				n += fi.Size()
			}
		}
		return nil
	})
	return n
}
