import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { repeatedMemberName } from './json-members.js';

describe('repeated member names', () => {
  it('finds a name repeated in one object, at any depth', () => {
    assert.equal(repeatedMemberName('{"a":1,"a":2}'), 'a');
    assert.equal(repeatedMemberName('{"x":{"b":[1,{"c":1,"d":2,"c":3}]}}'), 'c');
    assert.equal(repeatedMemberName('[{"k":1},{"k":2,"k":3}]'), 'k');
    assert.equal(repeatedMemberName(' { "a" : 1 ,\n "a" : 1 } '), 'a');
  });

  it('compares names as JSON reads them, escapes included', () => {
    assert.equal(repeatedMemberName('{"a":1,"\\u0061":2}'), 'a');
    assert.equal(repeatedMemberName('{"q\\"":1,"q\\u0022":2}'), 'q"');
    assert.equal(repeatedMemberName('{"\\\\":1,"\\u005c":2}'), '\\');
  });

  it('accepts the same name in different objects, and names inside strings', () => {
    assert.equal(repeatedMemberName('{"a":{"a":{"a":1}},"b":[{"a":1},{"a":2}]}'), undefined);
    assert.equal(repeatedMemberName('{"a":"\\"a\\":1,","b":"{\\"b\\":[}"}'), undefined);
    assert.equal(repeatedMemberName('{"t":"ends with a backslash \\\\","u":"a:b"}'), undefined);
    assert.equal(repeatedMemberName('{"a\\\\":1,"a":2}'), undefined);
    assert.equal(repeatedMemberName('[1,"a",{"a":[]},{}]'), undefined);
    assert.equal(repeatedMemberName('"just a string: {}"'), undefined);
    assert.equal(repeatedMemberName('42'), undefined);
  });

  it('agrees with JSON.parse on which objects lost a member, for generated documents', () => {
    // Random documents with names drawn from a tiny alphabet, so repeats are common; a repeat is
    // exactly a document whose parsed form holds fewer members than its text names.
    let seed = 7;
    const random = (n: number) => ((seed = (seed * 1_103_515_245 + 12_345) % 2 ** 31), seed % n);
    const names = ['a', 'b', 'c', '\\u0061', 'a\\"', 'a\\\\'];
    const value = (depth: number): string => {
      const kind = random(depth > 3 ? 2 : 4);
      if (kind === 0) return String(random(100));
      if (kind === 1) return JSON.stringify(`s:{${random(9)}}"`);
      if (kind === 2) return `[${Array.from({ length: random(3) }, () => value(depth + 1)).join(',')}]`;
      return `{${Array.from({ length: random(4) }, () => `"${names[random(names.length)]}":${value(depth + 1)}`).join(',')}}`;
    };
    const membersNamed = (text: string) => text.match(/"(?:[^"\\]|\\.)*"\s*:/g)?.length ?? 0;
    const membersHeld = (parsed: unknown): number =>
      Array.isArray(parsed)
        ? parsed.reduce((sum: number, item) => sum + membersHeld(item), 0)
        : parsed !== null && typeof parsed === 'object'
          ? Object.values(parsed).reduce((sum: number, item) => sum + 1 + membersHeld(item), 0)
          : 0;
    for (let i = 0; i < 2_000; i++) {
      const text = value(0);
      const repeats = membersNamed(text) > membersHeld(JSON.parse(text));
      assert.equal(repeatedMemberName(text) !== undefined, repeats, text);
    }
  });
});
