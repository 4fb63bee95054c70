/**
 * A real headless Chromium for the dashboard's browser tests, driven by playwright-core.
 *
 * The browser comes from the npm registry, so `npm install` + `npm test` on a fresh clone needs
 * nothing installed by hand: `@sparticuz/chromium` ships a Chromium inside its package and
 * unpacks it into the temp dir on first use (playwright's and puppeteer's own browser downloads
 * come from hosts outside the registry). `CHROMIUM_EXECUTABLE` names another Chromium instead,
 * for a platform that package does not cover (its npm package carries a Linux x64 build only).
 *
 * Flags keep the browser off the network and quiet: no background networking, component
 * updates, sync or first-run work. playwright starts it with a fresh, empty user-data dir of its
 * own in the temp dir and removes it on close.
 */
import type { Browser } from 'playwright-core';

export const CHROMIUM_FLAGS: readonly string[] = Object.freeze([
  '--headless',
  '--no-sandbox',
  '--disable-gpu',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
  '--no-first-run',
  '--disable-dev-shm-usage',
]);

/** The Chromium binary to launch: `CHROMIUM_EXECUTABLE`, else the one inside @sparticuz/chromium. */
export async function chromiumExecutable(): Promise<string> {
  const fromEnv = process.env.CHROMIUM_EXECUTABLE;
  if (fromEnv !== undefined && fromEnv !== '') return fromEnv;
  const { default: packaged } = await import('@sparticuz/chromium');
  return packaged.executablePath();
}

/** Launches the headless Chromium; close it with `browser.close()`. */
export async function launchChromium(): Promise<Browser> {
  const { chromium } = await import('playwright-core');
  return chromium.launch({
    executablePath: await chromiumExecutable(),
    headless: true,
    args: [...CHROMIUM_FLAGS],
  });
}
