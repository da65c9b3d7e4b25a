import { createHash } from 'node:crypto';
import { createReadStream, readFileSync } from 'node:fs';
import { createContext } from '../context.js';
import { rotateDeploymentStatementKey } from '../deployment/deployment-keys.js';
import { KeyFileError, readPublishedKeys } from '../proofs/keys.js';
import { evidenceMatching, verifyBundle } from '../proofs/verify.js';
import type { EvidenceDigest } from '../proofs/statement.js';
import { parseOptions, UsageError, type CliCommand } from './command.js';
import { quietLogger } from './org-commands.js';

function readJsonFile(file: string, what: string): unknown {
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch (error) {
    throw new UsageError(`cannot read the ${what} ${file}: ${(error as NodeJS.ErrnoException).code ?? (error as Error).message}`);
  }
  try {
    return JSON.parse(text);
  } catch {
    throw new UsageError(`the ${what} ${file} is not JSON`);
  }
}

/** A file's SHA-256 and size, read as a stream (an evidence file may be large). */
async function digestOfFile(file: string): Promise<{ sha256: string; size: number }> {
  const hash = createHash('sha256');
  let size = 0;
  try {
    for await (const piece of createReadStream(file)) {
      hash.update(piece as Buffer);
      size += (piece as Buffer).length;
    }
  } catch (error) {
    throw new UsageError(`cannot read the file ${file}: ${(error as NodeJS.ErrnoException).code ?? (error as Error).message}`);
  }
  return { sha256: hash.digest('hex'), size };
}

interface FileVerdict {
  file: string;
  sha256: string;
  size: number;
  /** The statement's entry the file is, or null when it is no evidence of the proof. */
  evidence: EvidenceDigest | null;
}

export const proofVerifyCommand: CliCommand = {
  path: ['proof', 'verify'],
  usage: 'proof verify <bundle.json|-> [--keys jwks.json] [--file photo.jpg]... [--json]',
  summary:
    'Verify a proof bundle offline; with --file, also that each file is evidence the proof names. Exit 0 when all holds, 1 with the reason. Without --keys, trusts the keys in WO_KEYS_DIR.',
  async run(args, config, io) {
    const { values, positionals } = parseOptions(args, { keys: { type: 'string' }, file: { type: 'string', multiple: true }, json: { type: 'boolean' } });
    if (positionals.length !== 1) throw new UsageError('give exactly one bundle file (or - for standard input)');
    const file = positionals[0]!;
    let bundle: unknown;
    if (file === '-') {
      try {
        bundle = JSON.parse(await io.readStdin());
      } catch {
        throw new UsageError('standard input is not JSON');
      }
    } else {
      bundle = readJsonFile(file, 'bundle');
    }
    // @NOTE: with --keys, that file is the only trust anchor; without it, the local key directory
    // (the service's own keys) is. Neither reads the database nor the network.
    let keys: unknown;
    try {
      keys = values.keys ? readJsonFile(values.keys, 'key set') : readPublishedKeys(config.keysDir);
    } catch (error) {
      if (error instanceof KeyFileError) throw new UsageError(`${error.message}; pass the published keys with --keys jwks.json`);
      throw error;
    }
    const digests = await Promise.all((values.file ?? []).map(async (path) => ({ file: path, ...(await digestOfFile(path)) })));
    const result = await verifyBundle(bundle, keys);
    const files: FileVerdict[] = result.valid ? digests.map((digest) => ({ ...digest, evidence: evidenceMatching(result.statement, digest.sha256, digest.size) ?? null })) : [];
    const allEvidence = files.every((verdict) => verdict.evidence !== null);
    if (values.json) {
      io.out(
        JSON.stringify(
          result.valid
            ? { valid: true, proofId: result.proofId, recordId: result.recordId, leafIndex: result.leafIndex, treeSize: result.treeSize, ...(digests.length > 0 ? { files } : {}) }
            : result,
        ),
      );
    } else if (result.valid) {
      io.out(`valid: proof ${result.proofId} of work order ${result.recordId}, leaf ${result.leafIndex} of ${result.treeSize} in ${result.logOrigin}`);
      for (const verdict of files) io.out(describeFile(verdict, result.statement.evidence.length));
    } else {
      io.out(`invalid: ${result.reason}: ${result.detail}`);
    }
    return result.valid && allEvidence ? 0 : 1;
  },
};

function describeFile({ file, sha256, size, evidence }: FileVerdict, named: number): string {
  if (!evidence) return `not evidence: ${file} (${size} bytes, sha256 ${sha256}) is none of the ${named} files the proof names`;
  return `evidence: ${file} is "${evidence.name}"${evidence.mediaType ? ` (${evidence.mediaType})` : ''}, ${size} bytes, sha256 ${sha256}`;
}

export const proofRotateKeyCommand: CliCommand = {
  path: ['proof', 'rotate-key'],
  usage: 'proof rotate-key',
  summary: 'Start a new statement signing key; older public keys stay published. Restart the service to sign with it.',
  async run(args, config, io) {
    parseOptions(args, {}, false);
    // Through the database: the new key joins the deployment's recorded keys, which every process started afterwards must hold.
    const context = await createContext(config, { logger: quietLogger(config) });
    try {
      const { kid, retired } = await rotateDeploymentStatementKey(context.database, config.keysDir, context.clock);
      io.out(`new statement key ${kid}${retired.length ? `; retired (still published): ${retired.join(', ')}` : ''}`);
    } finally {
      await context.close();
    }
    return 0;
  },
};

export const proofJwksCommand: CliCommand = {
  path: ['proof', 'jwks'],
  usage: 'proof jwks',
  summary: 'Print the public proof keys (the same JWKS as /.well-known/jwks.json).',
  async run(args, config, io) {
    parseOptions(args, {}, false);
    io.out(JSON.stringify(readPublishedKeys(config.keysDir), null, 2));
    return 0;
  },
};
