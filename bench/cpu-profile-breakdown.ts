/**
 * Splits a V8 CPU profile (`node --cpu-prof`) of one `domain-sync snapshot` process into the
 * phases of a snapshot, by the function each sample was taken in (the innermost frame, then its
 * callers): used by bench/snapshot-e2e.ts to say where the time goes, run after run.
 */
import { readFile } from 'node:fs/promises';

/** The phases, in the order they are reported. */
export const PHASES = [
  'start-up: imports, config, mirror open, migrations check, lock, run bookkeeping',
  'reading rows from SQLite (better-sqlite3)',
  'converting values (timestamps, integers, checks) and buffering',
  'Parquet encoding (hyparquet-writer: dictionary, statistics, UTF-8, pages)',
  'compression (zstd in node:zlib, or the pure-JS snappy)',
  'SHA-256 of the bytes',
  'file writes, fsync, rename, manifest',
  'garbage collection',
  'other (idle, V8, Node internals)',
] as const;

/** One phase's share of the profile. */
export interface PhaseShare {
  phase: (typeof PHASES)[number];
  ms: number;
  percent: number;
}

interface ProfileNode {
  id: number;
  callFrame: { functionName: string; url: string };
  children?: number[];
}

interface CpuProfile {
  nodes: ProfileNode[];
  samples: number[];
  timeDeltas: number[];
  startTime: number;
  endTime: number;
}

/** Reads a `.cpuprofile` file and returns its phases (ms of samples) and its duration. */
export async function profileBreakdown(path: string): Promise<{ profiledMs: number; phases: PhaseShare[] }> {
  const profile = JSON.parse(await readFile(path, 'utf8')) as CpuProfile;
  const byId = new Map(profile.nodes.map((n) => [n.id, n]));
  const parent = new Map<number, number>();
  for (const n of profile.nodes) for (const c of n.children ?? []) parent.set(c, n.id);
  const stackOf = (id: number): ProfileNode[] => {
    const stack: ProfileNode[] = [];
    for (let cur: number | undefined = id; cur !== undefined; cur = parent.get(cur))
      stack.push(byId.get(cur)!);
    return stack; // innermost first
  };
  const phaseCache = new Map<number, number>();
  const totals = new Array<number>(PHASES.length).fill(0);
  for (let i = 0; i < profile.samples.length; i++) {
    const id = profile.samples[i]!;
    let phase = phaseCache.get(id);
    if (phase === undefined) {
      phase = classify(stackOf(id));
      phaseCache.set(id, phase);
    }
    totals[phase] = totals[phase]! + (profile.timeDeltas[i] ?? 0);
  }
  const profiledMs = (profile.endTime - profile.startTime) / 1000;
  const sum = totals.reduce((a, b) => a + b, 0) || 1;
  return {
    profiledMs,
    phases: PHASES.map((phase, i) => ({
      phase,
      ms: Math.round(totals[i]! / 1000),
      percent: Math.round((totals[i]! / sum) * 1000) / 10,
    })),
  };
}

/** Index into {@link PHASES} of one sample, from its stack (innermost frame first). */
function classify(stack: ProfileNode[]): number {
  const leaf = stack[0]!.callFrame;
  const name = leaf.functionName;
  const url = leaf.url;
  if (name === '(garbage collector)') return 7;
  const inStack = (fn: string): boolean => stack.some((n) => n.callFrame.functionName === fn);
  const inUrl = (part: string): boolean => stack.some((n) => n.callFrame.url.includes(part));
  if (!inStack('writeParquetFile')) {
    if (inStack('writeOut') || /fsync|rename|writeFileAtomic|updateManifest/i.test(name)) return 6;
    if (
      inUrl('/pipelines/') ||
      inUrl('/src/') ||
      inUrl('node_modules') ||
      url.startsWith('node:internal/modules')
    )
      return 0;
    return 8;
  }
  if (url.includes('hyparquet-writer/src/snappy') || /zstd|Zstd|zlib/.test(name) || url === 'node:zlib')
    return 4;
  if (inStack('zstdCompressSync') || inStack('gzipSync') || inStack('snappyCompress')) return 4;
  if (url.startsWith('node:internal/crypto') || inStack('digest')) return 5;
  if (
    inStack('writeOut') ||
    /^(writeSync|fsync|fsyncSync|close|closeSync|open|openSync|rename|writeBuffer)$/.test(name)
  )
    return 6;
  if (url.includes('hyparquet-writer') || url === 'node:internal/encoding' || name === 'encodeUtf8String')
    return 3;
  if (inStack('flushGroup')) return 3;
  if (name.startsWith('iterateTableRow') || url.includes('better-sqlite3') || inStack('all')) return 1;
  if (url.includes('/warehouse/') || url.includes('/pipelines/snapshot')) return 2;
  return 8;
}
