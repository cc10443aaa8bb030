package volume

import (
	"io/fs"
	"os"
	"syscall"
)

// emptyFiles truncates the regular files at and under rel that have no
// other link, before a remove unlinks them. An unlink frees a file's
// blocks only once nothing holds it open, and gVisor keeps the files a
// sandbox used open in its dentry cache while the sandbox runs: a file a
// sandbox wrote and the content API removed would keep its space, and a
// full volume would stay full. Truncating frees the blocks at once; a
// process that still has the file open reads it empty, which is what
// removing it asked for. Hard-linked files keep their data for their
// other names. Best effort: the remove that follows reports errors.
func (c *content) emptyFiles(rel string) {
	_ = fs.WalkDir(c.root.FS(), rel, func(p string, d fs.DirEntry, err error) error {
		if err != nil || !d.Type().IsRegular() {
			return nil // a directory is walked; anything else is left
		}
		info, err := d.Info()
		if err != nil {
			return nil
		}
		if st, ok := info.Sys().(*syscall.Stat_t); !ok || st.Nlink != 1 || st.Size == 0 {
			return nil
		}
		// O_NOFOLLOW: if the file was swapped for a symlink meanwhile,
		// what it points to is not truncated.
		f, err := c.root.OpenFile(p, os.O_WRONLY|os.O_TRUNC|syscall.O_NOFOLLOW|syscall.O_NONBLOCK, 0)
		if err == nil {
			_ = f.Close()
		}
		return nil
	})
}
