import { createHash, randomBytes } from 'node:crypto';

/** Bytes whose magic numbers make each allowed media type, followed by `bodyBytes` of random data. */
export const sampleFiles = {
  jpeg: (bodyBytes = 2000) => Buffer.concat([Buffer.from('ffd8ffe000104a46494600010100000100010000', 'hex'), randomBytes(bodyBytes)]),
  // Signature, IHDR, then one IDAT chunk holding the random bytes (the recognizer walks the chunks).
  png: (bodyBytes = 2000) => {
    const idat = Buffer.alloc(8);
    idat.writeUInt32BE(bodyBytes);
    idat.write('IDAT', 4);
    return Buffer.concat([Buffer.from('89504e470d0a1a0a0000000d49484452000000010000000108060000001f15c489', 'hex'), idat, randomBytes(bodyBytes), Buffer.alloc(4)]);
  },
  webp: (bodyBytes = 2000) => Buffer.concat([Buffer.from('RIFF'), Buffer.from([0x24, 0, 0, 0]), Buffer.from('WEBPVP8 '), randomBytes(bodyBytes)]),
  heic: (bodyBytes = 2000) => Buffer.concat([Buffer.from([0, 0, 0, 0x18]), Buffer.from('ftypheic'), Buffer.from([0, 0, 0, 0]), Buffer.from('mif1heic'), randomBytes(bodyBytes)]),
  pdf: () => Buffer.from('%PDF-1.7\n1 0 obj\n<< /Type /Catalog >>\nendobj\ntrailer\n<< /Root 1 0 R >>\n%%EOF\n'),
  text: () => Buffer.from('Replaced the washer; the tap no longer drips. Ünïcödé is fine.\n'),
};

export function sha256Of(bytes: Uint8Array): string {
  return createHash('sha256').update(bytes).digest('hex');
}
