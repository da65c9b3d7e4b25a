import type { CliCommand } from './command.js';
import { migrateCommand, serveCommand, workerCommand } from './service-commands.js';
import { orgsCreateCommand, orgsListCommand } from './org-commands.js';
import { keysCreateCommand, keysListCommand, keysRevokeCommand } from './key-commands.js';
import { adminCreateUserCommand } from './admin-commands.js';
import { listenCommand } from './listen-command.js';
import { proofJwksCommand, proofRotateKeyCommand, proofVerifyCommand } from './proof-commands.js';
import { witnessAddLogCommand, witnessServeCommand, witnessVkeyCommand } from './witness-commands.js';

/** Every CLI command, in the order `wo help` lists them. */
export const COMMANDS: CliCommand[] = [
  serveCommand,
  workerCommand,
  migrateCommand,
  orgsCreateCommand,
  orgsListCommand,
  keysCreateCommand,
  keysListCommand,
  keysRevokeCommand,
  adminCreateUserCommand,
  proofVerifyCommand,
  proofRotateKeyCommand,
  proofJwksCommand,
  witnessServeCommand,
  witnessAddLogCommand,
  witnessVkeyCommand,
  listenCommand,
];
