// The words of an `on` command. CoreDNS (coredns/caddy's onevent) joins the directive's arguments with
// spaces and splits the result again as a POSIX shell would split words (google/shlex), so a Corefile
// written for it quotes inside a quoted token: `on startup /bin/sh -c "'echo hi > /tmp/x'"`. Splitting
// the same way runs what CoreDNS runs. No expansion, redirection or globbing: only words.

export class SplitError extends Error {}

/** The words of `text`: blanks separate them; '...' keeps everything literally; "..." keeps everything,
 * a backslash taking the next character as it is; outside quotes a backslash does the same; a `#` that
 * starts a word starts a comment to the end of the line. */
export function splitWords(text: string): string[] {
  const words: string[] = [];
  let word: string | undefined;
  for (let i = 0; i < text.length; i++) {
    const c = text[i];
    if (c === " " || c === "\t" || c === "\n" || c === "\r") {
      if (word !== undefined) words.push(word);
      word = undefined;
    } else if (c === "#" && word === undefined) {
      const end = text.indexOf("\n", i);
      if (end < 0) break;
      i = end;
    } else if (c === "\\") {
      if (++i >= text.length) throw new SplitError("EOF found after escape character");
      word = (word ?? "") + text[i];
    } else if (c === "'" || c === '"') {
      let j = i + 1;
      let part = "";
      for (; j < text.length && text[j] !== c; j++) {
        if (c === '"' && text[j] === "\\") {
          if (++j >= text.length) break;
        }
        part += text[j];
      }
      if (j >= text.length) throw new SplitError("EOF found when expecting closing quote");
      word = (word ?? "") + part;
      i = j;
    } else {
      word = (word ?? "") + c;
    }
  }
  if (word !== undefined) words.push(word);
  return words;
}
