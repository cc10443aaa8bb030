package codeinterp

import (
	"encoding/json"
	"os/exec"
	"strings"
	"testing"
)

// chartScript builds figures with matplotlib's Agg backend in the rootfs
// and prints what the installed formatters make of them, as one JSON
// object.
const chartScript = `
import importlib.util, json, sys
spec = importlib.util.spec_from_file_location("warren_display", "` + DisplayModule + `")
wd = importlib.util.module_from_spec(spec); spec.loader.exec_module(wd)
import matplotlib.pyplot as plt
import pandas as pd

out = {}
fig, ax = plt.subplots()
ax.plot([1, 2, 3], [2, 4, 8], label="growth")
ax.set_title("Growth"); ax.set_xlabel("Day"); ax.set_ylabel("Size (cm)")
out["line"] = wd.figure_to_chart(fig)

fig, ax = plt.subplots()
ax.bar(["a", "b", "c"], [3, 5, 1], label="count")
ax.set_title("Counts")
out["bar"] = wd.figure_to_chart(fig)

fig, ax = plt.subplots()
ax.pie([1, 3], labels=["x", "y"])
out["pie"] = wd.figure_to_chart(fig)

fig, ax = plt.subplots()
ax.boxplot([[1, 2, 3, 4, 5, 40]], labels=["s"])
out["box"] = wd.figure_to_chart(fig)

fig, (a1, a2) = plt.subplots(1, 2)
a1.scatter([1, 2], [3, 4], label="pts"); a2.plot([0, 1], [0, 1])
fig.suptitle("Two")
out["super"] = wd.figure_to_chart(fig)

fig, ax = plt.subplots()
ax.pie([1, 2, 3, 4])
out["pie4"] = wd.figure_to_chart(fig)

fig, ax = plt.subplots()
ax.plot([0.1, 0.2], [0.1 + 0.2, 1 / 3])
out["noise"] = wd.figure_to_chart(fig)["elements"]

out["broken"] = wd.figure_to_chart(object())
out["data"] = wd.dataframe_to_data(pd.DataFrame({"n": [1, 2], "f": [0.5, float("nan")], "t": pd.to_datetime(["2024-01-01", None])}))
print(json.dumps(out, allow_nan=False))
`

func checkCharts(t *testing.T, rootfs string) {
	out, err := chrootOutput(rootfs, "/usr/bin/python3", "-c", chartScript)
	if err != nil {
		t.Fatalf("chart script: %v\n%s", err, out)
	}
	var got map[string]json.RawMessage
	if err := json.Unmarshal([]byte(out), &got); err != nil {
		t.Fatalf("chart script output: %v\n%s", err, out)
	}
	want := map[string]string{
		"line": `{"type":"line","title":"Growth","x_label":"Day","y_label":"Size (cm)","x_unit":null,"y_unit":"cm",
			"x_ticks":[1,1.25,1.5,1.75,2,2.25,2.5,2.75,3],"x_tick_labels":["1.00","1.25","1.50","1.75","2.00","2.25","2.50","2.75","3.00"],"x_scale":"linear",
			"y_ticks":[2,3,4,5,6,7,8],"y_tick_labels":["2","3","4","5","6","7","8"],"y_scale":"linear",
			"elements":[{"label":"growth","points":[[1,2],[2,4],[3,8]]}]}`,
		"bar": `{"type":"bar","title":"Counts","x_label":null,"y_label":null,"x_unit":null,"y_unit":null,
			"elements":[{"label":"a","value":3,"group":"count"},{"label":"b","value":5,"group":"count"},{"label":"c","value":1,"group":"count"}]}`,
		"pie": `{"type":"pie","title":null,"elements":[{"label":"x","angle":90,"radius":1},{"label":"y","angle":270,"radius":1}]}`,
		"box": `{"type":"box_and_whisker","title":null,"x_label":null,"y_label":null,"x_unit":null,"y_unit":null,
			"elements":[{"label":"s","min":1,"first_quartile":2.25,"median":3.5,"third_quartile":4.75,"max":5,"outliers":[40]}]}`,
		// Float noise is rounded away as the reference interpreter does.
		"pie4":   `{"type":"pie","title":null,"elements":[{"label":"","angle":36,"radius":1},{"label":"","angle":72,"radius":1},{"label":"","angle":108,"radius":1},{"label":"","angle":144,"radius":1}]}`,
		"noise":  `[{"label":"_child0","points":[[0.1,0.3],[0.2,0.33333333]]}]`,
		"broken": `null`,
		"data":   `{"n":[1,2],"f":[0.5,null],"t":["2024-01-01T00:00:00",null]}`,
	}
	for name, w := range want {
		if g := normJSON(t, got[name]); g != normJSON(t, json.RawMessage(w)) {
			t.Errorf("%s chart:\n got %s\nwant %s", name, g, normJSON(t, json.RawMessage(w)))
		}
	}
	var super struct {
		Type     string
		Title    string
		Elements []struct{ Type string }
	}
	if err := json.Unmarshal(got["super"], &super); err != nil || super.Type != "superchart" || super.Title != "Two" ||
		len(super.Elements) != 2 || super.Elements[0].Type != "scatter" || super.Elements[1].Type != "line" {
		t.Errorf("superchart: %v %s", err, got["super"])
	}
}

func normJSON(t *testing.T, raw json.RawMessage) string {
	var v any
	if err := json.Unmarshal(raw, &v); err != nil {
		return "invalid: " + string(raw)
	}
	b, _ := json.Marshal(v)
	return string(b)
}

// checkIPythonLoadsFormatters starts a real IPython in the rootfs and
// checks our config loaded the formatters, and that a DataFrame and a
// figure are formatted with the e2b MIME types, the figure also as PNG. IPython writes its
// profile, so it runs with a throwaway tmpfs HOME in a private mount
// namespace: the shared tree stays untouched and nothing stays mounted.
func checkIPythonLoadsFormatters(t *testing.T, rootfs string) {
	code := `import pandas as pd, matplotlib.pyplot as plt
ip = get_ipython()
fig, ax = plt.subplots(); ax.plot([0, 1], [1, 0])
d, _ = ip.display_formatter.format(pd.DataFrame({"a": [1]}))
c, _ = ip.display_formatter.format(fig)
# Terminal IPython formats only text/plain; a kernel formats every type
# with a printer for the object, so check that PNG has one.
png = ip.display_formatter.formatters["image/png"].lookup(fig) is not None
print("RESULT", sorted(k for k in d if k.startswith("e2b")), c["e2b/chart"]["type"], png)`
	cmd := exec.Command("unshare", "--mount", "--propagation", "private", "--", "/bin/sh", "-c",
		`mount -t tmpfs tmpfs "$1/tmp" && exec chroot "$1" /usr/bin/python3 -m IPython -c "$2"`, "sh", rootfs, code)
	cmd.Env = []string{"PATH=/usr/sbin:/usr/bin:/sbin:/bin", "HOME=/tmp", "IPYTHONDIR=/tmp/ipython", "MPLCONFIGDIR=/tmp/mpl", "PYTHONDONTWRITEBYTECODE=1",
		// What ipykernel sets in every kernel; with it, importing pyplot
		// registers the image/png formatter for figures.
		"MPLBACKEND=module://matplotlib_inline.backend_inline"}
	outb, err := cmd.CombinedOutput()
	out := string(outb)
	if err != nil || !strings.Contains(out, "RESULT ['e2b/data'] line True") {
		t.Errorf("IPython in the rootfs: %v\n%s", err, out)
	}
}
