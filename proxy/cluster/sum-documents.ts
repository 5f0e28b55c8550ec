/** Sums numbers leaf by leaf; other values keep the first one seen (the primary's `/stats` over its workers). */
export function sumDocuments(docs: readonly unknown[]): unknown {
  const first = docs[0];
  if (typeof first === 'number') return docs.reduce<number>((a, d) => a + (typeof d === 'number' ? d : 0), 0);
  if (first === null || typeof first !== 'object' || Array.isArray(first)) return first;
  const keys = new Set<string>();
  for (const d of docs) if (d !== null && typeof d === 'object') for (const k of Object.keys(d)) keys.add(k);
  const out: Record<string, unknown> = {};
  for (const k of keys) {
    out[k] = sumDocuments(docs.map((d) => (d as Record<string, unknown> | null)?.[k]).filter((v) => v !== undefined));
  }
  return out;
}
