package codeinterp

import (
	"os/exec"
	"strings"
	"testing"
)

// TestDisplayRounding runs the display module's pure helpers on the host's
// python3 (they import nothing beyond the standard library): chart numbers
// keep 8 significant digits without float noise, and list/dict results get
// a JSON form only when every value has one.
func TestDisplayRounding(t *testing.T) {
	py, err := exec.LookPath("python3")
	if err != nil {
		t.Skip("needs python3")
	}
	const script = `
import importlib.util, sys
spec = importlib.util.spec_from_file_location("warren_display", "python/warren_display.py")
wd = importlib.util.module_from_spec(spec); spec.loader.exec_module(wd)
cases = [(36.0000005, 36.0), (72.00000099, 72.0), (0.1 + 0.2, 0.3), (1 / 3, 0.33333333),
         (-0.30000000000000004, -0.3), (0.0005163749999999999, 0.000516375),
         (2.2680000000000003e-05, 2.268e-05), (99.99999999, 100.0), (123456789, 123456790.0),
         (0.225, 0.225), (1.5e-10, 1.5e-10), (0, 0.0), (float("nan"), None), (float("inf"), None)]
for v, want in cases:
    got = wd._round(v)
    if got != want or type(got) is not type(want):
        print(f"_round({v!r}) = {got!r}, want {want!r}")
if wd.strict_json({"a": [1, 2.5, None, float("nan")], 3: True}) != {"a": [1, 2.5, None, None], "3": True}:
    print("strict_json of plain values:", wd.strict_json({"a": [1, 2.5, None, float("nan")], 3: True}))
try:
    wd.strict_json([object()])
    print("strict_json accepted an object")
except TypeError:
    pass
print("done")
`
	out, err := exec.Command(py, "-c", script).CombinedOutput()
	if err != nil || strings.TrimSpace(string(out)) != "done" {
		t.Fatalf("%v\n%s", err, out)
	}
}
