package envd

import (
	"compress/gzip"
	"fmt"
	"io"
	"mime"
	"mime/multipart"
	"mime/quotedprintable"
	"net/http"
	"strings"
	"time"

	"github.com/warren-sandbox/warren/internal/envd/filesystem"
	"github.com/warren-sandbox/warren/internal/envd/users"
	"github.com/warren-sandbox/warren/internal/errdefs"
)

// uploadResult is one element of the POST /files response.
type uploadResult struct {
	Path     string            `json:"path"`
	Name     string            `json:"name"`
	Type     string            `json:"type"`
	Metadata map[string]string `json:"metadata,omitempty"`
}

// upload serves POST /files: multipart parts named "file" (destination from
// the path query parameter or the part's full-path filename) or a raw
// octet-stream body to the required path. Bodies are streamed to disk.
func (s *Server) upload(w http.ResponseWriter, r *http.Request) {
	if err := s.authorizeFile(r, OpWrite, time.Now()); err != nil {
		writeErr(w, err)
		return
	}
	q := r.URL.Query()
	u, err := s.st.User(q.Get("username"))
	if err != nil {
		writeErr(w, err)
		return
	}
	md, err := metadataFromHeaders(r.Header)
	if err != nil {
		writeErr(w, err)
		return
	}
	body, err := decodeBody(r)
	if err != nil {
		writeErr(w, err)
		return
	}
	defer body.Close()

	var results []uploadResult
	mediaType, params, _ := mime.ParseMediaType(r.Header.Get("Content-Type"))
	if mediaType == "multipart/form-data" {
		results, err = s.uploadMultipart(multipart.NewReader(body, params["boundary"]), q.Get("path"), u, md)
	} else {
		results, err = s.uploadRaw(body, q.Get("path"), u, md)
	}
	if err != nil {
		drainBody(w, r)
		writeErr(w, err)
		return
	}
	writeJSON(w, http.StatusOK, results)
}

// Upload bodies left unread when a write fails are drained up to these
// bounds before the error is sent. A client still sending would otherwise
// see the connection reset (Go's server closes it after 256 KiB unread)
// and never read the 507 that says why.
const (
	drainLimit   = 1 << 30
	drainTimeout = 60 * time.Second
)

func drainBody(w http.ResponseWriter, r *http.Request) {
	_ = http.NewResponseController(w).SetReadDeadline(time.Now().Add(drainTimeout))
	_, _ = io.Copy(io.Discard, io.LimitReader(r.Body, drainLimit))
}

func (s *Server) uploadRaw(body io.Reader, path string, u *users.User, md map[string]string) ([]uploadResult, error) {
	if path == "" {
		return nil, errdefs.New(errdefs.ErrInvalidArgument, "the path query parameter is required for non-multipart uploads")
	}
	res, err := writeUpload(s.st.Resolve(path, u), body, u, md)
	if err != nil {
		return nil, err
	}
	return []uploadResult{res}, nil
}

// uploadMultipart writes each "file" part in order. With a path parameter
// only one part is allowed.
func (s *Server) uploadMultipart(mr *multipart.Reader, path string, u *users.User, md map[string]string) ([]uploadResult, error) {
	var results []uploadResult
	for {
		part, err := mr.NextRawPart()
		if err == io.EOF {
			break
		}
		if err != nil {
			return nil, fmt.Errorf("%w: reading multipart body: %w", errBadBody, err)
		}
		name, filename := partNames(part.Header.Get("Content-Disposition"))
		if name != "file" {
			_ = part.Close()
			continue
		}
		dest := path
		if dest == "" {
			dest = filename
		} else if len(results) > 0 {
			return nil, errdefs.New(errdefs.ErrInvalidArgument, "only one file can be uploaded when the path query parameter is set")
		}
		if dest == "" {
			return nil, errdefs.New(errdefs.ErrInvalidArgument, "a file part has no filename and no path query parameter was given")
		}
		res, err := writeUpload(s.st.Resolve(dest, u), decodedPart(part), u, md)
		_ = part.Close()
		if err != nil {
			return nil, err
		}
		results = append(results, res)
	}
	if len(results) == 0 {
		return nil, errdefs.New(errdefs.ErrInvalidArgument, "no file parts in the multipart body")
	}
	return results, nil
}

// partNames parses a part's Content-Disposition. Unlike Part.FileName it
// keeps the directories in filename: the SDK sends full, possibly relative,
// destination paths there.
func partNames(disposition string) (name, filename string) {
	_, params, err := mime.ParseMediaType(disposition)
	if err != nil {
		return "", ""
	}
	return params["name"], params["filename"]
}

// decodedPart undoes a part's quoted-printable transfer encoding, as
// NextPart would; NextRawPart is used so the filename stays untouched.
func decodedPart(p *multipart.Part) io.Reader {
	if strings.EqualFold(p.Header.Get("Content-Transfer-Encoding"), "quoted-printable") {
		return quotedprintable.NewReader(p)
	}
	return p
}

// decodeBody undoes Content-Encoding: gzip (or identity).
func decodeBody(r *http.Request) (io.ReadCloser, error) {
	switch enc := strings.ToLower(strings.TrimSpace(r.Header.Get("Content-Encoding"))); enc {
	case "", "identity":
		return r.Body, nil
	case "gzip", "x-gzip":
		zr, err := gzip.NewReader(r.Body)
		if err != nil {
			return nil, fmt.Errorf("%w: gzip body: %w", errBadBody, err)
		}
		return zr, nil
	default:
		return nil, errdefs.New(errdefs.ErrInvalidArgument, fmt.Sprintf("unsupported Content-Encoding %q", enc))
	}
}

// metadataFromHeaders collects X-Metadata-<key> headers, keys lowercased,
// and checks them against the protocol's limits.
func metadataFromHeaders(h http.Header) (map[string]string, error) {
	var md map[string]string
	for name, values := range h {
		key, ok := strings.CutPrefix(strings.ToLower(name), "x-metadata-")
		if !ok || len(values) == 0 {
			continue
		}
		if md == nil {
			md = map[string]string{}
		}
		md[key] = values[0]
	}
	if err := filesystem.ValidateMetadata(md); err != nil {
		return nil, err
	}
	return md, nil
}
