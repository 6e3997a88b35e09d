// The precomputed answers the anchor servers replay (bench/minimal-server.ts, bench/miekg/): every
// reply of the reference server to the query mix, each as a 2-octet big-endian length and the reply.

/** The replies in an answers file, as views into `file`. */
export function* readAnswers(file: Buffer): Generator<Buffer> {
  for (let p = 0; p + 2 <= file.length;) {
    const len = file.readUInt16BE(p);
    yield file.subarray(p + 2, p + 2 + len);
    p += 2 + len;
  }
}

/** The file holding these replies. */
export function writeAnswers(replies: Buffer[]): Buffer {
  const parts: Buffer[] = [];
  for (const r of replies) {
    const len = Buffer.allocUnsafe(2);
    len.writeUInt16BE(r.length);
    parts.push(len, r);
  }
  return Buffer.concat(parts);
}
