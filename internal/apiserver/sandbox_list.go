package apiserver

import (
	"encoding/base64"
	"fmt"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/warren-sandbox/warren/api/rest"
	"github.com/warren-sandbox/warren/internal/store"
)

const maxListLimit = 100

// listV2 serves GET /v2/sandboxes: running and paused sandboxes, newest
// first, filtered by state, metadata, template and start time, paged with
// an opaque X-Next-Token cursor.
func (s *Server) listV2(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	f, err := parseFilter(q)
	if err != nil {
		fail(w, r, err)
		return
	}
	all, err := s.ownSandboxes(r)
	if err != nil {
		fail(w, r, err)
		return
	}
	limit := maxListLimit
	if v := q.Get("limit"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 {
			fail(w, r, invalid("limit must be a positive integer"))
			return
		}
		limit = min(n, maxListLimit)
	}
	after, err := parseCursor(q.Get("nextToken"))
	if err != nil {
		fail(w, r, err)
		return
	}
	asc := q.Get("order") == "asc"
	page, next, running := paginate(all, f, after, limit, asc)
	out := make([]rest.SandboxDetail, 0, len(page))
	for _, sb := range page {
		out = append(out, s.detailResponse(sb, false))
	}
	if next != nil {
		w.Header().Set("X-Next-Token", encodeCursor(next))
	}
	w.Header().Set("X-Total-Running", strconv.Itoa(running))
	writeJSON(w, http.StatusOK, out)
}

// listV1 serves the deprecated GET /sandboxes: running sandboxes only.
func (s *Server) listV1(w http.ResponseWriter, r *http.Request) {
	f, err := parseFilter(r.URL.Query())
	if err != nil {
		fail(w, r, err)
		return
	}
	f.states = map[string]bool{store.SandboxRunning: true}
	all, err := s.ownSandboxes(r)
	if err != nil {
		fail(w, r, err)
		return
	}
	out := []rest.SandboxDetail{}
	for _, sb := range all {
		if f.match(sb) {
			out = append(out, s.detailResponse(sb, false))
		}
	}
	writeJSON(w, http.StatusOK, out)
}

type filter struct {
	states       map[string]bool
	metadata     map[string]string
	template     string
	startedAfter time.Time
}

func (f *filter) match(sb *store.Sandbox) bool {
	if len(f.states) > 0 && !f.states[sb.State] {
		return false
	}
	for k, v := range f.metadata {
		if got, ok := sb.Metadata[k]; !ok || got != v {
			return false
		}
	}
	if f.template != "" && f.template != sb.TemplateID && f.template != sb.Alias {
		return false
	}
	return f.startedAfter.IsZero() || sb.StartedAt.After(f.startedAfter)
}

func parseFilter(q url.Values) (*filter, error) {
	f := &filter{template: q.Get("template")}
	if v := q.Get("state"); v != "" {
		f.states = map[string]bool{}
		for _, st := range strings.Split(v, ",") {
			if st != store.SandboxRunning && st != store.SandboxPaused {
				return nil, invalid(fmt.Sprintf("state %q is not one of running, paused", st))
			}
			f.states[st] = true
		}
	}
	if v := q.Get("startedAfter"); v != "" {
		t, err := time.Parse(time.RFC3339, v)
		if err != nil {
			return nil, invalid("startedAfter must be an RFC3339 time")
		}
		f.startedAfter = t
	}
	md, err := parseMetadataQuery(q.Get("metadata"))
	if err != nil {
		return nil, err
	}
	f.metadata = md
	return f, nil
}

// parseMetadataQuery undoes the SDK's double encoding: the parameter is a
// percent-encoded `k=v&k2=v2` string whose keys and values are themselves
// percent-encoded.
func parseMetadataQuery(raw string) (map[string]string, error) {
	if raw == "" {
		return nil, nil
	}
	inner, err := url.QueryUnescape(raw)
	if err != nil {
		return nil, invalid("metadata filter is not valid percent-encoding")
	}
	md := map[string]string{}
	for _, pair := range strings.Split(inner, "&") {
		if pair == "" {
			continue
		}
		k, v, ok := strings.Cut(pair, "=")
		if !ok {
			return nil, invalid(fmt.Sprintf("metadata filter %q is not key=value", pair))
		}
		key, err1 := url.QueryUnescape(k)
		val, err2 := url.QueryUnescape(v)
		if err1 != nil || err2 != nil {
			return nil, invalid("metadata filter is not valid percent-encoding")
		}
		md[key] = val
	}
	return md, nil
}

// cursor marks the last sandbox of a page.
type cursor struct {
	startedAt time.Time
	id        string
}

func encodeCursor(c *cursor) string {
	return base64.RawURLEncoding.EncodeToString([]byte(c.startedAt.UTC().Format(time.RFC3339Nano) + "__" + c.id))
}

func parseCursor(tok string) (*cursor, error) {
	if tok == "" {
		return nil, nil
	}
	raw, err := base64.RawURLEncoding.DecodeString(tok)
	if err != nil {
		return nil, invalid("nextToken is not a token this server issued")
	}
	ts, id, ok := strings.Cut(string(raw), "__")
	t, terr := time.Parse(time.RFC3339Nano, ts)
	if !ok || terr != nil {
		return nil, invalid("nextToken is not a token this server issued")
	}
	return &cursor{startedAt: t, id: id}, nil
}

// before reports whether sb sorts before c in the given order.
func (c *cursor) before(sb *store.Sandbox, asc bool) bool {
	if sb.StartedAt.Equal(c.startedAt) {
		if asc {
			return sb.ID <= c.id
		}
		return sb.ID >= c.id
	}
	if asc {
		return sb.StartedAt.Before(c.startedAt)
	}
	return sb.StartedAt.After(c.startedAt)
}

// paginate filters and orders all (given newest first), skips up to the
// cursor and returns one page, the cursor for the next and the running count.
func paginate(all []*store.Sandbox, f *filter, after *cursor, limit int, asc bool) ([]*store.Sandbox, *cursor, int) {
	sortSandboxes(all, asc)
	running := 0
	var page []*store.Sandbox
	var next *cursor
	for _, sb := range all {
		if sb.State == store.SandboxRunning {
			running++
		}
		if !f.match(sb) || (after != nil && after.before(sb, asc)) {
			continue
		}
		if len(page) == limit {
			last := page[len(page)-1]
			next = &cursor{startedAt: last.StartedAt, id: last.ID}
			continue
		}
		page = append(page, sb)
	}
	return page, next, running
}
