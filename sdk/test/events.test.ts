import assert from 'node:assert/strict';
import { describe } from 'node:test';
import type { FeedEvent } from '@work-order-api/client';
import { itAgainstLiveService, workOrderBody } from './live-service.js';
import { waitFor } from '../../test/helpers/test-app.js';
import { waitingFeedRequests } from '../../test/helpers/event-feed.js';

describe('client.events.follow against a real server', () => {
  itAgainstLiveService('follows the feed by long-polling: past events first, then each new one as it comes', async ({ client, harness }) => {
    const category = await client.createCategory({ body: { name: 'Plumbing' } });
    const first = await client.createRecord({ body: workOrderBody(category.id) });
    const stop = new AbortController();
    const received: FeedEvent[] = [];
    const following = (async () => {
      for await (const event of client.events.follow({ types: ['record.created', 'record.assigned'], wait: 5, signal: stop.signal })) received.push(event);
    })();
    await waitFor(() => received.length === 1, 10_000, 'the past event');
    assert.equal(received[0]!.type, 'record.created');
    // Nothing new: the follower's request is held open by the server, waiting for an event.
    await waitFor(async () => (await waitingFeedRequests(harness.context)) > 0, 10_000, 'a waiting feed request');
    await client.assignRecord({ path: { id: first.id }, body: { assignee: 'Bob Plumber' } });
    await waitFor(() => received.length === 2, 10_000, 'the new event');
    assert.equal(received[1]!.type, 'record.assigned');
    assert.ok(received[1]!.sequence > received[0]!.sequence);
    stop.abort();
    await following;
  });

  itAgainstLiveService('resumes after the sequence it is given, and ends when the loop breaks', async ({ client }) => {
    const category = await client.createCategory({ body: { name: 'Plumbing' } });
    for (let i = 0; i < 3; i++) await client.createRecord({ body: workOrderBody(category.id) });
    await waitFor(async () => (await client.listEvents({ query: { type: 'record.created' } })).total === 3, 10_000, 'three events in the feed');
    const all: FeedEvent[] = [];
    for await (const event of client.events.follow({ types: ['record.created'], limit: 2 })) {
      all.push(event);
      if (all.length === 3) break;
    }
    const rest: FeedEvent[] = [];
    for await (const event of client.events.follow({ after: all[0]!.sequence, types: ['record.created'] })) {
      rest.push(event);
      if (rest.length === 2) break;
    }
    assert.deepEqual(rest.map((event) => event.id), all.slice(1).map((event) => event.id));
  });

  itAgainstLiveService('throws a refused key instead of retrying forever', async ({ client }) => {
    await assert.rejects(
      (async () => {
        for await (const _event of client.events.follow({ wait: 1 })) break;
      })(),
      (error: unknown) => error instanceof Error && 'code' in error && error.code === 'insufficient_scope',
    );
  }, { scopes: ['records:read'] });
});
