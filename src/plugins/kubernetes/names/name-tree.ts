// A tree of names below one object (a Service, a ServiceImport) described once, shape by shape: how a
// name's labels take the shape, and what every name of that shape holds, found in one walk that can
// stop at one name. The answers read one name from it; the store lists all of them with a signature
// of what each holds, to tell the answer cache which names a change altered. Both come from the same
// walk, so they cannot disagree (service-names.test.ts checks it on random clusters).

/** One SRV record a name holds, before it is a record: the target is the object's own name, or the
 * labels `host` above it (an endpoint's name), with the address behind it for the additional section. */
export interface SrvHolding {
  readonly port: number;
  readonly host?: string;
  readonly ip: string;
}

/** What a name holds. No field: it exists with no record (NODATA). */
export interface Holding {
  readonly addresses?: readonly string[];
  readonly srv?: readonly SrvHolding[];
  readonly cname?: string;
  /** Not among the names the tree lists (there are as many as there are labels): its answer must
   * not be cached. */
  readonly unlisted?: true;
}

export interface Shape<S, N extends string> {
  readonly name: N;
  /** The shape has more names than the tree lists (one per label): not only do its unlisted names
   * answer uncached, so does every name of the shape that does not exist, since a change the tree
   * cannot list may make it exist. */
  readonly open?: true;
  /** Whether `below`, the labels left of the object's own name (innermost last), have this shape. */
  is(below: readonly string[]): boolean;
  /** The names of this shape the subject has, with what each holds, keyed by their `below` joined
   * with dots; with `only`, just that one (when it exists), which may be unlisted. */
  each(s: S, only?: readonly string[]): Map<string, Holding>;
}

export class NameTree<S, N extends string> {
  readonly #shapes: readonly Shape<S, N>[];
  readonly #exists: (s: S, shape: N) => boolean;

  /** `shapes` are tried in order; `exists` says whether the subject has names of a shape at all. */
  constructor(shapes: readonly Shape<S, N>[], exists: (s: S, shape: N) => boolean) {
    this.#shapes = shapes;
    this.#exists = exists;
  }

  /** The shape of the name `below` the object, or undefined when no name has it. */
  shapeOf(below: readonly string[]): N | undefined {
    return this.#shapeOf(below)?.name;
  }

  /** Whether the shape of the name `below` is open (see Shape.open). */
  isOpen(below: readonly string[]): boolean {
    return this.#shapeOf(below)?.open === true;
  }

  /** What the name `below` the object holds; undefined when it does not exist. */
  holding(s: S, below: readonly string[]): Holding | undefined {
    const shape = this.#shapeOf(below);
    if (shape === undefined || !this.#exists(s, shape.name)) return undefined;
    return shape.each(s, below).get(below.join("."));
  }

  // A loop, not find() with an arrow: every query of the cluster zone asks, and the arrow's context
  // (it holds `below`) is an allocation V8 does not always remove.
  #shapeOf(below: readonly string[]): Shape<S, N> | undefined {
    const shapes = this.#shapes;
    for (let i = 0; i < shapes.length; i++) if (shapes[i].is(below)) return shapes[i];
    return undefined;
  }

  /** Every name the object has, with what it holds: its owner name relative to the zone, the
   * `below` labels joined with dots in front of `base`, the object's own name. */
  list(s: S, base: string): Map<string, Holding> {
    const out = new Map<string, Holding>();
    for (const shape of this.#shapes) {
      if (!this.#exists(s, shape.name)) continue;
      for (const [below, h] of shape.each(s)) out.set(below === "" ? base : `${below}.${base}`, h);
    }
    return out;
  }
}

export const EMPTY: Holding = {};

/** A map of the one name `key`. */
export function one(key: string, h: Holding): Map<string, Holding> {
  return new Map([[key, h]]);
}

/** Adds `ip` to the list under `key`. */
export function addTo(m: Map<string, string[]>, key: string, ip: string): void {
  const list = m.get(key);
  if (list === undefined) m.set(key, [ip]);
  else list.push(ip);
}

/** The names whose answers differ between two lists of one object: those one has and the other does
 * not, and those whose holdings `same` (sameHolding by default) says differ. */
export function changedHoldings(
  before: ReadonlyMap<string, Holding>,
  after: ReadonlyMap<string, Holding>,
  same: (a: Holding, b: Holding) => boolean = sameHolding,
): string[] {
  const out: string[] = [];
  for (const [name, h] of before) {
    const a = after.get(name);
    if (a === undefined || !same(h, a)) out.push(name);
  }
  for (const name of after.keys()) if (!before.has(name)) out.push(name);
  return out;
}

/** Whether two names hold the same records, in the same order (what a change of answer is). */
export function sameHolding(a: Holding, b: Holding): boolean {
  if (a === b) return true;
  if (a.cname !== b.cname || a.unlisted !== b.unlisted) return false;
  if (!sameList(a.addresses, b.addresses, (x, y) => x === y)) return false;
  return sameList(a.srv, b.srv, (x, y) => x.port === y.port && x.host === y.host && x.ip === y.ip);
}

function sameList<T>(
  a: readonly T[] | undefined,
  b: readonly T[] | undefined,
  same: (x: T, y: T) => boolean,
) {
  if (a === undefined || b === undefined) return a === b;
  if (a.length !== b.length) return false;
  for (let i = 0; i < a.length; i++) if (!same(a[i], b[i])) return false;
  return true;
}
