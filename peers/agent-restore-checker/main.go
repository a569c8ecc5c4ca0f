// agent-restore-checker: a foreign peer of the vxcert kit (a test subject, not a
// tool to use), written from phux ADR-0068 alone. It reads one workspace archive or
// one integration template and says whether a restore may trust it.
//
//	agent-restore-checker archive FILE
//	agent-restore-checker template FILE
//
// Exit 0: accepted; 3: refused; 2: it could not judge (usage, unreadable file). One
// line on stdout, in its own words: "accept" or "refuse CLASS at PATH: WHY", where
// PATH is a place in the input (a JSON path or a TOML key), never its content.
//
// PEER_VIOLATION=<name> plants one seed violation (violations.toml).
package main

import (
	"fmt"
	"os"
)

var violation = os.Getenv("PEER_VIOLATION")

func violated(name string) bool { return violation == name }

func main() {
	if len(os.Args) != 3 || (os.Args[1] != "archive" && os.Args[1] != "template") {
		fmt.Fprintln(os.Stderr, "usage: agent-restore-checker archive|template FILE")
		os.Exit(2)
	}
	kind, path := os.Args[1], os.Args[2]
	max := int64(archiveMaxBytes)
	if kind == "template" {
		max = templateMaxBytes
	}
	b, tooLong, err := readCapped(path, max)
	if err != nil {
		fmt.Fprintf(os.Stderr, "agent-restore-checker: cannot read %s: %v\n", path, err)
		os.Exit(2)
	}
	verdict := judge(kind, b, tooLong)
	if verdict == nil {
		fmt.Println("accept")
		return
	}
	fmt.Printf("refuse %s\n", verdict.Error())
	os.Exit(3)
}

// judge runs one checker; its refusals arrive as panics of *refusal.
func judge(kind string, b []byte, tooLong bool) (r *refusal) {
	defer func() {
		if p := recover(); p != nil {
			var ok bool
			if r, ok = p.(*refusal); !ok {
				panic(p)
			}
		}
	}()
	if tooLong {
		refuse("size", "$", "longer than this reader takes")
	}
	if kind == "archive" {
		checkArchive(b)
	} else {
		checkTemplate(b)
	}
	return nil
}
