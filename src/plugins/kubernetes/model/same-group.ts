// Whether an EndpointSlice update changes anything the store keeps of it. A watch storm is mostly
// such updates (one endpoint's readiness, or nothing the store keeps), so the question is asked for
// every event: compared field by field it allocates nothing, where serialising both groups (sameJSON)
// made two strings and an object per endpoint. Same answer as sameJSON on these types: every field
// of Endpoint, SvcPort and EndpointGroup is compared, absent and undefined alike.

import type { Endpoint, EndpointGroup, SvcPort } from "./slim-types.ts";

export function sameGroup(a: EndpointGroup, b: EndpointGroup): boolean {
  if (a.service !== b.service || !samePorts(a, b) || a.endpoints.length !== b.endpoints.length) return false;
  for (let i = 0; i < a.endpoints.length; i++)
    if (!sameEndpoint(a.endpoints[i], b.endpoints[i])) return false;
  return true;
}

export function samePorts(a: EndpointGroup, b: EndpointGroup): boolean {
  if (a.ports.length !== b.ports.length) return false;
  for (let i = 0; i < a.ports.length; i++) if (!samePort(a.ports[i], b.ports[i])) return false;
  return true;
}

function samePort(a: SvcPort, b: SvcPort): boolean {
  return a.name === b.name && a.proto === b.proto && a.port === b.port;
}

export function sameEndpoint(a: Endpoint, b: Endpoint): boolean {
  if (a.ip !== b.ip || a.ready !== b.ready || a.name !== b.name || a.zone !== b.zone) return false;
  const x = a.forZones;
  const y = b.forZones;
  if (x === y) return true;
  if (x === undefined || y === undefined || x.length !== y.length) return false;
  for (let i = 0; i < x.length; i++) if (x[i] !== y[i]) return false;
  return true;
}
