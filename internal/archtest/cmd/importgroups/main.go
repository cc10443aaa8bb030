// Command importgroups regroups the imports of the module's Go files as
// the archtest's TestImportGrouping wants them (standard library,
// third-party, github.com/warren-sandbox/warren, one group each):
//
//	go run ./internal/archtest/cmd/importgroups -w .
//
// Without -w it lists the files it would change and exits 1 if any.
package main

import (
	"flag"
	"fmt"
	"os"

	"github.com/warren-sandbox/warren/internal/archtest/importgroup"
)

func main() {
	write := flag.Bool("w", false, "write the regrouped files")
	flag.Parse()
	roots := flag.Args()
	if len(roots) == 0 {
		roots = []string{"."}
	}
	changed, failed := 0, 0
	for _, root := range roots {
		err := importgroup.Walk(root, func(path string) error {
			src, err := os.ReadFile(path)
			if err != nil {
				return err
			}
			out, diff, err := importgroup.Fix(src)
			if err != nil {
				failed++
				fmt.Fprintf(os.Stderr, "%s: %v\n", path, err)
				return nil
			}
			if !diff {
				return nil
			}
			changed++
			fmt.Println(path)
			if *write {
				return writeKeepingMode(path, out)
			}
			return nil
		})
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(2)
		}
	}
	if failed > 0 || (!*write && changed > 0) {
		os.Exit(1)
	}
}

func writeKeepingMode(path string, data []byte) error {
	fi, err := os.Stat(path)
	if err != nil {
		return err
	}
	return os.WriteFile(path, data, fi.Mode().Perm())
}
