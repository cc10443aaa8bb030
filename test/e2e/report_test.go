package e2e

import (
	"strings"
	"testing"
)

// TestLineLogFailing: the failure details a CI log keeps are node's own
// report of the failed tests, without node's internal stack frames.
func TestLineLogFailing(t *testing.T) {
	tests := []struct {
		name, out string
		want      []string
		not       []string
	}{
		{
			name: "node's failure report",
			out: "▶ suite\n  ✔ fine (1ms)\n  ✖ broken (2ms)\nℹ tests 2\n\n✖ failing tests:\n\ntest at sdk/a.test.mjs:3:1\n✖ broken (2ms)\n" +
				"  AssertionError [ERR_ASSERTION]: cycle 4: the counter kept its memory\n" +
				"      at TestContext.<anonymous> (file:///e2e/sdk/a.test.mjs:3:32)\n" +
				"      at Test.run (node:internal/test_runner/test:796:25)\n",
			want: []string{"✖ failing tests:", "cycle 4: the counter kept its memory", "sdk/a.test.mjs:3:32"},
			not:  []string{"✔ fine", "node:internal", "ℹ tests"},
		},
		{
			name: "node died before reporting",
			out:  "line 1\nline 2\nError: Cannot find module 'e2b'\n",
			want: []string{"Cannot find module 'e2b'"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			l := &lineLog{t: t}
			_, _ = l.Write([]byte(tt.out))
			got := l.failing(80)
			for _, w := range tt.want {
				if !strings.Contains(got, w) {
					t.Errorf("missing %q in:\n%s", w, got)
				}
			}
			for _, n := range tt.not {
				if strings.Contains(got, n) {
					t.Errorf("unexpected %q in:\n%s", n, got)
				}
			}
		})
	}
}
