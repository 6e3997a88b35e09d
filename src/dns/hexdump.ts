// A DNS message as the hex dump CoreDNS's debug plugin logs: lines "debug: OFFSET xx xx ..." of 16 octets,
// the offset in 6 hex digits, then a last line with the length. text2pcap reads it back
// (`text2pcap -i 17 -u 53,53`) once the "debug: " prefixes are cut, so Wireshark can decode the packet.

export function hexdump(data: Uint8Array): string {
  const lines: string[] = [];
  for (let at = 0; at < data.length; at += 16) {
    const octets = Array.from(data.subarray(at, at + 16), (b) => b.toString(16).padStart(2, "0"));
    lines.push(`debug: ${offset(at)} ${octets.join(" ")}`);
  }
  lines.push(`debug: ${offset(data.length)}`);
  return lines.join("\n");
}

const offset = (n: number) => n.toString(16).padStart(6, "0");
