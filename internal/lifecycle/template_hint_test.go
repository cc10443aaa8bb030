package lifecycle

import (
	"errors"
	"testing"
	"time"

	"github.com/warren-sandbox/warren/internal/errdefs"
	"github.com/warren-sandbox/warren/internal/sandbox"
)

func TestTemplateNotFoundHint(t *testing.T) {
	t.Parallel()
	const hint = "start warren with --desktop to build and serve it"
	e := newEnvWith(t, func(o *Options) {
		o.TemplateHints = map[string]string{"desktop": hint, "base": "never shown: base exists"}
	})
	tests := []struct {
		template string
		wantMsg  string // "" : the create succeeds
	}{
		{"desktop", "template 'desktop' not found: " + hint},
		{"nope", "template 'nope' not found"},
		{"base", ""},
	}
	for _, tc := range tests {
		sb, err := e.m.Create(e.ctx, sandbox.CreateRequest{TemplateID: tc.template, Timeout: time.Minute})
		if tc.wantMsg == "" {
			if err != nil {
				t.Errorf("Create(%s) = %v, want a sandbox", tc.template, err)
			} else if err := e.m.Kill(e.ctx, sb.ID); err != nil {
				t.Error(err)
			}
			continue
		}
		if !errors.Is(err, errdefs.ErrNotFound) {
			t.Errorf("Create(%s) = %v, want not found", tc.template, err)
		}
		if err == nil || err.Error() != tc.wantMsg {
			t.Errorf("Create(%s) message = %v, want %q", tc.template, err, tc.wantMsg)
		}
	}
}
