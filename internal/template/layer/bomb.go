package layer

import (
	"fmt"
	"io"

	"github.com/warren-sandbox/warren/internal/errdefs"
)

// Bounds of Expansion: past bombFloor bytes out, more than bombRatio bytes
// out per byte in is refused. Real content rarely compresses 100:1 (zeros
// do: a gzip of zeros expands about 1000 times), so such an archive is
// taken for a compression bomb before it fills the disk.
const (
	bombFloor = 64 << 20
	bombRatio = 100
)

// Expansion wraps a decompressor: out reads the decompressed stream of the
// compressed in. It fails as soon as the output outgrows the input past
// bombRatio, whatever the limits further down would allow.
func Expansion(in io.Reader, decompress func(io.Reader) (io.Reader, error)) (io.Reader, error) {
	c := &counter{r: in}
	out, err := decompress(c)
	if err != nil {
		return nil, err
	}
	return &ratioReader{in: c, out: out}, nil
}

type counter struct {
	r io.Reader
	n int64
}

func (c *counter) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	c.n += int64(n)
	return n, err
}

type ratioReader struct {
	in  *counter
	out io.Reader
	n   int64
}

func (r *ratioReader) Read(p []byte) (int, error) {
	n, err := r.out.Read(p)
	r.n += int64(n)
	if r.n > bombFloor && r.n > bombRatio*max(r.in.n, 1) {
		return n, errdefs.New(errdefs.ErrInvalidArgument, fmt.Sprintf(
			"the archive expands more than %d times (%d bytes from %d): it looks like a compression bomb", bombRatio, r.n, r.in.n))
	}
	return n, err
}
