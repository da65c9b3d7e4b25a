import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { Agent } from 'undici';
import { postWebhook } from './post-webhook.js';

describe('postWebhook', () => {
  it('rejects when the dispatcher cannot take the request, and leaves no deadline timer behind', async () => {
    const agent = new Agent();
    await agent.close();
    const timers = () => process.getActiveResourcesInfo().filter((kind) => kind === 'Timeout').length;
    const before = timers();
    const options = { headers: {}, body: '{}', timeoutMs: 60_000, readCapBytes: 4096, excerptChars: 1024 };
    await assert.rejects(postWebhook(agent, new URL('http://127.0.0.1:9/hook'), options));
    assert.equal(timers(), before, 'the 60 s deadline timer was cleared');
  });
});
