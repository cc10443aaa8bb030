package main

import (
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestOpenSource: a file gives its size and name, stdin neither; a
// directory or a missing file is refused; a remote directory takes the
// file's name, which stdin cannot give.
func TestOpenSource(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "in.txt")
	if err := os.WriteFile(file, []byte("hello"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		local, remote string
		wantSize      int64
		wantTarget    string
		wantErr       string
		wantTargetErr error
	}{
		{local: file, remote: "/d/out.txt", wantSize: 5, wantTarget: "/d/out.txt"},
		{local: file, remote: "/d/", wantSize: 5, wantTarget: "/d/in.txt"},
		{local: file, remote: "", wantSize: 5, wantTarget: "in.txt"},
		{local: "-", remote: "/d/out.txt", wantSize: -1, wantTarget: "/d/out.txt"},
		{local: "-", remote: "/d/", wantSize: -1, wantTargetErr: errStdinName},
		{local: "-", remote: "", wantSize: -1, wantTargetErr: errStdinName},
		{local: dir, wantErr: "is a directory: cp copies single files"},
		{local: filepath.Join(dir, "missing"), wantErr: "no such file"},
	} {
		src, err := openSource(tc.local)
		if tc.wantErr != "" {
			if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
				t.Errorf("openSource(%q): %v, want %q", tc.local, err, tc.wantErr)
			}
			continue
		}
		if err != nil || src.size != tc.wantSize {
			t.Fatalf("openSource(%q) = %+v, %v; want size %d", tc.local, src, err, tc.wantSize)
		}
		got, err := src.target(tc.remote)
		if !errors.Is(err, tc.wantTargetErr) || got != tc.wantTarget {
			t.Errorf("%q → %q: target %q, %v; want %q, %v", tc.local, tc.remote, got, err, tc.wantTarget, tc.wantTargetErr)
		}
		if err := src.Close(); err != nil {
			t.Errorf("close %q: %v", tc.local, err)
		}
	}
}

// TestSendAndReceive: what send reads is the file's bytes; receive writes
// into a named file or, given a directory, the remote file's name in it;
// a failure on either side is returned.
func TestSendAndReceive(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "in.txt")
	if err := os.WriteFile(file, []byte("hello"), 0o644); err != nil {
		t.Fatal(err)
	}
	src, err := openSource(file)
	if err != nil {
		t.Fatal(err)
	}
	defer src.Close()
	var sent []byte
	if err := src.send("/x", func(r io.Reader) (string, error) { sent, err = io.ReadAll(r); return "/x", err }); err != nil || string(sent) != "hello" {
		t.Fatalf("send read %q, %v", sent, err)
	}
	boom := errors.New("boom")
	if err := src.send("/x", func(io.Reader) (string, error) { return "", boom }); !errors.Is(err, boom) {
		t.Errorf("send of a failing write: %v", err)
	}

	write := func(w io.Writer) error { _, err := io.WriteString(w, "data"); return err }
	for _, tc := range []struct {
		local, want string
		read        func(io.Writer) error
		wantErr     error
	}{
		{local: filepath.Join(dir, "named.bin"), want: filepath.Join(dir, "named.bin"), read: write},
		{local: dir, want: filepath.Join(dir, "remote.bin"), read: write},
		{local: filepath.Join(dir, "failed.bin"), read: func(io.Writer) error { return boom }, wantErr: boom},
	} {
		err := receive(tc.local, "remote.bin", "/r/remote.bin", 4, tc.read)
		if !errors.Is(err, tc.wantErr) {
			t.Errorf("receive into %s: %v, want %v", tc.local, err, tc.wantErr)
		}
		if tc.want == "" {
			continue
		}
		if b, err := os.ReadFile(tc.want); err != nil || string(b) != "data" {
			t.Errorf("receive into %s: %s holds %q, %v", tc.local, tc.want, b, err)
		}
	}
	if err := receive(filepath.Join(dir, "no", "such"), "f", "/f", 0, write); err == nil {
		t.Error("receive into a missing directory: no error")
	}
}
