import { sql } from 'kysely';
import type { Kysely } from 'kysely';

/*
 * `change_log` rows are written by the store (src/mirror/store/child-history.ts), in the same
 * transaction as the licence or payment method change they record, instead of by triggers.
 * Frozen once merged.
 *
 * Why: the store already works out, for every licence and payment method, whether it was added,
 * changed, removed or restored, and the triggers made each upsert a trigger program with a
 * statement journal. Profile upserts without the triggers measured clearly less CPU (CPU per
 * profile today: docs/benchmarks.md "sync"). The rows are the same as the triggers wrote
 * (docs/schema.md "change_log").
 */

const TRIGGERS = [
  'licenses_log_insert',
  'licenses_log_update',
  'payment_methods_log_insert',
  'payment_methods_log_update',
] as const;

/** Drops the history triggers of 0001_initial. */
// eslint-disable-next-line @typescript-eslint/no-explicit-any -- migrations are frozen in time
export async function up(db: Kysely<any>): Promise<void> {
  for (const trigger of TRIGGERS) await sql.raw(`DROP TRIGGER IF EXISTS ${trigger}`).execute(db);
}

/** Puts the triggers of 0001_initial back, as they were written there. */
// eslint-disable-next-line @typescript-eslint/no-explicit-any -- migrations are frozen in time
export async function down(db: Kysely<any>): Promise<void> {
  const tables = [
    {
      table: 'licenses',
      key: (r: string) => `${r}.jurisdiction || ':' || ${r}.license_number`,
      value: (r: string) => `${r}.status`,
    },
    {
      table: 'payment_methods',
      key: (r: string) => `${r}.normalized_name`,
      value: (r: string) => `coalesce(${r}.category, '') || '/' || coalesce(${r}.confidence, '')`,
    },
  ];
  for (const { table, key, value } of tables) {
    await sql
      .raw(
        `CREATE TRIGGER ${table}_log_insert AFTER INSERT ON ${table}
         BEGIN
           INSERT INTO change_log (at, table_name, domain_normalized, item_key, change, old_value, new_value)
           VALUES (NEW.mirror_updated_at, '${table}', NEW.domain_normalized, ${key('NEW')},
                   CASE WHEN NEW.removed_at IS NULL THEN 'added' ELSE 'removed' END, NULL, ${value('NEW')});
         END`,
      )
      .execute(db);
    await sql
      .raw(
        `CREATE TRIGGER ${table}_log_update AFTER UPDATE ON ${table}
         BEGIN
           INSERT INTO change_log (at, table_name, domain_normalized, item_key, change, old_value, new_value)
           SELECT NEW.mirror_updated_at, '${table}', NEW.domain_normalized, ${key('NEW')},
                  CASE
                    WHEN OLD.removed_at IS NULL AND NEW.removed_at IS NOT NULL THEN 'removed'
                    WHEN OLD.removed_at IS NOT NULL AND NEW.removed_at IS NULL THEN 'restored'
                    ELSE 'changed'
                  END,
                  ${value('OLD')}, ${value('NEW')}
           WHERE (OLD.removed_at IS NULL) <> (NEW.removed_at IS NULL)
              OR ${value('OLD')} IS NOT ${value('NEW')};
         END`,
      )
      .execute(db);
  }
}
