// A query to a primary or a transfer from it that failed: why, for the log, and the rcode when the
// primary answered one (an IXFR refused is asked again as AXFR).

export class PrimaryError extends Error {
  readonly rcode: number | undefined;
  constructor(message: string, rcode?: number) {
    super(message);
    this.name = "PrimaryError";
    this.rcode = rcode;
  }
}
