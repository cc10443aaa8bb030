package selftest

import (
	"context"
	"fmt"
	"strconv"
	"strings"
)

// maxOpenFiles is the open-files limit the probe accepts (warren sets 65536).
const maxOpenFiles = 1 << 16

// probeOpenFiles raises the soft open-files limit to the hard one and opens
// /dev/null until that fails: it must fail with EMFILE at most
// maxOpenFiles in, and the sandbox must go on.
func probeOpenFiles(ctx context.Context, e *Env) error {
	out, err := must(ctx, e.A, "user", `python3 -c '
import os, resource
soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
resource.setrlimit(resource.RLIMIT_NOFILE, (hard, hard))
n = 0
try:
    while n <= 1 << 22:
        os.open("/dev/null", os.O_RDONLY); n += 1
except OSError as e:
    print(n, e.errno)'`)
	if err != nil {
		return err
	}
	f := strings.Fields(out)
	if len(f) != 2 {
		return fmt.Errorf("opened files without a limit: %q", out)
	}
	n, _ := strconv.Atoi(f[0])
	if f[1] != "24" || n > maxOpenFiles {
		return fmt.Errorf("opening files stopped after %d with errno %s; want EMFILE (24) by %d", n, f[1], maxOpenFiles)
	}
	if _, err := must(ctx, e.A, "user", "echo alive"); err != nil {
		return fmt.Errorf("the sandbox did not go on: %w", err)
	}
	return nil
}
