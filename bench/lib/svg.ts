// The bench's chart: empirical latency distributions (CDF, logarithmic time axis), one line per
// series, ours solid and each baseline dashed in the same colour. Plain SVG, no dependency.
import { percentile } from './stats';

const COLOURS = ['#1f77b4', '#d62728', '#2ca02c', '#9467bd', '#ff7f0e', '#8c564b', '#17becf'];
const esc = (s: string) => s.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;');

export function latencyChartSvg(series: { label: string; latencies: number[] }[], title: string): string {
  const W = 1000;
  const H = 460;
  const m = { left: 60, right: 390, top: 40, bottom: 50 };
  const pw = W - m.left - m.right;
  const ph = H - m.top - m.bottom;
  const present = series.filter((s) => s.latencies.length > 0);
  const all = present.flatMap((s) => s.latencies).filter((v) => v > 0);
  const lo = Math.pow(10, Math.floor(Math.log10(Math.max(1, Math.min(...all)))));
  const hi = Math.pow(10, Math.ceil(Math.log10(Math.max(lo * 10, ...all))));
  const x = (ms: number) =>
    m.left + ((Math.log10(Math.max(ms, lo)) - Math.log10(lo)) / (Math.log10(hi) - Math.log10(lo))) * pw;
  const y = (q: number) => m.top + ph - q * ph;
  const out: string[] = [
    `<svg xmlns="http://www.w3.org/2000/svg" width="${W}" height="${H}" viewBox="0 0 ${W} ${H}" font-family="sans-serif" font-size="12">`,
    `<rect width="${W}" height="${H}" fill="white"/>`,
    `<text x="${m.left}" y="22" font-size="15" font-weight="bold">${esc(title)}</text>`,
  ];
  for (let d = lo; d <= hi; d *= 10) {
    out.push(`<line x1="${x(d)}" y1="${m.top}" x2="${x(d)}" y2="${m.top + ph}" stroke="#ddd"/>`);
    out.push(
      `<text x="${x(d)}" y="${m.top + ph + 16}" text-anchor="middle">${d >= 1000 ? `${d / 1000} s` : `${d} ms`}</text>`,
    );
  }
  for (const q of [0, 0.25, 0.5, 0.75, 0.9, 0.99]) {
    out.push(`<line x1="${m.left}" y1="${y(q)}" x2="${m.left + pw}" y2="${y(q)}" stroke="#eee"/>`);
    out.push(`<text x="${m.left - 6}" y="${y(q) + 4}" text-anchor="end">p${Math.round(q * 100)}</text>`);
  }
  out.push(`<rect x="${m.left}" y="${m.top}" width="${pw}" height="${ph}" fill="none" stroke="#333"/>`);
  out.push(`<text x="${m.left + pw / 2}" y="${H - 12}" text-anchor="middle">latency per flow (log scale)</text>`);
  // Pair series by the label before ':' (e.g. "vend: ours" and "vend: baseline") to share a colour.
  const groups = [...new Set(present.map((s) => s.label.split(':')[0]))];
  present.forEach((s, i) => {
    const colour = COLOURS[groups.indexOf(s.label.split(':')[0]) % COLOURS.length];
    const dashed = !/ours/.test(s.label);
    const sorted = [...s.latencies].sort((a, b) => a - b);
    const step = Math.max(1, Math.floor(sorted.length / 300));
    const pts: string[] = [];
    for (let k = 0; k < sorted.length; k += step)
      pts.push(`${x(sorted[k]).toFixed(1)},${y((k + 1) / sorted.length).toFixed(1)}`);
    pts.push(`${x(sorted[sorted.length - 1]).toFixed(1)},${y(1).toFixed(1)}`);
    out.push(
      `<polyline fill="none" stroke="${colour}" stroke-width="2"${dashed ? ' stroke-dasharray="6 4"' : ''} points="${pts.join(' ')}"/>`,
    );
    const ly = m.top + 14 + i * 20;
    out.push(
      `<line x1="${m.left + pw + 14}" y1="${ly - 4}" x2="${m.left + pw + 40}" y2="${ly - 4}" stroke="${colour}" stroke-width="2"${dashed ? ' stroke-dasharray="6 4"' : ''}/>`,
    );
    out.push(
      `<text x="${m.left + pw + 46}" y="${ly}">${esc(s.label)} (p50 ${percentile(s.latencies, 50).toFixed(0)} ms)</text>`,
    );
  });
  out.push('</svg>');
  return `${out.join('\n')}\n`;
}

/**
 * A line chart of y against x (x on a log2 axis: load levels double), one line per series, for the
 * capacity bench's scale run (throughput against flows in flight, per worker count).
 */
export function lineChartSvg(
  series: { label: string; points: [number, number][] }[],
  title: string,
  axes: { x: string; y: string },
): string {
  const W = 900;
  const H = 460;
  const m = { left: 70, right: 230, top: 40, bottom: 50 };
  const pw = W - m.left - m.right;
  const ph = H - m.top - m.bottom;
  const pts = series.flatMap((s) => s.points);
  const xs = pts.map(([x]) => Math.log2(Math.max(1, x)));
  const [x0, x1] = [Math.min(...xs, 0), Math.max(...xs, 1)];
  const yMax = Math.max(1e-9, ...pts.map(([, y]) => y)) * 1.1;
  const x = (v: number) => m.left + ((Math.log2(Math.max(1, v)) - x0) / Math.max(1e-9, x1 - x0)) * pw;
  const y = (v: number) => m.top + ph - (v / yMax) * ph;
  const out: string[] = [
    `<svg xmlns="http://www.w3.org/2000/svg" width="${W}" height="${H}" viewBox="0 0 ${W} ${H}" font-family="sans-serif" font-size="12">`,
    `<rect width="${W}" height="${H}" fill="white"/>`,
    `<text x="${m.left}" y="22" font-size="15" font-weight="bold">${esc(title)}</text>`,
  ];
  for (const v of [...new Set(pts.map(([px]) => px))].sort((a, b) => a - b)) {
    out.push(`<line x1="${x(v)}" y1="${m.top}" x2="${x(v)}" y2="${m.top + ph}" stroke="#ddd"/>`);
    out.push(`<text x="${x(v)}" y="${m.top + ph + 16}" text-anchor="middle">${v}</text>`);
  }
  for (let k = 0; k <= 5; k++) {
    const v = (yMax / 5) * k;
    out.push(`<line x1="${m.left}" y1="${y(v)}" x2="${m.left + pw}" y2="${y(v)}" stroke="#eee"/>`);
    out.push(`<text x="${m.left - 6}" y="${y(v) + 4}" text-anchor="end">${v.toFixed(v < 10 ? 1 : 0)}</text>`);
  }
  out.push(`<rect x="${m.left}" y="${m.top}" width="${pw}" height="${ph}" fill="none" stroke="#333"/>`);
  out.push(`<text x="${m.left + pw / 2}" y="${H - 12}" text-anchor="middle">${esc(axes.x)}</text>`);
  out.push(
    `<text x="16" y="${m.top + ph / 2}" text-anchor="middle" transform="rotate(-90 16 ${m.top + ph / 2})">${esc(axes.y)}</text>`,
  );
  series.forEach((s, i) => {
    const colour = COLOURS[i % COLOURS.length];
    const line = s.points.map(([px, py]) => `${x(px).toFixed(1)},${y(py).toFixed(1)}`).join(' ');
    out.push(`<polyline fill="none" stroke="${colour}" stroke-width="2" points="${line}"/>`);
    for (const [px, py] of s.points)
      out.push(`<circle cx="${x(px).toFixed(1)}" cy="${y(py).toFixed(1)}" r="3" fill="${colour}"/>`);
    const ly = m.top + 14 + i * 20;
    out.push(
      `<line x1="${m.left + pw + 14}" y1="${ly - 4}" x2="${m.left + pw + 40}" y2="${ly - 4}" stroke="${colour}" stroke-width="2"/>`,
    );
    out.push(`<text x="${m.left + pw + 46}" y="${ly}">${esc(s.label)}</text>`);
  });
  out.push('</svg>');
  return `${out.join('\n')}\n`;
}
