package warren

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"os"
	"strings"

	"github.com/warren-sandbox/warren/api/rest"
)

// Config says where the server is and how to sign in. The zero value of a
// field means: take it from the environment, as E2B's SDKs do.
type Config struct {
	// APIURL is the REST API's base URL (E2B_API_URL; default
	// https://api.<Domain>).
	APIURL string
	// APIKey is sent as X-API-KEY (E2B_API_KEY).
	APIKey string
	// SandboxURL, when set, is where sandbox traffic goes, with the
	// sandbox named in headers (E2B_SANDBOX_URL).
	SandboxURL string
	// Domain is the sandboxes' domain (E2B_DOMAIN; default e2b.app).
	Domain string
	// VolumeAPIURL is where volumes' content API is
	// (E2B_VOLUME_API_URL; default APIURL, where a warren server serves
	// it).
	VolumeAPIURL string
	// HTTPClient makes the requests (default http.DefaultClient).
	HTTPClient *http.Client
	// Retry says how API requests refused with 429 or 503 are retried
	// (the zero value: up to 4 tries, honouring Retry-After).
	Retry RetryOptions
}

// Client talks to one warren server. It is safe for concurrent use.
type Client struct {
	cfg Config
	api *rest.ClientWithResponses
	// vapi calls volumes' content API, signed with each volume's token
	// instead of the API key.
	vapi *rest.ClientWithResponses
}

// New returns a client for the server cfg and the environment describe.
// It fails when no API key is set.
func New(cfg Config) (*Client, error) {
	cfg = cfg.withEnv()
	if cfg.APIKey == "" {
		return nil, errors.New("warren: no API key: set E2B_API_KEY or Config.APIKey")
	}
	if cfg.HTTPClient == nil {
		cfg.HTTPClient = http.DefaultClient
	}
	key := cfg.APIKey
	doer := &retryDoer{next: cfg.HTTPClient, o: cfg.Retry.withDefaults()}
	api, err := rest.NewClientWithResponses(cfg.APIURL, rest.WithHTTPClient(doer),
		rest.WithRequestEditorFn(func(_ context.Context, req *http.Request) error {
			req.Header.Set("X-API-KEY", key)
			return nil
		}))
	if err != nil {
		return nil, fmt.Errorf("warren: %w", err)
	}
	vapi, err := rest.NewClientWithResponses(cfg.VolumeAPIURL, rest.WithHTTPClient(doer))
	if err != nil {
		return nil, fmt.Errorf("warren: %w", err)
	}
	return &Client{cfg: cfg, api: api, vapi: vapi}, nil
}

// withEnv fills the fields left empty from E2B's variables and defaults.
func (c Config) withEnv() Config {
	pick := func(v *string, env, def string) {
		if *v == "" {
			*v = os.Getenv(env)
		}
		if *v == "" {
			*v = def
		}
	}
	pick(&c.Domain, "E2B_DOMAIN", "e2b.app")
	pick(&c.APIKey, "E2B_API_KEY", "")
	pick(&c.SandboxURL, "E2B_SANDBOX_URL", "")
	pick(&c.APIURL, "E2B_API_URL", "https://api."+c.Domain)
	c.APIURL = strings.TrimRight(c.APIURL, "/")
	pick(&c.VolumeAPIURL, "E2B_VOLUME_API_URL", c.APIURL)
	c.VolumeAPIURL = strings.TrimRight(c.VolumeAPIURL, "/")
	return c
}

// Config returns the client's settings, with what the environment gave.
func (c *Client) Config() Config { return c.cfg }
