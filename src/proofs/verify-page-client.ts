/**
 * Browser side of /verify: reads the pasted or dropped bundle and JWKS and runs the same
 * verifyBundle() the CLI and the tests use, on the browser's WebCrypto; evidence files chosen are
 * hashed with it too. It makes no request: the page's CSP (connect-src 'none') would refuse one anyway.
 */
import { evidenceMatching, sha256Hex, verifyBundle, VERIFY_REASONS } from './verify.js';
import type { CompletionStatement } from './statement.js';

function element<T extends HTMLElement>(id: string): T {
  const found = document.getElementById(id);
  if (!found) throw new Error(`#${id} is missing`);
  return found as T;
}

function loadFileInto(file: File, target: HTMLTextAreaElement): void {
  void file.text().then((text) => {
    target.value = text;
  });
}

/** A textarea that also accepts a dropped file, plus a file input feeding it. */
function wireInput(textareaId: string, fileInputId: string): HTMLTextAreaElement {
  const textarea = element<HTMLTextAreaElement>(textareaId);
  const fileInput = element<HTMLInputElement>(fileInputId);
  fileInput.addEventListener('change', () => {
    const file = fileInput.files?.[0];
    if (file) loadFileInto(file, textarea);
  });
  textarea.addEventListener('dragover', (event) => {
    event.preventDefault();
    textarea.classList.add('dragging');
  });
  textarea.addEventListener('dragleave', () => textarea.classList.remove('dragging'));
  textarea.addEventListener('drop', (event) => {
    event.preventDefault();
    textarea.classList.remove('dragging');
    const file = event.dataTransfer?.files[0];
    if (file) loadFileInto(file, textarea);
  });
  return textarea;
}

function parse(text: string, what: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    throw new Error(`The ${what} is not JSON.`);
  }
}

function show(valid: boolean, headline: string, detail: string): void {
  const result = element<HTMLElement>('result');
  result.dataset.valid = String(valid);
  result.dataset.state = 'done';
  element<HTMLElement>('result-headline').textContent = headline;
  element<HTMLElement>('result-detail').textContent = detail;
}

/** One line per chosen file: the evidence entry of the statement it is, or that it is none. */
async function checkEvidence(statement: CompletionStatement | undefined, files: File[]): Promise<void> {
  const lines = statement ? await Promise.all(files.map((file) => evidenceLine(statement, file))) : [];
  element<HTMLUListElement>('evidence-result').replaceChildren(...lines);
}

async function evidenceLine(statement: CompletionStatement, file: File): Promise<HTMLLIElement> {
  const bytes = new Uint8Array(await file.arrayBuffer());
  const sha256 = await sha256Hex(bytes);
  const entry = evidenceMatching(statement, sha256, bytes.length);
  const line = document.createElement('li');
  line.dataset.evidence = String(entry !== undefined);
  line.textContent = entry
    ? `${file.name}: evidence. The proof names it "${entry.name}"${entry.mediaType ? ` (${entry.mediaType})` : ''}, SHA-256 ${sha256}.`
    : `${file.name}: NOT evidence of this proof. Its SHA-256 ${sha256} is none of the ${statement.evidence.length} files the proof names.`;
  return line;
}

async function run(bundleInput: HTMLTextAreaElement, keysInput: HTMLTextAreaElement, evidenceInput: HTMLInputElement): Promise<void> {
  let bundle: unknown;
  let keys: unknown;
  try {
    bundle = parse(bundleInput.value, 'bundle');
    keys = parse(keysInput.value, 'key set (JWKS)');
  } catch (error) {
    await checkEvidence(undefined, []);
    show(false, 'invalid: input_not_json', (error as Error).message);
    return;
  }
  const result = await verifyBundle(bundle, keys);
  await checkEvidence(result.valid ? result.statement : undefined, Array.from(evidenceInput.files ?? []));
  if (result.valid) {
    const s = result.statement;
    show(
      true,
      'valid',
      `Work order ${result.recordId} completed at ${s.completedAt} by ${s.assignee ?? 'an unnamed assignee'}; statement signed with key ${result.statementKid}; leaf ${result.leafIndex} of ${result.treeSize} in log ${result.logOrigin}.` +
        (s.supersedes ? ` It supersedes proof ${s.supersedes}.` : ''),
    );
  } else {
    show(false, `invalid: ${result.reason}`, result.detail);
  }
}

function start(): void {
  const bundleInput = wireInput('bundle', 'bundle-file');
  const keysInput = wireInput('keys', 'keys-file');
  const evidenceInput = element<HTMLInputElement>('evidence-files');
  element<HTMLButtonElement>('verify').addEventListener('click', () => {
    element<HTMLElement>('result').dataset.state = 'running';
    void run(bundleInput, keysInput, evidenceInput).catch((error: unknown) => show(false, 'invalid: verifier_error', String(error)));
  });
  element<HTMLElement>('reasons').textContent = Object.keys(VERIFY_REASONS).join(', ');
}

start();
