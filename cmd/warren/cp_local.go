package main

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path"
	"strings"
)

// The local side of `warren sandbox cp` and `warren volume cp`: both copy
// single files between here and a remote path, with - for stdin or stdout
// and a progress bar on a terminal.

// errStdinName refuses an upload from stdin to a directory: stdin has no
// file name to give the file written there.
var errStdinName = errors.New("name the file to write from stdin")

// localSource is what an upload reads: a file, or stdin for "-".
type localSource struct {
	r    io.Reader
	size int64  // -1 for stdin: the bar counts bytes without a total
	name string // the file's base name; "" for stdin, which has none
	file *os.File
}

// openSource opens the local side of an upload; a directory is refused,
// since cp copies single files.
func openSource(local string) (*localSource, error) {
	if local == "-" {
		return &localSource{r: os.Stdin, size: -1}, nil
	}
	f, err := os.Open(local)
	if err != nil {
		return nil, err
	}
	st, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, err
	}
	if st.IsDir() {
		f.Close()
		return nil, fmt.Errorf("%s is a directory: cp copies single files (tar it, then cp the archive)", local)
	}
	return &localSource{r: f, size: st.Size(), name: path.Base(local), file: f}, nil
}

// Close closes the file (stdin stays open).
func (s *localSource) Close() error {
	if s.file == nil {
		return nil
	}
	return s.file.Close()
}

// target is the remote path to write: remote itself, or the local file's
// name inside it when remote names a directory (empty or ending in /).
func (s *localSource) target(remote string) (string, error) {
	if remote != "" && !strings.HasSuffix(remote, "/") {
		return remote, nil
	}
	if s.name == "" {
		return "", errStdinName
	}
	return remote + s.name, nil
}

// send streams the source through the progress bar into write, which
// returns the path it wrote, and says so on stderr.
func (s *localSource) send(remote string, write func(io.Reader) (string, error)) error {
	bar := progress(s.size, "upload "+remote)
	wrote, err := write(io.TeeReader(s.r, bar))
	_ = bar.Finish()
	if err != nil {
		return err
	}
	fmt.Fprintln(os.Stderr, "wrote", wrote)
	return nil
}

// receive writes what read copies into the local side: stdout for "-",
// the file name inside local when local is a directory, else the file
// local. remote and size label the progress bar.
func receive(local, name, remote string, size int64, read func(io.Writer) error) (err error) {
	out := io.Writer(os.Stdout)
	if local != "-" {
		if fi, err := os.Stat(local); err == nil && fi.IsDir() {
			local = path.Join(local, name)
		}
		f, err := os.Create(local)
		if err != nil {
			return err
		}
		// A write the kernel defers can fail only at close: report it.
		defer func() {
			if cerr := f.Close(); err == nil {
				err = cerr
			}
		}()
		out = f
	}
	bar := progress(size, "download "+remote)
	err = read(io.MultiWriter(out, bar))
	_ = bar.Finish()
	return err
}
