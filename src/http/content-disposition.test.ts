import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { attachmentDisposition } from './content-disposition.js';

describe('Content-Disposition for downloads', () => {
  it('keeps a plain name as it is, in both forms', () => {
    assert.equal(attachmentDisposition('after.jpg'), `attachment; filename="after.jpg"; filename*=UTF-8''after.jpg`);
  });

  it('gives a quoted ASCII fallback nothing can break out of, and the exact name percent-encoded', () => {
    const header = attachmentDisposition('Zähler "neu"\\%;\r\n(1)*\'.pdf');
    assert.equal(header, `attachment; filename="Z_hler _neu___;__(1)*'.pdf"; filename*=UTF-8''Z%C3%A4hler%20%22neu%22%5C%25%3B%0D%0A%281%29%2A%27.pdf`);
    const encoded = /filename\*=UTF-8''(.*)$/.exec(header)![1]!;
    assert.match(encoded, /^[A-Za-z0-9!#$&+\-.^_`|~%]+$/, 'only RFC 8187 attr-chars and percent escapes');
    assert.equal(decodeURIComponent(encoded), 'Zähler "neu"\\%;\r\n(1)*\'.pdf');
  });
});
