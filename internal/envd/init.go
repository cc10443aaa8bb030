package envd

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"time"

	"github.com/warren-sandbox/warren/internal/envd/state"
	"github.com/warren-sandbox/warren/internal/log"
)

// maxInitBody bounds the /init body (it may carry a CA bundle).
const maxInitBody = 1 << 20

// initRequest is the /init body. Fields envd does not act on are decoded
// so that a malformed value is still a 400, as in E2B's envd.
type initRequest struct {
	AccessToken    *string           `json:"accessToken"`
	EnvVars        map[string]string `json:"envVars"`
	DefaultUser    *string           `json:"defaultUser"`
	DefaultWorkdir *string           `json:"defaultWorkdir"`
	Timestamp      *time.Time        `json:"timestamp"`
	VolumeMounts   json.RawMessage   `json:"volumeMounts"`
	HyperloopIP    *string           `json:"hyperloopIP"`
	LifecycleID    *string           `json:"lifecycleID"`
	CABundle       *string           `json:"caBundle"`
}

// init applies the orchestrator's settings. It may be called again (after a
// resume, say): given fields replace or extend the old ones, absent ones
// stay. A named default user must exist, so a typo fails here and not on
// every later request.
func (s *Server) init(w http.ResponseWriter, r *http.Request) {
	var req initRequest
	dec := json.NewDecoder(io.LimitReader(r.Body, maxInitBody))
	if err := dec.Decode(&req); err != nil && !errors.Is(err, io.EOF) {
		writeError(w, http.StatusBadRequest, fmt.Sprintf("decoding init request: %v", err))
		return
	}
	if req.DefaultUser != nil && *req.DefaultUser != "" {
		if _, err := s.st.Users.Lookup(*req.DefaultUser); err != nil {
			writeError(w, http.StatusBadRequest, fmt.Sprintf("default user: %v", err))
			return
		}
	}
	s.st.Apply(state.Init{
		AccessToken:    req.AccessToken,
		EnvVars:        req.EnvVars,
		DefaultUser:    req.DefaultUser,
		DefaultWorkdir: req.DefaultWorkdir,
	})
	if err := s.writeIDFiles(req.EnvVars); err != nil {
		// As E2B's envd: the files are a convenience, the env has the ids.
		log.G(r.Context()).Warn("writing the sandbox's id files", "err", err)
	}
	log.G(r.Context()).Info("initialized",
		"envVars", len(req.EnvVars), "defaultUser", s.st.DefaultUserName(),
		"defaultWorkdir", s.st.DefaultWorkdir(), "token", req.AccessToken != nil && *req.AccessToken != "")
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(http.StatusNoContent)
}

// idFiles are the variables each init writes into RunDir, as files named
// after them with a leading dot.
var idFiles = []string{"E2B_SANDBOX_ID", "E2B_TEMPLATE_ID"}

// writeIDFiles writes the ids env names into the run dir, each replaced
// whole (a reader sees the old id or the new one), so a fork or a sandbox
// restored from a snapshot reads its own id there, not its source's.
func (s *Server) writeIDFiles(env map[string]string) error {
	if s.runDir == "" {
		return nil
	}
	for _, name := range idFiles {
		v, ok := env[name]
		if !ok {
			continue
		}
		if err := os.MkdirAll(s.runDir, 0o755); err != nil {
			return err
		}
		path := filepath.Join(s.runDir, "."+name)
		if err := os.WriteFile(path+".tmp", []byte(v), 0o644); err != nil {
			return err
		}
		if err := os.Rename(path+".tmp", path); err != nil {
			return err
		}
	}
	return nil
}
