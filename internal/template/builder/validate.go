package builder

import (
	"fmt"
	"path"
	"strconv"
	"strings"

	"github.com/warren-sandbox/warren/api/wire"
	"github.com/warren-sandbox/warren/internal/errdefs"
)

// validate refuses a malformed request before anything runs, so the SDK's
// triggerBuild gets a 400 naming the problem.
func (b *Builder) validate(req *wire.BuildStart) error {
	names := map[string]bool{}
	for _, st := range req.Stages {
		if st.Name == "" || names[st.Name] {
			return invalid("stage names must be unique and not empty (%q)", st.Name)
		}
		if err := checkFrom(st.FromImage, st.FromTemplate, st.FromStage, names); err != nil {
			return fmt.Errorf("stage %s: %w", st.Name, err)
		}
		if err := checkSteps(st.Steps, names); err != nil {
			return fmt.Errorf("stage %s: %w", st.Name, err)
		}
		if err := checkRegistryAuth(st.FromImageRegistry); err != nil {
			return fmt.Errorf("stage %s: %w", st.Name, err)
		}
		names[st.Name] = true
	}
	if err := checkFrom(req.FromImage, req.FromTemplate, req.FromStage, names); err != nil {
		return err
	}
	if err := checkRegistryAuth(req.FromImageRegistry); err != nil {
		return err
	}
	return checkSteps(req.Steps, names)
}

func checkRegistryAuth(r *wire.RegistryAuth) error {
	if r == nil {
		return nil
	}
	switch r.Type {
	case "", wire.AuthRegistry:
		return nil
	case wire.AuthGCP:
		if r.ServiceAccountJSON == "" {
			return invalid("fromImageRegistry type \"gcp\" needs serviceAccountJson")
		}
	case wire.AuthAWS:
		if r.AWSAccessKeyID == "" || r.AWSSecretAccessKey == "" || r.AWSRegion == "" {
			return invalid("fromImageRegistry type \"aws\" needs awsAccessKeyId, awsSecretAccessKey and awsRegion")
		}
	default:
		return invalid("fromImageRegistry type %q is not supported; use \"registry\", \"gcp\" or \"aws\"", r.Type)
	}
	return nil
}

func checkFrom(image, template, stage string, stages map[string]bool) error {
	n := 0
	for _, s := range []string{image, template, stage} {
		if s != "" {
			n++
		}
	}
	if n > 1 {
		return invalid("give only one of fromImage, fromTemplate and fromStage")
	}
	if stage != "" && !stages[stage] {
		return invalid("fromStage %q is not an earlier stage", stage)
	}
	return nil
}

// wantArgs are the least and most args of each step type (-1: no limit).
var wantArgs = map[string][2]int{
	wire.StepRun: {1, 2}, wire.StepCopy: {2, 4}, wire.StepEnv: {2, -1}, wire.StepWorkdir: {1, 1}, wire.StepUser: {1, 1},
}

func checkSteps(steps []wire.Step, stages map[string]bool) error {
	for i, s := range steps {
		if err := checkStep(s, stages); err != nil {
			if s.Line > 0 {
				return fmt.Errorf("Dockerfile:%d: %w", s.Line, err)
			}
			return fmt.Errorf("step %d (%s): %w", i+1, s.Type, err)
		}
	}
	return nil
}

func checkStep(s wire.Step, stages map[string]bool) error {
	want, ok := wantArgs[s.Type]
	if !ok {
		return invalid("unknown step type %q (want RUN, COPY, ENV, WORKDIR or USER)", s.Type)
	}
	if len(s.Args) < want[0] || (want[1] >= 0 && len(s.Args) > want[1]) {
		return invalid("%s takes %d to %d arguments, got %d", s.Type, want[0], want[1], len(s.Args))
	}
	switch s.Type {
	case wire.StepEnv:
		if len(s.Args)%2 != 0 {
			return invalid("ENV takes key/value pairs")
		}
	case wire.StepRun:
		if strings.TrimSpace(s.Args[0]) == "" {
			return invalid("RUN has an empty command")
		}
	case wire.StepWorkdir, wire.StepUser:
		if strings.TrimSpace(s.Args[0]) == "" {
			return invalid("%s is empty", s.Type)
		}
	case wire.StepCopy:
		return checkCopy(s, stages)
	}
	return nil
}

func checkCopy(s wire.Step, stages map[string]bool) error {
	src := s.Args[0]
	if s.FromStage != "" {
		if !stages[s.FromStage] {
			return invalid("COPY --from=%s names no earlier stage", s.FromStage)
		}
	} else {
		if path.IsAbs(src) || strings.HasPrefix(path.Clean(src), "..") {
			return invalid("COPY source %q is outside the build context", src)
		}
		if !validHash(s.FilesHash) {
			return invalid("COPY %s has no valid filesHash", src)
		}
	}
	if len(s.Args) > 3 && s.Args[3] != "" {
		if _, err := strconv.ParseUint(s.Args[3], 8, 32); err != nil {
			return invalid("COPY mode %q is not octal", s.Args[3])
		}
	}
	return nil
}

func validHash(h string) bool {
	if len(h) < 16 || len(h) > 128 {
		return false
	}
	for _, c := range h {
		if !(c >= '0' && c <= '9' || c >= 'a' && c <= 'f') {
			return false
		}
	}
	return true
}

func invalid(format string, args ...any) error {
	return errdefs.New(errdefs.ErrInvalidArgument, fmt.Sprintf(format, args...))
}
