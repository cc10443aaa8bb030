package rpc

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"os"
	"syscall"
	"testing"
	"time"

	"connectrpc.com/connect"

	"github.com/warren-sandbox/warren/internal/errdefs"
)

func TestBasicUser(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name, header, want string
		wantErr            bool
	}{
		{name: "absent", header: "", want: ""},
		{name: "root as the SDK sends it", header: "Basic cm9vdDo=", want: "root"},
		{name: "lowercase scheme", header: "basic dXNlcjo=", want: "user"},
		{name: "password ignored", header: "Basic dXNlcjpwdw==", want: "user"},
		{name: "bearer", header: "Bearer x", wantErr: true},
		{name: "bad base64", header: "Basic !!!", wantErr: true},
		{name: "empty name", header: "Basic Og==", wantErr: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			got, err := BasicUser(tt.header)
			if (err != nil) != tt.wantErr || got != tt.want {
				t.Fatalf("BasicUser(%q) = %q, %v", tt.header, got, err)
			}
			if err != nil && Code(err) != connect.CodeUnauthenticated {
				t.Errorf("code = %v", Code(err))
			}
		})
	}
}

func TestKeepaliveInterval(t *testing.T) {
	t.Parallel()
	tests := []struct {
		header string
		want   time.Duration
	}{
		{"", DefaultKeepalive},
		{"50", 50 * time.Second},
		{"0.5", 500 * time.Millisecond},
		{"0", DefaultKeepalive},
		{"-3", DefaultKeepalive},
		{"soon", DefaultKeepalive},
		{"0.0001", minKeepalive},
	}
	for _, tt := range tests {
		h := http.Header{}
		if tt.header != "" {
			h.Set(KeepaliveHeader, tt.header)
		}
		if got := KeepaliveInterval(h); got != tt.want {
			t.Errorf("KeepaliveInterval(%q) = %v, want %v", tt.header, got, tt.want)
		}
	}
}

func TestCode(t *testing.T) {
	t.Parallel()
	tests := []struct {
		err  error
		want connect.Code
	}{
		{errdefs.New(errdefs.ErrNotFound, "x"), connect.CodeNotFound},
		{fmt.Errorf("wrapped: %w", errdefs.ErrInvalidArgument), connect.CodeInvalidArgument},
		{&os.PathError{Op: "open", Path: "/x", Err: syscall.ENOENT}, connect.CodeNotFound},
		{&os.PathError{Op: "mkdir", Path: "/x", Err: syscall.EEXIST}, connect.CodeAlreadyExists},
		{&os.PathError{Op: "open", Path: "/x", Err: syscall.EACCES}, connect.CodePermissionDenied},
		{&os.PathError{Op: "write", Path: "/x", Err: syscall.ENOSPC}, connect.CodeResourceExhausted},
		{context.DeadlineExceeded, connect.CodeDeadlineExceeded},
		{errors.New("boom"), connect.CodeInternal},
	}
	for _, tt := range tests {
		if got := Code(tt.err); got != tt.want {
			t.Errorf("Code(%v) = %v, want %v", tt.err, got, tt.want)
		}
	}
	already := connect.NewError(connect.CodeAborted, errors.New("x"))
	if got := Error(already); got != already {
		t.Errorf("Error re-wrapped a connect error: %v", got)
	}
}
