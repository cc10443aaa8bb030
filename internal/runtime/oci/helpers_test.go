package oci

import (
	"github.com/warren-sandbox/warren/internal/runtime"
	"github.com/warren-sandbox/warren/internal/runtime/runtimetest"
)

// specFor is a minimal spec running testinit from fx.
func specFor(fx *runtimetest.Fixture, id string) runtime.Spec {
	return runtime.Spec{
		ID:     id,
		Rootfs: fx.Rootfs,
		Init:   runtime.Process{Args: []string{runtimetest.InitPath}},
		Binds:  []runtime.Bind{{Source: fx.Testinit, Target: runtimetest.InitPath}},
	}
}
