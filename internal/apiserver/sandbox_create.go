package apiserver

import (
	"fmt"
	"net/http"
	"regexp"
	"time"

	"github.com/warren-sandbox/warren/api/rest"
	"github.com/warren-sandbox/warren/internal/errdefs"
	"github.com/warren-sandbox/warren/internal/httperr"
	"github.com/warren-sandbox/warren/internal/sandbox"
	"github.com/warren-sandbox/warren/internal/store"
)

// Limits on what one create may carry; documented in docs/api.md.
const (
	defaultTimeout   = 300 * time.Second
	maxMetadataKeys  = 100
	maxMetadataKey   = 256
	maxMetadataValue = 4096
	maxEnvVars       = 500
	maxEnvValue      = 64 << 10
	maxEnvTotal      = 512 << 10
	maxTemplateID    = 256
)

var envName = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*$`)

func (s *Server) createV1(w http.ResponseWriter, r *http.Request) { s.create(w, r, false) }
func (s *Server) createV2(w http.ResponseWriter, r *http.Request) { s.create(w, r, true) }

func (s *Server) create(w http.ResponseWriter, r *http.Request, v2 bool) {
	var body rest.NewSandbox
	if err := decode(r, &body, false); err != nil {
		fail(w, r, err)
		return
	}
	req, err := s.createRequest(&body, v2)
	if err != nil {
		fail(w, r, err)
		return
	}
	req.APIKeyID = keyID(r.Context())
	req.TeamID, req.AnyTeam = teamOf(r), isAdmin(r)
	create := func() (*store.Sandbox, error) { return s.opts.Manager.Create(r.Context(), req) }
	key, ok, err := idempotencyKey(r)
	if err != nil {
		fail(w, r, err)
		return
	}
	if ok {
		fp, err := fingerprint(v2, &body)
		if err != nil {
			fail(w, r, err)
			return
		}
		s.idempotentCreate(w, r, key, fp, create)
		return
	}
	sb, err := create()
	if err != nil {
		fail(w, r, startFailed(err))
		return
	}
	writeJSON(w, http.StatusCreated, s.sandboxResponse(sb))
}

// idempotencyKey returns the request's Idempotency-Key and whether it has
// one; an empty, repeated or malformed key is refused.
func idempotencyKey(r *http.Request) (string, bool, error) {
	vals := r.Header.Values(idempotencyHeader)
	switch {
	case len(vals) == 0:
		return "", false, nil
	case len(vals) > 1:
		return "", false, invalid(fmt.Sprintf("send one %s header, not %d", idempotencyHeader, len(vals)))
	case vals[0] == "":
		return "", false, invalid(idempotencyHeader + " header is empty")
	}
	return vals[0], true, checkIdempotencyKey(vals[0])
}

func (s *Server) createRequest(b *rest.NewSandbox, v2 bool) (sandbox.CreateRequest, error) {
	var req sandbox.CreateRequest
	if b.TemplateID == "" {
		return req, invalid("templateID is required")
	}
	if len(b.TemplateID) > maxTemplateID {
		return req, invalid(fmt.Sprintf("templateID is longer than %d characters", maxTemplateID))
	}
	timeout, err := s.timeout(b.Timeout, defaultTimeout)
	if err != nil {
		return req, err
	}
	metadata, envVars := deref(b.Metadata), deref(b.EnvVars)
	if err := checkMetadata(metadata); err != nil {
		return req, err
	}
	if err := checkEnvVars(envVars); err != nil {
		return req, err
	}
	req = sandbox.CreateRequest{
		TemplateID: b.TemplateID,
		Timeout:    timeout,
		Metadata:   metadata,
		EnvVars:    envVars,
		Secure:     v2 || (b.Secure != nil && *b.Secure),
		AutoPause:  b.AutoPause != nil && *b.AutoPause,
		// autoPauseMemory comes only with a pause on timeout; absent means
		// the memory is kept.
		AutoPauseNoMemory: b.AutoPauseMemory != nil && !*b.AutoPauseMemory,
		AutoResume:        b.AutoResume != nil && b.AutoResume.Enabled,
	}
	if req.AutoPauseNoMemory && req.AutoResume {
		// Traffic never reboots a sandbox (see sandbox.Resolve), so the
		// pair could never work: E2B refuses it too.
		return req, invalid("autoPauseMemory false cannot be combined with autoResume: a sandbox paused without its memory must be resumed explicitly")
	}
	if req.CPUCount, err = limited("cpuCount", b.CPUCount, s.opts.MaxCPUCount); err != nil {
		return req, err
	}
	if req.MemoryMB, err = limited("memoryMB", b.MemoryMB, s.opts.MaxMemoryMB); err != nil {
		return req, err
	}
	if req.MemoryMB > 0 && req.MemoryMB < minMemoryMB {
		return req, invalid(fmt.Sprintf("memoryMB must be at least %d", minMemoryMB))
	}
	if req.VolumeMounts, err = volumeMounts(b.VolumeMounts); err != nil {
		return req, err
	}
	req.Network, err = parseNetwork(b.Network, b.AllowInternetAccess == nil || *b.AllowInternetAccess)
	return req, err
}

// timeout validates a timeout in seconds; nil gives def.
func (s *Server) timeout(secs *int64, def time.Duration) (time.Duration, error) {
	if secs == nil {
		return def, nil
	}
	if *secs < 0 {
		return 0, invalid(fmt.Sprintf("timeout must not be negative, got %d", *secs))
	}
	d := time.Duration(*secs) * time.Second
	if *secs > int64(100*365*24*3600) || (s.opts.MaxTimeout > 0 && d > s.opts.MaxTimeout) {
		return 0, invalid(fmt.Sprintf("timeout %ds is longer than this server allows (%s)", *secs, s.opts.MaxTimeout))
	}
	return d, nil
}

// minMemoryMB is the least memory a sandbox can boot with (envd and, on
// runsc, gVisor's own kernel).
const minMemoryMB = 64

// limited validates an optional positive resource request against max.
func limited(field string, v *int, max int) (int, error) {
	if v == nil {
		return 0, nil
	}
	if *v < 1 {
		return 0, invalid(fmt.Sprintf("%s must be positive, got %d", field, *v))
	}
	if *v > max {
		return 0, invalid(fmt.Sprintf("%s %d is more than this server allows (%d)", field, *v, max))
	}
	return *v, nil
}

func checkMetadata(md map[string]string) error {
	if len(md) > maxMetadataKeys {
		return invalid(fmt.Sprintf("metadata has %d keys; at most %d are allowed", len(md), maxMetadataKeys))
	}
	for k, v := range md {
		if k == "" || len(k) > maxMetadataKey {
			return invalid(fmt.Sprintf("metadata keys must be 1 to %d bytes long", maxMetadataKey))
		}
		if len(v) > maxMetadataValue {
			return invalid(fmt.Sprintf("metadata value of %q is longer than %d bytes", k, maxMetadataValue))
		}
	}
	return nil
}

func checkEnvVars(env map[string]string) error {
	if len(env) > maxEnvVars {
		return invalid(fmt.Sprintf("envVars has %d entries; at most %d are allowed", len(env), maxEnvVars))
	}
	total := 0
	for k, v := range env {
		if !envName.MatchString(k) {
			return invalid(fmt.Sprintf("envVars key %q is not a valid variable name", k))
		}
		if len(v) > maxEnvValue {
			return invalid(fmt.Sprintf("envVars value of %q is longer than %d bytes", k, maxEnvValue))
		}
		total += len(k) + len(v)
	}
	if total > maxEnvTotal {
		return invalid(fmt.Sprintf("envVars total %d bytes; at most %d are allowed", total, maxEnvTotal))
	}
	return nil
}

func invalid(msg string) error { return errdefs.New(errdefs.ErrInvalidArgument, msg) }

// startFailed names a create, resume or fork that failed on warren's side
// (the runtime, the sandbox's start) sandbox_create_failed, as E2B names
// a create that failed on its node, rather than internal_server_error.
func startFailed(err error) error { return httperr.OnInternal(err, httperr.CreateFailed) }
