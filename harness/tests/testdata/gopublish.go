// gopublish: replaces FILE with TEXT through the Go runtime (raw system calls, which
// libvxfault.so cannot see), then prints "published". Built by
// harness/tests/crash_explore_go.rs for `vxcert crash-explore --publish`.
//
//	gopublish MODE FILE TEXT
//
// MODE: correct (temp file, write, fsync, rename over FILE, fsync the directory),
// no-fsync (the temp file is not fsynced before the rename), no-dirsync (the
// directory is not fsynced after it), rename-first (the empty temp file is renamed
// over FILE, then written and fsynced).
package main

import (
	"fmt"
	"os"
	"path/filepath"
)

func must(err error) {
	if err != nil {
		fmt.Fprintln(os.Stderr, "gopublish:", err)
		os.Exit(1)
	}
}

func syncDir(dir string) {
	d, err := os.Open(dir)
	must(err)
	must(d.Sync())
	must(d.Close())
}

func main() {
	if len(os.Args) != 4 {
		fmt.Fprintln(os.Stderr, "usage: gopublish correct|no-fsync|no-dirsync|rename-first FILE TEXT")
		os.Exit(2)
	}
	mode, file, text := os.Args[1], os.Args[2], os.Args[3]
	switch mode {
	case "correct", "no-fsync", "no-dirsync", "rename-first":
	default:
		fmt.Fprintln(os.Stderr, "gopublish: unknown mode", mode)
		os.Exit(2)
	}
	dir := filepath.Dir(file)
	tmp := file + ".tmp"
	f, err := os.OpenFile(tmp, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o600)
	must(err)
	if mode == "rename-first" {
		must(os.Rename(tmp, file))
	}
	_, err = f.Write([]byte(text))
	must(err)
	if mode != "no-fsync" {
		must(f.Sync())
	}
	must(f.Close())
	if mode != "rename-first" {
		must(os.Rename(tmp, file))
	}
	if mode != "no-dirsync" {
		syncDir(dir)
	}
	fmt.Println("published")
}
