package warren

import (
	"context"
	"io"
	"net/http"
	"time"
)

// Image is an image imported into the server, which Dockerfile builds
// can start FROM without a registry.
type Image struct {
	Ref        string
	Digest     string
	Layers     int
	SizeBytes  int64
	ImportedAt time.Time
}

// ImportImage uploads a `docker save` tarball or the tar of an OCI layout
// and returns the refs the image is now known by.
func (c *Client) ImportImage(ctx context.Context, tarball io.Reader) ([]string, error) {
	resp, err := c.api.ImportImageWithBodyWithResponse(ctx, "application/x-tar", tarball)
	if err := answer(resp, err, http.StatusCreated); err != nil {
		return nil, err
	}
	return resp.JSON201.Refs, nil
}

// ListImages lists the imported images.
func (c *Client) ListImages(ctx context.Context) ([]Image, error) {
	resp, err := c.api.ListImagesWithResponse(ctx)
	if err := answer(resp, err, http.StatusOK); err != nil {
		return nil, err
	}
	var out []Image
	for _, i := range *resp.JSON200 {
		out = append(out, Image{Ref: i.Ref, Digest: i.Digest, Layers: i.Layers, SizeBytes: i.SizeBytes, ImportedAt: i.ImportedAt})
	}
	return out, nil
}
