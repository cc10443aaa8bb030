// Command testinit is the init process of the runtime conformance suite's
// sandboxes, standing in for envd. It is built static (CGO_ENABLED=0) and
// bind-mounted into an otherwise empty rootfs.
//
// It listens on TCP and answers one line per command line:
//
//	echo TEXT        -> TEXT
//	dial HOST:PORT   -> "ok <first line the server sent>", "connected <why
//	                    no line came>" or "err <why the connection failed>"
//	read PATH        -> the file's content, Go-quoted, or "err <reason>"
//	write PATH TEXT  -> "ok" or "err <reason>"
//	fill PATH BYTES  -> writes and fsyncs BYTES random bytes: "ok" or "err"
//	status           -> CapEff, NoNewPrivs and Seccomp from /proc/self/status
//	hostname         -> the UTS hostname
//	uid              -> the real uid
//	log TEXT         -> writes TEXT to stdout and "stderr TEXT" to stderr: "ok"
//	exit CODE        -> exits the whole process (no answer)
//
// With -exit it exits 0 at once: the "/bin/true" of the baseline benchmark.
package main

import (
	"bufio"
	"flag"
	"fmt"
	"net"
	"os"
	"strconv"
	"strings"
	"sync"
	"time"
)

func main() {
	addr := flag.String("listen", ":49983", "TCP address to serve on")
	exit := flag.Bool("exit", false, "exit immediately")
	flag.Parse()
	if *exit {
		return
	}
	ln, err := net.Listen("tcp", *addr)
	if err != nil {
		fmt.Fprintln(os.Stderr, "testinit:", err)
		os.Exit(1)
	}
	fmt.Println("testinit: listening on", ln.Addr())
	for {
		c, err := ln.Accept()
		if err != nil {
			fmt.Fprintln(os.Stderr, "testinit: accept:", err)
			os.Exit(1)
		}
		go serve(c)
	}
}

var (
	memMu  sync.Mutex
	memory string   // set/get: lost by a reboot, kept by a checkpoint
	held   [][]byte // alloc: memory held on purpose
)

func serve(c net.Conn) {
	defer c.Close()
	r := bufio.NewReader(c)
	for {
		line, err := r.ReadString('\n')
		if err != nil {
			return
		}
		fmt.Fprintln(c, answer(strings.TrimRight(line, "\r\n")))
	}
}

func answer(line string) string {
	cmd, arg, _ := strings.Cut(line, " ")
	switch cmd {
	case "echo":
		return arg
	case "dial":
		return dial(arg)
	case "read":
		data, err := os.ReadFile(arg)
		if err != nil {
			return "err " + err.Error()
		}
		return strconv.Quote(string(data))
	case "write":
		path, text, _ := strings.Cut(arg, " ")
		if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
			return "err " + err.Error()
		}
		return "ok"
	case "fill":
		return fill(arg)
	case "status":
		return status()
	case "hostname":
		h, err := os.Hostname()
		if err != nil {
			return "err " + err.Error()
		}
		return h
	case "uid":
		return strconv.Itoa(os.Getuid())
	case "log": // what the backend's Logs must return
		fmt.Println(arg)
		fmt.Fprintln(os.Stderr, "stderr "+arg)
		return "ok"
	case "set": // process memory, to tell a restore from a reboot
		memMu.Lock()
		defer memMu.Unlock()
		memory = arg
		return "ok"
	case "get":
		memMu.Lock()
		defer memMu.Unlock()
		return memory
	case "exit":
		code, _ := strconv.Atoi(arg)
		os.Exit(code)
	case "alloc": // hold arg MiB of touched memory (0 lets it go)
		mib, err := strconv.Atoi(arg)
		if err != nil {
			return "err " + err.Error()
		}
		memMu.Lock()
		defer memMu.Unlock()
		held = make([][]byte, mib)
		for i := range held {
			held[i] = make([]byte, 1<<20)
			for j := 0; j < len(held[i]); j += 4096 {
				held[i][j] = 1
			}
		}
		return "ok"
	}
	return "err unknown command " + strconv.Quote(cmd)
}

func dial(addr string) string {
	c, err := net.DialTimeout("tcp", addr, 1500*time.Millisecond)
	if err != nil {
		return "err " + err.Error()
	}
	defer c.Close()
	_ = c.SetDeadline(time.Now().Add(2 * time.Second))
	line, err := bufio.NewReader(c).ReadString('\n')
	if err != nil {
		return "connected " + err.Error() // connected, but no greeting
	}
	return "ok " + strings.TrimSpace(line)
}

func fill(arg string) string {
	path, size, _ := strings.Cut(arg, " ")
	n, err := strconv.Atoi(size)
	if err != nil {
		return "err " + err.Error()
	}
	f, err := os.Create(path)
	if err != nil {
		return "err " + err.Error()
	}
	defer f.Close()
	buf := make([]byte, 64<<10)
	for i := range buf {
		buf[i] = byte(i*7 + n)
	}
	for written := 0; written < n; written += len(buf) {
		if _, err := f.Write(buf[:min(len(buf), n-written)]); err != nil {
			return "err " + err.Error()
		}
	}
	if err := f.Sync(); err != nil {
		return "err " + err.Error()
	}
	return "ok"
}

func status() string {
	data, err := os.ReadFile("/proc/self/status")
	if err != nil {
		return "err " + err.Error()
	}
	var out []string
	for _, l := range strings.Split(string(data), "\n") {
		k, v, ok := strings.Cut(l, ":")
		if ok && (k == "CapEff" || k == "NoNewPrivs" || k == "Seccomp") {
			out = append(out, k+"="+strings.TrimSpace(v))
		}
	}
	return strings.Join(out, " ")
}
