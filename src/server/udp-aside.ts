// One listener group's UDP sockets stepping aside and back (Instance.stepAside, for
// server/step-aside.ts): aside, they leave the port's SO_REUSEPORT group and close, answering what
// they already hold (the batched engine's close; dgram's would drop it, so dgram sockets stay);
// back, sockets are opened again on the same addresses and join the group.

import type { Pipeline } from "./pipeline.ts";
import type { UdpListener, UdpOptions } from "./udp.ts";

/** What of a listener group this needs. */
export interface AsideGroup {
  pipeline: Pipeline;
  port: number;
  udp: UdpListener[];
  /** The addresses whose listeners stepped aside, to open again. */
  aside?: string[];
}

/** Moves the group's UDP sockets aside or back; true when one moved. `open` makes a listener. */
export async function stepGroupAside(
  g: AsideGroup,
  aside: boolean,
  open: (pipeline: Pipeline, o: UdpOptions) => UdpListener,
): Promise<boolean> {
  if (aside) {
    if (g.aside !== undefined || g.udp.length === 0 || !g.udp.every((l) => l.leavesCleanly)) return false;
    const listeners = g.udp.splice(0);
    g.aside = listeners.map((l) => l.address);
    await Promise.all(listeners.map((l) => l.close()));
    return true;
  }
  if (g.aside === undefined) return false;
  // One that cannot bind stays aside, for the next call, and the error goes up.
  while (g.aside.length > 0) {
    const address = g.aside[0];
    const udp = open(g.pipeline, { address, port: g.port, reusePort: true });
    try {
      await udp.bind(address, g.port);
    } catch (err) {
      await udp.close();
      throw err;
    }
    g.udp.push(udp);
    g.aside.shift();
  }
  g.aside = undefined;
  return true;
}
