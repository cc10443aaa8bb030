package oci

import "testing"

func TestSomeAvg10(t *testing.T) {
	cases := []struct {
		in   string
		want float64
		ok   bool
	}{
		{"some avg10=12.50 avg60=3.00 avg300=1.00 total=123\nfull avg10=99.00 avg60=0.00 avg300=0.00 total=0\n", 12.5, true},
		{"full avg10=99.00 avg60=0.00 avg300=0.00 total=0\nsome avg10=0.00 avg60=0.00 avg300=0.00 total=0\n", 0, true},
		{"some avg60=3.00\n", 0, false},
		{"", 0, false},
		{"some avg10=x\n", 0, false},
	}
	for _, c := range cases {
		got, err := someAvg10(c.in)
		if (err == nil) != c.ok || got != c.want {
			t.Errorf("someAvg10(%q) = %v, %v; want %v, ok %v", c.in, got, err, c.want, c.ok)
		}
	}
}
