import Database from 'better-sqlite3';
import { describe, expect, it } from 'vitest';
import { syncPipeline } from '../../../pipelines/sync.js';
import { diffMirrorWithTruth } from '../../helpers/mirror-truth.js';
import { startTestSimulator } from '../../helpers/start-simulator.js';
import { openTestContext } from '../../helpers/test-context.js';

// The comparison most mirror tests end with must be able to fail: each kind of difference is
// planted in a synced mirror and has to be reported.
describe('diffMirrorWithTruth', () => {
  it('reports a changed column, a lost licence, a missing and an extra payment method, a changed section', async () => {
    const sim = await startTestSimulator({ domains: 30, seed: 11 });
    const ctx = await openTestContext(sim);
    expect((await syncPipeline(ctx)).status).toBe('done');
    expect(diffMirrorWithTruth(ctx.mirror.path, sim)).toEqual([]);

    const all = sim.control.truth.listDomains();
    const profile = (domain: string) => sim.control.truth.profile(domain)!;
    const withLicence = all.find((d) => profile(d).licenses.length > 0)!;
    const licence = profile(withLicence).licenses[0]!;
    const withPayment = all.find((d) => profile(d).payment_methods.length > 0)!;
    const method = profile(withPayment).payment_methods[0]!.normalized_name;
    const other = all.find((d) => d !== withLicence && d !== withPayment)!;
    const db = new Database(ctx.mirror.path);
    try {
      db.prepare('UPDATE domains SET company_name = ? WHERE domain_normalized = ?').run('Changed', other);
      db.prepare('UPDATE licenses SET removed_at = ? WHERE domain_normalized = ? AND license_number = ?').run(
        '2030-01-01T00:00:00.000Z',
        withLicence,
        licence.license_number,
      );
      // Renamed: the truth's method goes missing and an unknown one appears.
      db.prepare(
        'UPDATE payment_methods SET normalized_name = ? WHERE domain_normalized = ? AND normalized_name = ?',
      ).run('planted', withPayment, method);
      db.prepare(
        "UPDATE domain_sections SET data = '[]' WHERE domain_normalized = ? AND section = 'geo'",
      ).run(other);
    } finally {
      db.close();
    }
    const diffs = diffMirrorWithTruth(ctx.mirror.path, sim);
    expect(diffs).toEqual(
      expect.arrayContaining([
        expect.stringMatching(new RegExp(`^${other}: domains\\.company_name = "Changed"`)),
        `${withLicence}: licence ${licence.jurisdiction}/${licence.license_number} missing`,
        `${withPayment}: payment method ${method} missing`,
        `${withPayment}: payment method planted active in the mirror but not in truth`,
        expect.stringMatching(new RegExp(`^${other}: section geo = \\[\\]`)),
      ]),
    );
    expect(diffMirrorWithTruth(ctx.mirror.path, sim, all, { sections: false }).join('\n')).not.toMatch(
      /section/,
    );
    expect(diffMirrorWithTruth(ctx.mirror.path, sim, [])).toEqual(['no domains to compare']);
  });
});
