package codeinterp

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
)

// stubControl is the control file of a metadata-only package that
// satisfies python3-scipy's dependency on python3-pythran. Pythran is a
// compiler used to build SciPy, not to run it (the template's test imports
// every SciPy subpackage with pythran blocked), yet bookworm's python3-scipy
// Depends on it, and it pulls g++, gcc, python3-dev, the Boost and OpenBLAS
// headers and gdb: about 550 MB and a compiler we do not want in the
// template. Installing this first keeps dpkg's database consistent (no
// --force-depends), and a user who wants the real pythran can still
// `apt-get install python3-pythran` next to it.
const stubControl = `Package: warren-pythran-stub
Version: 1.0
Architecture: all
Maintainer: warren <warren@localhost>
Provides: python3-pythran
Section: misc
Priority: optional
Description: stands in for python3-pythran in warren's code interpreter template
 python3-scipy depends on the Pythran compiler, which SciPy does not need at
 run time; this package satisfies the dependency without a C++ toolchain.
`

// stubDebName is the file apt installs the stub from.
const stubDebName = "warren-pythran-stub_1.0_all.deb"

// writeStubDeb writes the stub package into dir as a .deb: an ar archive of
// debian-binary, control.tar.gz and an empty data.tar.gz.
func writeStubDeb(dir string) (string, error) {
	control, err := tarGz(map[string]string{"./control": stubControl})
	if err != nil {
		return "", err
	}
	data, err := tarGz(nil)
	if err != nil {
		return "", err
	}
	var deb bytes.Buffer
	deb.WriteString("!<arch>\n")
	for _, m := range []struct {
		name string
		data []byte
	}{{"debian-binary", []byte("2.0\n")}, {"control.tar.gz", control}, {"data.tar.gz", data}} {
		// Fixed-width ar member header: name, mtime, uid, gid, mode, size.
		fmt.Fprintf(&deb, "%-16s%-12d%-6d%-6d%-8s%-10d`\n", m.name, 0, 0, 0, "100644", len(m.data))
		deb.Write(m.data)
		if len(m.data)%2 == 1 {
			deb.WriteByte('\n')
		}
	}
	path := filepath.Join(dir, stubDebName)
	if err := os.WriteFile(path, deb.Bytes(), 0o644); err != nil {
		return "", fmt.Errorf("writing %s: %w", stubDebName, err)
	}
	return path, nil
}

// tarGz is a gzipped tar of "./" and the given regular files.
func tarGz(files map[string]string) ([]byte, error) {
	var buf bytes.Buffer
	zw := gzip.NewWriter(&buf)
	tw := tar.NewWriter(zw)
	err := tw.WriteHeader(&tar.Header{Name: "./", Typeflag: tar.TypeDir, Mode: 0o755, Format: tar.FormatGNU})
	for name, body := range files {
		if err != nil {
			break
		}
		err = tw.WriteHeader(&tar.Header{Name: name, Typeflag: tar.TypeReg, Mode: 0o644, Size: int64(len(body)), Format: tar.FormatGNU})
		if err == nil {
			_, err = strings.NewReader(body).WriteTo(tw)
		}
	}
	if err := errors.Join(err, tw.Close(), zw.Close()); err != nil {
		return nil, fmt.Errorf("building stub package: %w", err)
	}
	return buf.Bytes(), nil
}
