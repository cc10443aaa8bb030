package events

import (
	"fmt"
	"net/netip"
	"net/url"
	"slices"
	"strings"

	"github.com/warren-sandbox/warren/internal/errdefs"
	"github.com/warren-sandbox/warren/internal/store"
)

// maxURL bounds a webhook URL.
const maxURL = 2048

// CheckURL refuses a webhook URL the server will not call: not http or
// https, without a host, too long, or a literal address the guard refuses.
// A host name is checked when a delivery dials it, since what it resolves
// to may change.
func (s *Service) CheckURL(raw string) error {
	if len(raw) > maxURL {
		return errdefs.New(errdefs.ErrInvalidArgument, fmt.Sprintf("url is longer than %d characters", maxURL))
	}
	u, err := url.Parse(raw)
	if err != nil {
		return errdefs.New(errdefs.ErrInvalidArgument, "url is not a URL: "+err.Error())
	}
	if u.Scheme != "http" && u.Scheme != "https" {
		return errdefs.New(errdefs.ErrInvalidArgument, fmt.Sprintf("url must be http:// or https://, not %q", raw))
	}
	if u.Hostname() == "" {
		return errdefs.New(errdefs.ErrInvalidArgument, fmt.Sprintf("url %q has no host", raw))
	}
	if a, err := netip.ParseAddr(strings.Trim(u.Hostname(), "[]")); err == nil && s.opts.Guard != nil && !s.opts.Guard.Permitted(a) {
		return errdefs.New(errdefs.ErrInvalidArgument, fmt.Sprintf(
			"url %q is an internal address (loopback, private, link-local, the host's or the sandboxes'); the server calls it only if the operator allows its range (--webhook-allow)", raw))
	}
	return nil
}

// CheckTypes refuses an unknown event type.
func CheckTypes(types []string) error {
	for _, t := range types {
		if !slices.Contains(store.EventTypes, t) {
			return errdefs.New(errdefs.ErrInvalidArgument, fmt.Sprintf("unknown event type %q; known: %s", t, strings.Join(store.EventTypes, ", ")))
		}
	}
	return nil
}
