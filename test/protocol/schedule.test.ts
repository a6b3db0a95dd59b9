/**
 * The schedule's checks (protocol/schedule.ts): a schedule is checked as a whole;
 * every refusal names the slot and the field; consecutive identical slots merge into runs, and
 * a run longer than maxValidity is split so every signal ends.
 */
import assert from 'node:assert/strict';
import { ValidationError } from '../../src/protocol/errors';
import { MINUTE_MS, QUARTER_HOUR_MS } from '../../src/protocol/time';
import { MAX_SLOTS, parseSetting, parseSlots, type ScheduleSettings } from '../../src/protocol/schedule';
import { runsOf, settingKey } from '../../src/protocol/schedule-runs';

const T0 = Date.UTC(2030, 0, 7, 8, 0);
const SETTINGS: ScheduleSettings = {
  essUnit: 'kW',
  curtailmentUnit: 'kW',
  gridUnit: 'kW',
  maxEssPower: 0,
  maxCurtailment: 0,
  maxGridPower: 0,
  maxGridLimit: 0,
  allowMaximizeGridImport: true,
};
const slotAt = (i: number, extra: Record<string, unknown> = {}) => ({
  start: T0 + i * QUARTER_HOUR_MS,
  end: T0 + (i + 1) * QUARTER_HOUR_MS,
  ...extra,
});

/** The refusal of `payload`: its field and message. */
function refused(payload: unknown, s: Partial<ScheduleSettings> = {}, now = T0 - MINUTE_MS): ValidationError {
  try {
    parseSlots(payload, { ...SETTINGS, ...s }, now);
  } catch (e) {
    assert.ok(e instanceof ValidationError, `a ValidationError: ${e}`);
    return e;
  }
  assert.fail('expected a refusal');
}

describe('schedule: checks', () => {
  it("slots: times in every form (epoch ms, ISO, Date, duration in minutes), values in the node's unit or {value, unit}", () => {
    const slots = parseSlots(
      [
        { start: T0, end: new Date(T0 + QUARTER_HOUR_MS).toISOString(), energyStorage: -200 },
        {
          start: new Date(T0 + QUARTER_HOUR_MS),
          duration: 15,
          energyStorage: { value: -0.1, unit: 'MW' },
          curtailment: 300,
          maximizeGridImport: true,
        },
        { start: String(T0 + 30 * MINUTE_MS), duration: '30', gridTarget: 5, deadband: { value: 500, unit: 'W' } },
        {
          start: T0 + 60 * MINUTE_MS,
          duration: 15,
          gridLimits: { upper: 100, lower: { value: -0.2, unit: 'MW' } },
          price: 0.31,
          energyKWh: 2,
          socStart: 50,
          socEnd: 60,
        },
      ],
      SETTINGS,
      T0,
    );
    assert.deepEqual(
      slots.map((s) => [s.index, s.start - T0, s.end - T0]),
      [
        [0, 0, 900_000],
        [1, 900_000, 1_800_000],
        [2, 1_800_000, 3_600_000],
        [3, 3_600_000, 4_500_000],
      ],
    );
    assert.deepEqual(slots[0].setting, { energyStorageSetting: { value: -200, unit: 'kW' } });
    assert.deepEqual(slots[1].setting, {
      energyStorageSetting: { value: -0.1, unit: 'MW' },
      productionCurtailment: { value: 300, unit: 'kW' },
      maximizeGridImport: true,
    });
    assert.deepEqual(slots[2].setting, {
      gridTarget: { setpoint: { value: 5, unit: 'kW' }, deadband: { value: 500, unit: 'W' } },
    });
    assert.deepEqual(slots[3].setting, {
      gridLimits: { upperLimit: { value: 100, unit: 'kW' }, lowerLimit: { value: -0.2, unit: 'MW' } },
    });
  });

  it("{ slots, unit }: the unit of every number; the node's units otherwise", () => {
    const inWatts = parseSlots(
      { slots: [slotAt(0, { energyStorage: -5, curtailment: 7, gridLimits: { upper: 9 } })], unit: 'W' },
      SETTINGS,
      T0,
    );
    assert.deepEqual(inWatts[0].setting, {
      energyStorageSetting: { value: -5, unit: 'W' },
      productionCurtailment: { value: 7, unit: 'W' },
      gridLimits: { upperLimit: { value: 9, unit: 'W' } },
    });
    const inNodeUnits = parseSlots(
      [slotAt(0, { energyStorage: -5, curtailment: 40 })],
      { ...SETTINGS, essUnit: 'MW', curtailmentUnit: '%' },
      T0,
    );
    assert.deepEqual(inNodeUnits[0].setting, {
      energyStorageSetting: { value: -5, unit: 'MW' },
      productionCurtailment: { value: 40, unit: '%' },
    });
    assert.match(
      refused({ slots: [slotAt(0, { energyStorage: 1 })], unit: '%' }).message,
      /^msg\.payload\.unit must be one of W, kW, MW/,
    );
  });

  it('every refusal names the slot and the field; the forms it accepts', () => {
    const cases: Array<[unknown, RegExp, Partial<ScheduleSettings>?]> = [
      [5, /^msg\.payload must be an array of slots/],
      [[], /^msg\.payload must have at least one slot/],
      [{ slots: 'x' }, /^msg\.payload\.slots must be an array/],
      [[slotAt(0, { energyStorage: 1 }), 7], /^msg\.payload\[1\] must be a slot object/],
      [
        [slotAt(0, { energyStorage: 1, energyStorag: 2 })],
        /^msg\.payload\[0\]\.energyStorag is not a slot field; accepted: start, end, duration/,
      ],
      [[{ end: T0 + 1, energyStorage: 1 }], /^msg\.payload\[0\]\.start is required/],
      [
        [{ start: 'tomorrow', duration: 15, energyStorage: 1 }],
        /^msg\.payload\[0\]\.start must be epoch milliseconds, an ISO 8601 string or a Date; got "tomorrow"/,
      ],
      [[{ start: T0, energyStorage: 1 }], /^msg\.payload\[0\]\.end is required .* or duration in minutes/],
      [
        [{ start: T0, end: T0 + 1, duration: 1, energyStorage: 1 }],
        /^msg\.payload\[0\]\.duration must not be given with end/,
      ],
      [
        [{ start: T0, duration: 0, energyStorage: 1 }],
        /^msg\.payload\[0\]\.duration must be a positive number of minutes/,
      ],
      [
        [slotAt(0, { energyStorage: 1 }), { start: T0 + QUARTER_HOUR_MS, end: T0 + QUARTER_HOUR_MS, energyStorage: 1 }],
        /^msg\.payload\[1\]\.end must be after the slot's start/,
      ],
      [
        [slotAt(2, { energyStorage: 1 }), slotAt(1, { energyStorage: 1 })],
        /^msg\.payload\[1\]\.start must not be before the start of msg\.payload\[0\].*sorted/,
      ],
      [
        [slotAt(0, { energyStorage: 1 }), { start: T0 + 10 * MINUTE_MS, duration: 15, energyStorage: 1 }],
        /^msg\.payload\[1\]\.start overlaps msg\.payload\[0\], which ends at/,
      ],
      [[slotAt(0)], /^msg\.payload\[0\] sets nothing/],
      [[slotAt(0, { energyStorage: 'lots' })], /^msg\.payload\[0\]\.energyStorage must be a finite number/],
      [
        [slotAt(0, { energyStorage: { value: 1, unit: 'mW' } })],
        /^msg\.payload\[0\]\.energyStorage\.unit must be one of W, kW, MW/,
      ],
      [[slotAt(0, { curtailment: -1 })], /^msg\.payload\[0\]\.curtailment\.value must be 0 or more/],
      [[slotAt(0, { maximizeGridImport: 'yes' })], /^msg\.payload\[0\]\.maximizeGridImport must be true or false/],
      [[slotAt(0, { deadband: 1, energyStorage: 1 })], /^msg\.payload\[0\]\.deadband is used only with gridTarget/],
      [[slotAt(0, { gridTarget: 1, deadband: -1 })], /^msg\.payload\[0\]\.deadband must be 0 or more/],
      [[slotAt(0, { gridLimits: 5 })], /^msg\.payload\[0\]\.gridLimits must be \{upper, lower\}/],
      [[slotAt(0, { gridLimits: {} })], /^msg\.payload\[0\]\.gridLimits sets no limit/],
      [
        [slotAt(0, { gridLimits: { upperLimit: 5 } })],
        /^msg\.payload\[0\]\.gridLimits\.upperLimit is not a grid limit; accepted: upper, lower/,
      ],
      [
        [slotAt(0, { gridLimits: { upper: -100, lower: 50 } })],
        /^msg\.payload\[0\]\.gridLimits\.lower must not be above the upper limit/,
      ],
      [
        [slotAt(0, { energyStorage: 1 }), slotAt(1, { energyStorage: -5, gridTarget: 3 })],
        /^msg\.payload\[1\]\.gridTarget cannot be combined with energyStorage in one slot: asset steering and grid target end each other/,
      ],
      [
        [slotAt(0, { curtailment: 5, gridTarget: 3 })],
        /^msg\.payload\[0\]\.gridTarget cannot be combined with curtailment/,
      ],
      [
        [
          slotAt(0, { energyStorage: 1 }),
          slotAt(1, { energyStorage: 1 }),
          slotAt(2, { energyStorage: 1 }),
          slotAt(3, { energyStorage: -250 }),
        ],
        /^msg\.payload\[3\]\.energyStorage must be within the node's limit maxEssPower = 200000 W \(either sign\); got -250 kW; nothing was sent/,
        { maxEssPower: 200_000 },
      ],
      [
        [slotAt(0, { curtailment: { value: 1, unit: 'MW' } })],
        /^msg\.payload\[0\]\.curtailment must be within the node's limit maxCurtailment = 500000 W/,
        { maxCurtailment: 500_000 },
      ],
      [
        [slotAt(0, { gridTarget: -60 })],
        /^msg\.payload\[0\]\.gridTarget must be within the node's limit maxGridPower = 50000 W/,
        { maxGridPower: 50_000 },
      ],
      [
        [slotAt(0, { gridTarget: 10, deadband: 60 })],
        /^msg\.payload\[0\]\.deadband must be within the node's limit maxGridPower = 50000 W/,
        { maxGridPower: 50_000 },
      ],
      [
        [slotAt(0, { gridLimits: { upper: 10, lower: -300 } })],
        /^msg\.payload\[0\]\.gridLimits\.lower must be within the node's limit maxGridLimit = 200000 W/,
        { maxGridLimit: 200_000 },
      ],
      [
        [slotAt(0, { maximizeGridImport: true })],
        /^msg\.payload\[0\]\.maximizeGridImport is true, but this node forbids maximize grid import/,
        { allowMaximizeGridImport: false },
      ],
      [
        { slots: [slotAt(0, { energyStorage: 1 }), slotAt(1, { energyStorage: 'x' })] },
        /^msg\.payload\.slots\[1\]\.energyStorage must be a finite number/,
      ],
    ];
    for (const [payload, re, s] of cases) assert.match(refused(payload, s).message, re);
  });

  it('all in the past is refused; a schedule whose last slot is in progress is accepted', () => {
    const slots = [slotAt(0, { energyStorage: 1 }), slotAt(1, { energyStorage: 2 })];
    assert.match(
      refused(slots, {}, T0 + 30 * MINUTE_MS).message,
      /^msg\.payload has only slots in the past: the last one ended at 2030-01-07T08:30:00\.000Z; nothing was sent$/,
    );
    assert.equal(parseSlots(slots, SETTINGS, T0 + 20 * MINUTE_MS).length, 2);
    assert.equal(refused(slots, {}, T0 + 30 * MINUTE_MS).kind, 'unprocessable');
  });

  it(`at most ${MAX_SLOTS} slots`, () => {
    const many = Array.from({ length: MAX_SLOTS + 1 }, (_, i) => slotAt(i, { energyStorage: 1 }));
    assert.match(
      refused(many).message,
      new RegExp(`^msg\\.payload must have at most ${MAX_SLOTS} slots; got ${MAX_SLOTS + 1}`),
    );
    assert.equal(parseSlots(many.slice(0, MAX_SLOTS), SETTINGS, T0).length, MAX_SLOTS);
  });
});

describe('schedule: runs', () => {
  const slots = (values: Array<number | null>) =>
    parseSlots(
      values.map((v, i) => (v === null ? null : slotAt(i, { energyStorage: v }))).filter((x) => x !== null),
      SETTINGS,
      T0,
    );

  it('consecutive identical slots merge; a change, a gap or another unit starts a new run', () => {
    const merged = runsOf(slots([-200, -200, -200, -100, -100, 0]));
    assert.deepEqual(
      merged.map((r) => [r.first, r.last, (r.start - T0) / QUARTER_HOUR_MS, (r.end - T0) / QUARTER_HOUR_MS]),
      [
        [0, 2, 0, 3],
        [3, 4, 3, 5],
        [5, 5, 5, 6],
      ],
    );
    assert.deepEqual(
      merged[0].slots.map((s) => s.index),
      [0, 1, 2],
    );
    // A gap (slot 2 missing): the slots around it stay apart.
    const apart = runsOf(
      parseSlots(
        [slotAt(0, { energyStorage: 5 }), slotAt(1, { energyStorage: 5 }), slotAt(3, { energyStorage: 5 })],
        SETTINGS,
        T0,
      ),
    );
    assert.deepEqual(
      apart.map((r) => [r.first, r.last]),
      [
        [0, 1],
        [2, 2],
      ],
    );
    // The same power in another unit is another setting (sent as given).
    const otherUnit = runsOf(
      parseSlots(
        [slotAt(0, { energyStorage: 1 }), slotAt(1, { energyStorage: { value: 1000, unit: 'W' } })],
        SETTINGS,
        T0,
      ),
    );
    assert.equal(otherUnit.length, 2);
  });

  it('a run longer than maxValidity is split into runs of at most that length, each with its part of the slots', () => {
    const runs = runsOf(slots(Array(12).fill(-50)), 60 * MINUTE_MS);
    assert.deepEqual(
      runs.map((x) => [(x.start - T0) / MINUTE_MS, (x.end - T0) / MINUTE_MS, x.first, x.last]),
      [
        [0, 60, 0, 3],
        [60, 120, 4, 7],
        [120, 180, 8, 11],
      ],
    );
    const odd = runsOf(parseSlots([{ start: T0, duration: 100, energyStorage: 1 }], SETTINGS, T0), 45 * MINUTE_MS);
    assert.deepEqual(
      odd.map((x) => [(x.start - T0) / MINUTE_MS, (x.end - T0) / MINUTE_MS, x.first]),
      [
        [0, 45, 0],
        [45, 90, 0],
        [90, 100, 0],
      ],
    );
    assert.deepEqual(odd[1].slots, [{ index: 0, start: T0 + 45 * MINUTE_MS, end: T0 + 90 * MINUTE_MS }]);
  });

  it('with now: slots that ended are left out, the one in progress stays whole', () => {
    const runs = runsOf(slots([1, 2, 3]), undefined, T0 + 20 * MINUTE_MS);
    assert.deepEqual(
      runs.map((x) => [x.first, x.start - T0]),
      [
        [1, QUARTER_HOUR_MS],
        [2, 2 * QUARTER_HOUR_MS],
      ],
    );
  });

  it('a 96-slot day of hourly values: 24 runs, one per change of setting', () => {
    const values = Array.from({ length: 96 }, (_, i) => [-200, -100, 0, 100][Math.floor(i / 4) % 4]);
    const runs = runsOf(slots(values), 1440 * MINUTE_MS);
    assert.equal(runs.length, 24);
    assert.ok(runs.every((x) => x.end - x.start === 4 * QUARTER_HOUR_MS));
  });

  it('a saved setting reads back equal, and is checked against the current limits', () => {
    const [s] = parseSlots([slotAt(0, { energyStorage: -200, curtailment: 3 })], SETTINGS, T0);
    const expected = {
      energyStorageSetting: { value: -200, unit: 'kW' },
      productionCurtailment: { value: 3, unit: 'kW' },
    };
    assert.deepStrictEqual(s.setting, expected);
    const back = parseSetting(JSON.parse(JSON.stringify(s.setting)), SETTINGS, 'stored');
    assert.deepStrictEqual(back, expected);
    assert.equal(
      settingKey(back),
      '{"energyStorageSetting":{"value":-200,"unit":"kW"},"productionCurtailment":{"value":3,"unit":"kW"}}',
    );
    assert.throws(
      () => parseSetting(s.setting, { ...SETTINGS, maxEssPower: 100_000 }, 'stored'),
      /^ValidationError: stored\.energyStorage must be within the node's limit maxEssPower = 100000 W/,
    );
    assert.throws(
      () => parseSetting({ energyStorageSetting: 5 }, SETTINGS, 'stored'),
      /stored\.energyStorageSetting must be \{value: number/,
    );
  });
});
