import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { MINIMUM_NODE_VERSION, unsupportedNodeMessage } from '../../../src/cli/node-version.js';

const PKG = JSON.parse(readFileSync(join(import.meta.dirname, '..', '..', '..', 'package.json'), 'utf8')) as {
  engines: { node: string };
};

describe('unsupportedNodeMessage', () => {
  it("holds the same lowest version as package.json's engines", () => {
    expect(PKG.engines.node).toBe(`>=${MINIMUM_NODE_VERSION}`);
  });

  it.each(['22.19.0', '22.23.3', '23.0.0', '24.21.0', '26.10.0', '30.1.2', 'v24.0.0'])(
    'lets %s run',
    (version) => {
      expect(unsupportedNodeMessage(version, '/opt/node/bin/node')).toBeUndefined();
    },
  );

  it.each(['22.18.9', '22.0.0', '21.99.99', '20.20.2', 'v18.19.1', '16'])(
    'refuses %s, naming the version it needs and the node that ran',
    (version) => {
      const message = unsupportedNodeMessage(version, '/usr/bin/node');
      expect(message).toContain(`needs Node.js ${MINIMUM_NODE_VERSION} or newer`);
      expect(message).toContain(
        `v${version.replace(/^v/, '').split('.').concat('0', '0').slice(0, 3).join('.')}`,
      );
      expect(message).toContain('(/usr/bin/node)');
    },
  );

  it('lets the Node running these tests run (one of the supported lines)', () => {
    expect(unsupportedNodeMessage()).toBeUndefined();
  });
});
