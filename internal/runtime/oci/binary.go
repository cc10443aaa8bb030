package oci

import (
	"debug/elf"
	"fmt"

	"github.com/warren-sandbox/warren/internal/errdefs"
)

// checkStatic refuses a dynamically linked runsc. runsc re-executes itself
// (/proc/self/exe) inside an empty chroot where no dynamic loader exists, so
// a cgo build fails every sandbox start with "fork/exec /proc/self/exe: no
// such file or directory". Build it with CGO_ENABLED=0.
func checkStatic(path string) error {
	f, err := elf.Open(path)
	if err != nil {
		return fmt.Errorf("reading %s: %w", path, err)
	}
	defer f.Close()
	for _, p := range f.Progs {
		if p.Type == elf.PT_INTERP {
			return fmt.Errorf("%s is dynamically linked; runsc must be built with CGO_ENABLED=0: %w",
				path, errdefs.ErrFailedPrecondition)
		}
	}
	return nil
}
