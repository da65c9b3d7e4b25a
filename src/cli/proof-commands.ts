import { readFileSync } from 'node:fs';
import { createContext } from '../context.js';
import { rotateDeploymentStatementKey } from '../deployment/deployment-keys.js';
import { KeyFileError, readPublishedKeys } from '../proofs/keys.js';
import { verifyBundle } from '../proofs/verify.js';
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

export const proofVerifyCommand: CliCommand = {
  path: ['proof', 'verify'],
  usage: 'proof verify <bundle.json|-> [--keys jwks.json] [--json]',
  summary: 'Verify a proof bundle offline; exit 0 when valid, 1 with the reason. Without --keys, trusts the keys in WO_KEYS_DIR.',
  async run(args, config, io) {
    const { values, positionals } = parseOptions(args, { keys: { type: 'string' }, json: { type: 'boolean' } });
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
    const result = await verifyBundle(bundle, keys);
    if (values.json) {
      io.out(JSON.stringify(result.valid ? { valid: true, proofId: result.proofId, recordId: result.recordId, leafIndex: result.leafIndex, treeSize: result.treeSize } : result));
    } else if (result.valid) {
      io.out(`valid: proof ${result.proofId} of work order ${result.recordId}, leaf ${result.leafIndex} of ${result.treeSize} in ${result.logOrigin}`);
    } else {
      io.out(`invalid: ${result.reason}: ${result.detail}`);
    }
    return result.valid ? 0 : 1;
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
