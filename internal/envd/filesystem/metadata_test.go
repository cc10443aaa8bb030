package filesystem

import (
	"errors"
	"strings"
	"testing"

	"github.com/warren-sandbox/warren/internal/errdefs"
)

func TestValidateMetadata(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		md   map[string]string
		ok   bool
	}{
		{"none", nil, true},
		{"simple", map[string]string{"owner": "alice", "tag": "a b-c_d"}, true},
		{"key at limit", map[string]string{strings.Repeat("k", MaxMetadataKey): "v"}, true},
		{"key over limit", map[string]string{strings.Repeat("k", MaxMetadataKey+1): "v"}, false},
		{"total at limit", map[string]string{"k": strings.Repeat("v", MaxMetadataTotal-1)}, true},
		{"total over limit", map[string]string{"k": strings.Repeat("v", MaxMetadataTotal)}, false},
		{"empty key", map[string]string{"": "v"}, false},
		{"control char", map[string]string{"k": "a\tb"}, false},
		{"non-ascii", map[string]string{"k": "é"}, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			err := ValidateMetadata(tt.md)
			if (err == nil) != tt.ok || (err != nil && !errors.Is(err, errdefs.ErrInvalidArgument)) {
				t.Errorf("ValidateMetadata = %v, want ok=%v", err, tt.ok)
			}
		})
	}
}
