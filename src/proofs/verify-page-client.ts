/**
 * Browser side of /verify: reads the pasted or dropped bundle and JWKS and runs the same
 * verifyBundle() the CLI and the tests use, on the browser's WebCrypto; evidence files chosen are
 * hashed with it too. It makes no request: the page's CSP (connect-src 'none') would refuse one anyway.
 */
import { describeCompletion, describeFile, sha256Hex, verdictOf, verdictWords, verifyBundle, VERDICT_REASONS, type FileDigest, type Verdict } from './verify.js';

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

function show(valid: boolean, headline: string, detail: string, completion = ''): void {
  const result = element<HTMLElement>('result');
  result.dataset.valid = String(valid);
  result.dataset.state = 'done';
  element<HTMLElement>('result-headline').textContent = headline;
  element<HTMLElement>('result-detail').textContent = detail;
  element<HTMLElement>('result-completion').textContent = completion;
}

/** One line per chosen file, in the words of `wo proof verify`. */
function showFiles(verdict: Verdict | undefined, named: number): void {
  const lines = (verdict?.files ?? []).map((file) => {
    const line = document.createElement('li');
    line.dataset.evidence = String(file.evidence !== null);
    line.textContent = describeFile(file, named);
    return line;
  });
  element<HTMLUListElement>('evidence-result').replaceChildren(...lines);
}

async function digestOf(file: File): Promise<FileDigest> {
  const bytes = new Uint8Array(await file.arrayBuffer());
  return { name: file.name, sha256: await sha256Hex(bytes), size: bytes.length };
}

interface Inputs {
  bundle: HTMLTextAreaElement;
  keys: HTMLTextAreaElement;
  policy: HTMLTextAreaElement;
  tsaRoots: HTMLTextAreaElement;
  evidence: HTMLInputElement;
}

async function run(inputs: Inputs): Promise<void> {
  const { bundle: bundleInput, keys: keysInput, policy: policyInput, tsaRoots: tsaRootsInput, evidence: evidenceInput } = inputs;
  let bundle: unknown;
  let keys: unknown;
  try {
    bundle = parse(bundleInput.value, 'bundle');
    keys = parse(keysInput.value, 'key set (JWKS)');
  } catch (error) {
    showFiles(undefined, 0);
    show(false, 'invalid: input_not_json', (error as Error).message);
    return;
  }
  // An empty policy field checks no witnesses, as `wo proof verify` without --policy.
  const policy = policyInput.value.trim() === '' ? undefined : policyInput.value;
  // An empty roots field checks a token's root against nothing, as `wo proof verify` without --tsa-roots.
  const tsaRoots = tsaRootsInput.value.trim() === '' ? undefined : tsaRootsInput.value;
  const result = await verifyBundle(bundle, keys, { ...(policy === undefined ? {} : { policy }), ...(tsaRoots === undefined ? {} : { tsaRoots }) });
  const digests = result.valid ? await Promise.all(Array.from(evidenceInput.files ?? []).map(digestOf)) : [];
  // The one verdict the CLI and the SDK give too: a valid proof with a file that is not its evidence is invalid (not_evidence).
  const verdict = verdictOf(result, digests);
  const { headline, detail } = verdictWords(verdict);
  showFiles(verdict, result.valid ? result.statement.evidence.length : 0);
  show(verdict.valid, headline, detail, result.valid ? describeCompletion(result.statement) : '');
}

function start(): void {
  const inputs: Inputs = {
    bundle: wireInput('bundle', 'bundle-file'),
    keys: wireInput('keys', 'keys-file'),
    policy: wireInput('policy', 'policy-file'),
    tsaRoots: wireInput('tsa-roots', 'tsa-roots-file'),
    evidence: element<HTMLInputElement>('evidence-files'),
  };
  element<HTMLButtonElement>('verify').addEventListener('click', () => {
    element<HTMLElement>('result').dataset.state = 'running';
    void run(inputs).catch((error: unknown) => show(false, 'invalid: verifier_error', String(error)));
  });
  element<HTMLElement>('reasons').textContent = Object.keys(VERDICT_REASONS).join(', ');
}

start();
