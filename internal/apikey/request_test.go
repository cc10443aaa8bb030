package apikey

import (
	"net/http/httptest"
	"testing"
)

func TestFromRequest(t *testing.T) {
	tests := []struct {
		name          string
		xAPIKey, auth string
		want          string
	}{
		{"none", "", "", ""},
		{"X-API-KEY", "e2b_a", "", "e2b_a"},
		{"bearer", "", "Bearer e2b_b", "e2b_b"},
		{"X-API-KEY first", "e2b_a", "Bearer e2b_b", "e2b_a"},
		// Taken as it came, and so refused as an invalid key (not a
		// missing one), as the API always has.
		{"another scheme", "", "Basic dXNlcjpwdw==", "Basic dXNlcjpwdw=="},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			r := httptest.NewRequest("GET", "/", nil)
			if tc.xAPIKey != "" {
				r.Header.Set("X-API-KEY", tc.xAPIKey)
			}
			if tc.auth != "" {
				r.Header.Set("Authorization", tc.auth)
			}
			if got := FromRequest(r); got != tc.want {
				t.Errorf("FromRequest = %q, want %q", got, tc.want)
			}
		})
	}
}
