package builder

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"os"
	"slices"
	"strings"
	"time"

	"github.com/warren-sandbox/warren/internal/errdefs"
	"github.com/warren-sandbox/warren/internal/log"
	"github.com/warren-sandbox/warren/internal/store"
	"github.com/warren-sandbox/warren/internal/template/layer"
)

// BuildRequest is POST /v3/templates: a name (optionally "name:tag"),
// more tags and the resources sandboxes of the template get.
type BuildRequest struct {
	Name     string
	Tags     []string
	CPUCount int
	MemoryMB int
	// MinFreeDiskMB, when set, is the free space sandboxes of the template
	// must have on their disk (minFreeDiskMb): the disk grows to hold it,
	// never shrinks. 0 asks for no growth.
	MinFreeDiskMB *int
	// TeamID owns a template this request creates; a name another team
	// owns is refused unless AnyTeam (the admin key).
	TeamID  string
	AnyTeam bool
}

// maxMinFreeDiskMB bounds minFreeDiskMb (1 TiB). Disks are sparse, so a
// large one costs what is written to it, but a typo should not pass.
const maxMinFreeDiskMB = 1 << 20

// diskFor is the disk size in MB whose ext4 filesystem (no journal, no
// reserved blocks: see the oci backend) has at least free MB free: inode
// tables and bitmaps take under 2 %.
func diskFor(free int) int { return free + free/32 + 64 }

// RequestBuild finds or creates the template named req.Name and records a
// new build of it, waiting for Start.
func (b *Builder) RequestBuild(ctx context.Context, req BuildRequest) (*store.Template, *store.Build, error) {
	name, tag, hasTag := cutTag(req.Name)
	tags := slices.Clone(req.Tags)
	if hasTag {
		tags = append(tags, tag)
	}
	if err := checkName(name); err != nil {
		return nil, nil, err
	}
	for _, t := range tags {
		if err := checkName(t); err != nil {
			return nil, nil, fmt.Errorf("tag: %w", err)
		}
	}
	if req.CPUCount < 0 || req.MemoryMB < 0 {
		return nil, nil, invalid("cpuCount and memoryMB must not be negative")
	}
	if m := req.MinFreeDiskMB; m != nil && (*m < 0 || *m > maxMinFreeDiskMB) {
		return nil, nil, invalid("minFreeDiskMb must be between 0 and %d", maxMinFreeDiskMB)
	}
	tpl, err := b.opts.Store.GetTemplate(ctx, name)
	switch {
	case errdefs.IsNotFound(err):
		now := time.Now().UTC()
		tpl = &store.Template{ID: newID(20), Aliases: []string{name}, CreatedAt: now, UpdatedAt: now,
			EnvdVersion: b.opts.EnvdVersion, TeamID: store.TeamOf(req.TeamID)}
	case err != nil:
		return nil, nil, err
	case !req.AnyTeam && store.TeamOf(tpl.TeamID) != store.TeamOf(req.TeamID) && !b.builtin(tpl.ID):
		return nil, nil, errdefs.New(errdefs.ErrConflict, fmt.Sprintf("the template name '%s' is taken; choose another name", name))
	case b.builtin(tpl.ID):
		return nil, nil, errdefs.New(errdefs.ErrConflict, fmt.Sprintf("template '%s' is built into warren and cannot be rebuilt; choose another name", name))
	}
	if req.CPUCount > 0 {
		tpl.CPUCount = req.CPUCount
	}
	if req.MemoryMB > 0 {
		tpl.MemoryMB = req.MemoryMB
	}
	if m := req.MinFreeDiskMB; m != nil && *m > 0 {
		current := tpl.DiskMB
		if current == 0 {
			current = b.opts.DefaultDiskMB
		}
		tpl.DiskMB = max(current, diskFor(*m))
	}
	if err := b.opts.Store.PutTemplate(ctx, tpl); err != nil {
		return nil, nil, fmt.Errorf("recording template: %w", err)
	}
	bl := &store.Build{
		ID: newUUID(), TemplateID: tpl.ID, Status: store.BuildWaiting, Tags: tags,
		CPUCount: tpl.CPUCount, MemoryMB: tpl.MemoryMB, CreatedAt: time.Now().UTC(),
	}
	if err := b.opts.Store.CreateBuild(ctx, bl); err != nil {
		return nil, nil, fmt.Errorf("recording build: %w", err)
	}
	return tpl, bl, nil
}

func (b *Builder) builtin(id string) bool { return slices.Contains(b.opts.BuiltIn, id) }

// checkName accepts template names and tags: letters, digits, '-', '_',
// '.', and '/' for a team prefix.
func checkName(name string) error {
	if name == "" || len(name) > 128 {
		return invalid("invalid name %q: use 1 to 128 characters", name)
	}
	for _, r := range name {
		if !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || strings.ContainsRune("-_./", r)) {
			return invalid("invalid name %q: use letters, digits, '-', '_', '.' and '/'", name)
		}
	}
	return nil
}

// DeleteTemplate removes a template, its builds, tags and logs, and then
// the layers nothing uses any more. It is refused (409) while sandboxes or
// snapshots use the template: their disks stand on its layers.
func (b *Builder) DeleteTemplate(ctx context.Context, idOrAlias string) error {
	tpl, err := b.opts.Store.GetTemplate(ctx, idOrAlias)
	if err != nil {
		return err
	}
	if b.builtin(tpl.ID) {
		return errdefs.New(errdefs.ErrConflict, fmt.Sprintf("template '%s' is built into warren and cannot be deleted", idOrAlias))
	}
	if err := b.checkUnused(ctx, tpl); err != nil {
		return err
	}
	builds, err := b.opts.Store.ListBuilds(ctx, tpl.ID)
	if err != nil {
		return err
	}
	var ids []string
	for _, bl := range builds {
		b.Cancel(bl.ID)
		ids = append(ids, bl.ID)
	}
	if err := b.opts.Store.DeleteTemplate(ctx, tpl.ID); err != nil {
		return err
	}
	b.RemoveLogs(ids)
	log.G(ctx).Info("template deleted", "template", tpl.ID, "builds", len(ids))
	return b.CollectLayers(ctx)
}

func (b *Builder) checkUnused(ctx context.Context, tpl *store.Template) error {
	sbs, err := b.opts.Store.ListSandboxes(ctx)
	if err != nil {
		return err
	}
	n := 0
	for _, s := range sbs {
		if s.TemplateID == tpl.ID {
			n++
		}
	}
	if n > 0 {
		return errdefs.New(errdefs.ErrConflict, fmt.Sprintf("template '%s' is used by %d sandbox(es); kill them first", tpl.ID, n))
	}
	snaps, err := b.opts.Store.ListSnapshots(ctx)
	if err != nil {
		return err
	}
	for _, s := range snaps {
		if s.TemplateID == tpl.ID {
			return errdefs.New(errdefs.ErrConflict, fmt.Sprintf("template '%s' is used by snapshot '%s'; delete it first", tpl.ID, s.ID))
		}
	}
	return nil
}

// CollectLayers removes build layers that no build, template or snapshot
// lists. Layers of running builds are kept (their builds are listed).
// A layer is compared by key, not by path: in a cluster the store holds
// the paths of the node that built a template, and the copy this node
// pulled (layershare) is the same layer in its own store.
func (b *Builder) CollectLayers(ctx context.Context) error {
	if b.opts.LayerRoot == "" {
		return nil
	}
	used, running, err := b.usedLayers(ctx)
	if err != nil || running {
		return err // a running build's cache hits may be about to be stacked
	}
	entries, err := os.ReadDir(b.opts.LayerRoot)
	if err != nil {
		return err
	}
	for _, e := range entries {
		p := b.opts.LayerRoot + "/" + e.Name()
		if e.IsDir() && !used[p] && !used[e.Name()] && !strings.HasPrefix(e.Name(), ".") {
			if err := os.RemoveAll(p); err != nil {
				log.G(ctx).Warn("removing unused layer", "layer", p, "err", err)
				continue
			}
			_ = os.Remove(p + ".key")
		}
	}
	return nil
}

// usedLayers is every layer builds, templates and snapshots list, by path
// and, for paths in a layer store's layout, by short key; running says a
// build is under way.
func (b *Builder) usedLayers(ctx context.Context) (used map[string]bool, running bool, err error) {
	used = map[string]bool{}
	add := func(paths []string) {
		for _, p := range paths {
			used[p] = true
			if short, ok := layer.ShortKey(p); ok {
				used[short] = true
			}
		}
	}
	builds, err := b.opts.Store.ListBuilds(ctx, "")
	if err != nil {
		return nil, false, err
	}
	for _, bl := range builds {
		running = running || bl.Status == store.BuildBuilding
		add(bl.Layers)
	}
	tpls, err := b.opts.Store.ListTemplates(ctx)
	if err != nil {
		return nil, false, err
	}
	for _, t := range tpls {
		add(t.Layers)
		add([]string{t.RootfsPath})
	}
	snaps, err := b.opts.Store.ListSnapshots(ctx)
	if err != nil {
		return nil, false, err
	}
	for _, s := range snaps {
		add(s.Layers)
	}
	return used, running, nil
}

// AssignTags points tags at the build target ("name" or "name:tag", the
// latest build by default) names, and returns that build's id.
func (b *Builder) AssignTags(ctx context.Context, target string, tags []string) (string, error) {
	name, tag, ok := cutTag(target)
	if !ok {
		tag = "latest"
	}
	tpl, err := b.opts.Store.GetTemplate(ctx, name)
	if err != nil {
		return "", err
	}
	src, err := resolveTag(ctx, b.opts.Store, tpl.ID, tag)
	if err != nil {
		return "", err
	}
	for _, t := range tags {
		if err := checkName(t); err != nil {
			return "", err
		}
		if err := b.opts.Store.SetTag(ctx, tpl.ID, t, src.BuildID); err != nil {
			return "", err
		}
	}
	return src.BuildID, nil
}

// RemoveTags deletes tags of the template name names.
func (b *Builder) RemoveTags(ctx context.Context, name string, tags []string) error {
	tpl, err := b.opts.Store.GetTemplate(ctx, name)
	if err != nil {
		return err
	}
	for _, t := range tags {
		if err := b.opts.Store.DeleteTag(ctx, tpl.ID, t); err != nil {
			return err
		}
	}
	return nil
}

func newID(n int) string {
	const alphabet = "abcdefghijklmnopqrstuvwxyz0123456789"
	buf := make([]byte, n)
	_, _ = rand.Read(buf)
	for i := range buf {
		buf[i] = alphabet[int(buf[i])%len(alphabet)]
	}
	return string(buf)
}

func newUUID() string {
	var u [16]byte
	_, _ = rand.Read(u[:])
	u[6] = u[6]&0x0f | 0x40
	u[8] = u[8]&0x3f | 0x80
	h := hex.EncodeToString(u[:])
	return h[:8] + "-" + h[8:12] + "-" + h[12:16] + "-" + h[16:20] + "-" + h[20:]
}
