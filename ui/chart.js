import { clear } from './render.js';
import { deliveryStoryOf } from './story.js';

const SVG = 'http://www.w3.org/2000/svg';
const MINUTES = 30;

const BARS = { '2xx': 'ok', failed: 'failed', rejected: 'rejected' };

/**
 * Which bar a capture counts in, by its outcome as clockhook decided it (an answer cut short failed, whatever
 * its status): rejected by clockhook, failed at the app, or 2xx; none while still in flight.
 */
export function outcome(capture) {
  return BARS[deliveryStoryOf(capture)?.outcome] ?? null;
}

/** Deliveries per minute over the last 30 minutes, stacked by outcome, drawn as SVG rectangles. */
export function drawChart(svg, captures, now = Date.now()) {
  clear(svg);
  const end = Math.floor(now / 60_000);
  const buckets = Array.from({ length: MINUTES }, () => ({ ok: 0, failed: 0, rejected: 0 }));
  for (const capture of captures) {
    const minute = Math.floor(Date.parse(capture.receivedAt) / 60_000);
    const index = MINUTES - 1 - (end - minute);
    const kind = outcome(capture);
    if (index >= 0 && index < MINUTES && kind) buckets[index][kind] += 1;
  }
  const peak = Math.max(1, ...buckets.map((b) => b.ok + b.failed + b.rejected));
  const width = 300 / MINUTES;
  const said = document.getElementById('chart-value');
  const peakNode = document.getElementById('chart-peak');
  if (peakNode) peakNode.textContent = `peak ${peak}/min`;
  buckets.forEach((bucket, i) => {
    const total = bucket.ok + bucket.failed + bucket.rejected;
    if (total === 0) return;
    // One group per minute, focusable, its counts in its title (hover) and said below the chart (focus).
    const at = new Date((end - (MINUTES - 1 - i)) * 60_000).toLocaleTimeString([], {
      hour: '2-digit',
      minute: '2-digit',
    });
    const text = `${at}: ${bucket.ok} 2xx, ${bucket.failed} failed, ${bucket.rejected} rejected`;
    const group = document.createElementNS(SVG, 'g');
    group.setAttribute('tabindex', '0');
    group.setAttribute('role', 'img');
    group.setAttribute('aria-label', text);
    const title = document.createElementNS(SVG, 'title');
    title.textContent = text;
    group.append(title);
    const show = () => said && (said.textContent = text);
    group.addEventListener('focus', show);
    group.addEventListener('mouseenter', show);
    let y = 60;
    for (const kind of ['ok', 'failed', 'rejected']) {
      if (bucket[kind] === 0) continue;
      const height = (bucket[kind] / peak) * 58;
      y -= height;
      const rect = document.createElementNS(SVG, 'rect');
      rect.setAttribute('x', String(i * width + 0.5));
      rect.setAttribute('y', String(y));
      rect.setAttribute('width', String(width - 1));
      rect.setAttribute('height', String(height));
      rect.setAttribute('class', kind);
      group.append(rect);
    }
    svg.append(group);
  });
}
