package store

import (
	"context"
	"fmt"
	"time"

	"github.com/warren-sandbox/warren/internal/errdefs"
)

// ApplyBuild makes a ready build's result the template's rootfs and
// defaults.
func (t *Template) ApplyBuild(b *Build) {
	t.Layers = b.Layers
	if len(b.Layers) > 0 {
		t.RootfsPath = b.Layers[len(b.Layers)-1]
	}
	t.Env, t.User, t.Workdir = b.Env, b.User, b.Workdir
	t.StartCmd, t.ReadyCmd, t.Labels = b.StartCmd, b.ReadyCmd, b.Labels
	t.CPUCount, t.MemoryMB = b.CPUCount, b.MemoryMB
	t.BuildID, t.SizeBytes, t.UpdatedAt = b.ID, b.SizeBytes, time.Now().UTC()
	t.ReadyPort = 0
}

// TemplateAtTag returns the template as the build its tag names made it.
func TemplateAtTag(ctx context.Context, s Store, templateID, tag string) (*Template, error) {
	tpl, err := s.GetTemplate(ctx, templateID)
	if err != nil {
		return nil, err
	}
	tags, err := s.ListTags(ctx, tpl.ID)
	if err != nil {
		return nil, fmt.Errorf("listing tags: %w", err)
	}
	for _, t := range tags {
		if t.Tag != tag {
			continue
		}
		if t.BuildID == tpl.BuildID {
			return tpl, nil
		}
		b, err := s.GetBuild(ctx, t.BuildID)
		if err != nil {
			return nil, fmt.Errorf("build %s of tag %s: %w", t.BuildID, tag, err)
		}
		tpl.ApplyBuild(b)
		return tpl, nil
	}
	if tag == "latest" && tpl.BuildID != "" {
		return tpl, nil // built-in templates have no tags
	}
	return nil, errdefs.New(errdefs.ErrNotFound, fmt.Sprintf("template '%s' has no tag '%s'", templateID, tag))
}

// ResolveTemplate finds the template a sandbox create names: an id, a
// name, or "name:tag" for a tagged build.
func ResolveTemplate(ctx context.Context, s Store, ref string) (*Template, error) {
	tpl, err := s.GetTemplate(ctx, ref)
	if err == nil || !errdefs.IsNotFound(err) {
		return tpl, err
	}
	name, tag, ok := CutTag(ref)
	if !ok {
		return nil, err
	}
	base, gerr := s.GetTemplate(ctx, name)
	if gerr != nil {
		return nil, err
	}
	return TemplateAtTag(ctx, s, base.ID, tag)
}

// CutTag splits "name:tag" at the last ':' of the last path element.
func CutTag(ref string) (name, tag string, ok bool) {
	for i := len(ref) - 1; i > 0; i-- {
		if ref[i] == ':' {
			return ref[:i], ref[i+1:], i+1 < len(ref)
		}
		if ref[i] == '/' {
			break
		}
	}
	return ref, "", false
}
