package oci

import (
	"testing"

	"golang.org/x/sys/unix"
)

func TestNofileLimit(t *testing.T) {
	var lim unix.Rlimit
	if err := unix.Getrlimit(unix.RLIMIT_NOFILE, &lim); err != nil {
		t.Fatal(err)
	}
	want := uint64(MaxOpenFiles)
	if lim.Max != unix.RLIM_INFINITY {
		want = min(want, lim.Max)
	}
	got := nofileLimit()
	if len(got) != 1 || got[0].Type != "RLIMIT_NOFILE" || got[0].Hard != want || got[0].Soft != want {
		t.Fatalf("nofileLimit() = %+v; want soft and hard %d", got, want)
	}
}
