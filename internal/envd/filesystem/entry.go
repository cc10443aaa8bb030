package filesystem

import (
	"fmt"
	"os"
	"path/filepath"
	"syscall"

	"google.golang.org/protobuf/types/known/timestamppb"

	pb "github.com/warren-sandbox/warren/api/gen/filesystem"
	"github.com/warren-sandbox/warren/internal/envd/users"
)

// Entry describes path (not following a final symlink) as an EntryInfo.
// names supplies owner and group names; nil shows numeric ids.
func Entry(path string, names *users.Names) (*pb.EntryInfo, error) {
	fi, err := os.Lstat(path)
	if err != nil {
		return nil, fmt.Errorf("stat %s: %w", path, err)
	}
	return EntryFromInfo(path, fi, names), nil
}

// EntryFromInfo builds an EntryInfo from an Lstat result. For a symlink,
// type and mode are the target's and symlink_target is the resolved target;
// a dangling link has type FILE_TYPE_UNSPECIFIED, which the JS SDK drops
// from listings.
func EntryFromInfo(path string, fi os.FileInfo, names *users.Names) *pb.EntryInfo {
	mode := fi.Mode()
	e := &pb.EntryInfo{
		Name:         filepath.Base(path),
		Path:         path,
		Type:         fileType(mode),
		Size:         fi.Size(),
		Mode:         uint32(mode.Perm()),
		Permissions:  mode.String(),
		ModifiedTime: timestamppb.New(fi.ModTime()),
	}
	if mode&os.ModeSymlink != 0 {
		target, err := filepath.EvalSymlinks(path)
		if err != nil {
			// Dangling: report where it points, unresolved.
			raw, _ := os.Readlink(path)
			if raw != "" && !filepath.IsAbs(raw) {
				raw = filepath.Join(filepath.Dir(path), raw)
			}
			target = raw
			e.Type = pb.FileType_FILE_TYPE_UNSPECIFIED
			e.Mode = 0
		} else if tfi, err := os.Stat(target); err == nil {
			e.Type = fileType(tfi.Mode())
			e.Mode = uint32(tfi.Mode().Perm())
		} else {
			e.Type = pb.FileType_FILE_TYPE_UNSPECIFIED
		}
		e.SymlinkTarget = &target
	}
	if st, ok := fi.Sys().(*syscall.Stat_t); ok {
		if names == nil {
			names = &users.Names{}
		}
		e.Owner = names.User(st.Uid)
		e.Group = names.Group(st.Gid)
	}
	if md, err := ReadMetadata(path); err == nil && len(md) > 0 {
		e.Metadata = md
	}
	return e
}

// fileType maps a mode to the wire enum; anything that is neither a regular
// file, a directory nor a symlink (devices, sockets, fifos) is unspecified.
func fileType(m os.FileMode) pb.FileType {
	switch {
	case m.IsRegular():
		return pb.FileType_FILE_TYPE_FILE
	case m.IsDir():
		return pb.FileType_FILE_TYPE_DIRECTORY
	case m&os.ModeSymlink != 0:
		return pb.FileType_FILE_TYPE_SYMLINK
	default:
		return pb.FileType_FILE_TYPE_UNSPECIFIED
	}
}
