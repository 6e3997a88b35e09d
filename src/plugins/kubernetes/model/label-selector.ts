// Label selectors (namespace_labels; labels for objects read from a file), in the syntax of
// kubectl -l and the API's labelSelector parameter.

/** True when an object's labels match. */
export type LabelSelector = (labels: Readonly<Record<string, string>> | undefined) => boolean;

export class SelectorError extends Error {
  readonly code = "KUBE_ERR_SELECTOR";
  constructor(message: string) {
    super(message);
    this.name = "SelectorError";
  }
}

type Requirement = (labels: Readonly<Record<string, string>>) => boolean;

const KEY = /^([a-z0-9]([-a-z0-9.]*[a-z0-9])?\/)?[a-z0-9A-Z]([-a-z0-9A-Z_.]*[a-z0-9A-Z])?$/;
const VALUE = /^([a-z0-9A-Z]([-a-z0-9A-Z_.]*[a-z0-9A-Z])?)?$/;

/** A qualified name's parts within the API's bounds: the name up to 63 characters, a DNS prefix up
 * to 253; the API answers 400 to a selector beyond them, at every LIST. */
function qualifiedLengths(key: string): boolean {
  const slash = key.indexOf("/");
  return slash < 0 ? key.length <= 63 : slash <= 253 && key.length - slash - 1 <= 63;
}

/** Parses `a=b,c!=d,e in (x, y),f notin (z),g,!h,i>3`; throws SelectorError. "" selects everything. */
export function parseLabelSelector(text: string): LabelSelector {
  const tokens = text.match(/\s*(==|!=|=|!|,|\(|\)|<|>|[^\s=!,()<>]+)/gy)?.map((t) => t.trim()) ?? [];
  if (tokens.join("").length !== text.replace(/\s+/g, "").length) {
    throw new SelectorError(`invalid label selector '${text}'`);
  }
  const reqs: Requirement[] = [];
  let i = 0;
  const next = () => tokens[i++];
  const key = (t: string | undefined) => {
    if (t === undefined || !KEY.test(t) || !qualifiedLengths(t))
      throw new SelectorError(`invalid label key '${t ?? ""}' in '${text}'`);
    return t;
  };
  const value = (t: string | undefined) => {
    if (t === undefined || t === "," || t === ")" || !VALUE.test(t) || t.length > 63)
      throw new SelectorError(`invalid label value '${t ?? ""}' in '${text}'`);
    return t;
  };
  while (i < tokens.length) {
    if (tokens[i] === "!") {
      i++;
      const k = key(next());
      reqs.push((l) => !Object.hasOwn(l, k));
    } else {
      const k = key(next());
      const op = tokens[i];
      if (op === undefined || op === ",") reqs.push((l) => Object.hasOwn(l, k));
      else if (op === "=" || op === "==" || op === "!=") {
        i++;
        // An empty value is allowed: `a=` selects labels a with the value "".
        const v = tokens[i] === undefined || tokens[i] === "," ? "" : value(next());
        reqs.push(op === "!=" ? (l) => l[k] !== v : (l) => Object.hasOwn(l, k) && l[k] === v);
      } else if (op === "in" || op === "notin") {
        i++;
        if (next() !== "(") throw new SelectorError(`expected '(' after '${op}' in '${text}'`);
        const set = new Set<string>();
        for (;;) {
          const t = tokens[i];
          if (t === ")") break;
          set.add(t === "," ? "" : value(next()));
          if (tokens[i] === ",") i++;
          else if (tokens[i] !== ")") throw new SelectorError(`expected ',' or ')' in '${text}'`);
        }
        i++;
        if (set.size === 0) throw new SelectorError(`'${op}' needs at least one value in '${text}'`);
        reqs.push(
          op === "in"
            ? (l) => Object.hasOwn(l, k) && set.has(l[k])
            : (l) => !Object.hasOwn(l, k) || !set.has(l[k]),
        );
      } else if (op === "<" || op === ">") {
        i++;
        const t = next();
        if (t === undefined || !/^-?\d+$/.test(t))
          throw new SelectorError(`'${op}' needs an integer in '${text}'`);
        const n = Number(t);
        reqs.push((l) => {
          if (!Object.hasOwn(l, k) || !/^-?\d+$/.test(l[k])) return false;
          return op === "<" ? Number(l[k]) < n : Number(l[k]) > n;
        });
      } else throw new SelectorError(`unexpected '${op}' in '${text}'`);
    }
    if (i < tokens.length) {
      if (tokens[i] !== ",") throw new SelectorError(`expected ',' before '${tokens[i]}' in '${text}'`);
      i++;
      if (i === tokens.length) throw new SelectorError(`trailing ',' in '${text}'`);
    }
  }
  return (labels) => {
    const l = labels ?? {};
    return reqs.every((r) => r(l));
  };
}
