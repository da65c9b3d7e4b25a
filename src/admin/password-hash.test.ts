import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { hashPassword, passwordProblems, verifyPassword } from './password-hash.js';

describe('scrypt password hashes', () => {
  it('verify the password they were made from and no other', async () => {
    const stored = await hashPassword('correct horse battery staple');
    assert.equal(await verifyPassword('correct horse battery staple', stored), true);
    assert.equal(await verifyPassword('correct horse battery stapl', stored), false);
    assert.equal(await verifyPassword('', stored), false);
  });

  it('carry their parameters and a per-hash salt, so equal passwords hash differently', async () => {
    const a = await hashPassword('same password here');
    const b = await hashPassword('same password here');
    assert.match(a, /^\$scrypt\$ln=15,r=8,p=1\$[A-Za-z0-9+/]{22}\$[A-Za-z0-9+/]{43}$/);
    assert.notEqual(a, b);
  });

  it('keep verifying after the default cost changes, because the cost travels with the hash', async () => {
    const cheaper = await hashPassword('an older password', { ln: 10, r: 8, p: 1 });
    assert.match(cheaper, /^\$scrypt\$ln=10,/);
    assert.equal(await verifyPassword('an older password', cheaper), true);
  });

  it('never match a malformed or tampered stored value', async () => {
    const stored = await hashPassword('tamper with me please');
    const parts = stored.split('$');
    const flipped = [...parts.slice(0, -1), parts.at(-1)!.replace(/^./, (c) => (c === 'A' ? 'B' : 'A'))].join('$');
    assert.equal(await verifyPassword('tamper with me please', flipped), false);
    for (const bad of ['', 'plain text', '$scrypt$ln=40,r=8,p=1$AAAA$AAAA', '$argon2id$v=19$m=1,t=1,p=1$AAAA$AAAA']) {
      assert.equal(await verifyPassword('tamper with me please', bad), false, bad);
    }
  });

  it('ask for at least 12 characters', () => {
    assert.deepEqual(passwordProblems('short'), ['must be at least 12 characters']);
    assert.deepEqual(passwordProblems('twelve chars'), []);
  });
});
