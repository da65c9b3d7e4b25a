import type { DeliveryStats, HourlyAttempts } from '../webhooks/service.js';
import { html, type SafeHtml } from './html.js';

/**
 * A subscription's last 24 hours as a small chart drawn here, as inline SVG (no chart library, nothing
 * loaded): the share of attempts answered 2xx, and the average latency, hour by hour. The SVG is an
 * image with a title and a description; the same figures follow as text and as a table, for anyone
 * who cannot see it. Colours come from admin.css (the CSP allows no inline style).
 */

const WIDTH = 480;
const LEFT = 56;
const RIGHT = 8;
const PANEL_HEIGHT = 48;
const RATE_TOP = 18;
const LATENCY_TOP = RATE_TOP + PANEL_HEIGHT + 32;
const AXIS_Y = LATENCY_TOP + PANEL_HEIGHT + 16;
const HEIGHT = AXIS_Y + 6;

function percent(part: number, whole: number): string {
  return `${Math.floor((part / whole) * 1000) / 10} %`;
}

/** The smallest of 1, 2, 5 × 10ⁿ ms at or above `ms`: a round top for the latency scale. */
function roundScale(ms: number): number {
  let step = 1;
  for (;;) {
    for (const factor of [1, 2, 5]) if (step * factor >= ms) return step * factor;
    step *= 10;
  }
}

function milliseconds(ms: number): string {
  return ms >= 10_000 ? `${Math.round(ms / 1000)} s` : `${ms} ms`;
}

function hourLabel(hour: HourlyAttempts): string {
  return `${hour.start.slice(0, 10)} ${hour.start.slice(11, 16)}`;
}

/** One sentence that says what the chart shows. */
export function statsSummary(stats: DeliveryStats): string {
  const busy = stats.hours.filter((hour) => hour.attempts > 0);
  const attempts = busy.reduce((sum, hour) => sum + hour.attempts, 0);
  if (attempts === 0) return 'No delivery attempts in the last 24 hours.';
  const succeeded = busy.reduce((sum, hour) => sum + hour.succeeded, 0);
  const average = Math.round(busy.reduce((sum, hour) => sum + (hour.averageMs ?? 0) * hour.attempts, 0) / attempts);
  const slowest = Math.max(...busy.map((hour) => hour.maxMs ?? 0));
  const quiet = stats.hours.length - busy.length;
  return (
    `Last 24 hours: ${attempts} attempt${attempts === 1 ? '' : 's'}, ${succeeded} answered 2xx (${percent(succeeded, attempts)}); ` +
    `average latency ${milliseconds(average)}, slowest ${milliseconds(slowest)}.` +
    (quiet > 0 ? ` No attempts in ${quiet} of the 24 hours.` : '')
  );
}

function bars(stats: DeliveryStats, latencyScale: number): { rate: SafeHtml[]; latency: SafeHtml[] } {
  const slot = (WIDTH - LEFT - RIGHT) / stats.hours.length;
  const width = Math.max(2, slot - 4);
  const rate: SafeHtml[] = [];
  const latency: SafeHtml[] = [];
  stats.hours.forEach((hour, i) => {
    const x = (LEFT + i * slot + (slot - width) / 2).toFixed(1);
    if (hour.attempts === 0) {
      rate.push(html`<rect class="bar-none" x="${x}" y="${RATE_TOP + PANEL_HEIGHT - 1}" width="${width.toFixed(1)}" height="1"></rect>`);
      latency.push(html`<rect class="bar-none" x="${x}" y="${LATENCY_TOP + PANEL_HEIGHT - 1}" width="${width.toFixed(1)}" height="1"></rect>`);
      return;
    }
    const share = hour.succeeded / hour.attempts;
    const rateHeight = Math.max(1, share * PANEL_HEIGHT);
    const tone = share === 1 ? 'bar-ok' : share >= 0.5 ? 'bar-warn' : 'bar-bad';
    rate.push(html`<rect class="${tone}" x="${x}" y="${(RATE_TOP + PANEL_HEIGHT - rateHeight).toFixed(1)}" width="${width.toFixed(1)}" height="${rateHeight.toFixed(1)}"></rect>`);
    const latencyHeight = Math.max(1, ((hour.averageMs ?? 0) / latencyScale) * PANEL_HEIGHT);
    latency.push(
      html`<rect class="bar-latency" x="${x}" y="${(LATENCY_TOP + PANEL_HEIGHT - latencyHeight).toFixed(1)}" width="${width.toFixed(1)}" height="${latencyHeight.toFixed(1)}"></rect>`,
    );
  });
  return { rate, latency };
}

function hourTable(stats: DeliveryStats, captionId: string): SafeHtml {
  const busy = stats.hours.filter((hour) => hour.attempts > 0);
  if (busy.length === 0) return html``;
  return html`<details class="chart-table">
  <summary>Hour by hour<span class="visually-hidden">: the chart’s figures as a table</span></summary>
  <div class="table-wrap" role="region" aria-labelledby="${captionId}" tabindex="0">
  <table>
    <caption id="${captionId}">Attempts by hour (UTC), hours with attempts only</caption>
    <thead><tr><th scope="col">Hour from</th><th scope="col">Attempts</th><th scope="col">Answered 2xx</th><th scope="col">Success rate</th><th scope="col">Average latency</th><th scope="col">Slowest</th></tr></thead>
    <tbody>${busy.map(
      (hour) => html`<tr><th scope="row"><time datetime="${hour.start}">${hourLabel(hour)}</time></th><td>${hour.attempts}</td><td>${hour.succeeded}</td><td>${percent(hour.succeeded, hour.attempts)}</td><td>${milliseconds(hour.averageMs ?? 0)}</td><td>${milliseconds(hour.maxMs ?? 0)}</td></tr>`,
    )}</tbody>
  </table>
  </div>
</details>`;
}

/** The chart of one subscription; `key` makes its element ids unique on the page. */
export function deliveryChart(stats: DeliveryStats, key: string, name: string): SafeHtml {
  const slowestAverage = Math.max(0, ...stats.hours.map((hour) => hour.averageMs ?? 0));
  const scale = roundScale(Math.max(1, slowestAverage));
  const { rate, latency } = bars(stats, scale);
  const titleId = `${key}-chart-title`;
  const descId = `${key}-chart-desc`;
  const summaryId = `${key}-chart-summary`;
  const right = WIDTH - RIGHT;
  return html`<figure class="chart">
  <svg class="chart-svg" viewBox="0 0 ${WIDTH} ${HEIGHT}" width="${WIDTH}" height="${HEIGHT}" role="img" aria-labelledby="${titleId} ${descId}" aria-describedby="${summaryId}" focusable="false">
    <title id="${titleId}">Deliveries of “${name}” in the last 24 hours</title>
    <desc id="${descId}">Top: the share of attempts the receiver answered with 2xx, hour by hour. Bottom: their average latency, on a scale up to ${milliseconds(scale)}. Oldest hour on the left, the current hour on the right.</desc>
    <text class="chart-label" x="0" y="${RATE_TOP - 6}">Success rate</text>
    <text class="chart-axis" x="${LEFT - 6}" y="${RATE_TOP + 4}" text-anchor="end">100 %</text>
    <text class="chart-axis" x="${LEFT - 6}" y="${RATE_TOP + PANEL_HEIGHT}" text-anchor="end">0 %</text>
    <line class="chart-grid" x1="${LEFT}" y1="${RATE_TOP}" x2="${right}" y2="${RATE_TOP}"></line>
    <line class="chart-base" x1="${LEFT}" y1="${RATE_TOP + PANEL_HEIGHT}" x2="${right}" y2="${RATE_TOP + PANEL_HEIGHT}"></line>
    ${rate}
    <text class="chart-label" x="0" y="${LATENCY_TOP - 6}">Average latency</text>
    <text class="chart-axis" x="${LEFT - 6}" y="${LATENCY_TOP + 4}" text-anchor="end">${milliseconds(scale)}</text>
    <text class="chart-axis" x="${LEFT - 6}" y="${LATENCY_TOP + PANEL_HEIGHT}" text-anchor="end">0</text>
    <line class="chart-grid" x1="${LEFT}" y1="${LATENCY_TOP}" x2="${right}" y2="${LATENCY_TOP}"></line>
    <line class="chart-base" x1="${LEFT}" y1="${LATENCY_TOP + PANEL_HEIGHT}" x2="${right}" y2="${LATENCY_TOP + PANEL_HEIGHT}"></line>
    ${latency}
    <text class="chart-axis" x="${LEFT}" y="${AXIS_Y}">24 h ago</text>
    <text class="chart-axis" x="${right}" y="${AXIS_Y}" text-anchor="end">now</text>
  </svg>
  <figcaption id="${summaryId}">${statsSummary(stats)}</figcaption>
  ${hourTable(stats, `${key}-chart-table`)}
</figure>`;
}
