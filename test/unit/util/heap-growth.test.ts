import { describe, expect, it } from 'vitest';
import {
  CLI_SEMI_SPACE_MB,
  youngGenerationMayGrow,
  type NewSpaceStatistics,
} from '../../../src/util/heap-growth.js';

/**
 * `new_space` as V8 reported it under `--max-semi-space-size=8`, read after each growth of the
 * semi-spaces (1, 2, 4 then 8 MB; 2026-11-30, the allocation of
 * test/integration/cli/young-generation-child.ts): [space_size, space_used_size,
 * space_available_size].
 */
const READINGS: Record<string, [number, number, number][]> = {
  'Node 22.23.3': [
    [1048576, 686312, 344600],
    [4194304, 671840, 1389984],
    [8388608, 801416, 3322232],
    [16777216, 1279192, 6968104],
  ],
  'Node 24.21.0': [
    [1048576, 658696, 389816],
    [4194304, 463816, 1633208],
    [8388608, 786224, 3407824],
    [16777216, 1020240, 7367856],
  ],
  // Committed as used: 7 MB (under half of the 16 MB cap) once the semi-spaces are at 8 MB.
  'Node 26.10.0': [
    [786432, 708928, 339584],
    [2097152, 490096, 1606928],
    [3932160, 802104, 3391944],
    [7340032, 1255312, 7132784],
  ],
};

const stats = ([space_size, space_used_size, space_available_size]: [
  number,
  number,
  number,
]): NewSpaceStatistics => ({
  space_size,
  space_used_size,
  space_available_size,
});

describe('youngGenerationMayGrow', () => {
  it.each(Object.entries(READINGS))(
    'lets the semi-spaces grow from 1, 2 and 4 MB, and not from 8 MB, the cap (%s)',
    (_node, readings) => {
      expect(readings.map((reading) => youngGenerationMayGrow(stats(reading)))).toEqual([
        true,
        true,
        true,
        false,
      ]);
    },
  );

  it("reads the capacity, not the committed size alone, which lags behind a growth on Node 26's V8", () => {
    const atCap = stats(READINGS['Node 26.10.0']![3]!);
    // Twice the committed size is under the cap: a rule reading it alone would let V8 grow to 16 MB.
    expect(2 * atCap.space_size).toBeLessThan(2 * CLI_SEMI_SPACE_MB * 1024 * 1024);
    expect(youngGenerationMayGrow(atCap)).toBe(false);
  });

  it('takes the larger reading: a committed size over the cap holds it whatever the other says', () => {
    const MB = 1024 * 1024;
    expect(youngGenerationMayGrow({ space_size: 16 * MB, space_used_size: 0, space_available_size: 0 })).toBe(
      false,
    );
    expect(
      youngGenerationMayGrow({ space_size: 8 * MB, space_used_size: 1 * MB, space_available_size: 3 * MB }),
    ).toBe(true);
    // A reading above the size (Nodes 24 and 26, now and then) holds it back until a later notice.
    expect(
      youngGenerationMayGrow({
        space_size: 8 * MB,
        space_used_size: 1 * MB,
        space_available_size: 3 * MB + 256 * 1024,
      }),
    ).toBe(false);
  });

  it('scales with the semi-space size it is given', () => {
    const reading = stats(READINGS['Node 24.21.0']![3]!);
    expect(youngGenerationMayGrow(reading)).toBe(false);
    expect(youngGenerationMayGrow(reading, 32 * 1024 * 1024)).toBe(true);
  });
});
