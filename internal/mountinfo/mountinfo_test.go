package mountinfo

import (
	"slices"
	"strings"
	"testing"
)

func TestParse(t *testing.T) {
	t.Parallel()
	table := strings.Join([]string{
		`22 1 0:21 / /proc rw,nosuid - proc proc rw`,
		`30 22 0:40 / /data/sb rw - overlay overlay rw`,
		`31 30 0:41 / /data/sb/rootfs/proc rw - proc proc rw`,
		`32 1 0:42 / /data/sbx rw - tmpfs tmpfs rw`,
		`33 1 0:43 / /data/with\040space rw - tmpfs tmpfs rw`,
		`short line`,
	}, "\n")
	tests := []struct {
		dir  string
		want []string
	}{
		{"/data/sb", []string{"/data/sb", "/data/sb/rootfs/proc"}},
		{"/data/sb/", []string{"/data/sb", "/data/sb/rootfs/proc"}},
		{"/data/with space", []string{"/data/with space"}},
		{"/nothing", nil},
	}
	for _, tc := range tests {
		t.Run(tc.dir, func(t *testing.T) {
			got, err := Parse(strings.NewReader(table), tc.dir)
			if err != nil || !slices.Equal(got, tc.want) {
				t.Fatalf("Parse(%q) = %v, %v; want %v", tc.dir, got, err, tc.want)
			}
		})
	}
}

func TestUnescape(t *testing.T) {
	t.Parallel()
	for in, want := range map[string]string{`/a\040b\011c`: "/a b\tc", `/plain`: "/plain", `/x\134y`: `/x\y`, `/bad\9`: `/bad\9`} {
		if got := Unescape(in); got != want {
			t.Errorf("Unescape(%q) = %q, want %q", in, got, want)
		}
	}
}
