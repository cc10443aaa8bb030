package aptlayer

import (
	"fmt"
	"io"
	"path/filepath"
	"time"

	"github.com/warren-sandbox/warren/internal/template/base"
)

// Options says where and how a template layered on base is built; both
// such templates (codeinterp, desktop) take it as their own Options. The
// zero value uses base's defaults.
type Options struct {
	// CacheDir holds the templates directory. Default base.DefaultCacheDir.
	CacheDir string
	// Mirror is the Debian archive; it is passed on to base. Default
	// base.DefaultMirror.
	Mirror string
	// Progress receives human-readable progress lines, base's included.
	// Nil discards them.
	Progress io.Writer
	// Heartbeat is how often a long build says it is still going. Default
	// 15 s.
	Heartbeat time.Duration
}

// WithDefaults fills o's unset fields and makes CacheDir absolute.
func (o Options) WithDefaults() (Options, error) {
	if o.CacheDir == "" {
		o.CacheDir = base.DefaultCacheDir
	}
	abs, err := filepath.Abs(o.CacheDir)
	if err != nil {
		return o, fmt.Errorf("resolving cache dir: %w", err)
	}
	o.CacheDir = abs
	if o.Mirror == "" {
		o.Mirror = base.DefaultMirror
	}
	if o.Progress == nil {
		o.Progress = io.Discard
	}
	if o.Heartbeat <= 0 {
		o.Heartbeat = 15 * time.Second
	}
	return o, nil
}

// Base is the options of the base template the layer starts from.
func (o Options) Base() base.Options {
	return base.Options{CacheDir: o.CacheDir, Mirror: o.Mirror, Progress: o.Progress}
}
