package selftest

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/warren-sandbox/warren/pkg/warren"
)

// dnsQueryPy builds a DNS query for probe.invalid in Python: warren's relay
// answers it (REFUSED) without asking any upstream, since the probe's
// sandboxes have no internet access.
const dnsQueryPy = `q = bytes.fromhex("123401000001000000000000") + b"\x05probe\x07invalid\x00\x00\x01\x00\x01"`

// probeSpoof sends, as root in one sandbox, raw UDP packets to the
// gateway's DNS relay with the neighbour's address as their source. Were
// they let through, the relay's answers would arrive at the neighbour,
// which listens for them. Controls: the neighbour's own query is answered,
// and the prober's raw packet with its own address is answered too (so a
// block is the anti-spoofing rule, not a broken raw path). gVisor refuses
// raw sockets outright, which holds as well.
func probeSpoof(ctx context.Context, e *Env) error {
	noNet := &warren.CreateOptions{NoInternet: true}
	a, err := e.C.Create(ctx, e.Template, noNet)
	if err != nil {
		return err
	}
	defer a.Kill(context.WithoutCancel(ctx))
	b, err := e.C.Create(ctx, e.Template, noNet)
	if err != nil {
		return err
	}
	defer b.Kill(context.WithoutCancel(ctx))
	bIP, gw, err := addr(ctx, b)
	if err != nil {
		return err
	}
	const port = 40123
	control := fmt.Sprintf(`python3 -c '
import socket
%s
s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
s.bind(("", %d)); s.settimeout(3)
s.sendto(q, ("%s", 53))
s.recvfrom(512); print("answered")'`, dnsQueryPy, port, gw)
	if out, err := must(ctx, b, "user", control); err != nil || out != "answered" {
		return fmt.Errorf("control: the neighbour's own DNS query: %q %v", out, err)
	}
	listen := fmt.Sprintf(`nohup python3 -c '
import socket
s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
s.bind(("", %d)); s.settimeout(6)
n = 0
try:
    while True:
        s.recvfrom(512); n += 1
except socket.timeout:
    pass
open("/tmp/spoof-got", "w").write(str(n))' >/dev/null 2>&1 & sleep 0.5`, port)
	if _, err := must(ctx, b, "root", listen); err != nil {
		return err
	}
	out, err := must(ctx, a, "root", spoofScript(bIP.String(), gw.String(), port))
	if err != nil {
		return err
	}
	switch {
	case out == "noraw":
		// gVisor without --net-raw: no raw sockets at all.
	case out == "own-unanswered":
		return fmt.Errorf("control: a raw packet with the sandbox's own address got no answer")
	case out != "sent":
		return fmt.Errorf("spoofing script: %q", out)
	}
	time.Sleep(6 * time.Second)
	got, err := must(ctx, b, "root", "cat /tmp/spoof-got")
	if err != nil {
		return err
	}
	if strings.TrimSpace(got) != "0" {
		return fmt.Errorf("%s answers to packets spoofed from the neighbour's address %s reached it", got, bIP)
	}
	return nil
}

// spoofScript sends the DNS query over a raw socket: first from the
// sandbox's own address (answered on an ordinary socket: the control), then
// five times from src. It prints noraw, own-unanswered or sent.
func spoofScript(src, gw string, port int) string {
	return fmt.Sprintf(`python3 -c '
import socket, struct
%s
try:
    r = socket.socket(socket.AF_INET, socket.SOCK_RAW, socket.IPPROTO_RAW)
except OSError:
    print("noraw"); raise SystemExit
def packet(src, sport):
    udp = struct.pack("!HHHH", sport, 53, 8 + len(q), 0) + q
    ip = struct.pack("!BBHHHBBH4s4s", 0x45, 0, 20 + len(udp), 1, 0, 64, 17, 0,
                     socket.inet_aton(src), socket.inet_aton("%s"))
    return ip + udp
own = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
own.bind(("", 40124)); own.settimeout(3)
me = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
me.connect(("%s", 53)); mine = me.getsockname()[0]
r.sendto(packet(mine, 40124), ("%s", 0))
try:
    own.recvfrom(512)
except socket.timeout:
    print("own-unanswered"); raise SystemExit
for _ in range(5):
    r.sendto(packet("%s", %d), ("%s", 0))
print("sent")'`, dnsQueryPy, gw, gw, gw, src, port, gw)
}
