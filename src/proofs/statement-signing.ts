import { createHash, sign, type KeyObject } from 'node:crypto';
import { canonicalJson } from '../canonical-json.js';
import { STATEMENT_CONTENT_TYPE } from './statement.js';

/** The statement key a process signs with: RFC 7638 thumbprint and the Ed25519 private key. */
export interface StatementSigningKey {
  kid: string;
  privateKey: KeyObject;
}

export interface SignedStatement {
  /** Compact JWS whose payload is the statement's RFC 8785 bytes. */
  jws: string;
  /** Lowercase hex SHA-256 of those bytes. */
  digest: string;
}

/** Compact JWS (RFC 7515) over `payload`, Ed25519, `kid` = RFC 7638 thumbprint. */
export function compactStatementJws(payload: Uint8Array, key: StatementSigningKey): string {
  const header = { alg: 'EdDSA', kid: key.kid, typ: 'JOSE', cty: STATEMENT_CONTENT_TYPE };
  // Buffer's native base64url, not encoding.ts's browser-safe loop: a statement carries the whole
  // history, kilobytes, and the sequencer signs thousands per second.
  const signingInput = `${Buffer.from(JSON.stringify(header), 'utf8').toString('base64url')}.${Buffer.from(payload.buffer, payload.byteOffset, payload.byteLength).toString('base64url')}`;
  const signature = sign(null, Buffer.from(signingInput, 'ascii'), key.privateKey);
  return `${signingInput}.${signature.toString('base64url')}`;
}

/**
 * Signs a statement stored as JSON text at completion. The completion already checked that the
 * statement is I-JSON, so parsing it back gives the same value and RFC 8785 the same bytes.
 */
export function signStatementJson(statementJson: string, key: StatementSigningKey): SignedStatement {
  const payload = Buffer.from(canonicalJson(JSON.parse(statementJson)), 'utf8');
  return { jws: compactStatementJws(payload, key), digest: createHash('sha256').update(payload).digest('hex') };
}

export interface UnsignedStatement {
  id: string;
  statementJson: string;
}

export type SigningOutcome = ({ id: string } & SignedStatement) | { id: string; error: string };

/** Signs each statement; one that cannot be signed (its stored JSON is damaged) is reported, not thrown. */
export function signStatements(statements: UnsignedStatement[], key: StatementSigningKey): SigningOutcome[] {
  return statements.map(({ id, statementJson }) => {
    try {
      return { id, ...signStatementJson(statementJson, key) };
    } catch (error) {
      return { id, error: (error as Error).message };
    }
  });
}
