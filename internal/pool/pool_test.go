package pool

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/warren-sandbox/warren/internal/errdefs"
	"github.com/warren-sandbox/warren/internal/netpolicy"
	"github.com/warren-sandbox/warren/internal/runtime"
	"github.com/warren-sandbox/warren/internal/store"
	"github.com/warren-sandbox/warren/internal/store/sqlite/sqlitetest"
	"github.com/warren-sandbox/warren/internal/testutil"
)

// machine stands in for the manager: boots are ids in a set, a boot fails
// with fail and waits for gate when they are set.
type machine struct {
	mu         sync.Mutex
	live       map[string]bool
	n          int
	fail       error
	gate       chan struct{}
	destroyed  int
	foreground int // boots asked for in the foreground
	gated      int // boots that have waited for gate
}

func newMachine() *machine { return &machine{live: map[string]bool{}} }

func (m *machine) PoolRecord(tpl *store.Template) (*store.Sandbox, bool) {
	return &store.Sandbox{TemplateID: tpl.ID, Backend: "fake", CPUCount: 1, MemoryMB: 128, Network: netpolicy.Default()}, true
}

func (m *machine) BootPooled(ctx context.Context, sb *store.Sandbox, tpl *store.Template, foreground bool) (*runtime.Instance, int, error) {
	m.mu.Lock()
	fail, gate := m.fail, m.gate
	if foreground {
		m.foreground++
	}
	if gate != nil {
		m.gated++
	}
	m.mu.Unlock()
	if gate != nil {
		<-gate
	}
	if fail != nil {
		return nil, 0, fail
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	m.n++
	sb.ID = fmt.Sprintf("sb%d", m.n)
	m.live[sb.ID] = true
	return &runtime.Instance{ID: sb.ID}, 40, nil
}

func (m *machine) DestroyPooled(ctx context.Context, backend, id string) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.live[id] {
		delete(m.live, id)
		m.destroyed++
	}
}

func (m *machine) count() (live, destroyed int) {
	m.mu.Lock()
	defer m.mu.Unlock()
	return len(m.live), m.destroyed
}

func (m *machine) set(fail error, gate chan struct{}) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.fail, m.gate = fail, gate
}

func ready(p *Pools) int {
	n := 0
	for _, st := range p.Stats() {
		n += st.Ready
	}
	return n
}

func start(t *testing.T, m Machine, opts Options) (*Pools, func()) {
	t.Helper()
	st := sqlitetest.Open(t)
	if err := st.PutTemplate(context.Background(), &store.Template{ID: "base", RootfsPath: t.TempDir()}); err != nil {
		t.Fatal(err)
	}
	opts.Store = st
	p := New(m, opts)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { p.Run(ctx); close(done) }()
	stop := func() { cancel(); <-done }
	t.Cleanup(stop)
	return p, stop
}

func eventually(t *testing.T, what string, cond func() bool) {
	t.Helper()
	testutil.Eventually(t, 10*time.Second, func() error {
		if !cond() {
			return errors.New(what)
		}
		return nil
	})
}

// TestNoPools: Max 0 makes no pools, and a nil Pools runs and reports
// nothing.
func TestNoPools(t *testing.T) {
	p := New(newMachine(), Options{Min: 1})
	if p != nil {
		t.Fatal("New with Max 0 made pools")
	}
	p.Run(context.Background())
	if st := p.Stats(); st != nil {
		t.Fatalf("Stats of no pools = %+v", st)
	}
}

// TestRunFillsClaimsAndDrains: a pre-warmed template's pool fills, a claim
// of its key takes the sandbox and counts a hit (another key a miss), a
// failed boot is retried, and stopping Run destroys what the pools hold.
func TestRunFillsClaimsAndDrains(t *testing.T) {
	t.Parallel()
	m := newMachine()
	p, stop := start(t, m, Options{Min: 1, Max: 1, Templates: []string{"base"}})
	eventually(t, "the pre-warmed pool did not fill", func() bool { return ready(p) == 1 })
	tpl, _ := p.st.GetTemplate(context.Background(), "base")
	sb, _ := m.PoolRecord(tpl)
	m.set(errdefs.New(errdefs.ErrResourceExhausted, "no memory"), nil)
	// A running sandbox cannot gain a mount: never claimed, nor counted.
	withVolume := *sb
	withVolume.VolumeMounts = []store.VolumeMount{{VolumeID: "v1", Name: "data", Path: "/mnt/data"}}
	if _, _, ok := p.Claim(context.Background(), &withVolume, tpl); ok {
		t.Fatal("a create with a volume mount took a pooled sandbox")
	}
	id, _, ok := p.Claim(context.Background(), sb, tpl)
	if !ok || id == "" {
		t.Fatal("a claim of the pre-warmed key found nothing")
	}
	other := *sb
	other.CPUCount = 2
	if _, _, ok := p.Claim(context.Background(), &other, tpl); ok {
		t.Fatal("a claim of other settings took a pooled sandbox")
	}
	time.Sleep(300 * time.Millisecond) // refills fail meanwhile
	if n := ready(p); n != 0 {
		t.Fatalf("%d ready while every boot fails", n)
	}
	m.set(nil, nil)
	eventually(t, "no refill after boots work again", func() bool { return ready(p) == 2 })
	var hits, misses int64
	for _, st := range p.Stats() {
		hits, misses = hits+st.Hits, misses+st.Misses
	}
	if hits != 1 || misses != 1 {
		t.Fatalf("%d hits, %d misses; want 1 and 1", hits, misses)
	}
	stop()
	if live, _ := m.count(); live != 1 {
		t.Fatalf("%d sandboxes left after Run, want only the claimed one", live)
	}
}

// TestBootOfADrainedKey: a boot that ends after its key was drained (the
// template rebuilt meanwhile) destroys its sandbox before Run returns.
func TestBootOfADrainedKey(t *testing.T) {
	t.Parallel()
	m := newMachine()
	gate := make(chan struct{})
	m.set(nil, gate)
	p, stop := start(t, m, Options{Min: 1, Max: 1, Templates: []string{"base"}})
	// Inside the boot: past warmOne's look at the template.
	eventually(t, "no boot started", func() bool {
		m.mu.Lock()
		defer m.mu.Unlock()
		return m.gated > 0
	})
	tpl, _ := p.st.GetTemplate(context.Background(), "base")
	tpl.RootfsPath = t.TempDir() // a rebuild
	if err := p.st.PutTemplate(context.Background(), tpl); err != nil {
		t.Fatal(err)
	}
	m.set(nil, nil)
	p.drain(context.Background(), func(k key) bool { return k.Rootfs != tpl.RootfsPath })
	close(gate)
	stop()
	if live, destroyed := m.count(); live != 0 || destroyed == 0 {
		t.Fatalf("after Run: %d live, %d destroyed; want the drained key's boot destroyed", live, destroyed)
	}
}

// TestPoolTarget: a pool's size follows its key's create rate times the
// boot time and its peak (the largest recent burst), between the floor
// and the ceiling, and decays when creates stop; the memory budget stops
// refills and bounds the target.
func TestPoolTarget(t *testing.T) {
	p := New(nil, Options{Min: 1, Max: 8, MemoryMB: 100})
	ps := &state{boot: 2 * time.Second}
	now := time.Now()
	if got := p.target(ps, now); got != 1 {
		t.Errorf("no creates: target %d, want the floor 1", got)
	}
	ps.decay(now, 10) // a create a second for the last 10 s
	if got := p.target(ps, now); got != 4 {
		t.Errorf("1 create/s, 2 s boots: target %d, want 4", got)
	}
	ps.decay(now, 600)
	if got := p.target(ps, now); got != 8 {
		t.Errorf("a burst: target %d, want the ceiling 8", got)
	}
	if got := p.target(ps, now.Add(30*time.Minute)); got != 1 {
		t.Errorf("30 minutes later: target %d, want the floor", got)
	}

	p.max, p.budgetMB = 50, 0
	ps = &state{boot: time.Second}
	for i := range 20 {
		ps.arrive(now.Add(time.Duration(i) * time.Millisecond))
	}
	last := now.Add(5 * time.Second)
	ps.arrive(last) // alone: the peak stays 20
	for _, tc := range []struct {
		after time.Duration
		want  int
	}{
		{0, 20},
		{time.Minute, 20},             // a quiet minute: held
		{surgeHold + surgeHalf/2, 10}, // then halved
		{surgeHold + 2*surgeHalf, 2},  // and again
		{4 * time.Minute, 1},          // back at the floor within minutes
		{poolIdle + time.Minute, 1},   // and there it stays
	} {
		if got := p.target(ps, last.Add(tc.after)); got != tc.want {
			t.Errorf("%v after a burst of 20 within a boot: target %d, want %d", tc.after, got, tc.want)
		}
	}
	p.budgetMB = 200
	ps.memMB = 40
	if got := p.target(ps, last); got != 5 {
		t.Errorf("a peak of 20 of 40 MiB each in a 200 MiB budget: target %d, want 5", got)
	}
	p.max, p.budgetMB = 8, 100

	k := key{Template: "t", Backend: "fake"}
	p.byKey[k] = &state{rate: 1, rateAt: time.Now(), boot: 2 * time.Second,
		ready: []*warmSandbox{{memMB: 60}, {memMB: 60}}}
	if _, _, ok, _ := p.wanting(); ok {
		t.Error("refilling past the memory budget")
	}
	p.budgetMB = 1000
	if got, fg, ok, _ := p.wanting(); !ok || got != k || fg {
		t.Errorf("wanting = %v, foreground %v, %v; want the key short of its target, in the background", got, fg, ok)
	}
	p.byKey[k].rate = 0
	p.min = 0
	if _, _, ok, surplus := p.wanting(); ok || len(surplus) != 2 || len(p.byKey[k].ready) != 0 || surplus[0].backend != "fake" {
		t.Errorf("a pool whose demand went: ok %v, %d surplus, %d left", ok, len(surplus), len(p.byKey[k].ready))
	}
}

// TestMissRaisesTarget: a claim that finds the pool empty raises its
// target at once to the creates of the last surgeWindow plus one (within
// the ceiling), and the refills it asks for boot in the foreground, at
// most one per CPU, the urgent key before the others.
func TestMissRaisesTarget(t *testing.T) {
	now := time.Now()
	p := New(nil, Options{Min: 1, Max: 8})
	p.now = func() time.Time { return now }
	p.slots, p.fgSlots = 3, 2
	tpl := &store.Template{ID: "ci", RootfsPath: "/r"}
	sb := &store.Sandbox{TemplateID: "ci", Backend: "fake", CPUCount: 1, MemoryMB: 128, Network: netpolicy.Default()}
	idle := p.state(key{Template: "other", Backend: "fake"}, netpolicy.Default())
	idle.pinned = true // wants its floor of 1: short, empty
	p.mu.Lock()
	ps := p.state(keyFor(sb, tpl), sb.Network)
	ps.boot = 4 * time.Second
	ps.seen = []time.Time{now.Add(-40 * time.Second), now.Add(-20 * time.Second), now.Add(-10 * time.Second)}
	p.mu.Unlock()
	if _, _, ok := p.Claim(context.Background(), sb, tpl); ok {
		t.Fatal("a claim of an empty pool took a sandbox")
	}
	// Two creates in the window, this one, and one more.
	if got := p.target(ps, now); got != 4 {
		t.Fatalf("after a miss: target %d, want 4", got)
	}
	var fgs, bgs []bool
	for range 5 {
		k, fg, ok, _ := p.wanting()
		if !ok {
			break
		}
		if k.Template == "ci" {
			fgs = append(fgs, fg)
		} else {
			bgs = append(bgs, fg)
		}
	}
	if fmt.Sprint(fgs) != "[true true false false]" || fmt.Sprint(bgs) != "[false]" {
		t.Fatalf("boots after a miss: the missed key's foreground %v, the other's %v; want [true true false false] and [false]", fgs, bgs)
	}
	p.booted(keyFor(sb, tpl), true, nil)
	if p.fg != 1 {
		t.Fatalf("%d foreground boots counted after one ended, want 1", p.fg)
	}
}
