/**
 * Reading a V8 CPU profile (`node --cpu-prof`) sample by sample, with each sample's stack: what
 * bench/export-load-profile.ts and bench/sync-profile.ts group into the "where the time goes"
 * tables of docs/benchmarks.md.
 */
import { readFile } from 'node:fs/promises';

/** A frame of a sample's stack. */
export interface CallFrame {
  functionName: string;
  url: string;
}

interface ProfileNode {
  id: number;
  callFrame: CallFrame;
  children?: number[];
}

/** The parts of a `.cpuprofile` file read here. */
export interface CpuProfile {
  nodes: ProfileNode[];
  samples: number[];
  timeDeltas: number[];
}

/** One sample: its stack, innermost frame first, and the microseconds it stands for. */
export interface Sample {
  stack: CallFrame[];
  micros: number;
}

const HTTP_URL = /undici|node:net|stream_base_commons|node:internal\/streams/;
const HTTP_FN =
  /^(writeLatin1String|writeUtf8String|writev|onStreamRead|utf8Slice|latin1Slice|readableAddChunk|onConnectionread)$/;

/** Whether a frame is the HTTP client's: undici, Node's sockets and streams, their string writes. */
export function isHttpFrame(frame: CallFrame): boolean {
  return HTTP_URL.test(frame.url) || HTTP_FN.test(frame.functionName);
}

/**
 * Whether a sample ran in a validator that `z.compile` generated (src/api/wire.ts): those are
 * anonymous functions with no script URL, nested in one another, and the first frame out of them
 * that has a URL is zod's. Their time is response validation, though no frame names zod.
 */
export function inCompiledZodValidator(sample: Sample): boolean {
  const leaf = sample.stack[0];
  if (
    leaf === undefined ||
    leaf.url !== '' ||
    (leaf.functionName !== '' && leaf.functionName !== '(anonymous)')
  )
    return false;
  const caller = sample.stack.find((f) => f.url !== '');
  return caller !== undefined && /zod/.test(caller.url);
}

/** Frames of our own code (the built `src/` and `pipelines/`), as the profile names them. */
export const OUR_CODE = /\/dist\/(src|pipelines)\//;

/** Reads a `.cpuprofile` file. */
export async function readCpuProfile(path: string): Promise<CpuProfile> {
  return JSON.parse(await readFile(path, 'utf8')) as CpuProfile;
}

/** Every sample of `profile` with its stack, in time order. */
export function samplesOf(profile: CpuProfile): Sample[] {
  const byId = new Map(profile.nodes.map((n) => [n.id, n]));
  const parent = new Map<number, number>();
  for (const n of profile.nodes) for (const c of n.children ?? []) parent.set(c, n.id);
  const stacks = new Map<number, CallFrame[]>();
  const stackOf = (id: number): CallFrame[] => {
    let stack = stacks.get(id);
    if (stack === undefined) {
      stack = [];
      for (let n: number | undefined = id; n !== undefined; n = parent.get(n))
        stack.push(byId.get(n)!.callFrame);
      stacks.set(id, stack);
    }
    return stack;
  };
  return profile.samples.map((id, i) => ({ stack: stackOf(id), micros: profile.timeDeltas[i] ?? 0 }));
}

/** Microseconds per group, largest first. */
export function groupSamples(
  samples: readonly Sample[],
  groupOf: (sample: Sample) => string,
): Array<[string, number]> {
  const micros = new Map<string, number>();
  for (const s of samples) {
    const group = groupOf(s);
    micros.set(group, (micros.get(group) ?? 0) + s.micros);
  }
  return [...micros].sort((a, b) => b[1] - a[1]);
}
