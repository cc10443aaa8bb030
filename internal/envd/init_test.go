package envd_test

import (
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/warren-sandbox/warren/internal/envd/envdtest"
)

// TestInitWritesIDFiles: each init writes the ids its env names into the
// run dir, as E2B's envd does, so a fork (initialised again with its own
// id) reads its own id there and in /envs; an init without them leaves
// them as they were.
func TestInitWritesIDFiles(t *testing.T) {
	t.Parallel()
	e := envdtest.New(t)
	steps := []struct {
		name           string
		body           string
		wantSandbox    string // "" = no file
		wantTemplate   string
		wantEnvSandbox string
	}{
		{"before any init", "", "", "", ""},
		{"create", `{"accessToken":"t1","envVars":{"E2B_SANDBOX_ID":"src","E2B_TEMPLATE_ID":"base"}}`, "src", "base", "src"},
		{"init without ids", `{"envVars":{"A":"1"}}`, "src", "base", "src"},
		{"fork", `{"accessToken":"t2","envVars":{"E2B_SANDBOX_ID":"fork1","E2B_TEMPLATE_ID":"base"}}`, "fork1", "base", "fork1"},
	}
	token := ""
	for _, st := range steps {
		if st.body != "" {
			initEnvd(t, e, st.body, nil)
			if i := strings.Index(st.body, `"accessToken":"`); i >= 0 {
				token = strings.SplitN(st.body[i+len(`"accessToken":"`):], `"`, 2)[0]
			}
		}
		for file, want := range map[string]string{".E2B_SANDBOX_ID": st.wantSandbox, ".E2B_TEMPLATE_ID": st.wantTemplate} {
			got, err := os.ReadFile(filepath.Join(e.RunDir, file))
			if want == "" {
				if !os.IsNotExist(err) {
					t.Errorf("%s: %s = %q, %v; want no file", st.name, file, got, err)
				}
				continue
			}
			if err != nil || string(got) != want {
				t.Errorf("%s: %s = %q, %v; want %q", st.name, file, got, err, want)
			}
		}
		if st.wantEnvSandbox == "" {
			continue
		}
		code, body, _ := do(t, e, http.MethodGet, "/envs", nil, map[string]string{"X-Access-Token": token})
		if code != http.StatusOK || !strings.Contains(body, `"E2B_SANDBOX_ID":"`+st.wantEnvSandbox+`"`) {
			t.Errorf("%s: /envs = %d %s; want E2B_SANDBOX_ID %s", st.name, code, body, st.wantEnvSandbox)
		}
	}
	if left, _ := filepath.Glob(filepath.Join(e.RunDir, "*.tmp")); len(left) > 0 {
		t.Errorf("temporary files left: %v", left)
	}
}
