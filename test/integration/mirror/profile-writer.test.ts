import { getPriority } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { describe, expect, it, vi } from 'vitest';
import { PROFILE_TEXT_CHECK_MODULE } from '../../../src/api/profile-text-check.js';
import { openMirror } from '../../../src/mirror/database.js';
import type { Mirror } from '../../../src/mirror/database.js';
import type { DomainProfileInput } from '../../../src/mirror/inputs.js';
import { openProfileWriter, WRITER_NICE_STEPS } from '../../../src/mirror/profile-writer.js';
import type { ProfileBatchResult, ProfileWriter } from '../../../src/mirror/profile-writer.js';
import { upsertDomainSummaries } from '../../../src/mirror/store/domains.js';
import { upsertProfiles } from '../../../src/mirror/store/profiles.js';
import { getPipelineRun, startPipelineRun } from '../../../src/mirror/store/runs.js';
import { sleep } from '../../../src/util/sleep.js';
import { tempDir } from '../../helpers/temp-dir.js';
import { licence, paymentMethod, profile, summary } from './builders.js';
import { tempMirror } from './helpers.js';

const T1 = '2025-04-01T00:00:00.000Z';
const T2 = '2025-04-02T00:00:00.000Z';

/**
 * Every row of the tables a sync writes, in a stable order, for comparing two mirrors; without
 * `change_seq` when `withChangeSeq` is false (a writer that took more transactions' worth of
 * sequence numbers for the same rows).
 */
async function contents(mirror: Mirror, withChangeSeq = true): Promise<Record<string, unknown[]>> {
  const out: Record<string, unknown[]> = {};
  for (const table of ['domains', 'licenses', 'payment_methods', 'domain_sections', 'change_log'] as const) {
    const rows = await mirror.db.selectFrom(table).selectAll().execute();
    out[table] = rows
      .map((r) => {
        const { id: _id, change_seq: changeSeq, ...rest } = r as Record<string, unknown>;
        return withChangeSeq && changeSeq !== undefined ? { ...rest, change_seq: changeSeq } : rest;
      })
      .sort((a, b) => JSON.stringify(a).localeCompare(JSON.stringify(b)));
  }
  return out;
}

/** Profiles written as the sync writes them: each as the text of a `GET /domains/:domain` answer. */
function writeProfiles(
  writer: ProfileWriter,
  profiles: readonly DomainProfileInput[],
  syncedAt: string,
): Promise<ProfileBatchResult> {
  const texts = profiles.map((p) => JSON.stringify({ data: p }));
  return writer.writeProfileTexts({ texts, member: 'data' }, syncedAt);
}

function manyProfiles(count: number, prefix: string): ReturnType<typeof profile>[] {
  return Array.from({ length: count }, (_, i) =>
    profile(`${prefix}${i}.example`, {
      licenses: [licence({ license_number: `L-${i}` })],
      payment_methods: [paymentMethod({ normalized_name: `pm${i % 7}` })],
    }),
  );
}

describe('openProfileWriter (mirror writes on a worker thread)', () => {
  it('writes exactly what the store functions write on the calling thread', async () => {
    const threaded = await tempMirror();
    const inline = await tempMirror();
    const summaries = [summary('a.example'), summary('b.example'), summary('c.example')];
    const first = [profile('a.example'), profile('b.example')];
    const second = [
      profile('a.example', { licenses: [] }),
      profile('b.example', { payment_methods: [paymentMethod({ normalized_name: 'crypto' })] }),
    ];

    const writer = await openProfileWriter(threaded);
    const summaryResult = await writer.writeSummaries(summaries, T1);
    const firstResult = await writeProfiles(writer, first, T1);
    const secondResult = await writeProfiles(writer, second, T2);
    await writer.close();

    expect(summaryResult).toEqual(upsertDomainSummaries(inline, summaries, { listedAt: T1 }));
    expect(firstResult).toEqual({
      profilesWritten: upsertProfiles(inline, first, { syncedAt: T1 }).profiles,
      failures: [],
    });
    expect(secondResult).toEqual({
      profilesWritten: upsertProfiles(inline, second, { syncedAt: T2 }).profiles,
      failures: [],
    });
    const expected = await contents(inline);
    expect(expected.domains).toHaveLength(3);
    expect(expected.change_log!.length).toBeGreaterThan(0);
    expect(await contents(threaded)).toEqual(expected);
  });

  it("a new domain's listing row, held by the thread until its profile comes, is committed by a drain without one", async () => {
    const mirror = await tempMirror();
    const writer = await openProfileWriter(mirror, { commitEveryProfiles: 10_000, commitAfterMs: 600_000 });
    await writer.writeSummaries([summary('listed.example'), summary('fetched.example')], T1);
    await writeProfiles(writer, [profile('fetched.example')], T2);
    const read = async (): Promise<unknown[]> =>
      mirror.db
        .selectFrom('domains')
        .select(['domain_normalized', 'first_synced_at', 'last_listed_at', 'profile_synced_at'])
        .orderBy('domain_normalized')
        .execute();
    expect(await read()).toEqual([]);
    await writer.drain();
    expect(await read()).toEqual([
      {
        domain_normalized: 'fetched.example',
        first_synced_at: T1,
        last_listed_at: T1,
        profile_synced_at: T2,
      },
      {
        domain_normalized: 'listed.example',
        first_synced_at: T1,
        last_listed_at: T1,
        profile_synced_at: null,
      },
    ]);
    await writer.close();
  });

  it('a refused profile is reported by domain and every other profile of its batch lands', async () => {
    const mirror = await tempMirror();
    const writer = await openProfileWriter(mirror);
    const batch = [
      profile('good1.example'),
      profile('bad.example', { last_enriched_at: 'not a time' }),
      profile('good2.example'),
    ];
    const result = await writeProfiles(writer, batch, T1);
    await writer.close();
    expect(result.profilesWritten).toBe(2);
    expect(result.failures).toEqual([
      expect.objectContaining({
        item: 'bad.example',
        code: 'ERR_MIRROR_INPUT',
        message: expect.stringContaining('last_enriched_at'),
      }),
    ]);
    const names = (await mirror.db.selectFrom('domains').select('domain_normalized').execute()).map(
      (r) => r.domain_normalized,
    );
    expect(names.sort()).toEqual(['good1.example', 'good2.example']);
  });

  it('profiles given as the texts they arrived in are written as the parsed profiles would be', async () => {
    const threaded = await tempMirror();
    const inline = await tempMirror();
    const batch = [
      profile('t1.example'),
      profile('bad.example', { last_enriched_at: 'not a time' }),
      profile('t2.example', { payment_methods: [paymentMethod({ normalized_name: 'crypto' })] }),
      profile('ünïcode.example'),
    ];
    const texts = [
      ...batch.map((p) => JSON.stringify({ data: p, meta: { unknown: true } })),
      'not json at all',
      JSON.stringify({ data: null }),
      JSON.stringify({ other: batch[0] }),
    ];
    const writer = await openProfileWriter(threaded);
    const result = await writer.writeProfileTexts({ texts, member: 'data' }, T1);
    // The same through the calling thread's writer (an in-memory mirror's path).
    const onCaller = await openProfileWriter(inline, { inline: true });
    const inlineResult = await onCaller.writeProfileTexts({ texts, member: 'data' }, T1);
    await writer.close();
    await onCaller.close();

    expect(result.profilesWritten).toBe(3);
    expect(result.failures).toEqual([
      {
        item: 'texts[4]',
        code: 'ERR_MIRROR_INPUT',
        message: expect.stringContaining('"data" object'),
      },
      {
        item: 'texts[5]',
        code: 'ERR_MIRROR_INPUT',
        message: expect.stringContaining('"data" object'),
      },
      {
        item: 'texts[6]',
        code: 'ERR_MIRROR_INPUT',
        message: expect.stringContaining('"data" object'),
      },
      expect.objectContaining({ item: 'bad.example', code: 'ERR_MIRROR_INPUT' }),
    ]);
    expect(inlineResult).toEqual(result);
    // With keys (the domains asked for), a text that cannot be read is named by its key.
    const keyed = await openProfileWriter(await tempMirror(), { inline: true });
    const keys = ['z.example', 't1.example'];
    expect(
      await keyed.writeProfileTexts({ texts: ['not json', texts[0]!], member: 'data', keys }, T1),
    ).toEqual({
      profilesWritten: 1,
      failures: [{ item: 'z.example', code: 'ERR_MIRROR_INPUT', message: expect.stringContaining('text 0') }],
    });
    await keyed.close();
    const reference = await tempMirror();
    upsertProfiles(reference, [batch[0]!, batch[2]!, batch[3]!], { syncedAt: T1 });
    // Each chunk of texts is its own upsertProfiles call, and a refused one is written again
    // profile by profile: the same rows, with more change sequence numbers taken.
    const expected = await contents(reference, false);
    expect(
      expected.domains!.map((d) => (d as { domain_normalized: string }).domain_normalized).sort(),
    ).toEqual(['t1.example', 't2.example', 'ünïcode.example']);
    expect(await contents(threaded, false)).toEqual(expected);
    expect(await contents(inline, false)).toEqual(expected);
  });

  it('without a member named, takes each text as the profile itself', async () => {
    const mirror = await tempMirror();
    const writer = await openProfileWriter(mirror, { inline: true });
    const good = profile('whole.example');
    expect(await writer.writeProfileTexts({ texts: [JSON.stringify(good), '[1]'] }, T1)).toEqual({
      profilesWritten: 1,
      failures: [
        {
          item: 'texts[1]',
          code: 'ERR_MIRROR_INPUT',
          message: 'profile text 1 of the batch is not a JSON object',
        },
      ],
    });
    await writer.close();
    const reference = await tempMirror();
    upsertProfiles(reference, [good], { syncedAt: T1 });
    expect(await contents(mirror, false)).toEqual(await contents(reference, false));
  });

  it.each([false, true])(
    'with a text check (inline %s), reads each text through it and reports its refusals by key',
    async (inline) => {
      const mirror = await tempMirror();
      const textCheck = { module: PROFILE_TEXT_CHECK_MODULE, name: 'checkProfileText' };
      const writer = await openProfileWriter(mirror, { inline, textCheck });
      const good = profile('good.example', { licenses: [licence({ license_number: 'L-1' })] });
      const texts = [
        JSON.stringify({ success: true, data: good }),
        '{"success":true,"data":{"oops": <html>',
        JSON.stringify({ success: true, data: { ...profile('typed.example'), status: 7 } }),
      ];
      const keys = ['good.example', 'garbled.example', 'typed.example'];
      const result = await writer.writeProfileTexts({ texts, keys }, T1);
      await writer.close();
      expect(result.profilesWritten).toBe(1);
      expect(result.failures).toEqual([
        {
          item: 'garbled.example',
          code: 'ERR_PROTOCOL',
          message: expect.stringMatching(/^GET \/domains\/garbled\.example: response is not valid JSON/),
          retryable: true,
        },
        {
          item: 'typed.example',
          code: 'ERR_PROTOCOL',
          message: 'GET /domains/typed.example: data.status: expected string, got number',
          retryable: false,
        },
      ]);
      const reference = await tempMirror();
      upsertProfiles(reference, [good], { syncedAt: T1 });
      expect(await contents(mirror, false)).toEqual(await contents(reference, false));
      // A module without the named function: the writer does not open.
      await expect(
        openProfileWriter(await tempMirror(), { inline, textCheck: { ...textCheck, name: 'nothing' } }),
      ).rejects.toMatchObject({ code: 'ERR_MIRROR_WRITER', message: expect.stringContaining('"nothing"') });
    },
  );

  it('requests sent together share a transaction, and one refused request does not sink the others', async () => {
    const mirror = await tempMirror();
    const writer = await openProfileWriter(mirror, { maxPending: 100 });
    // Sent without awaiting: they reach the thread together and are tried as one group first.
    const pending = [
      writeProfiles(writer, manyProfiles(50, 'x'), T1),
      writeProfiles(
        writer,
        [profile('y0.example'), profile('broken.example', { domain_normalized: '' })],
        T1,
      ),
      writeProfiles(writer, manyProfiles(50, 'z'), T1),
    ];
    expect(writer.pending).toBe(3);
    const [x, y, z] = await Promise.all(pending);
    await writer.close();
    expect(x).toEqual({ profilesWritten: 50, failures: [] });
    expect(y!.profilesWritten).toBe(1);
    expect(y!.failures).toHaveLength(1);
    expect(y!.failures[0]!.code).toBe('ERR_MIRROR_INPUT');
    expect(z).toEqual({ profilesWritten: 50, failures: [] });
    const { n } = (await mirror.db
      .selectFrom('domains')
      .select((eb) => eb.fn.countAll<number>().as('n'))
      .executeTakeFirstOrThrow()) as { n: number };
    expect(n).toBe(101);
  });

  it('waitForRoom holds the caller while maxPending requests are in flight, and close drains', async () => {
    const mirror = await tempMirror();
    const writer = await openProfileWriter(mirror, { maxPending: 2 });
    let maxSeen = 0;
    for (let i = 0; i < 20; i++) {
      await writer.waitForRoom();
      expect(writer.pending).toBeLessThan(2);
      void writeProfiles(writer, manyProfiles(20, `p${i}-`), T1);
      maxSeen = Math.max(maxSeen, writer.pending);
    }
    expect(maxSeen).toBe(2);
    await writer.close();
    expect(writer.pending).toBe(0);
    const rows = await mirror.db.selectFrom('licenses').select('domain_normalized').execute();
    expect(rows).toHaveLength(400);
    await expect(writeProfiles(writer, [profile('late.example')], T1)).rejects.toThrow(/closed/);
  });

  it("the writer thread runs below the opening thread's priority (Linux), which keeps its own", async () => {
    const own = getPriority(0);
    const mirror = await tempMirror();
    const lowered = await openProfileWriter(mirror);
    const level = await openProfileWriter(mirror, { niceSteps: 0 });
    try {
      if (process.platform === 'linux') {
        expect(lowered.threadNice).toBe(Math.min(19, own + WRITER_NICE_STEPS));
        expect(level.threadNice).toBe(own);
      } else {
        // Elsewhere a priority belongs to the whole process: the writer leaves it alone.
        expect(lowered.threadNice).toBeUndefined();
      }
      expect(getPriority(0)).toBe(own);
      // A lowered writer still writes.
      await writeProfiles(lowered, manyProfiles(3, 'nice-'), T1);
      await lowered.drain();
      expect(await mirror.db.selectFrom('licenses').select('domain_normalized').execute()).toHaveLength(3);
    } finally {
      await lowered.close();
      await level.close();
    }
  });

  it("saves a run's stats on the thread, in order, while the caller's event loop keeps running", async () => {
    const mirror = await tempMirror();
    const runId = startPipelineRun(mirror, { pipeline: 'sync', startedAt: T1 });
    const writer = await openProfileWriter(mirror);
    // Another connection holds the write lock, as the writer's own transaction would for the
    // caller's connection: the stats wait for it on the writer thread, not on this one.
    const other = new Database(mirror.path);
    other.exec('BEGIN IMMEDIATE');
    const saved = writer.writeRunStats(runId, { profilesFetched: 1 });
    // This thread goes on (the wait below ends) while the write waits on the writer's.
    await sleep(50);
    expect(writer.pending).toBe(1);
    other.exec('COMMIT');
    other.close();
    await saved;
    expect(getPipelineRun(mirror, runId)?.stats).toEqual({ profilesFetched: 1 });

    // In order with the writes asked for before them, and an unknown run is the caller's error.
    void writeProfiles(writer, [profile('s.example')], T1);
    await writer.writeRunStats(runId, { profilesFetched: 2 });
    const written = await mirror.db.selectFrom('domains').select('domain_normalized').execute();
    expect(written.map((r) => r.domain_normalized)).toEqual(['s.example']);
    expect(getPipelineRun(mirror, runId)?.stats).toEqual({ profilesFetched: 2 });
    await expect(writer.writeRunStats(runId + 1, {})).rejects.toMatchObject({ code: 'ERR_MIRROR_NOT_FOUND' });
    await writer.close();

    const inline = await openProfileWriter(mirror, { inline: true });
    await inline.writeRunStats(runId, { profilesFetched: 3 });
    expect(getPipelineRun(mirror, runId)?.stats).toEqual({ profilesFetched: 3 });
    await inline.close();
  });

  it('commits every commitEveryProfiles profiles, commitAfterMs after the transaction began, and at drain', async () => {
    const mirror = await tempMirror();
    // What another process (a `status`, the dashboard) sees: committed rows only.
    const reader = new Database(mirror.path, { readonly: true });
    const committed = (): number =>
      (reader.prepare('SELECT count(*) AS n FROM domains').get() as { n: number }).n;
    const writer = await openProfileWriter(mirror, { commitEveryProfiles: 100, commitAfterMs: 600_000 });
    // Answered once applied in the open transaction, not yet committed.
    expect(await writeProfiles(writer, manyProfiles(60, 'a'), T1)).toEqual({
      profilesWritten: 60,
      failures: [],
    });
    expect(committed()).toBe(0);
    // The 100th profile commits the transaction, with everything applied before it.
    await writeProfiles(writer, manyProfiles(50, 'b'), T1);
    expect(committed()).toBe(110);
    await writeProfiles(writer, manyProfiles(10, 'c'), T1);
    expect(committed()).toBe(110);
    // drain() commits what was applied.
    await writer.drain();
    expect(committed()).toBe(120);
    await writer.close();

    // With nothing more coming, the transaction is committed once it is commitAfterMs old.
    const timed = await openProfileWriter(mirror, { commitEveryProfiles: 100, commitAfterMs: 300 });
    await writeProfiles(timed, manyProfiles(5, 'd'), T1);
    expect(committed()).toBe(120);
    await vi.waitFor(() => expect(committed()).toBe(125), { timeout: 10_000, interval: 50 });
    await timed.close();
    reader.close();
  });

  it('a write that fails part-way rolls back the whole open transaction and is reported, never half-committed', async () => {
    const mirror = await tempMirror();
    // A failure the store cannot see coming (here a trigger; in life a full disk or an I/O
    // error), raised after the domain row of the profile is written. Made before the writer
    // opens its transaction, which holds the write lock.
    const other = new Database(mirror.path);
    other.exec(`CREATE TRIGGER refuse_licence BEFORE INSERT ON licenses WHEN NEW.license_number = 'L-boom'
                BEGIN SELECT RAISE(ABORT, 'disk trouble'); END`);
    other.close();
    const writer = await openProfileWriter(mirror, { commitEveryProfiles: 10_000, commitAfterMs: 600_000 });
    await writeProfiles(writer, manyProfiles(20, 'ok'), T1);
    // New domains' listing rows, held by the thread until their profile or the commit (none comes).
    await writer.writeSummaries([summary('listed-only.example'), summary('boom.example')], T1);
    const failed = writeProfiles(
      writer,
      [profile('boom.example', { licenses: [licence({ license_number: 'L-boom' })] })],
      T1,
    ).catch((error: unknown) => error);
    // A drain already under way when the thread fails is refused too: what was answered as
    // applied is lost.
    await expect(writer.drain()).rejects.toThrow(/disk trouble/);
    expect(await failed).toMatchObject({ message: expect.stringContaining('disk trouble') });
    // So is every later request, and a later drain.
    await expect(writer.drain()).rejects.toThrow(/disk trouble/);
    await expect(writeProfiles(writer, [profile('late.example')], T1)).rejects.toThrow(/disk trouble/);
    await expect(writer.close()).rejects.toThrow(/disk trouble/);
    // Nothing of the open transaction reached the file: not the 20 profiles applied before, not
    // the half-written one, not the listing rows held.
    const rows = await mirror.db.selectFrom('domains').select('domain_normalized').execute();
    expect(rows).toEqual([]);
    expect(await mirror.db.selectFrom('licenses').select('license_number').execute()).toEqual([]);
  });

  it('with inline, writes on the calling thread: the row is there before the promise settles', async () => {
    const mirror = await tempMirror();
    const names = async (): Promise<string[]> =>
      (await mirror.db.selectFrom('domains').select('domain_normalized').execute()).map(
        (r) => r.domain_normalized,
      );
    const threaded = await openProfileWriter(mirror);
    const viaThread = writeProfiles(threaded, [profile('t.example')], T1);
    expect(await names()).toEqual([]);
    await viaThread;
    await threaded.close();

    const inline = await openProfileWriter(mirror, { inline: true });
    const viaInline = writeProfiles(inline, [profile('i.example')], T1);
    expect((await names()).sort()).toEqual(['i.example', 't.example']);
    expect(await viaInline).toEqual({ profilesWritten: 1, failures: [] });
    await inline.close();
  });

  it('refuses a read-only mirror, and writes on the calling thread for an in-memory one', async () => {
    const dir = await tempDir('writer-test-');
    const path = join(dir, 'mirror.sqlite');
    (await openMirror(path)).close();
    const readonly = await openMirror(path, { readonly: true });
    await expect(openProfileWriter(readonly)).rejects.toMatchObject({ code: 'ERR_MIRROR_WRITER' });
    await readonly.close();

    const memory = await openMirror(':memory:');
    const writer = await openProfileWriter(memory);
    expect(await writeProfiles(writer, [profile('m.example')], T1)).toEqual({
      profilesWritten: 1,
      failures: [],
    });
    await writer.close();
    const row = await memory.db.selectFrom('domains').select('domain_normalized').executeTakeFirstOrThrow();
    expect(row.domain_normalized).toBe('m.example');
    await memory.close();
  });
});
