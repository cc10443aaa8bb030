package wire

// BuildStart is the body of POST /v2/templates/{templateID}/builds/{buildID}
// (the SDK's TemplateBuildStartV2), plus warren's extensions for what
// Dockerfiles need and the SDK does not send: earlier stages of a
// multi-stage build, RUN-only variables (ARG), labels and ports.
//
// It is the one definition: api/rest's BuildStart aliases it, the builder
// runs it and pkg/warren/dockerfile produces it.
type BuildStart struct {
	FromImage         string        `json:"fromImage,omitempty"`
	FromTemplate      string        `json:"fromTemplate,omitempty"`
	FromImageRegistry *RegistryAuth `json:"fromImageRegistry,omitempty"`
	// Force rebuilds every step, ignoring the layer cache.
	Force    bool   `json:"force,omitempty"`
	Steps    []Step `json:"steps"`
	StartCmd string `json:"startCmd,omitempty"`
	ReadyCmd string `json:"readyCmd,omitempty"`

	// FromStage names an earlier stage (in Stages) to start from (warren).
	FromStage string `json:"fromStage,omitempty"`
	// Stages are the earlier stages of a multi-stage Dockerfile, in order;
	// the request's own fields are the final stage (warren).
	Stages []Stage `json:"stages,omitempty"`
	// Labels are the Dockerfile's LABELs, kept as template metadata (warren).
	Labels map[string]string `json:"labels,omitempty"`
	// Expose lists the Dockerfile's EXPOSE ports, informational (warren).
	Expose []string `json:"expose,omitempty"`
}

// Stage is one earlier stage of a multi-stage build: its steps run like the
// final stage's, and COPY steps with FromStage read its filesystem.
type Stage struct {
	Name              string        `json:"name"`
	FromImage         string        `json:"fromImage,omitempty"`
	FromTemplate      string        `json:"fromTemplate,omitempty"`
	FromImageRegistry *RegistryAuth `json:"fromImageRegistry,omitempty"`
	FromStage         string        `json:"fromStage,omitempty"`
	Steps             []Step        `json:"steps"`
}

// Step types the SDK sends.
const (
	StepRun     = "RUN"
	StepCopy    = "COPY"
	StepEnv     = "ENV"
	StepWorkdir = "WORKDIR"
	StepUser    = "USER"
)

// Step is one instruction. Args by type, as the SDK sends them:
//
//	RUN     [command, user?]
//	COPY    [src, dest, user?, mode?]   (src relative to the build context)
//	ENV     [key, value, key, value, ...]
//	WORKDIR [path]
//	USER    [user]
type Step struct {
	Type string   `json:"type"`
	Args []string `json:"args"`
	// FilesHash names the uploaded gzip tar of the COPY's sources (paths in
	// it are relative to the build context, as the SDK tars them).
	FilesHash string `json:"filesHash,omitempty"`
	Force     bool   `json:"force,omitempty"`

	// FromStage: a COPY reads src from that earlier stage's filesystem
	// instead of uploaded files (warren; Dockerfile COPY --from).
	FromStage string `json:"fromStage,omitempty"`
	// Extract: src is a local tar archive (possibly compressed) whose
	// contents are unpacked at dest (warren; Dockerfile ADD of a tarball).
	Extract bool `json:"extract,omitempty"`
	// Env holds variables set for this RUN only (warren; Dockerfile ARG).
	Env map[string]string `json:"env,omitempty"`
	// Line is the Dockerfile line the step came from, for messages (warren).
	Line int `json:"line,omitempty"`
}

// RegistryAuth is fromImageRegistry: credentials for a private registry,
// as the SDK's fromImage (type "registry"), fromGCPRegistry ("gcp") and
// fromAWSRegistry ("aws") send them.
type RegistryAuth struct {
	Type     string `json:"type"`
	Username string `json:"username,omitempty"`
	Password string `json:"password,omitempty"`
	// ServiceAccountJSON is a Google service account key (type "gcp").
	ServiceAccountJSON string `json:"serviceAccountJson,omitempty"`
	// AWS keys and region of the ECR registry (type "aws").
	AWSAccessKeyID     string `json:"awsAccessKeyId,omitempty"`
	AWSSecretAccessKey string `json:"awsSecretAccessKey,omitempty"`
	AWSRegion          string `json:"awsRegion,omitempty"`
}

// Registry auth types.
const (
	AuthRegistry = "registry"
	AuthGCP      = "gcp"
	AuthAWS      = "aws"
)

// Redacted returns a with its secrets replaced, for what is kept on disk.
func (a *RegistryAuth) Redacted() *RegistryAuth {
	if a == nil {
		return nil
	}
	c := *a
	for _, s := range []*string{&c.Password, &c.ServiceAccountJSON, &c.AWSSecretAccessKey} {
		if *s != "" {
			*s = "(redacted)"
		}
	}
	return &c
}

// Redacted returns a copy of r whose registry secrets are replaced, so the
// request recorded with the build holds no credentials.
func (r *BuildStart) Redacted() *BuildStart {
	c := *r
	c.FromImageRegistry = r.FromImageRegistry.Redacted()
	c.Stages = make([]Stage, len(r.Stages))
	for i, st := range r.Stages {
		st.FromImageRegistry = st.FromImageRegistry.Redacted()
		c.Stages[i] = st
	}
	return &c
}
