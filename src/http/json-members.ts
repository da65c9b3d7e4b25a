/**
 * The first member name that some object of `json` names twice, or undefined when every object's
 * names are unique. `json` must be valid JSON (this reads it after JSON.parse accepted it).
 *
 * Why: JSON.parse keeps the last of repeated names silently, while other parsers keep the first or
 * refuse. A body such as `{"assignee":"a","assignee":"b"}` would then mean one thing to a proxy, a
 * signing client or an idempotency fingerprint (taken over the raw text) and another to us. I-JSON
 * (RFC 7493, section 2.3) forbids repeated names; refusing them keeps every reader in agreement.
 *
 * One pass over the text: strings are skipped with indexOf, a string followed by `:` is a member
 * name, and each object open on the path keeps the names seen so far. Names are compared as JSON
 * reads them, so `"a"` and `"\u0061"` are the same name.
 */
export function repeatedMemberName(json: string): string | undefined {
  // One entry per open object or array: the names an object has seen, null for an array.
  const open: (Set<string> | null)[] = [];
  let lastString: string | undefined;
  for (let i = 0; i < json.length; i++) {
    switch (json.charCodeAt(i)) {
      case 0x22: {
        // A string: its end is the next quote not escaped by an odd run of backslashes.
        const start = i;
        let end = json.indexOf('"', start + 1);
        while (isEscaped(json, end)) end = json.indexOf('"', end + 1);
        const raw = json.slice(start + 1, end);
        lastString = raw.includes('\\') ? (JSON.parse(json.slice(start, end + 1)) as string) : raw;
        i = end;
        break;
      }
      case 0x3a: {
        // `:` appears outside strings only after a member name.
        const names = open[open.length - 1]!;
        if (names.has(lastString!)) return lastString;
        names.add(lastString!);
        break;
      }
      case 0x7b:
        open.push(new Set());
        break;
      case 0x5b:
        open.push(null);
        break;
      case 0x7d:
      case 0x5d:
        open.pop();
        break;
    }
  }
  return undefined;
}

/** Whether the quote at `at` is escaped: preceded by an odd number of backslashes. */
function isEscaped(text: string, at: number): boolean {
  let backslashes = 0;
  for (let i = at - 1; text.charCodeAt(i) === 0x5c; i--) backslashes++;
  return backslashes % 2 === 1;
}
