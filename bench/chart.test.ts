import { test } from 'node:test';
import assert from 'node:assert/strict';
import { compactNumber, escapeXml, logDecades, niceMax, renderChart } from './chart.js';

const ARMS = [
  { name: 'direct', rps: 20_000, resumeCallsPer1k: 0, extprocStreamsPer1k: 0 },
  { name: 'A', rps: 1500, resumeCallsPer1k: 1000, extprocStreamsPer1k: 1000 },
  { name: 'C', rps: 12_000, resumeCallsPer1k: 0.8, extprocStreamsPer1k: 0.8 },
  { name: 'target <x>', rps: 900, resumeCallsPer1k: null, extprocStreamsPer1k: null },
];

function rects(svg: string): { height: number; title: string }[] {
  return [...svg.matchAll(/<rect x="[^"]+" y="[^"]+" width="[^"]+" height="([^"]+)" fill="[^"]+"><title>([^<]*)<\/title>/g)].map((m) => ({
    height: Number(m[1]),
    title: m[2] as string,
  }));
}

test('axis helpers', () => {
  assert.equal(niceMax(0), 1);
  assert.equal(niceMax(42_766), 50_000);
  assert.equal(niceMax(3735), 5000);
  assert.equal(niceMax(100), 100);
  assert.deepEqual(logDecades([0.3, 1000, 0]), { lo: -1, hi: 3 });
  assert.deepEqual(logDecades([5]), { lo: 0, hi: 1 });
  assert.deepEqual(logDecades([1000.43, 2.1]), { lo: 0, hi: 3 });
  assert.deepEqual(logDecades([]), { lo: 0, hi: 1 });
  assert.equal(compactNumber(44_817), '44.8k');
  assert.equal(compactNumber(262), '262');
  assert.equal(compactNumber(0.0123), '0.012');
  assert.equal(escapeXml(`a<b>&"'`), 'a&lt;b&gt;&amp;&quot;&apos;');
});

test('renderChart draws one throughput bar per arm, scaled, and two call bars per arm with counts', () => {
  const svg = renderChart(ARMS, { title: 'steady & co', subtitle: '2 CPUs' });
  assert.ok(svg.startsWith('<svg xmlns="http://www.w3.org/2000/svg"'));
  assert.ok(svg.trimEnd().endsWith('</svg>'));
  assert.equal((svg.match(/<text /g) ?? []).length, (svg.match(/<\/text>/g) ?? []).length);
  assert.match(svg, /steady &amp; co/);
  assert.match(svg, /target &lt;x&gt;/);
  assert.doesNotMatch(svg, /target <x>/);
  const bars = rects(svg);
  const throughput = bars.filter((b) => b.title.includes('requests per second'));
  assert.equal(throughput.length, 4);
  const h = (name: string, kind: string): number => bars.find((b) => b.title.startsWith(`${name}:`) && b.title.includes(kind))!.height;
  assert.ok(h('direct', 'requests per second') > h('C', 'requests per second'));
  assert.ok(h('C', 'requests per second') > h('A', 'requests per second'));
  assert.ok(Math.abs(h('C', 'requests per second') / h('direct', 'requests per second') - 0.6) < 0.01, 'linear throughput axis');
  assert.ok(h('A', 'ResumeActor') > h('C', 'ResumeActor'), 'A makes more calls than C');
  assert.ok(h('C', 'ResumeActor') > 0, 'a small but non-zero count is still visible on the log axis');
  assert.equal(h('direct', 'ResumeActor'), 0);
  assert.equal((svg.match(/>n\/a</g) ?? []).length, 2, 'unknown counts are labelled n/a');
});

test('renderChart adds a legend of the arms that carry a description, and grows to hold it', () => {
  const plain = renderChart(ARMS, { title: 't' });
  assert.doesNotMatch(plain, />Arms</);
  const described = renderChart(
    ARMS.map((a) => (a.name === 'A' ? { ...a, description: 'proxy, cache off & co' } : a.name === 'C' ? { ...a, description: 'proxy, cache on' } : a)),
    { title: 't' },
  );
  assert.match(described, />Arms</);
  assert.match(described, /<tspan font-weight="bold">A<\/tspan>: proxy, cache off &amp; co<\/text>/);
  assert.match(described, /<tspan font-weight="bold">C<\/tspan>: proxy, cache on<\/text>/);
  const height = (svg: string): number => Number(/<svg [^>]*height="(\d+)"/.exec(svg)?.[1]);
  assert.equal(height(described), height(plain) + 8 + 3 * 16, 'a title line and one line per described arm');
});
