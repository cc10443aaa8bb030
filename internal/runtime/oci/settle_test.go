package oci

import (
	"net/netip"
	"testing"
)

func TestCountHalfClosed(t *testing.T) {
	const table = `  sl  local_address rem_address   st tx_queue rx_queue tr tm->when retrnsmt   uid  timeout inode
   0: 0100007F:A1BD 00000000:0000 0A 00000000:00000000 00:00000000 00000000     0        0 1 1
   1: 017AE70A:C350 027AE70A:C2D1 05 00000000:00000000 00:00000000 00000000     0        0 2 1
   2: 017AE70A:C351 027AE70A:C2D1 04 00000000:00000000 00:00000000 00000000     0        0 3 1
   3: 017AE70A:C352 027AE70A:C2D1 06 00000000:00000000 00:00000000 00000000     0        0 4 1
   4: 017AE70A:C353 027AE70A:C2D1 01 00000000:00000000 00:00000000 00000000     0        0 5 1
   5: 017AE70A:C354 037AE70A:C2D1 05 00000000:00000000 00:00000000 00000000     0        0 6 1
`
	for _, tc := range []struct {
		ip   string
		want int
	}{
		{"10.231.122.2", 2}, // FIN_WAIT2 and FIN_WAIT1; TIME_WAIT and ESTABLISHED do not wait for it
		{"10.231.122.3", 1},
		{"10.231.122.4", 0},
	} {
		addr := procAddr(netip.MustParseAddr(tc.ip))
		if got := countHalfClosed([]byte(table), addr); got != tc.want {
			t.Errorf("%s (%s): %d half-closed, want %d", tc.ip, addr, got, tc.want)
		}
	}
	if got := procAddr(netip.MustParseAddr("127.0.0.1")); got != "0100007F" {
		t.Errorf("procAddr(127.0.0.1) = %s", got)
	}
}
