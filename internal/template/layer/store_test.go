package layer

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/warren-sandbox/warren/internal/errdefs"
)

const (
	keyA = "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa"
	keyB = "bbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb"
)

func newStore(t *testing.T) (*Store, string) {
	t.Helper()
	root := filepath.Join(t.TempDir(), "layers")
	s, err := NewStore(root)
	if err != nil {
		t.Fatal(err)
	}
	return s, root
}

func writeHello(dir string) error {
	return os.WriteFile(filepath.Join(dir, "hello"), []byte("hi"), 0o644)
}

// names lists root, so tests can see that nothing but layers is left.
func names(t *testing.T, root string) []string {
	t.Helper()
	ents, err := os.ReadDir(root)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, e := range ents {
		out = append(out, e.Name())
	}
	return out
}

func TestStoreCreate(t *testing.T) {
	s, root := newStore(t)
	ctx := context.Background()
	if s.Has(keyA) {
		t.Fatal("empty store has a layer")
	}
	p, err := s.Create(ctx, keyA, writeHello)
	if err != nil {
		t.Fatal(err)
	}
	if p != s.Path(keyA) || filepath.Base(p) != keyA[:20] {
		t.Errorf("path = %s, want %s", p, filepath.Join(root, keyA[:20]))
	}
	if !s.Has(keyA) || readFile(t, filepath.Join(p, "hello")) != "hi" {
		t.Error("layer not there after Create")
	}
	if st, _ := os.Stat(p); st.Mode().Perm() != 0o755 {
		t.Errorf("layer root mode = %v", st.Mode())
	}
	again, err := s.Create(ctx, keyA, func(string) error { t.Error("fill called for an existing layer"); return nil })
	if err != nil || again != p {
		t.Errorf("second Create = %s, %v", again, err)
	}
	if _, err := s.Create(ctx, keyB, writeHello); err != nil {
		t.Fatal(err)
	}
	keys, err := s.List()
	if err != nil || strings.Join(keys, ",") != keyA+","+keyB {
		t.Errorf("List = %v, %v", keys, err)
	}
	if size, err := s.Size(keyA); err != nil || size <= 0 {
		t.Errorf("Size = %d, %v", size, err)
	}
	if err := s.Remove(keyA); err != nil {
		t.Fatal(err)
	}
	if s.Has(keyA) {
		t.Error("Has after Remove")
	}
	if err := s.Remove(keyA); !errdefs.IsNotFound(err) {
		t.Errorf("second Remove: %v, want not found", err)
	}
	if got := strings.Join(names(t, root), ","); got != keyB[:20]+","+keyB[:20]+".key" {
		t.Errorf("store holds %s", got)
	}
}

func TestStoreCreateFailureLeavesNothing(t *testing.T) {
	s, root := newStore(t)
	boom := errors.New("boom")
	_, err := s.Create(context.Background(), keyA, func(dir string) error {
		// A read-only dir inside: removal must still work when not root.
		os.MkdirAll(filepath.Join(dir, "ro/sub"), 0o755)
		writeHello(filepath.Join(dir, "ro/sub"))
		os.Chmod(filepath.Join(dir, "ro/sub"), 0o500)
		os.Chmod(filepath.Join(dir, "ro"), 0o500)
		return boom
	})
	if !errors.Is(err, boom) {
		t.Fatalf("err = %v", err)
	}
	if s.Has(keyA) || len(names(t, root)) != 0 {
		t.Errorf("store holds %v after a failed Create", names(t, root))
	}
}

func TestStoreConcurrentCreate(t *testing.T) {
	s, _ := newStore(t)
	var fills atomic.Int32
	var wg sync.WaitGroup
	paths := make([]string, 8)
	for i := range paths {
		wg.Go(func() {
			p, err := s.Create(context.Background(), keyA, func(dir string) error {
				fills.Add(1)
				time.Sleep(50 * time.Millisecond)
				return writeHello(dir)
			})
			if err != nil {
				t.Error(err)
			}
			paths[i] = p
		})
	}
	wg.Wait()
	if fills.Load() != 1 {
		t.Errorf("fill ran %d times, want once", fills.Load())
	}
	for _, p := range paths {
		if p != s.Path(keyA) {
			t.Errorf("path %q", p)
		}
	}
}

func TestStoreWaiterRetriesAfterFailure(t *testing.T) {
	s, _ := newStore(t)
	started := make(chan struct{})
	release := make(chan struct{})
	go s.Create(context.Background(), keyA, func(string) error {
		close(started)
		<-release
		return errors.New("first fails")
	})
	<-started
	done := make(chan error)
	go func() {
		_, err := s.Create(context.Background(), keyA, writeHello)
		done <- err
	}()
	close(release)
	if err := <-done; err != nil || !s.Has(keyA) {
		t.Errorf("waiter: %v, has=%v", err, s.Has(keyA))
	}
}

func TestStoreStartupCleansLeftovers(t *testing.T) {
	s, root := newStore(t)
	if _, err := s.Create(context.Background(), keyA, writeHello); err != nil {
		t.Fatal(err)
	}
	os.MkdirAll(filepath.Join(root, tmpPrefix+"crashed/deep"), 0o755)
	os.WriteFile(filepath.Join(root, keyB[:20]+keySuffix), []byte(keyB), 0o644) // key without layer
	s2, err := NewStore(root)
	if err != nil {
		t.Fatal(err)
	}
	if got := strings.Join(names(t, root), ","); got != keyA[:20]+","+keyA[:20]+".key" {
		t.Errorf("after restart store holds %s", got)
	}
	if !s2.Has(keyA) {
		t.Error("complete layer lost on restart")
	}
}

func TestStoreKeys(t *testing.T) {
	s, _ := newStore(t)
	for _, k := range []string{"", "abc", "../../../../etc/passwd", strings.ToUpper(keyA), "sha256:" + keyA, keyA + keyA + "a"} {
		if _, err := s.Create(context.Background(), k, writeHello); !errdefs.IsInvalidArgument(err) {
			t.Errorf("Create(%q) err = %v, want invalid argument", k, err)
		}
		if s.Path(k) != "" || s.Has(k) {
			t.Errorf("Path/Has accept %q", k)
		}
	}
	// Same short name, different key: a clash, never a silent reuse.
	if _, err := s.Create(context.Background(), keyA, writeHello); err != nil {
		t.Fatal(err)
	}
	other := keyA[:20] + strings.Repeat("0", 44)
	if s.Has(other) {
		t.Error("Has reports a different key with the same short name")
	}
	if _, err := s.Create(context.Background(), other, writeHello); !errdefs.IsConflict(err) {
		t.Errorf("clash: err = %v, want conflict", err)
	}
}

func TestStoreExtractLimitLeavesNothing(t *testing.T) {
	s, root := newStore(t)
	tr := tarOf(t, file("big", strings.Repeat("x", 100)))
	_, err := s.Create(context.Background(), keyA, func(dir string) error {
		return Extract(context.Background(), strings.NewReader(string(tr)), dir, Options{Limit: 50})
	})
	if !errors.Is(err, errdefs.ErrNoSpace) {
		t.Errorf("err = %v, want ErrNoSpace", err)
	}
	if n := names(t, root); len(n) != 0 {
		t.Errorf("store holds %v", n)
	}
}
