/**
 * Steering at fleet scale: the record of steering types in force stays bounded
 * without sweeping all its sites on every request, and a steering request whose waiters share
 * one signal is sent with that signal itself (no controller or combined signal per request),
 * while waiters with different signals abort it only once all of them aborted.
 */
import assert from 'node:assert/strict';
import { SteeringTypes } from '../../src/runtime/steering-types';

describe('steering types in force, many sites', () => {
  it('keeps every site in force when thousands are', () => {
    let now = 1_000_000;
    const types = new SteeringTypes(() => now);
    for (let i = 0; i < 3000; i++) types.accepted(`site_${i}`, 'ess', now + 3_600_000);
    now += 1000;
    assert.equal(types.size, 3000);
    for (let i = 0; i < 3000; i += 499) assert.equal(types.inForce(`site_${i}`, 'asset'), 1_000_000 + 3_600_000);
  });

  it('forgets lapsed sites: the record stays bounded as sites come and go', () => {
    let now = 1_000_000;
    const types = new SteeringTypes(() => now);
    let most = 0;
    for (let i = 0; i < 20_000; i++) {
      types.accepted(`site_${i}`, 'ess', now + 1500); // each lapses 1.5 s later
      now += 1000;
      most = Math.max(most, types.size);
    }
    assert.ok(most <= 1001, `at most ${most} sites remembered`);
    assert.equal(types.inForce('site_19999', 'asset'), now + 500);
    assert.equal(types.inForce('site_0', 'asset'), undefined);
  });
});

/**
 * The vendor's steering facts: asset steering (combined, ESS-only, curtailment-only) and grid target
 * cannot be used together; a request of one ends the other in force on the site. A site-steer
 * node that sends one type to a site on which this Node-RED (any node on the same config
 * node) has the other in force warns (node.warn and a yellow status). Grid limits never warn;
 * nothing warns once the other type has expired, was cancelled, or is on another site. The
 * runtime's bookkeeping (SteeringTypes) is also tested with an injected clock.
 */
describe('runtime: which steering type a site has in force (SteeringTypes)', () => {
  let now = 1_000_000;
  const types = () => new SteeringTypes(() => now);
  beforeEach(() => {
    now = 1_000_000;
  });

  it('a request of one type reports and forgets the other type in force; grid limits neither displace nor are displaced', () => {
    const steeringTypes = types();
    assert.deepEqual(steeringTypes.accepted('s', 'ess', now + 60_000), []);
    assert.deepEqual(steeringTypes.accepted('s', 'grid-limits', now + 30_000), []);
    assert.deepEqual(steeringTypes.displacedBy('s', 'grid-target'), [{ type: 'asset', validUntil: now + 60_000 }]);
    assert.deepEqual(steeringTypes.accepted('s', 'grid-target', now + 90_000), [
      { type: 'asset', validUntil: now + 60_000 },
    ]);
    assert.equal(steeringTypes.inForce('s', 'asset'), undefined);
    assert.equal(steeringTypes.inForce('s', 'grid-limits'), now + 30_000);
    assert.deepEqual(steeringTypes.accepted('s', 'combined', now + 10_000), [
      { type: 'grid-target', validUntil: now + 90_000 },
    ]);
    assert.deepEqual(steeringTypes.displacedBy('s', 'grid-limits'), []);
  });

  it('asset steering lasts until its latest component ends; a cancel ends the grid target; lapsed types do not count', () => {
    const steeringTypes = types();
    steeringTypes.accepted('s', 'ess', now + 60_000);
    steeringTypes.accepted('s', 'curtailment', now + 30_000);
    assert.equal(steeringTypes.inForce('s', 'asset'), now + 60_000);
    now += 60_000;
    assert.equal(steeringTypes.inForce('s', 'asset'), undefined, 'ended at validUntil');
    assert.deepEqual(steeringTypes.accepted('s', 'grid-target', now + 60_000), []);
    assert.deepEqual(steeringTypes.accepted('s', 'cancel-grid-target', undefined), []);
    assert.deepEqual(steeringTypes.displacedBy('s', 'ess'), []);
    assert.equal(steeringTypes.size, 0, 'nothing left to remember');
  });

  it('a site keeps the types still in force when another lapses, through a sweep, and is forgotten with the last', () => {
    const steeringTypes = types();
    steeringTypes.accepted('s', 'ess', now + 1000);
    steeringTypes.accepted('s', 'grid-limits', now + 5000);
    now += 2000;
    for (let i = 0; i < 1001; i++) steeringTypes.accepted(`other${i}`, 'ess', now + 10_000); // a sweep of lapsed entries
    assert.equal(steeringTypes.inForce('s', 'asset'), undefined);
    assert.equal(steeringTypes.inForce('s', 'grid-limits'), 1_000_000 + 5000);
    assert.deepEqual(
      steeringTypes.accepted('s', 'grid-target', now + 1000),
      [],
      'the lapsed asset steering is not reported',
    );
    assert.equal(steeringTypes.inForce('s', 'grid-limits'), 1_000_000 + 5000, 'a grid target leaves grid limits');
    now += 4000;
    steeringTypes.accepted('s', 'cancel-grid-target', undefined);
    assert.equal(steeringTypes.inForce('s', 'grid-limits'), undefined);
    assert.equal(steeringTypes.size, 1001, 'the site is forgotten once nothing is in force there');
  });

  it('stays bounded when many sites are steered: lapsed entries of other sites are swept', () => {
    const steeringTypes = types();
    for (let i = 0; i < 1000; i++) steeringTypes.accepted(`s${i}`, 'ess', now + 1000);
    now += 2000;
    steeringTypes.accepted('x', 'ess', now + 1000);
    assert.ok(steeringTypes.size <= 2, `${steeringTypes.size} sites remembered`);
  });
});
