package builder

import (
	"context"
	"testing"

	"github.com/warren-sandbox/warren/internal/errdefs"
	"github.com/warren-sandbox/warren/internal/store/sqlite/sqlitetest"
)

// TestMinFreeDisk: minFreeDiskMb grows the template's disk to hold that
// much free space, never shrinks it, and 0 or absent changes nothing.
func TestMinFreeDisk(t *testing.T) {
	t.Parallel()
	ptr := func(n int) *int { return &n }
	tests := []struct {
		name    string
		min     []*int // successive builds of one template
		wantMB  int
		invalid bool
	}{
		{"absent keeps the default", []*int{nil}, 0, false},
		{"zero asks for no growth", []*int{ptr(0)}, 0, false},
		{"below the default does not shrink", []*int{ptr(1000)}, 4096, false},
		{"above the default grows", []*int{ptr(10000)}, diskFor(10000), false},
		{"a later smaller ask keeps the larger disk", []*int{ptr(10000), ptr(5000)}, diskFor(10000), false},
		{"negative", []*int{ptr(-1)}, 0, true},
		{"absurd", []*int{ptr(maxMinFreeDiskMB + 1)}, 0, true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			dir := t.TempDir()
			b, err := New(Options{Store: sqlitetest.Open(t), FilesDir: dir + "/files", WorkDir: dir + "/work", DefaultDiskMB: 4096})
			if err != nil {
				t.Fatal(err)
			}
			var got int
			for _, m := range tc.min {
				tpl, _, err := b.RequestBuild(context.Background(), BuildRequest{Name: "disky", MinFreeDiskMB: m})
				if tc.invalid {
					if !errdefs.IsInvalidArgument(err) {
						t.Fatalf("RequestBuild = %v, want invalid argument", err)
					}
					return
				}
				if err != nil {
					t.Fatal(err)
				}
				got = tpl.DiskMB
			}
			if got != tc.wantMB {
				t.Fatalf("template disk = %d MB, want %d", got, tc.wantMB)
			}
		})
	}
	// The arithmetic leaves room for ext4's own tables.
	if d := diskFor(10000); d < 10000+10000/50 {
		t.Fatalf("diskFor(10000) = %d leaves under 2 %% for the filesystem", d)
	}
}
