import * as asn1js from 'asn1js';
import { Certificate, ContentInfo, CryptoEngine, ExtKeyUsage, MessageImprint, PKIStatus, SignedData, SignedDataVerifyError, TimeStampReq, TimeStampResp, TSTInfo } from 'pkijs';
import { AlgorithmIdentifier } from 'pkijs';
import { bytesEqual, fromBase64, utf8 } from './encoding.js';

/**
 * RFC 3161 time-stamp tokens over checkpoint bodies, on pkijs and WebCrypto: the service asks a TSA
 * with these functions and checks its reply, and the verifier (bundled for the browser, like
 * verify.ts) checks the token a bundle carries. What is timestamped is the checkpoint body exactly
 * as the log signs it (signed-note text: origin, size, root hash, each line ending in a newline).
 */

export const TIMESTAMP_QUERY_MEDIA_TYPE = 'application/timestamp-query';
export const TIMESTAMP_REPLY_MEDIA_TYPE = 'application/timestamp-reply';

const SHA256_OID = '2.16.840.1.101.3.4.2.1';
const SIGNED_DATA_OID = '1.2.840.113549.1.7.2';
const TST_INFO_OID = '1.2.840.113549.1.9.16.1.4';
const EXT_KEY_USAGE_OID = '2.5.29.37';
const TIME_STAMPING_PURPOSE_OID = '1.3.6.1.5.5.7.3.8';
const COMMON_NAME_OID = '2.5.4.3';

/** What a token does not satisfy: the RFC 3161 checks a client and a verifier make. */
export type TimestampProblem = 'malformed' | 'imprint' | 'nonce' | 'eku' | 'untrusted_root' | 'signature';

export type TimestampVerdict =
  | {
      valid: true;
      /** The TSA's genTime (ISO 8601): the checkpoint body existed no later than this. */
      at: string;
      /** The signer certificate's common name (else its whole subject). */
      tsa: string;
      /** Whether the signer's certificate chains to one of the given roots (false: none were given). */
      rootChecked: boolean;
    }
  | { valid: false; problem: TimestampProblem; detail: string };

export interface TimestampCheck {
  /** Trusted roots: the signer's certificate must chain to one. Without them the chain is not checked. */
  roots?: readonly Certificate[];
  /** The nonce the request carried (at request time; a stored token is checked without it). */
  nonce?: Uint8Array;
  webCrypto?: Crypto;
}

const view = (bytes: Uint8Array) => bytes as Uint8Array<ArrayBuffer>;
// A copy: a Node Buffer's slice() shares its pool, whose .buffer holds other bytes too.
const buffer = (bytes: Uint8Array): ArrayBuffer => new Uint8Array(bytes).buffer;

function engineOf(webCrypto: Crypto): CryptoEngine {
  return new CryptoEngine({ name: 'webcrypto', crypto: webCrypto });
}

async function sha256(webCrypto: Crypto, bytes: Uint8Array): Promise<Uint8Array> {
  return new Uint8Array(await webCrypto.subtle.digest('SHA-256', view(bytes)));
}

/** An integer's magnitude bytes without leading zeros (DER may add one to keep it positive). */
function integerBytes(value: asn1js.Integer): Uint8Array {
  const bytes = new Uint8Array(value.valueBlock.valueHexView);
  let start = 0;
  while (start < bytes.length - 1 && bytes[start] === 0) start++;
  return bytes.slice(start);
}

/** A TimeStampReq (DER): SHA-256 imprint of the body, the nonce, and certReq so the reply names its signer. */
export async function timestampRequest(body: string, nonce: Uint8Array, webCrypto: Crypto = globalThis.crypto): Promise<Uint8Array> {
  const request = new TimeStampReq({
    version: 1,
    messageImprint: new MessageImprint({
      hashAlgorithm: new AlgorithmIdentifier({ algorithmId: SHA256_OID }),
      hashedMessage: new asn1js.OctetString({ valueHex: buffer(await sha256(webCrypto, utf8(body))) }),
    }),
    nonce: new asn1js.Integer({ valueHex: buffer(nonce) }),
    certReq: true,
  });
  return new Uint8Array(request.toSchema().toBER(false));
}

/** A random nonce of 8 bytes, positive as a DER integer. */
export function newNonce(webCrypto: Crypto = globalThis.crypto): Uint8Array {
  const nonce = webCrypto.getRandomValues(new Uint8Array(8));
  nonce[0] = (nonce[0]! & 0x7f) | 0x01;
  return nonce;
}

/** The TimeStampToken (DER) of a TimeStampResp, or why there is none. */
export function tokenOfReply(reply: Uint8Array): Uint8Array | string {
  let response: TimeStampResp;
  try {
    response = TimeStampResp.fromBER(buffer(reply));
  } catch {
    return 'the reply is not a DER TimeStampResp';
  }
  const status = response.status.status;
  if (status !== PKIStatus.granted && status !== PKIStatus.grantedWithMods) {
    const text = response.status.statusStrings?.map((s) => s.valueBlock.value).join('; ');
    return `the TSA refused the request (PKIStatus ${status}${text ? `: ${text}` : ''})`;
  }
  if (!response.timeStampToken) return 'the reply grants the request but carries no token';
  return new Uint8Array(response.timeStampToken.toSchema().toBER(false));
}

/** The certificates of a PEM text (`-----BEGIN CERTIFICATE-----` blocks), or why it is not one. */
export function parseCertificates(pem: string): Certificate[] | string {
  if (typeof pem !== 'string') return 'the roots are not text';
  const blocks = [...pem.matchAll(/-----BEGIN CERTIFICATE-----([\s\S]*?)-----END CERTIFICATE-----/g)];
  if (blocks.length === 0) return 'no PEM certificate (-----BEGIN CERTIFICATE-----) in it';
  const certificates: Certificate[] = [];
  for (const [i, block] of blocks.entries()) {
    const der = fromBase64(block[1]!.replace(/\s+/g, ''));
    try {
      if (!der) throw new Error('not base64');
      certificates.push(Certificate.fromBER(buffer(der)));
    } catch {
      return `certificate ${i + 1} is not a DER X.509 certificate`;
    }
  }
  return certificates;
}

function commonName(certificate: Certificate): string {
  const names = certificate.subject.typesAndValues;
  const cn = names.find((entry) => entry.type === COMMON_NAME_OID);
  if (cn) return String(cn.value.valueBlock.value);
  return names.map((entry) => `${entry.type}=${String(entry.value.valueBlock.value)}`).join(', ') || 'an unnamed TSA';
}

/** RFC 3161 §2.3: the signer's certificate has exactly one extended key usage, id-kp-timeStamping, marked critical. */
function timeStampingOnly(certificate: Certificate): string | undefined {
  const extension = certificate.extensions?.find((e) => e.extnID === EXT_KEY_USAGE_OID);
  if (!extension) return 'it has no extended key usage';
  if (!extension.critical) return 'its extended key usage is not critical';
  const purposes = extension.parsedValue instanceof ExtKeyUsage ? extension.parsedValue.keyPurposes : [];
  if (purposes.length !== 1 || purposes[0] !== TIME_STAMPING_PURPOSE_OID) return `its extended key usage is ${purposes.join(', ') || 'unreadable'}, not id-kp-timeStamping alone`;
  return undefined;
}

function refused(problem: TimestampProblem, detail: string): TimestampVerdict {
  return { valid: false, problem, detail };
}

/**
 * Verifies a TimeStampToken (DER) over a checkpoint body: a CMS SignedData of a TSTInfo whose imprint
 * is the body's SHA-256, signed by a certificate whose only extended key usage is id-kp-timeStamping
 * (critical), with the nonce when given, chaining to a given root when roots are given. Never throws.
 */
export async function verifyTimestampToken(token: Uint8Array, body: string, check: TimestampCheck = {}): Promise<TimestampVerdict> {
  const webCrypto = check.webCrypto ?? globalThis.crypto;
  let signed: SignedData;
  let info: TSTInfo;
  try {
    const content = ContentInfo.fromBER(buffer(token));
    if (content.contentType !== SIGNED_DATA_OID) return refused('malformed', 'the token is not a CMS SignedData');
    signed = new SignedData({ schema: content.content });
    if (signed.encapContentInfo.eContentType !== TST_INFO_OID || !signed.encapContentInfo.eContent) return refused('malformed', 'the token does not sign a TSTInfo');
    info = TSTInfo.fromBER(signed.encapContentInfo.eContent.getValue());
  } catch {
    return refused('malformed', 'the token is not DER of a TimeStampToken');
  }
  if (signed.signerInfos.length !== 1) return refused('malformed', `the token has ${signed.signerInfos.length} signers, not one`);

  const data = utf8(body);
  if (info.messageImprint.hashAlgorithm.algorithmId !== SHA256_OID) return refused('imprint', `its message imprint is hashed with ${info.messageImprint.hashAlgorithm.algorithmId}, not SHA-256`);
  if (!bytesEqual(new Uint8Array(info.messageImprint.hashedMessage.valueBlock.valueHexView), await sha256(webCrypto, data))) {
    return refused('imprint', 'its message imprint is not the SHA-256 of this checkpoint body: it timestamps something else');
  }
  if (check.nonce && (!info.nonce || !bytesEqual(integerBytes(info.nonce), integerBytes(new asn1js.Integer({ valueHex: buffer(check.nonce) }))))) {
    return refused('nonce', info.nonce ? 'its nonce is not the one of the request: it answers another request' : 'it carries no nonce, though the request did');
  }

  const roots = check.roots ?? [];
  let result;
  try {
    result = await signed.verify({ signer: 0, data: buffer(data), trustedCerts: [...roots], checkChain: roots.length > 0, extendedMode: true }, engineOf(webCrypto));
  } catch (error) {
    if (error instanceof SignedDataVerifyError && error.code === 5) return refused('untrusted_root', `its signer's certificate does not chain to a trusted root (${error.message})`);
    if (error instanceof SignedDataVerifyError && error.code === 3) return refused('malformed', 'the token does not carry its signer’s certificate');
    return refused('signature', `its signature cannot be checked: ${(error as Error).message}`);
  }
  const signer = result.signerCertificate;
  if (!signer) return refused('malformed', 'the token does not carry its signer’s certificate');
  if (!result.signatureVerified) return refused('signature', `the signature of ${commonName(signer)} does not verify: the token was altered`);
  const eku = timeStampingOnly(signer);
  if (eku) return refused('eku', `${commonName(signer)} may not sign timestamps: ${eku}`);
  return { valid: true, at: info.genTime.toISOString(), tsa: commonName(signer), rootChecked: roots.length > 0 };
}
