package builder

import (
	"context"

	"github.com/warren-sandbox/warren/internal/store"
)

func resolveTag(ctx context.Context, st store.Store, templateID, tag string) (*store.Template, error) {
	return store.TemplateAtTag(ctx, st, templateID, tag)
}

func cutTag(ref string) (string, string, bool) { return store.CutTag(ref) }

func applyBuild(tpl *store.Template, bl *store.Build) { tpl.ApplyBuild(bl) }
