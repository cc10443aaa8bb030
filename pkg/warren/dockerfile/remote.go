package dockerfile

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"path"
	"path/filepath"
	"strconv"
	"strings"
	"time"
)

// remotePrefix names, inside a Context, the files ADD downloaded from URLs.
// It is not a directory of the context: abs maps it to the Context's own
// temporary directory, so COPY's hashing and tarring serve it unchanged.
const remotePrefix = ".warren-add-url"

// maxDownload caps one ADD download.
const maxDownload = 4 << 30

// Download fetches rawURL for "ADD <url> <dest>" as Docker does: the file is
// kept as it is (never unpacked), with mode 0600 and, when the server says,
// its Last-Modified time; checksum ("sha256:<hex>", may be empty) must match.
// It returns the source path to COPY it by. Close removes the downloads.
func (c *Context) Download(ctx context.Context, rawURL, dest, checksum string) (string, error) {
	u, err := url.Parse(rawURL)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return "", fmt.Errorf("%q is not an http or https URL", rawURL)
	}
	name := path.Base(u.Path)
	if name == "/" || name == "." || name == "" || hasMagic(name) {
		if strings.HasSuffix(dest, "/") {
			return "", fmt.Errorf("cannot take a file name from %s: give the destination a file name", rawURL)
		}
		name = "download"
	}
	want, err := parseChecksum(checksum)
	if err != nil {
		return "", err
	}
	if c.remote == "" {
		if c.remote, err = os.MkdirTemp("", "warren-add-"); err != nil {
			return "", fmt.Errorf("creating download dir: %w", err)
		}
	}
	c.downloads++
	rel := path.Join(remotePrefix, strconv.Itoa(c.downloads), name)
	if err := os.MkdirAll(filepath.Dir(c.abs(rel)), 0o700); err != nil {
		return "", fmt.Errorf("creating download dir: %w", err)
	}
	if err := fetch(ctx, rawURL, c.abs(rel), want); err != nil {
		return "", err
	}
	return rel, nil
}

// Close removes the files Download fetched.
func (c *Context) Close() error {
	if c.remote == "" {
		return nil
	}
	err := os.RemoveAll(c.remote)
	c.remote = ""
	return err
}

func parseChecksum(s string) ([]byte, error) {
	if s == "" {
		return nil, nil
	}
	hexSum, ok := strings.CutPrefix(s, "sha256:")
	sum, err := hex.DecodeString(hexSum)
	if !ok || err != nil || len(sum) != sha256.Size {
		return nil, fmt.Errorf("--checksum=%s: only sha256:<64 hex digits> is supported", s)
	}
	return sum, nil
}

// fetch downloads rawURL into file, checking the sha256 want if given.
func fetch(ctx context.Context, rawURL, file string, want []byte) error {
	ctx, cancel := context.WithTimeout(ctx, 30*time.Minute)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, rawURL, nil)
	if err != nil {
		return err
	}
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		return fmt.Errorf("downloading %s: %w", rawURL, err)
	}
	defer res.Body.Close()
	if res.StatusCode != http.StatusOK {
		return fmt.Errorf("downloading %s: %s", rawURL, res.Status)
	}
	f, err := os.OpenFile(file, os.O_CREATE|os.O_EXCL|os.O_WRONLY, 0o600)
	if err != nil {
		return fmt.Errorf("downloading %s: %w", rawURL, err)
	}
	h := sha256.New()
	n, err := io.Copy(io.MultiWriter(f, h), io.LimitReader(res.Body, maxDownload+1))
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	switch {
	case err != nil:
		return fmt.Errorf("downloading %s: %w", rawURL, err)
	case n > maxDownload:
		return fmt.Errorf("downloading %s: larger than %d GiB", rawURL, maxDownload>>30)
	case want != nil && !bytes.Equal(h.Sum(nil), want):
		return fmt.Errorf("downloading %s: checksum sha256:%x does not match --checksum", rawURL, h.Sum(nil))
	}
	if t, err := http.ParseTime(res.Header.Get("Last-Modified")); err == nil {
		_ = os.Chtimes(file, t, t)
	}
	return nil
}
