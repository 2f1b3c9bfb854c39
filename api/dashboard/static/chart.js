// The dashboard's charts, drawn as SVG here (docs/decisions.md, "The dashboard's charts"): bars of a measure by
// the groups of a dimension (horizontal, the names beside them) and columns of a measure over days. Each bar
// carries its name and value as a <title> and as data-* attributes, and the page it is on shows the same figures
// in a table, so nothing is said by the drawing alone. Values are formatted by the caller's `format` (format.js).

import { s } from './dom.js';

// A step of 1, 2 or 5 times a power of ten that cuts the axis into at most four parts, and the top.
export function axis(value) {
  const top = Math.max(value, 4);
  const power = 10 ** Math.floor(Math.log10(top / 4));
  const step = [1, 2, 5, 10].map((m) => m * power).find((m) => top / m <= 4);
  return { step, top: Math.ceil(top / step) * step };
}

// A small axis for values below 4 (rates, small sums of money): the same rule on a scale where the top is 4.
function scaledAxis(max) {
  if (max <= 0) return { step: 1, top: 4 };
  if (max >= 4) return axis(max);
  const scale = 10 ** Math.ceil(-Math.log10(max / 4));
  const { step, top } = axis(max * scale);
  return { step: step / scale, top: top / scale };
}

// Every UTC day from the day of `since` to the day of `until` (both YYYY-MM-DD or ISO times).
export function daysBetween(since, until) {
  const days = [];
  const cursor = new Date(`${since.slice(0, 10)}T00:00:00Z`);
  const last = until.slice(0, 10);
  while (cursor.toISOString().slice(0, 10) <= last && days.length < 1000) {
    days.push(cursor.toISOString().slice(0, 10));
    cursor.setUTCDate(cursor.getUTCDate() + 1);
  }
  return days;
}

const cut = (text, n) => (text.length > n ? `${text.slice(0, n - 1)}…` : text);

// Horizontal bars: points are [{ label, value }], drawn in the order given, each name in full above its bar.
export function barsChart(points, { width, label, format = String }) {
  const row = 40;
  const pad = { left: 4, right: 90, top: 4, bottom: 4 };
  const height = pad.top + pad.bottom + row * Math.max(points.length, 1);
  const plotW = Math.max(width - pad.left - pad.right, 40);
  const max = Math.max(0, ...points.map((p) => p.value));
  const x = (v) => (max > 0 ? (v / max) * plotW : 0);
  const chars = Math.floor((width - pad.left) / 7);
  const bars = points.map((p, i) => {
    const y = pad.top + i * row;
    const length = Math.max(x(p.value), p.value > 0 ? 2 : 0);
    return s('g', { class: 'bar-group', 'data-label': p.label, 'data-value': p.value },
      s('title', {}, `${p.label}: ${format(p.value)}`),
      s('text', { class: 'label', x: pad.left, y: y + 14 }, cut(p.label, chars)),
      s('rect', { class: 'bar', x: pad.left, y: y + 20, height: 14, width: length }),
      s('text', { class: 'value', x: pad.left + length + 6, y: y + 32 }, format(p.value)));
  });
  return s('svg', { class: 'chart bars', viewBox: `0 0 ${width} ${height}`, width, height, role: 'img',
    'aria-label': label }, bars);
}

// Columns over days: points are [{ date: 'YYYY-MM-DD', value }] for every day of the range, in order.
export function daysChart(points, { width, label, format = String }) {
  const height = 200;
  const pad = { left: 56, right: 16, top: 10, bottom: 28 };
  const plotW = Math.max(width - pad.left - pad.right, 60);
  const plotH = height - pad.top - pad.bottom;
  const { step, top } = scaledAxis(Math.max(0, ...points.map((p) => p.value)));
  const slot = plotW / Math.max(points.length, 1);
  const bar = Math.max(Math.min(slot * 0.7, 28), 2);
  const y = (v) => pad.top + plotH - (v / top) * plotH;
  const labelEvery = Math.ceil(points.length / Math.max(1, Math.floor(plotW / 56)));
  const ticks = Array.from({ length: Math.round(top / step) + 1 }, (_, i) => i * step);
  const grid = ticks.map((v) => s('g', { class: 'grid' },
    s('line', { x1: pad.left, x2: pad.left + plotW, y1: y(v), y2: y(v) }),
    s('text', { x: pad.left - 6, y: y(v) + 4, 'text-anchor': 'end' }, format(v))));
  const columns = points.map((p, i) => {
    const x = pad.left + i * slot + (slot - bar) / 2;
    return s('g', { class: 'bar-group day', 'data-date': p.date, 'data-value': p.value },
      s('title', {}, `${p.date}: ${format(p.value)}`),
      s('rect', { class: 'bar', x, width: bar, y: y(p.value), height: y(0) - y(p.value) }),
      (points.length - 1 - i) % labelEvery === 0
        ? s('text', { class: 'x', x: x + bar / 2, y: height - 8, 'text-anchor': 'middle' }, p.date.slice(5)) : null);
  });
  return s('svg', { class: 'chart days', viewBox: `0 0 ${width} ${height}`, width, height, role: 'img',
    'aria-label': label }, grid, columns);
}

// Draws `build(width)` into `holder` at the holder's width, and again when the window is resized (until the
// holder leaves the page).
export function fitted(holder, build) {
  const draw = () => {
    const width = Math.min(Math.max(holder.clientWidth - 24 || document.getElementById('main').clientWidth - 40, 280),
      1100);
    holder.replaceChildren(build(width));
  };
  let timer;
  const onResize = () => {
    if (!holder.isConnected) { window.removeEventListener('resize', onResize); return; }
    clearTimeout(timer);
    timer = setTimeout(draw, 150);
  };
  window.addEventListener('resize', onResize);
  draw();
  requestAnimationFrame(draw);  // again once attached, at the real width
  return holder;
}
