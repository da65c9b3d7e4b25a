import { createHash } from 'node:crypto';
import { createReadStream, readFileSync } from 'node:fs';
import { createContext } from '../context.js';
import { rotateDeploymentStatementKey } from '../deployment/deployment-keys.js';
import { KeyFileError, readPublishedKeys } from '../proofs/keys.js';
import { describeCompletion, describeFile, verdictOf, verdictWords, verifyBundle } from '../proofs/verify.js';
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

function readTextFile(file: string, what: string): string {
  try {
    return readFileSync(file, 'utf8');
  } catch (error) {
    throw new UsageError(`cannot read the ${what} ${file}: ${(error as NodeJS.ErrnoException).code ?? (error as Error).message}`);
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

export const proofVerifyCommand: CliCommand = {
  path: ['proof', 'verify'],
  usage: 'proof verify <bundle.json|-> [--keys jwks.json] [--policy policy.txt] [--tsa-roots roots.pem] [--file photo.jpg]... [--json]',
  summary:
    'Verify a proof bundle offline; with --policy (C2SP tlog-policy), also its witnesses\' quorum and the bound they give; with --tsa-roots (PEM), the RFC 3161 timestamp of its checkpoint (a token the bundle carries is checked either way); with --file, that each file is evidence the proof names. Exit 0 when all holds, 1 with the reason. Without --keys, trusts the keys in WO_KEYS_DIR.',
  async run(args, config, io) {
    const { values, positionals } = parseOptions(args, { keys: { type: 'string' }, policy: { type: 'string' }, 'tsa-roots': { type: 'string' }, file: { type: 'string', multiple: true }, json: { type: 'boolean' } });
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
    const digests = await Promise.all((values.file ?? []).map(async (path) => ({ name: path, ...(await digestOfFile(path)) })));
    const policy = values.policy ? readTextFile(values.policy, 'policy') : undefined;
    const tsaRoots = values['tsa-roots'] ? readTextFile(values['tsa-roots'], 'TSA roots') : undefined;
    const result = await verifyBundle(bundle, keys, { ...(policy === undefined ? {} : { policy }), ...(tsaRoots === undefined ? {} : { tsaRoots }) });
    // The same verdict, in the same words, as the SDK's verifyProof() and the /verify page.
    const verdict = verdictOf(result, digests);
    if (values.json) {
      const files = verdict.files.map(({ name, ...rest }) => ({ file: name, ...rest }));
      io.out(
        JSON.stringify(
          verdict.valid
            ? {
                valid: true,
                proofId: verdict.proofId,
                recordId: verdict.recordId,
                leafIndex: verdict.leafIndex,
                treeSize: verdict.treeSize,
                ...(verdict.witnessing ? { witnessing: verdict.witnessing } : {}),
                ...(verdict.timestamp ? { timestamp: verdict.timestamp } : {}),
                ...(digests.length > 0 ? { files } : {}),
              }
            : { valid: false, reason: verdict.reason, detail: verdict.detail, ...(files.length > 0 ? { files } : {}) },
        ),
      );
    } else {
      const { headline, detail } = verdictWords(verdict);
      io.out(`${headline}: ${detail}`);
      if (result.valid) {
        io.out(describeCompletion(result.statement));
        for (const file of verdict.files) io.out(describeFile(file, result.statement.evidence.length));
      }
    }
    return verdict.valid ? 0 : 1;
  },
};

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
