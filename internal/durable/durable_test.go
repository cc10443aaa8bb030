package durable

import (
	"errors"
	"io"
	"os"
	"path/filepath"
	"testing"
)

func TestWriteFileAndCopyDir(t *testing.T) {
	dir := t.TempDir()
	src := filepath.Join(dir, "src")
	if err := os.Mkdir(src, 0o700); err != nil {
		t.Fatal(err)
	}
	for name, data := range map[string]string{"a": "alpha", "b": ""} {
		err := WriteFile(filepath.Join(src, name), func(w io.Writer) error { _, err := io.WriteString(w, data); return err })
		if err != nil {
			t.Fatalf("WriteFile(%s): %v", name, err)
		}
	}
	if err := WriteFile(filepath.Join(src, "a"), func(io.Writer) error { return nil }); !errors.Is(err, os.ErrExist) {
		t.Errorf("WriteFile over an existing file = %v, want it refused", err)
	}
	boom := errors.New("boom")
	if err := WriteFile(filepath.Join(dir, "failed"), func(io.Writer) error { return boom }); !errors.Is(err, boom) {
		t.Errorf("WriteFile with a failing fill = %v, want its error", err)
	}
	dst := filepath.Join(dir, "dst")
	if err := CopyDir(src, dst); err != nil {
		t.Fatalf("CopyDir: %v", err)
	}
	for name, want := range map[string]string{"a": "alpha", "b": ""} {
		if got, err := os.ReadFile(filepath.Join(dst, name)); err != nil || string(got) != want {
			t.Errorf("copy of %s = %q, %v; want %q", name, got, err, want)
		}
	}
	if err := CopyDir(src, dst); !errors.Is(err, os.ErrExist) {
		t.Errorf("CopyDir into an existing dir = %v, want it refused", err)
	}
	if err := os.Mkdir(filepath.Join(src, "sub"), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := CopyDir(src, filepath.Join(dir, "dst2")); err == nil {
		t.Error("CopyDir of a directory holding a directory succeeded")
	}
}
