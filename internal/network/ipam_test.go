package network

import (
	"errors"
	"fmt"
	"net/netip"
	"sync"
	"testing"

	"github.com/warren-sandbox/warren/internal/errdefs"
)

func TestIPAMAllocatesAllThenExhausts(t *testing.T) {
	t.Parallel()
	a, err := NewIPAM(netip.MustParsePrefix("10.1.2.0/29"))
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for i := range 5 {
		ip, err := a.Allocate(fmt.Sprint(i))
		if err != nil {
			t.Fatalf("allocate %d: %v", i, err)
		}
		got = append(got, ip.String())
	}
	want := "[10.1.2.2 10.1.2.3 10.1.2.4 10.1.2.5 10.1.2.6]"
	if fmt.Sprint(got) != want {
		t.Fatalf("allocated %v, want %s", got, want)
	}
	if _, err := a.Allocate("x"); !errors.Is(err, errdefs.ErrResourceExhausted) {
		t.Fatalf("allocate on a full subnet: %v, want ErrResourceExhausted", err)
	}
}

func TestIPAMNextFitReusesLate(t *testing.T) {
	t.Parallel()
	a, _ := NewIPAM(netip.MustParsePrefix("10.1.2.0/29"))
	first, _ := a.Allocate("a")
	a.Release(first)
	second, _ := a.Allocate("b")
	if second == first {
		t.Fatalf("released address %s reused immediately", first)
	}
	for range 3 {
		if _, err := a.Allocate("c"); err != nil {
			t.Fatal(err)
		}
	}
	// Only the first address is left: the search must wrap around to it.
	ip, err := a.Allocate("d")
	if err != nil || ip != first {
		t.Fatalf("wrap-around allocate = %v, %v; want %s", ip, err, first)
	}
}

func TestIPAMReserve(t *testing.T) {
	t.Parallel()
	a, _ := NewIPAM(netip.MustParsePrefix("10.1.2.0/24"))
	tests := []struct {
		name  string
		owner string
		ip    string
		want  error
	}{
		{"free address", "a", "10.1.2.7", nil},
		{"same owner again", "a", "10.1.2.7", nil},
		{"other owner", "b", "10.1.2.7", errdefs.ErrConflict},
		{"gateway", "b", "10.1.2.1", errdefs.ErrInvalidArgument},
		{"network address", "b", "10.1.2.0", errdefs.ErrInvalidArgument},
		{"broadcast", "b", "10.1.2.255", errdefs.ErrInvalidArgument},
		{"outside subnet", "b", "10.1.3.7", errdefs.ErrInvalidArgument},
	}
	for _, tt := range tests {
		err := a.Reserve(tt.owner, netip.MustParseAddr(tt.ip))
		if !errors.Is(err, tt.want) && !(err == nil && tt.want == nil) {
			t.Errorf("%s: Reserve(%s, %s) = %v, want %v", tt.name, tt.owner, tt.ip, err, tt.want)
		}
	}
	for range 10 {
		ip, err := a.Allocate("c")
		if err != nil {
			t.Fatal(err)
		}
		if ip.String() == "10.1.2.7" {
			t.Fatal("allocated a reserved address")
		}
	}
}

func TestIPAMRejectsBadPrefixes(t *testing.T) {
	t.Parallel()
	for _, p := range []string{"10.0.0.0/31", "10.0.0.0/7", "10.0.0.1/24", "fd00::/64"} {
		if _, err := NewIPAM(netip.MustParsePrefix(p)); !errors.Is(err, errdefs.ErrInvalidArgument) {
			t.Errorf("NewIPAM(%s) = %v, want ErrInvalidArgument", p, err)
		}
	}
}

func TestIPAMConcurrent(t *testing.T) {
	t.Parallel()
	a, _ := NewIPAM(netip.MustParsePrefix("10.1.0.0/22"))
	var (
		mu   sync.Mutex
		seen = map[netip.Addr]bool{}
		wg   sync.WaitGroup
	)
	for g := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range 100 {
				ip, err := a.Allocate(fmt.Sprint(g, "-", i))
				if err != nil {
					t.Error(err)
					return
				}
				mu.Lock()
				if seen[ip] {
					t.Errorf("%s handed out twice", ip)
				}
				seen[ip] = true
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	if a.InUse() != 800 {
		t.Fatalf("InUse = %d, want 800", a.InUse())
	}
}
