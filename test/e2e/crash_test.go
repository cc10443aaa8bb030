package e2e

import (
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/warren-sandbox/warren/pkg/warren"
)

// crashCase is one crash point and what a restart must make of it.
type crashCase struct {
	point string
	// paused: the sandbox is paused (with its memory) before the request.
	paused bool
	// memory: a process started before the request must still run after
	// the restart (and a resume): the sandbox's memory survived.
	memory bool
	// snapshot: the request's snapshot was answered and must be usable
	// after the restart.
	snapshot bool
	// op sends the request that reaches the point; the server dies in it.
	op func(s *server, id string)
	// want is the sandbox's state after the restart: "running", "paused"
	// or "" (gone, with nothing left on the host).
	want string
	// runtimes limits the case to the runtimes whose code has the point.
	runtimes []string
}

func request(method, path, body string) func(*server, string) {
	return func(s *server, id string) {
		req, _ := http.NewRequest(method, s.url+strings.ReplaceAll(path, "{id}", id), strings.NewReader(body))
		req.Header.Set("X-API-KEY", s.apiKey)
		if res, err := harnessClient.Do(req); err == nil {
			res.Body.Close()
		}
	}
}

var (
	createReq   = request("POST", "/v2/sandboxes", `{"templateID":"base","timeout":600}`)
	pauseReq    = request("POST", "/sandboxes/{id}/pause", "")
	resumeReq   = request("POST", "/sandboxes/{id}/resume", `{"timeout":600}`)
	snapshotReq = request("POST", "/sandboxes/{id}/snapshots", `{}`)
	forkReq     = request("POST", "/sandboxes/{id}/fork", `{"count":2}`)
	killReq     = request("DELETE", "/sandboxes/{id}", "")
)

var crashCases = []crashCase{
	{point: "oci.create.attached", op: createReq},
	{point: "create.backend", op: createReq},
	{point: "create.recorded", op: createReq, want: "running"},
	{point: "pause.intent", op: pauseReq, want: "running"},
	{point: "pause.acted", op: pauseReq, want: "paused"},
	// In the checkpoint that follows a pause's answer (--checkpoint-after=0).
	{point: "pause.checkpoint", op: pauseReq, want: "paused", memory: true, runtimes: []string{"runsc"}},
	{point: "pause.checkpointed", op: pauseReq, want: "paused", memory: true, runtimes: []string{"runsc"}},
	// Inside the runsc backend's Stop, its record marked checkpointing.
	{point: "oci.stop.checkpointing", op: pauseReq, want: "paused", memory: true, runtimes: []string{"runsc"}},
	{point: "resume.intent", paused: true, op: resumeReq, want: "paused"},
	{point: "resume.started", paused: true, op: resumeReq, want: "running"},
	{point: "snapshot.intent", op: snapshotReq, want: "running"},
	{point: "snapshot.taken", op: snapshotReq, want: "running"},
	// runsc: the source is checkpointed, its layer moved, the snapshot
	// answered, then the source restored in the background; a restart
	// restores a source left checkpointed.
	{point: "snapshot.checkpointed", op: snapshotReq, want: "running", memory: true, runtimes: []string{"runsc"}},
	{point: "oci.snapshot.moved", op: snapshotReq, want: "running", memory: true, runtimes: []string{"runsc"}},
	{point: "snapshot.restore", op: snapshotReq, want: "running", memory: true, snapshot: true, runtimes: []string{"runsc"}},
	{point: "fork.snapshot", op: forkReq, want: "running"},
	{point: "kill.intent", op: killReq},
	{point: "oci.destroy.container", op: killReq},
	{point: "kill.destroyed", op: killReq},
}

// TestCrashRecovery kills the server (SIGKILL, from inside, at a named
// step; see internal/crashpoint) in the middle of each lifecycle operation
// and a template build, starts it again on the same data dir, and checks
// that every sandbox is either in the state it really is in, with its
// files, or gone with nothing left on the host.
func TestCrashRecovery(t *testing.T) {
	cfg := loadConfig(t)
	bin := crashBinary(t, cfg)
	first := 100
	if os.Getenv("WARREN_E2E_INDEX") != "" {
		first = cfg.firstIndex // a run that picked its indexes keeps to them
	}
	for i, rt := range cfg.runtimes {
		t.Run(rt, func(t *testing.T) {
			h := &crashHarness{cfg: cfg, o: serverOpts{
				index: first + i, runtime: rt, dataDir: t.TempDir(), apiKey: newAPIKey(t), bin: bin,
				args: crashArgs(cfg, "--checkpoint-after=0"),
			}}
			for _, tc := range crashCases {
				if tc.runtimes != nil && !slices.Contains(tc.runtimes, rt) {
					continue
				}
				t.Run(tc.point, func(t *testing.T) { h.run(t, tc) })
			}
			t.Run("build.run", func(t *testing.T) { h.build(t, "build.run") })
			t.Run("build.copy", func(t *testing.T) { h.build(t, "build.copy") })
		})
	}
}

// crashArgs are the server's flags for a binary outside bin/: envd and the
// interpreter are those `make build` put next to the normal binary.
func crashArgs(cfg config, extra ...string) []string {
	dir := filepath.Dir(cfg.warrenBin)
	return append([]string{"--envd", filepath.Join(dir, "envd"), "--interpreter", filepath.Join(dir, "interpreter")}, extra...)
}

var (
	crashBinOnce sync.Once
	crashBinPath string
	crashBinErr  error
)

// crashBinary builds warren with its crash points compiled in.
func crashBinary(t *testing.T, cfg config) string {
	t.Helper()
	crashBinOnce.Do(func() {
		dir, err := os.MkdirTemp("", "warren-crash-")
		if err != nil {
			crashBinErr = err
			return
		}
		crashBinPath = filepath.Join(dir, "warren")
		cmd := exec.Command("go", "build", "-tags", "warren_crashpoints", "-o", crashBinPath, "./cmd/warren")
		cmd.Dir = cfg.repoRoot
		if out, err := cmd.CombinedOutput(); err != nil {
			crashBinErr = fmt.Errorf("%v\n%s", err, out)
		}
	})
	if crashBinErr != nil {
		t.Fatalf("building warren with crash points: %v", crashBinErr)
	}
	return crashBinPath
}

type crashHarness struct {
	cfg config
	o   serverOpts
}

func (h *crashHarness) bridge() string { return fmt.Sprintf("we2e%d", h.o.index) }

// crashAt starts the server with the crash point armed and returns it.
func (h *crashHarness) crashAt(t *testing.T, point string) *server {
	o := h.o
	o.env = []string{"WARREN_CRASH_AT=" + point}
	return launchServer(t, h.cfg, o)
}

// waitCrash waits for the server to die at point and returns the sandbox
// ids that have state on the host now.
func (h *crashHarness) waitCrash(t *testing.T, s *server, point string) []string {
	t.Helper()
	s.crashed = true
	select {
	case <-s.exited:
	case <-time.After(2 * time.Minute):
		t.Fatalf("the server did not crash at %s", point)
	}
	if !strings.Contains(s.logTail(4000), "crashpoint "+point) {
		t.Fatalf("the server died, but not at %s: %v\n%s", point, s.waitErr, s.logTail(30))
	}
	var ids []string
	for _, d := range buildSandboxDirs(s) {
		ids = append(ids, filepath.Base(d))
	}
	return ids
}

func (h *crashHarness) run(t *testing.T, tc crashCase) {
	s := h.crashAt(t, tc.point)
	id := ""
	if tc.op != nil && tc.point != "oci.create.attached" && !strings.HasPrefix(tc.point, "create.") {
		id = s.createSandbox(t, `{"templateID":"base","timeout":600}`)
		s.uploadFile(t, id, "/home/user/kept.txt", "kept:"+tc.point)
		if tc.memory {
			prepareParked(t.Context(), t, h.connect(t, s, id))
		}
		if tc.paused {
			s.mustCall(t, "POST", "/sandboxes/"+id+"/pause", "", http.StatusNoContent)
		}
	}
	tc.op(s, id)
	ids := h.waitCrash(t, s, tc.point)

	s2 := launchServer(t, h.cfg, h.o)
	list, err := s2.sandboxes()
	if err != nil {
		t.Fatal(err)
	}
	if id == "" && len(list) == 1 {
		id = list[0].SandboxID // made by the create that crashed
	}
	switch {
	case tc.want == "":
		if len(list) != 0 {
			t.Errorf("sandboxes after the restart: %+v; want none", list)
		}
	case len(list) != 1 || list[0].SandboxID != id || list[0].State != tc.want:
		t.Errorf("sandboxes after the restart: %+v; want %s %s", list, id, tc.want)
	default:
		h.checkAlive(t, s2, id, tc)
	}
	s2.killSandboxes(t)
	h.deleteSnapshots(t, s2)
	h.checkFree(t, s2, append(ids, id))
	s2.stop(t)
}

// checkAlive checks a kept sandbox: its timer runs, and once running (a
// paused one is resumed) it answers with its files.
func (h *crashHarness) checkAlive(t *testing.T, s *server, id string, tc crashCase) {
	t.Helper()
	var info struct {
		EndAt time.Time `json:"endAt"`
	}
	_ = json.Unmarshal(s.mustCall(t, "GET", "/sandboxes/"+id, "", http.StatusOK), &info)
	if tc.want == "running" && time.Until(info.EndAt) < time.Minute {
		t.Errorf("running sandbox ends at %v: its timer was lost", info.EndAt)
	}
	if tc.want == "paused" {
		s.mustCall(t, "POST", "/sandboxes/"+id+"/resume", `{"timeout":120}`, http.StatusCreated)
	}
	s.expectEnvdHealth(t, id, http.StatusNoContent)
	if id != "" && tc.point != "create.recorded" {
		if got := s.downloadFile(t, id, "/home/user/kept.txt"); got != "kept:"+tc.point {
			t.Errorf("file after the restart = %q", got)
		}
	}
	if tc.memory {
		checkParked(t.Context(), t, h.connect(t, s, id), true)
	}
	if tc.snapshot {
		h.checkSnapshot(t, s, tc)
	}
}

// checkSnapshot starts a sandbox from the one snapshot the server lists
// and reads the file its source held.
func (h *crashHarness) checkSnapshot(t *testing.T, s *server, tc crashCase) {
	t.Helper()
	var snaps []struct {
		SnapshotID string `json:"snapshotID"`
	}
	_ = json.Unmarshal(s.mustCall(t, "GET", "/snapshots", "", http.StatusOK), &snaps)
	if len(snaps) != 1 {
		t.Fatalf("snapshots after the restart: %+v; want the one answered", snaps)
	}
	cp := s.createSandbox(t, `{"templateID":"`+snaps[0].SnapshotID+`","timeout":120}`)
	if got := s.downloadFile(t, cp, "/home/user/kept.txt"); got != "kept:"+tc.point {
		t.Errorf("file in a sandbox from the snapshot = %q", got)
	}
}

// connect returns the Go SDK's handle on running sandbox id.
func (h *crashHarness) connect(t *testing.T, s *server, id string) *warren.Sandbox {
	t.Helper()
	sb, err := goClient(t, h.cfg, s).Connect(t.Context(), id, 10*time.Minute)
	if err != nil {
		t.Fatalf("connecting to %s: %v", id, err)
	}
	return sb
}

func (h *crashHarness) deleteSnapshots(t *testing.T, s *server) {
	t.Helper()
	var snaps []struct {
		SnapshotID string `json:"snapshotID"`
	}
	_ = json.Unmarshal(s.mustCall(t, "GET", "/snapshots", "", http.StatusOK), &snaps)
	for _, sn := range snaps {
		s.mustCall(t, "DELETE", "/templates/"+sn.SnapshotID, "", http.StatusNoContent)
	}
}

// checkFree fails t if anything of the server's sandboxes, snapshots or
// builds is left on the host once all were killed and deleted.
func (h *crashHarness) checkFree(t *testing.T, s *server, ids []string) {
	t.Helper()
	// Snapshot layers go once the last sandbox on them is gone, in the
	// background.
	deadline := time.Now().Add(30 * time.Second)
	for time.Now().Before(deadline) && len(h.leftovers(s)) > 0 {
		time.Sleep(200 * time.Millisecond)
	}
	if left := h.leftovers(s); len(left) > 0 {
		t.Errorf("left on the host: %v", left)
	}
	s.checkHostFree(t, s.runtime, h.bridge(), slices.DeleteFunc(ids, func(id string) bool { return id == "" }))
}

// leftovers lists what the data dir and the host hold for the server
// beyond its idle state.
func (h *crashHarness) leftovers(s *server) []string {
	var left []string
	left = append(left, buildSandboxDirs(s)...)
	snaps, _ := filepath.Glob(filepath.Join(s.dataDir, "snapshots", "*"))
	left = append(left, snaps...)
	for _, pattern := range []string{"builds/view-*", "build-files/*.part", "layers/.tmp-*"} {
		m, _ := filepath.Glob(filepath.Join(s.dataDir, pattern))
		left = append(left, m...)
	}
	ns, _ := filepath.Glob("/run/netns/" + h.bridge() + "-*")
	left = append(left, ns...)
	if m, _ := mountPointsUnder(s.dataDir); len(m) > 0 {
		left = append(left, fmt.Sprint("mounts ", m))
	}
	loops, _ := filepath.Glob("/sys/block/loop*/loop/backing_file")
	for _, l := range loops {
		if b, err := os.ReadFile(l); err == nil && strings.HasPrefix(string(b), s.dataDir) {
			left = append(left, "loop device on "+strings.TrimSpace(string(b)))
		}
	}
	return left
}

// build crashes the server in a Dockerfile build's RUN or COPY step: after
// the restart the build has failed with a reason, nothing of it is left,
// and the same build then succeeds.
func (h *crashHarness) build(t *testing.T, point string) {
	s := h.crashAt(t, point)
	dir := t.TempDir()
	writeFiles(t, dir, map[string]string{
		"Dockerfile": "FROM base\nRUN echo built > /built.txt\nCOPY hello.txt /hello.txt\n",
		"hello.txt":  "hello " + point + "\n",
	})
	name := "crash-" + strings.ReplaceAll(point, ".", "-")
	out, err := warrenCLI(t, h.cfg, s, dir, "template", "build", "--no-cache", "--name", name, ".")
	if err == nil {
		t.Fatalf("the build went through the crash point:\n%s", out)
	}
	ids := h.waitCrash(t, s, point)

	s2 := launchServer(t, h.cfg, h.o)
	var tpl struct {
		Builds []struct {
			Status string `json:"status"`
		} `json:"builds"`
	}
	_ = json.Unmarshal(s2.mustCall(t, "GET", "/templates/"+name, "", http.StatusOK), &tpl)
	if len(tpl.Builds) == 0 || tpl.Builds[0].Status != "error" {
		t.Errorf("the interrupted build: %+v; want it failed", tpl.Builds)
	}
	h.checkFree(t, s2, ids)
	if out, err := warrenCLI(t, h.cfg, s2, dir, "template", "build", "--name", name, "."); err != nil {
		t.Fatalf("building again after the restart: %v\n%s", err, out)
	}
	if got := runIn(t, s2, name, "cat /built.txt /hello.txt"); got != "built\nhello "+point+"\n" {
		t.Errorf("sandbox of the rebuilt template printed %q", got)
	}
	s2.mustCall(t, "DELETE", "/templates/"+name, "", http.StatusNoContent)
	s2.stop(t)
}
