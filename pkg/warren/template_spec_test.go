package warren

import (
	"errors"
	"io"
	"testing"

	"github.com/warren-sandbox/warren/api/wire"
)

// tarFiles stands in for a build context: it writes a fixed body per
// source, so the upload can be recognised.
type tarFiles map[string]string

func (f tarFiles) WriteTar(w io.Writer, src string) error {
	body, ok := f[src]
	if !ok {
		return errors.New("no such source " + src)
	}
	_, err := io.WriteString(w, body)
	return err
}

// TestBuildSpec: a spec converted elsewhere is built without the
// Dockerfile converter: its COPY sources are uploaded (once per hash,
// skipped when the server has them), the spec is started as given, and a
// failed step maps back to its Dockerfile line.
func TestBuildSpec(t *testing.T) {
	t.Parallel()
	spec := &wire.BuildStart{FromTemplate: "base", Steps: []wire.Step{
		{Type: wire.StepCopy, Args: []string{"app", "/app/"}, FilesHash: "h-app", Line: 2},
		{Type: wire.StepCopy, Args: []string{"app", "/srv/"}, FilesHash: "h-app", Line: 3},
		{Type: wire.StepCopy, Args: []string{"cached", "/c/"}, FilesHash: "h-cached", Line: 4},
		{Type: wire.StepRun, Args: []string{"exit 3"}, Line: 5},
	}}
	tests := []struct {
		name     string
		final    string
		files    SpecFiles
		wantErr  bool
		wantLine int
	}{
		{"ready", "ready", tarFiles{"app": "APP", "cached": "never sent"}, false, 0},
		{"failed step has its line", "error", tarFiles{"app": "APP", "cached": "never sent"}, true, 5},
		{"no files to upload from", "ready", nil, true, 0},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			f := newFakeTemplateAPI(t)
			f.finalStatus = tc.final
			f.reason = map[string]any{"message": "step failed", "step": "4"}
			f.setPresent("h-cached")
			_, err := f.client(t).BuildSpec(t.Context(), SpecBuild{Name: "spec-tpl", Spec: spec, Files: tc.files})
			if (err != nil) != tc.wantErr {
				t.Fatalf("err = %v, want error %v", err, tc.wantErr)
			}
			var be *BuildError
			if tc.wantLine != 0 && (!errors.As(err, &be) || be.Line != tc.wantLine) {
				t.Errorf("err %v, want a *BuildError at line %d", err, tc.wantLine)
			}
			if tc.files == nil {
				return
			}
			if up, ok := f.uploaded("h-app"); !ok || string(up.body) != "APP" {
				t.Errorf("upload of h-app: %q, %v", up.body, ok)
			}
			if _, ok := f.uploaded("h-cached"); ok {
				t.Error("uploaded files the server has")
			}
			if got := f.startedRequest(); got == nil || got.FromTemplate != "base" || len(got.Steps) != 4 {
				t.Errorf("started %+v", got)
			}
		})
	}
}
