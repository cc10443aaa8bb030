package main

import "github.com/warren-sandbox/warren/internal/build"

// newImageResolver serves FROM images; none until the image store lands.
func newImageResolver(cfg *serveConfig) (build.Images, error) { return nil, nil }
