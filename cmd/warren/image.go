package main

import (
	"archive/tar"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"io/fs"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"text/tabwriter"
	"time"
)

const imageUsage = `usage: warren image import FILE|DIR    a docker save tarball or an OCI image layout
       warren image list

Imported images are used by FROM and fromImage by their names, before any
registry is asked.`

// runImage dispatches `warren image ...`, a client of the server's
// /images endpoints.
func runImage(args []string) error {
	if len(args) == 0 || (args[0] != "import" && args[0] != "list") {
		return errors.New(imageUsage)
	}
	fset := flag.NewFlagSet("image "+args[0], flag.ContinueOnError)
	url, key := serverFlags(fset)
	rest, err := parseInterleaved(fset, args[1:])
	if err != nil {
		return err
	}
	if *url == "" || *key == "" {
		return errors.New("set E2B_API_URL and E2B_API_KEY (or --url and --api-key)")
	}
	base := strings.TrimRight(*url, "/")
	if args[0] == "list" {
		return imageList(base, *key)
	}
	if len(rest) != 1 {
		return errors.New(imageUsage)
	}
	return imageImport(base, *key, rest[0])
}

func imageImport(base, key, path string) error {
	fi, err := os.Stat(path)
	if err != nil {
		return err
	}
	var body io.Reader
	if fi.IsDir() {
		// An OCI layout directory goes up as a tar of itself.
		pr, pw := io.Pipe()
		go func() { pw.CloseWithError(tarDir(pw, path)) }()
		body = pr
	} else {
		f, err := os.Open(path)
		if err != nil {
			return err
		}
		defer f.Close()
		body = f
	}
	fmt.Fprintf(os.Stderr, "importing %s...\n", path)
	var out struct {
		Refs []string `json:"refs"`
	}
	if err := imageAPI(base, key, http.MethodPost, "/images", body, &out); err != nil {
		return err
	}
	for _, r := range out.Refs {
		fmt.Println("imported", r)
	}
	return nil
}

func tarDir(w io.Writer, dir string) error {
	tw := tar.NewWriter(w)
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || p == dir {
			return err
		}
		fi, err := d.Info()
		if err != nil {
			return err
		}
		h, err := tar.FileInfoHeader(fi, "")
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(dir, p)
		h.Name = filepath.ToSlash(rel)
		if err := tw.WriteHeader(h); err != nil {
			return err
		}
		if !fi.Mode().IsRegular() {
			return nil
		}
		f, err := os.Open(p)
		if err != nil {
			return err
		}
		defer f.Close()
		_, err = io.Copy(tw, f)
		return err
	})
	if err != nil {
		return err
	}
	return tw.Close()
}

func imageList(base, key string) error {
	var imgs []struct {
		Ref        string    `json:"ref"`
		Digest     string    `json:"digest"`
		Layers     int       `json:"layers"`
		Size       int64     `json:"sizeBytes"`
		ImportedAt time.Time `json:"importedAt"`
	}
	if err := imageAPI(base, key, http.MethodGet, "/images", nil, &imgs); err != nil {
		return err
	}
	w := tabwriter.NewWriter(os.Stdout, 0, 4, 2, ' ', 0)
	fmt.Fprintln(w, "REF\tDIGEST\tLAYERS\tSIZE\tIMPORTED")
	for _, i := range imgs {
		d := i.Digest
		if len(d) > 19 {
			d = d[:19]
		}
		fmt.Fprintf(w, "%s\t%s\t%d\t%.1f MiB\t%s\n", i.Ref, d, i.Layers, float64(i.Size)/(1<<20), i.ImportedAt.Format(time.DateTime))
	}
	return w.Flush()
}

// apiCall sends one request and decodes the JSON answer or E2B's error.
func imageAPI(base, key, method, path string, body io.Reader, out any) error {
	req, err := http.NewRequestWithContext(context.Background(), method, base+path, body)
	if err != nil {
		return err
	}
	req.Header.Set("X-API-Key", key)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	data, _ := io.ReadAll(resp.Body)
	if resp.StatusCode/100 != 2 {
		var e struct{ Message string }
		if json.Unmarshal(data, &e) == nil && e.Message != "" {
			return fmt.Errorf("%s (HTTP %d)", e.Message, resp.StatusCode)
		}
		return fmt.Errorf("HTTP %s: %s", resp.Status, strings.TrimSpace(string(data)))
	}
	return json.Unmarshal(data, out)
}
