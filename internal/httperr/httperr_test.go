package httperr

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"slices"
	"testing"

	"github.com/warren-sandbox/warren/internal/errdefs"
)

// TestClassify: each error class gets one status and one code, the code
// one of Codes for that status; a code attached at the edge wins only
// where it fits the status.
func TestClassify(t *testing.T) {
	t.Parallel()
	wrap := func(class error) error { return fmt.Errorf("doing a thing: %w", errdefs.New(class, "why")) }
	cases := []struct {
		name   string
		err    error
		status int
		code   string
	}{
		{"not found", wrap(errdefs.ErrNotFound), 404, NotFound},
		{"bad input", wrap(errdefs.ErrInvalidArgument), 400, InvalidArgument},
		{"too large", wrap(errdefs.ErrTooLarge), 413, TooLarge},
		{"no key", wrap(errdefs.ErrUnauthenticated), 401, Unauthenticated},
		{"no scope", wrap(errdefs.ErrPermissionDenied), 403, PermissionDenied},
		{"exists", wrap(errdefs.ErrAlreadyExists), 409, Conflict},
		{"wrong state", wrap(errdefs.ErrFailedPrecondition), 409, Conflict},
		{"conflict", wrap(errdefs.ErrConflict), 409, Conflict},
		{"disk full", wrap(errdefs.ErrNoSpace), 507, NoSpace},
		{"not implemented", wrap(errdefs.ErrNotImplemented), 501, NotImplemented},
		{"quota", wrap(errdefs.ErrQuotaExceeded), 429, QuotaExceeded},
		{"no memory", wrap(errdefs.ErrResourceExhausted), 503, CapacityUnavailable},
		{"waited too long", wrap(errdefs.ErrWaitTimedOut), 503, PlacementTimeout},
		{"store down", wrap(errdefs.ErrUnavailable), 503, Unavailable},
		{"unclassified", errors.New("boom"), 500, Internal},
		{"create failed", OnInternal(errors.New("runsc: exit 1"), CreateFailed), 500, CreateFailed},
		{"create refused stays refused", OnInternal(wrap(errdefs.ErrResourceExhausted), CreateFailed), 503, CapacityUnavailable},
		{"edge code", WithCode(wrap(errdefs.ErrUnavailable), NoCompatibleNode), 503, NoCompatibleNode},
		{"edge code of another status dropped", WithCode(wrap(errdefs.ErrNotFound), CapacityUnavailable), 404, NotFound},
		{"edge code wrapped again", fmt.Errorf("placing: %w", WithCode(wrap(errdefs.ErrUnavailable), CapacityUnavailable)), 503, CapacityUnavailable},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			if got := Status(tc.err); got != tc.status {
				t.Errorf("Status = %d, want %d", got, tc.status)
			}
			code := CodeOf(tc.err)
			if code != tc.code {
				t.Errorf("CodeOf = %q, want %q", code, tc.code)
			}
			if !slices.Contains(Codes[code], tc.status) {
				t.Errorf("code %q is not listed for status %d", code, tc.status)
			}
		})
	}
}

// TestForStatus: every status a code is listed for has a code, listed
// for it too, so an answer made from a status alone is consistent.
func TestForStatus(t *testing.T) {
	t.Parallel()
	for code, statuses := range Codes {
		for _, s := range statuses {
			if got := ForStatus(s); !slices.Contains(Codes[got], s) {
				t.Errorf("ForStatus(%d) = %q, not listed for %d (code %q is)", s, got, s, code)
			}
		}
	}
}

// TestWrite: the body carries code (= the status), error_code and
// message; 429 and 503 get an integer Retry-After unless one is set.
func TestWrite(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name       string
		body       Body
		preset     string
		wantCode   string
		wantRetry  string
		wantFields []string
	}{
		{"status only", Body{Code: 404, Message: "no"}, "", NotFound, "", []string{"code", "error_code", "message"}},
		{"busy", Body{Code: 503, ErrorCode: CapacityUnavailable, Message: "full"}, "", CapacityUnavailable, "5", nil},
		{"quota keeps its Retry-After", Body{Code: 429, Message: "quota"}, "60", QuotaExceeded, "60", nil},
		{"proxy", Body{Code: 502, ErrorCode: PortNotOpen, Message: "closed", SandboxID: "abc", Port: 8080}, "", PortNotOpen, "",
			[]string{"code", "error_code", "message", "sandboxId", "port"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			w := httptest.NewRecorder()
			if tc.preset != "" {
				w.Header().Set("Retry-After", tc.preset)
			}
			Write(w, tc.body)
			if w.Code != tc.body.Code {
				t.Fatalf("status %d, want %d", w.Code, tc.body.Code)
			}
			if ct := w.Header().Get("Content-Type"); ct != "application/json" {
				t.Errorf("Content-Type %q", ct)
			}
			if got := w.Header().Get("Retry-After"); got != tc.wantRetry {
				t.Errorf("Retry-After %q, want %q", got, tc.wantRetry)
			}
			var m map[string]any
			if err := json.Unmarshal(w.Body.Bytes(), &m); err != nil {
				t.Fatal(err)
			}
			if m["code"] != float64(tc.body.Code) || m["error_code"] != tc.wantCode || m["message"] != tc.body.Message {
				t.Errorf("body %s", w.Body)
			}
			for _, f := range tc.wantFields {
				if _, ok := m[f]; !ok {
					t.Errorf("body %s lacks %q", w.Body, f)
				}
			}
		})
	}
}

// TestFail: Fail answers an error with its class's status and code and
// its message, nothing else of it.
func TestFail(t *testing.T) {
	t.Parallel()
	w := httptest.NewRecorder()
	Fail(w, errdefs.New(errdefs.ErrQuotaExceeded, "team t may run 2 sandboxes"))
	var b Body
	if err := json.Unmarshal(w.Body.Bytes(), &b); err != nil {
		t.Fatal(err)
	}
	want := Body{Code: http.StatusTooManyRequests, ErrorCode: QuotaExceeded, Message: "team t may run 2 sandboxes"}
	if w.Code != want.Code || b != want {
		t.Fatalf("answer %d %+v, want %+v", w.Code, b, want)
	}
}
