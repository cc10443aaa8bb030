package builder

import (
	"encoding/json"
	"path"
	"strings"
	"testing"

	"github.com/warren-sandbox/warren/api/wire"
	"github.com/warren-sandbox/warren/internal/errdefs"
)

// FuzzValidate checks arbitrary build specs (the JSON body of POST
// /v2/templates/{id}/builds/{build}) as Start does before anything runs.
// A spec is refused as invalid or else every COPY reads from the build
// context or an earlier stage, by a hash that can name a file, and every
// stage reference points backward.
func FuzzValidate(f *testing.F) {
	hash := strings.Repeat("ab", 32)
	for _, s := range []string{
		`{"fromImage":"ubuntu","steps":[{"type":"RUN","args":["echo hi","root"]},{"type":"COPY","args":["a","/a","root","0755"],"filesHash":"` + hash + `"}]}`,
		`{"stages":[{"name":"b","fromImage":"x","steps":[]}],"fromStage":"b","steps":[{"type":"COPY","args":["/out","/o"],"fromStage":"b"}]}`,
		`{"steps":[{"type":"COPY","args":["../etc","/e"],"filesHash":"` + hash + `"}]}`,
		`{"steps":[{"type":"COPY","args":["a","/a"],"filesHash":"../../../x"}]}`,
		`{"steps":[{"type":"COPY","args":["a","/a","u","9"],"filesHash":"` + hash + `"}]}`,
		`{"stages":[{"name":"a"},{"name":"a"}]}`, `{"fromStage":"later","stages":[{"name":"x","fromStage":"x"}]}`,
		`{"fromImageRegistry":{"type":"aws"}}`, `{"steps":[{"type":"ENV","args":["A"]}]}`, `{"steps":[{"type":"HEALTHCHECK"}]}`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		var req wire.BuildStart
		if json.Unmarshal(body, &req) != nil {
			return
		}
		err := (*Builder)(nil).validate(&req)
		if err != nil {
			if !errdefs.IsInvalidArgument(err) {
				t.Fatalf("unclassified error: %v", err)
			}
			return
		}
		stages := map[string]bool{}
		for _, st := range req.Stages {
			if st.Name == "" || stages[st.Name] || st.FromStage != "" && !stages[st.FromStage] {
				t.Fatalf("stage %q accepted after %v", st.Name, stages)
			}
			checkSpecSteps(t, st.Steps, stages)
			stages[st.Name] = true
		}
		if req.FromStage != "" && !stages[req.FromStage] {
			t.Fatalf("fromStage %q accepted", req.FromStage)
		}
		checkSpecSteps(t, req.Steps, stages)
	})
}

func checkSpecSteps(t *testing.T, steps []wire.Step, stages map[string]bool) {
	t.Helper()
	for _, s := range steps {
		if s.Type != wire.StepCopy {
			continue
		}
		src := s.Args[0]
		switch {
		case s.FromStage != "":
			if !stages[s.FromStage] {
				t.Fatalf("COPY --from=%s accepted", s.FromStage)
			}
		case path.IsAbs(src) || path.Clean(src) == ".." || strings.HasPrefix(path.Clean(src), "../"):
			t.Fatalf("COPY source %q outside the context accepted", src)
		case strings.ContainsAny(s.FilesHash, "/.\x00") || TeamFiles("t", s.FilesHash) == s.FilesHash:
			t.Fatalf("filesHash %q accepted", s.FilesHash)
		}
	}
}
