package base

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"slices"
	"strconv"
	"strings"
)

// writeAccounts adds the sandbox user and its group to the account files
// directly instead of running useradd in a chroot: it is four line edits, and
// it keeps host processes out of the tree. The password is locked ("!"):
// the user gets root through the NOPASSWD sudoers drop-in, never a password.
func writeAccounts(r *os.Root) error {
	uid, gid := strconv.Itoa(userUID), strconv.Itoa(userGID)
	edits := []struct {
		file     string
		optional bool
		edit     func([]string) ([]string, error)
	}{
		{"etc/passwd", false, func(l []string) ([]string, error) {
			return upsertAccount(l, 2, uid, fmt.Sprintf("%s:x:%s:%s:Sandbox user,,,:/%s:%s", userName, uid, gid, userHome, userShell))
		}},
		{"etc/group", false, func(l []string) ([]string, error) {
			l, err := upsertAccount(l, 2, gid, fmt.Sprintf("%s:x:%s:", userName, gid))
			if err != nil {
				return nil, err
			}
			return addMember(l, "sudo", userName, "sudo:x:27:")
		}},
		{"etc/shadow", false, func(l []string) ([]string, error) {
			return upsertAccount(l, -1, "", userName+":!::0:99999:7:::")
		}},
		{"etc/gshadow", true, func(l []string) ([]string, error) {
			l, err := upsertAccount(l, -1, "", userName+":!::")
			if err != nil {
				return nil, err
			}
			return addMember(l, "sudo", userName, "sudo:*::")
		}},
	}
	for _, e := range edits {
		err := editLines(r, e.file, e.edit)
		if e.optional && errors.Is(err, fs.ErrNotExist) {
			continue
		}
		if err != nil {
			return err
		}
	}
	return nil
}

// editLines rewrites a line-oriented file in place, which keeps its owner
// and mode (shadow is root:shadow 0640).
func editLines(r *os.Root, name string, edit func([]string) ([]string, error)) error {
	data, err := r.ReadFile(name)
	if err != nil {
		return fmt.Errorf("reading /%s: %w", name, err)
	}
	lines := strings.Split(strings.TrimSuffix(string(data), "\n"), "\n")
	if len(data) == 0 {
		lines = nil
	}
	lines, err = edit(lines)
	if err != nil {
		return fmt.Errorf("editing /%s: %w", name, err)
	}
	f, err := r.OpenFile(name, os.O_WRONLY|os.O_TRUNC, 0)
	if err != nil {
		return fmt.Errorf("writing /%s: %w", name, err)
	}
	_, werr := f.WriteString(strings.Join(lines, "\n") + "\n")
	if err := errors.Join(werr, f.Close()); err != nil {
		return fmt.Errorf("writing /%s: %w", name, err)
	}
	return nil
}

// upsertAccount replaces the line whose first field matches entry's, or
// appends entry. When idField >= 0, another account already holding id in
// that field is an error: two names for uid 1000 would confuse every tool.
func upsertAccount(lines []string, idField int, id, entry string) ([]string, error) {
	name, _, _ := strings.Cut(entry, ":")
	out := make([]string, 0, len(lines)+1)
	replaced := false
	for _, line := range lines {
		fields := strings.Split(line, ":")
		switch {
		case fields[0] == name:
			if !replaced {
				out = append(out, entry)
			}
			replaced = true
			continue
		case idField >= 0 && len(fields) > idField && fields[idField] == id:
			return nil, fmt.Errorf("id %s already belongs to %q", id, fields[0])
		}
		out = append(out, line)
	}
	if !replaced {
		out = append(out, entry)
	}
	return out, nil
}

// addMember adds member to the comma-separated member list (the last field)
// of group, creating the group from fallback if it is missing.
func addMember(lines []string, group, member, fallback string) ([]string, error) {
	idx := slices.IndexFunc(lines, func(l string) bool { return strings.HasPrefix(l, group+":") })
	if idx < 0 {
		lines = append(lines, fallback)
		idx = len(lines) - 1
	}
	fields := strings.Split(lines[idx], ":")
	if len(fields) < 4 {
		return nil, fmt.Errorf("malformed entry for group %q: %q", group, lines[idx])
	}
	last := len(fields) - 1
	var members []string
	if fields[last] != "" {
		members = strings.Split(fields[last], ",")
	}
	if !slices.Contains(members, member) {
		members = append(members, member)
	}
	fields[last] = strings.Join(members, ",")
	lines[idx] = strings.Join(fields, ":")
	return lines, nil
}
