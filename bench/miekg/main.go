// An anchor: a minimal DNS server on miekg/dns, CoreDNS's own DNS library, with no plugins. It replays
// precomputed answers (bench/answers-file.ts) from a map, building each reply the way a CoreDNS handler
// does: the library unpacks the query, the handler makes a reply message and WriteMsg packs it. Its QPS
// bounds what CoreDNS can do per core. Built in GOPATH mode from Debian's golang-go and
// golang-github-miekg-dns-dev (no module downloads), by bench/miekg.ts.
//   miekg-server PORT ANSWERS-FILE      (PORT 0: any free port; the ready line names it)
package main

import (
	"encoding/binary"
	"fmt"
	"net"
	"os"
	"os/signal"
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
	if len(os.Args) != 3 {
		fmt.Fprintln(os.Stderr, "usage: miekg-server PORT ANSWERS-FILE")
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
	srv := &dns.Server{Addr: "127.0.0.1:" + os.Args[1], Net: "udp"}
	srv.NotifyStartedFunc = func() {
		fmt.Printf("miekg listening on %d, %d answers\n", srv.PacketConn.LocalAddr().(*net.UDPAddr).Port, len(answers))
	}
	go func() {
		sig := make(chan os.Signal, 1)
		signal.Notify(sig, syscall.SIGTERM, syscall.SIGINT)
		<-sig
		srv.Shutdown()
		os.Exit(0)
	}()
	if err := srv.ListenAndServe(); err != nil {
		fmt.Fprintln(os.Stderr, "miekg-server:", err)
		os.Exit(1)
	}
}
