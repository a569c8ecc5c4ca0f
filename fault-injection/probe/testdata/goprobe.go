// goprobe: file-system calls through the Go runtime (raw system calls, invisible to
// libvxfault.so), one step per argument, one JSON line per step on stdout:
// {"pid":…,"step":…,"ret":…,"errno":…}. Built by fault-injection/probe/tests/seccomp.rs.
// Steps (paths relative to the working directory):
//   create:F  write:F:TEXT  fsync:F  close:F  fsyncdir:D  rename:A:B  unlink:F
//   mkdir:D  rmdir:D  link:A:B  symlink:T:L  flock:F  truncate:F:N  sleep:MS
//   writers:N:K  (N goroutines, each writing K lines of 8 bytes to wI, one write a line)
package main

import (
	"errors"
	"fmt"
	"os"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"
)

var files = map[string]*os.File{}

func errnoOf(err error) int {
	var e syscall.Errno
	if errors.As(err, &e) {
		return int(e)
	}
	if err != nil {
		return -1
	}
	return 0
}

func report(step string, ret int, err error) {
	fmt.Printf("{\"pid\":%d,\"step\":%q,\"ret\":%d,\"errno\":%d}\n", os.Getpid(), step, ret, errnoOf(err))
}

func ret(err error) int {
	if err != nil {
		return -1
	}
	return 0
}

func writers(n, k int) {
	var wg sync.WaitGroup
	var mu sync.Mutex
	for i := 0; i < n; i++ {
		wg.Add(1)
		go func(i int) {
			defer wg.Done()
			f, err := os.OpenFile(fmt.Sprintf("w%d", i), os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0644)
			if err != nil {
				mu.Lock()
				report(fmt.Sprintf("writers:open:%d", i), -1, err)
				mu.Unlock()
				return
			}
			defer f.Close()
			for j := 0; j < k; j++ {
				_, err := f.Write([]byte(fmt.Sprintf("%d:%05d\n", i, j)))
				if err != nil {
					mu.Lock()
					report(fmt.Sprintf("writers:write:%d:%d", i, j+1), -1, err)
					mu.Unlock()
				}
			}
		}(i)
	}
	wg.Wait()
	report("writers:done", 0, nil)
}

func main() {
	for _, step := range os.Args[1:] {
		p := strings.SplitN(step, ":", 3)
		arg := func(i int) string {
			if i < len(p) {
				return p[i]
			}
			return ""
		}
		switch p[0] {
		case "create":
			f, err := os.OpenFile(arg(1), os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0644)
			if err == nil {
				files[arg(1)] = f
				report(step, int(f.Fd()), nil)
			} else {
				report(step, -1, err)
			}
		case "write":
			n, err := files[arg(1)].Write([]byte(arg(2)))
			if err != nil {
				n = -1
			}
			report(step, n, err)
		case "fsync":
			err := files[arg(1)].Sync()
			report(step, ret(err), err)
		case "close":
			err := files[arg(1)].Close()
			report(step, ret(err), err)
		case "fsyncdir":
			d, err := os.Open(arg(1))
			if err == nil {
				err = d.Sync()
				d.Close()
			}
			report(step, ret(err), err)
		case "rename":
			err := os.Rename(arg(1), arg(2))
			report(step, ret(err), err)
		case "unlink":
			err := syscall.Unlink(arg(1))
			report(step, ret(err), err)
		case "mkdir":
			err := os.Mkdir(arg(1), 0755)
			report(step, ret(err), err)
		case "rmdir":
			err := syscall.Rmdir(arg(1))
			report(step, ret(err), err)
		case "link":
			err := os.Link(arg(1), arg(2))
			report(step, ret(err), err)
		case "symlink":
			err := os.Symlink(arg(1), arg(2))
			report(step, ret(err), err)
		case "flock":
			f, err := os.OpenFile(arg(1), os.O_RDWR|os.O_CREATE, 0644)
			if err == nil {
				files[arg(1)] = f
				err = syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB)
			}
			report(step, ret(err), err)
		case "truncate":
			n, _ := strconv.ParseInt(arg(2), 10, 64)
			err := files[arg(1)].Truncate(n)
			report(step, ret(err), err)
		case "sleep":
			ms, _ := strconv.Atoi(arg(1))
			time.Sleep(time.Duration(ms) * time.Millisecond)
			report(step, 0, nil)
		case "writers":
			n, _ := strconv.Atoi(arg(1))
			k, _ := strconv.Atoi(arg(2))
			writers(n, k)
		default:
			fmt.Fprintf(os.Stderr, "goprobe: unknown step %q\n", step)
			os.Exit(2)
		}
	}
}
