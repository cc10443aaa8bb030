package server

import (
	"maps"
	"testing"
)

func TestTemplateHints(t *testing.T) {
	t.Parallel()
	const desktopHint = "start warren with --desktop to build and serve it"
	tests := []struct {
		name string
		cfg  Config
		want map[string]string
	}{
		{"without --desktop", Config{CodeInterpreter: true}, map[string]string{"desktop": desktopHint}},
		{"with --desktop", Config{CodeInterpreter: true, Desktop: true}, map[string]string{}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := templateHints(&tc.cfg); !maps.Equal(got, tc.want) {
				t.Errorf("templateHints = %v, want %v", got, tc.want)
			}
		})
	}
}
