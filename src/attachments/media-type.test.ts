import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { AppError } from '../errors.js';
import { PlainTextCheck, assertBytesMatch, declaredMediaType } from './media-type.js';

const refusedWith415 = (error: unknown) => error instanceof AppError && error.code === 'unsupported_media_type';

describe('attachment media types', () => {
  it('reads the declared type case-insensitively, without parameters, and refuses types off the allow-list', () => {
    assert.equal(declaredMediaType('IMAGE/JPEG'), 'image/jpeg');
    assert.equal(declaredMediaType('text/plain; charset="UTF-8"'), 'text/plain');
    assert.equal(declaredMediaType('application/pdf; name=x'), 'application/pdf');
    for (const header of [undefined, '', 'image/gif', 'application/octet-stream', 'text/html', 'text/plain; charset=utf-16', 'image/jpegx']) {
      assert.throws(() => declaredMediaType(header), refusedWith415, String(header));
    }
  });

  it('accepts bytes of the declared format, HEIC and HEIF as one family, and refuses others', async () => {
    const jpeg = Buffer.from('ffd8ffe000104a46494600010100000100010000', 'hex');
    const heif = Buffer.concat([Buffer.from([0, 0, 0, 0x18]), Buffer.from('ftypmif1'), Buffer.from([0, 0, 0, 0]), Buffer.from('mif1heic'), Buffer.alloc(64)]);
    await assertBytesMatch('image/jpeg', jpeg);
    await assertBytesMatch('image/heic', heif);
    await assertBytesMatch('text/plain', Buffer.from('just words'));
    await assert.rejects(assertBytesMatch('image/png', jpeg), refusedWith415);
    await assert.rejects(assertBytesMatch('text/plain', jpeg), refusedWith415);
    await assert.rejects(assertBytesMatch('application/pdf', Buffer.from('not a pdf')), refusedWith415);
  });

  it('checks text as UTF-8 across piece boundaries, refusing invalid sequences, cut-off ones and NUL', () => {
    const euro = Buffer.from('€', 'utf8');
    const split = new PlainTextCheck();
    split.write(euro.subarray(0, 1));
    split.write(euro.subarray(1));
    split.end();
    const cut = new PlainTextCheck();
    cut.write(euro.subarray(0, 2));
    assert.throws(() => cut.end(), refusedWith415);
    assert.throws(() => new PlainTextCheck().write(Buffer.from([0xc3, 0x28])), refusedWith415);
    assert.throws(() => new PlainTextCheck().write(Buffer.from('a\u0000')), refusedWith415);
  });
});
