// An anchor: a minimal DNS server on miekg/dns, CoreDNS's own DNS library, with no plugins. It replays
// precomputed answers (bench/answers-file.ts) from a map, building each reply the way a CoreDNS handler
// does: the library unpacks the query, the handler makes a reply message and WriteMsg packs it. Its QPS
// bounds what CoreDNS can do per core. Built in GOPATH mode from Debian's golang-go and
// golang-github-miekg-dns-dev (no module downloads), by bench/miekg.ts.
// With SOCKETS > 1 it serves that many UDP sockets on one port with SO_REUSEPORT, each its own
// dns.Server, as CoreDNS's multisocket plugin does to use more than one core (run with GOMAXPROCS=N).
//   miekg-server PORT ANSWERS-FILE [SOCKETS]      (PORT 0: any free port; the ready line names it)
package main

import (
	"encoding/binary"
	"fmt"
	"net"
	"os"
	"os/signal"
	"strconv"
	"strings"
	"syscall"

	"github.com/miekg/dns"
)

type answer struct {
	rcode         int
	authoritative bool
	truncated     bool
	answer        []dns.RR
	ns            []dns.RR
	extra         []dns.RR
}

func key(name string, qtype uint16) string {
	return fmt.Sprintf("%s/%d", strings.ToLower(name), qtype)
}

func load(path string) (map[string]*answer, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	answers := make(map[string]*answer)
	for p := 0; p+2 <= len(data); {
		n := int(binary.BigEndian.Uint16(data[p:]))
		m := new(dns.Msg)
		if err := m.Unpack(data[p+2 : p+2+n]); err != nil {
			return nil, err
		}
		p += 2 + n
		if len(m.Question) != 1 {
			continue
		}
		q := m.Question[0]
		answers[key(q.Name, q.Qtype)] = &answer{m.Rcode, m.Authoritative, m.Truncated, m.Answer, m.Ns, m.Extra}
	}
	return answers, nil
}

func main() {
	sockets := 1
	if len(os.Args) == 4 {
		sockets, _ = strconv.Atoi(os.Args[3])
	}
	if (len(os.Args) != 3 && len(os.Args) != 4) || sockets < 1 {
		fmt.Fprintln(os.Stderr, "usage: miekg-server PORT ANSWERS-FILE [SOCKETS]")
		os.Exit(2)
	}
	answers, err := load(os.Args[2])
	if err != nil {
		fmt.Fprintln(os.Stderr, "miekg-server:", err)
		os.Exit(1)
	}
	dns.HandleFunc(".", func(w dns.ResponseWriter, r *dns.Msg) {
		m := new(dns.Msg)
		m.SetReply(r)
		if len(r.Question) != 1 {
			m.Rcode = dns.RcodeFormatError
			w.WriteMsg(m)
			return
		}
		a, ok := answers[key(r.Question[0].Name, r.Question[0].Qtype)]
		if !ok {
			m.Rcode = dns.RcodeRefused
			w.WriteMsg(m)
			return
		}
		m.Rcode = a.rcode
		m.Authoritative = a.authoritative
		m.Truncated = a.truncated
		m.Answer = a.answer
		m.Ns = a.ns
		m.Extra = a.extra
		w.WriteMsg(m)
	})
	// The first server binds the port (0: any); the others join it on the port it got.
	port := os.Args[1]
	servers := make([]*dns.Server, sockets)
	for i := range servers {
		started := make(chan error, 1)
		srv := &dns.Server{Addr: "127.0.0.1:" + port, Net: "udp", ReusePort: sockets > 1}
		srv.NotifyStartedFunc = func() { started <- nil }
		servers[i] = srv
		go func() {
			if err := srv.ListenAndServe(); err != nil {
				started <- err
			}
		}()
		if err := <-started; err != nil {
			fmt.Fprintln(os.Stderr, "miekg-server:", err)
			os.Exit(1)
		}
		port = strconv.Itoa(srv.PacketConn.LocalAddr().(*net.UDPAddr).Port)
	}
	fmt.Printf("miekg listening on %s, %d answers, %d socket(s)\n", port, len(answers), sockets)
	sig := make(chan os.Signal, 1)
	signal.Notify(sig, syscall.SIGTERM, syscall.SIGINT)
	<-sig
	for _, srv := range servers {
		srv.Shutdown()
	}
	os.Exit(0)
}
