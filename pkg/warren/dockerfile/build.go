package dockerfile

import (
	"os"
	"path/filepath"

	"github.com/warren-sandbox/warren/api/wire"
	"github.com/warren-sandbox/warren/pkg/warren/internal/convert"
)

// Linking this package in gives the SDK's Client.BuildDockerfile and
// Client.BuildTemplate their converter, as image/png gives image.Decode a
// format: the SDK itself must not import BuildKit's parser.
func init() { convert.Dockerfile = prepare }

// prepare reads and converts r's Dockerfile in its context and applies
// the build's settings to the spec. The caller closes the context.
func prepare(r convert.Request) (*wire.BuildStart, convert.Files, error) {
	if r.Dir == "" {
		r.Dir = "."
	}
	src := r.Content
	if src == nil {
		if r.Path == "" {
			r.Path = filepath.Join(r.Dir, "Dockerfile")
		}
		var err error
		if src, err = os.ReadFile(r.Path); err != nil {
			return nil, nil, err
		}
	}
	bctx, err := NewContext(r.Dir)
	if err != nil {
		return nil, nil, err
	}
	spec, warnings, err := Convert(src, Options{BuildArgs: r.BuildArgs, Context: bctx, Target: r.Target})
	if err != nil {
		bctx.Close()
		return nil, nil, err
	}
	if r.OnWarning != nil {
		for _, w := range warnings {
			r.OnWarning(w)
		}
	}
	if r.ReadyCmd != "" {
		spec.ReadyCmd = r.ReadyCmd
	}
	spec.Force = r.NoCache
	return spec, bctx, nil
}
