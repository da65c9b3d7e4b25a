import assert from 'node:assert/strict';
import { createHash, createPublicKey, generateKeyPairSync, sign, verify } from 'node:crypto';
import { describe, it } from 'node:test';
import { formatVerifierKey, noteKeyId, parseSignedCheckpoint, parseVerifierKey } from './checkpoint.js';
import { cosignatureMessage, cosignerKeyId, formatCosignatureLine, formatCosignerVkey, isByCosigner, parseCosignerVkey, readTimestampedSignature } from './cosignature.js';
import { fromBase64, toHex } from './encoding.js';
import { parseWitnessPolicy, PolicyError, quorumMet, quorumTime } from './witness-policy.js';

const sha256 = (data: Uint8Array): Uint8Array => createHash('sha256').update(data).digest();

// The example checkpoint of C2SP tlog-cosignature v1.0.1, with its log signature and one cosignature.
const SPEC_EXAMPLE = `example.com/behind-the-sofa
20852163
CsUYapGGPo4dkMgIAUqom/Xajj7h2fB2MPA3j2jxq2I=

— example.com/behind-the-sofa Az3grlgtzPICa5OS8npVmf1Myq/5IZniMp+ZJurmRDeOoRDe4URYN7u5/Zhcyv2q1gGzGku9nTo+zyWE+xeMcTOAYQ8=
— witness.example.com/w1 jWbPPwAAAABkGFDLEZMHwSRaJNiIDoe9DYn/zXcrtPHeolMI5OWXEhZCB9dlrDJsX3b2oyin1nPZqhf5nNo0xUe+mbIUBkBIfZ+qnA==
`;

describe('C2SP tlog-cosignature v1 (Ed25519)', () => {
  it('reads the spec example’s cosignature: its timestamp is the one of the spec’s signed message', () => {
    const note = parseSignedCheckpoint(SPEC_EXAMPLE);
    assert.ok(typeof note !== 'string', String(note));
    const cosignature = note.signatures[1]!;
    assert.equal(cosignature.name, 'witness.example.com/w1');
    const read = readTimestampedSignature(cosignature.signature);
    assert.equal(read?.timestamp, 1679315147);
    assert.equal(read?.signature.length, 64);
    // The spec's example of the signed message for this checkpoint at that time.
    assert.equal(
      new TextDecoder().decode(cosignatureMessage(note.body, 1679315147)),
      'cosignature/v1\ntime 1679315147\nexample.com/behind-the-sofa\n20852163\nCsUYapGGPo4dkMgIAUqom/Xajj7h2fB2MPA3j2jxq2I=\n',
    );
    // The log's signature line is 68 bytes, not a timestamped signature.
    assert.equal(readTimestampedSignature(note.signatures[0]!.signature), undefined);
  });

  it('reads the timestamp of transparency-dev/formats’ test cosignature (1727964367)', () => {
    const raw = fromBase64('ZGhGuQAAAABm/qTPeyKXD+R2rzyQsxPiP8mXum7qq/iF0u4vanlqJyocWODBt97w9uL+8qT7S5gxEHWWOworDcFiEBYJXORmnFBOBA==')!;
    assert.equal(readTimestampedSignature(raw.slice(4))?.timestamp, 1727964367);
  });

  it('accepts the 0x04 vkey of transparency-dev/formats’ tests and a 0x01 key as the same key cosigning', async () => {
    const native = await parseCosignerVkey(sha256, 'remora.n621.de+da77ade7+BOvN63jn/bLvkieywe8R6UYAtVtNbZpXh34x7onlmtw2');
    assert.ok(typeof native !== 'string', String(native));
    assert.equal(toHex(native.keyId), 'da77ade7');
    assert.equal(formatCosignerVkey(native), 'remora.n621.de+da77ade7+BOvN63jn/bLvkieywe8R6UYAtVtNbZpXh34x7onlmtw2');
    // A plain Ed25519 vkey (its base64 contains a '+'): the cosigner's key id is recomputed with 0x04.
    const converted = await parseCosignerVkey(sha256, 'TEST+7997405c+AQcC+FTVKf0jlTdHDY3rbevmnKxxPjigCXlVtGe6RIr6');
    assert.ok(typeof converted !== 'string', String(converted));
    assert.equal(toHex(converted.keyId), toHex(await cosignerKeyId(sha256, 'TEST', converted.publicKey)));
    assert.notEqual(toHex(converted.keyId), '7997405c');
    for (const bad of ['remora.n621.de+00000000+BOvN63jn/bLvkieywe8R6UYAtVtNbZpXh34x7onlmtw2', 'rekor.sigstore.dev+12345678+AwEB', 'bananas+12344556', 'a b+da77ade7+BOvN63jn/bLvkieywe8R6UYAtVtNbZpXh34x7onlmtw2']) {
      assert.equal(typeof (await parseCosignerVkey(sha256, bad)), 'string', bad);
    }
  });

  it('signs and verifies a cosignature line over the cosignature/v1 message, and a changed body or time fails', async () => {
    const { privateKey, publicKey } = generateKeyPairSync('ed25519');
    const raw = new Uint8Array(publicKey.export({ format: 'der', type: 'spki' }).subarray(-32));
    const key = { name: 'witness.example/w1', keyId: await cosignerKeyId(sha256, 'witness.example/w1', raw), publicKey: raw };
    const body = 'example.com/log\n3\nCsUYapGGPo4dkMgIAUqom/Xajj7h2fB2MPA3j2jxq2I=\n';
    const line = formatCosignatureLine(key, 1700000000, sign(null, cosignatureMessage(body, 1700000000), privateKey));
    const note = parseSignedCheckpoint(`${body}\n${line}`);
    assert.ok(typeof note !== 'string');
    const signature = note.signatures[0]!;
    assert.ok(isByCosigner(signature, key));
    const read = readTimestampedSignature(signature.signature)!;
    assert.equal(read.timestamp, 1700000000);
    assert.ok(verify(null, cosignatureMessage(body, read.timestamp), publicKey, read.signature));
    assert.ok(!verify(null, cosignatureMessage(body.replace('3', '4'), read.timestamp), publicKey, read.signature));
    assert.ok(!verify(null, cosignatureMessage(body, read.timestamp + 1), publicKey, read.signature));
  });
});

describe('C2SP signed-note, against golang.org/x/mod/sumdb/note', () => {
  it('reads Go’s example vkey and verifies its example note: the key id is the one Go computes', async () => {
    const vkey = 'PeterNeumann+c74f20a3+ARpc2QcUPDhMQegwxbzhKqiBfsVkmqq/LDE4izWy10TW';
    const key = parseVerifierKey(vkey);
    assert.ok(key);
    assert.equal(toHex(await noteKeyId(async (d) => sha256(d), key.name, key.publicKey)), 'c74f20a3');
    assert.equal(formatVerifierKey(key.name, key.keyId, key.publicKey), vkey);
    const text = "If you think cryptography is the answer to your problem,\nthen you don't know what your problem is.\n";
    const note = `${text}\n— PeterNeumann x08go/ZJkuBS9UG/SffcvIAQxVBtiFupLLr8pAcElZInNIuGUgYN1FFYC2pZSNXgKvqfqdngotpRZb6KE6RyyBwJnAM=\n`;
    const split = note.lastIndexOf('\n\n');
    assert.equal(note.slice(0, split + 1), text);
    const line = fromBase64('x08go/ZJkuBS9UG/SffcvIAQxVBtiFupLLr8pAcElZInNIuGUgYN1FFYC2pZSNXgKvqfqdngotpRZb6KE6RyyBwJnAM=')!;
    assert.equal(toHex(line.slice(0, 4)), 'c74f20a3');
    const publicKey = createPublicKey({ key: { kty: 'OKP', crv: 'Ed25519', x: Buffer.from(key.publicKey).toString('base64url') }, format: 'jwk' });
    assert.ok(verify(null, Buffer.from(text), publicKey, line.slice(4)));
    assert.ok(!verify(null, Buffer.from(text.replace('cryptography', 'cryptographY')), publicKey, line.slice(4)));
  });
});

describe('C2SP tlog-policy', () => {
  const vkey = async (name: string) => {
    const { publicKey } = generateKeyPairSync('ed25519');
    const raw = new Uint8Array(publicKey.export({ format: 'der', type: 'spki' }).subarray(-32));
    return formatCosignerVkey({ name, keyId: await cosignerKeyId(sha256, name, raw), publicKey: raw });
  };

  it('evaluates the spec’s two-level example: 2 of the X witnesses and any Y witness', async () => {
    const text = `# the example policy of the spec
witness X1 ${await vkey('x1.example')}
witness X2 ${await vkey('x2.example')}
witness X3 ${await vkey('x3.example')}
group X-witnesses 2 X1 X2 X3

witness Y1 ${await vkey('y1.example')}
  witness Y2 ${await vkey('y2.example')} https://y2.example/
witness\tY3 ${await vkey('y3.example')}
group Y-witnesses any Y1 Y2 Y3

group X-and-Y all X-witnesses Y-witnesses
quorum X-and-Y
`;
    const policy = await parseWitnessPolicy(sha256, text);
    assert.equal(policy.witnesses.length, 6);
    assert.equal(policy.witnesses[4]!.url, 'https://y2.example/');
    assert.equal(quorumMet(policy, new Set(['X1', 'X2', 'Y3'])), true);
    assert.equal(quorumMet(policy, new Set(['X1', 'Y1', 'Y2', 'Y3'])), false);
    assert.equal(quorumMet(policy, new Set(['X1', 'X2', 'X3'])), false);
    // The bound: the earliest time at which the witnesses that had cosigned by then made a quorum.
    assert.equal(quorumTime(policy, new Map([['X1', 10], ['Y1', 20], ['X2', 30], ['X3', 5]])), 20);
    assert.equal(quorumTime(policy, new Map([['X1', 10], ['X2', 30]])), undefined);
  });

  it('accepts quorum none, and refuses what the spec forbids, naming the line', async () => {
    assert.equal(quorumMet(await parseWitnessPolicy(sha256, 'quorum none\n'), new Set()), true);
    const w = await vkey('w.example');
    for (const [text, words] of [
      ['', /no quorum line/],
      [`witness A ${w}\nquorum B\n`, /line 2: "B" is not/],
      [`witness A ${w}\nwitness B ${w}\nquorum A\n`, /line 2: the same witness key/],
      [`witness A ${w}\nwitness A ${await vkey('v.example')}\nquorum A\n`, /line 2: the name "A" is already/],
      [`witness A ${w}\ngroup G 2 A\nquorum G\n`, /line 2: the threshold/],
      [`witness A ${w}\ngroup G any A A\nquorum G\n`, /listed twice/],
      [`witness A ${w}\ngroup G any none\nquorum G\n`, /"none" is not/],
      [`quorum none\nquorum none\n`, /second quorum/],
      [`witness A ${w}\r\nquorum A\n`, /control character/],
      [`witness A nonsense\nquorum A\n`, /line 1: the witness's vkey/],
      [`frobnicate\nquorum none\n`, /unknown keyword/],
    ] as const) {
      await assert.rejects(parseWitnessPolicy(sha256, text), (error: unknown) => error instanceof PolicyError && words.test(error.message), text);
    }
  });
});
