package bench

import (
	"slices"
	"testing"
)

// TestSkipFirst: a back-to-back row leaves out the pool's warm-up, the
// first n creates, counted before the failed ones are dropped.
func TestSkipFirst(t *testing.T) {
	f := func(v float64) *float64 { return &v }
	tests := []struct {
		name string
		tti  []*float64
		n    int
		want []float64
	}{
		{"none left out", []*float64{f(1), f(2)}, 0, []float64{1, 2}},
		{"warm-up left out", []*float64{f(9), f(8), f(1), f(2)}, 2, []float64{1, 2}},
		{"a failed warm-up counts", []*float64{nil, f(8), f(1), nil, f(2)}, 2, []float64{1, 2}},
		{"fewer than n", []*float64{f(1)}, 5, nil},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := skipFirst(tc.tti, tc.n); !slices.Equal(got, tc.want) {
				t.Fatalf("skipFirst = %v, want %v", got, tc.want)
			}
		})
	}
}
