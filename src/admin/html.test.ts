import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { html } from './html.js';

describe('the html template', () => {
  it('escapes every interpolated string, in text and in attributes', () => {
    const name = `"><script>alert('x')</script>&`;
    assert.equal(html`<p title="${name}">${name}</p>`.value, '<p title="&quot;&gt;&lt;script&gt;alert(&#39;x&#39;)&lt;/script&gt;&amp;">&quot;&gt;&lt;script&gt;alert(&#39;x&#39;)&lt;/script&gt;&amp;</p>');
  });

  it('keeps nested templates as they are and joins arrays', () => {
    const items = ['a<b', 'c'].map((x) => html`<li>${x}</li>`);
    assert.equal(html`<ul>${items}</ul>`.value, '<ul><li>a&lt;b</li><li>c</li></ul>');
  });

  it('renders nothing for null, undefined and booleans, and numbers as text', () => {
    assert.equal(html`${null}${undefined}${false}${true}${0}${12.5}`.value, '012.5');
  });
});
