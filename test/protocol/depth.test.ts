/**
 * Deep messages: a message property nested deeper than INPUTS.maxDepth (64) is refused by every
 * node before any other work, with an error naming the property; the property is replaced in
 * the message a Catch node gets, so Node-RED's recursive copy of it cannot overflow the stack.
 * Node-RED survives a 100,000-level-deep payload into each node.
 */
import assert from 'node:assert/strict';
import { INPUTS } from '../../src/protocol';
import { deepProperties, inputProblem, nestedDeeperThan, refusedProperties } from '../../src/protocol/depth';

/** `levels` nested objects (or arrays) around 1. */
function nested(levels: number, array = false): unknown {
  let value: unknown = 1;
  for (let i = 0; i < levels; i++) value = array ? [value] : { a: value };
  return value;
}

describe('deep input: the depth of a value', () => {
  it('64 levels pass, 65 do not, for objects and arrays; a plain value has none', () => {
    assert.equal(INPUTS.maxDepth, 64);
    for (const array of [false, true]) {
      assert.equal(nestedDeeperThan(nested(64, array), 64), false);
      assert.equal(nestedDeeperThan(nested(65, array), 64), true);
    }
    assert.equal(nestedDeeperThan('text', 0), false);
    assert.equal(nestedDeeperThan(null, 0), false);
    assert.equal(nestedDeeperThan({}, 0), true, '{} is one level');
  });

  it('a value 1,000,000 levels deep is judged without overflowing the stack', () => {
    assert.equal(nestedDeeperThan(nested(1_000_000), 64), true);
  });

  it('a reference back to an object that contains it adds no level (Node-RED copies it as a reference)', () => {
    const tree: any = { a: { b: {} } };
    tree.a.b.c = tree;
    assert.equal(nestedDeeperThan(tree, 3), false);
    assert.equal(nestedDeeperThan(tree, 2), true);
    tree.a.deep = nested(100);
    assert.equal(nestedDeeperThan(tree, 64), true);
  });

  it('an object referred to many times is walked once: 60 levels of two references each end (2^60 paths)', () => {
    let value: unknown = 1;
    for (let i = 0; i < 60; i++) value = { left: value, right: value };
    assert.equal(nestedDeeperThan(value, 64), false);
    assert.equal(nestedDeeperThan({ x: [value, { y: value }] }, 61), true);
  });

  it('an array, Map or Set of more elements than allowed is found by its size, at any depth, before any element is read', () => {
    let reads = 0;
    const huge = new Proxy(new Array(200_001).fill({ a: 1 }), {
      get: (t, k, r) => {
        if (typeof k === 'string' && /^\d+$/.test(k)) reads++;
        return Reflect.get(t, k, r);
      },
    });
    assert.deepEqual(inputProblem({ x: [1, { y: huge }] }, 64, 200_000), { kind: 'long', length: 200_001 });
    assert.equal(reads, 0);
    assert.deepEqual(inputProblem(new Set(Array.from({ length: 11 }, (_, i) => i)), 64, 10), {
      kind: 'long',
      length: 11,
    });
    assert.equal(inputProblem(new Array(10).fill(1), 64, 10), undefined, 'as many as allowed pass');
    assert.deepEqual(inputProblem(nested(65), 64, 10), { kind: 'deep' });
    assert.deepEqual(
      refusedProperties({ payload: new Array(11).fill(0), body: nested(70), topic: 't' }, 64, 10).map((r) => [
        r.key,
        r.problem.kind,
      ]),
      [
        ['payload', 'long'],
        ['body', 'deep'],
      ],
    );
  });

  it('binary data is a value, not levels; Maps and Sets count', () => {
    assert.equal(nestedDeeperThan({ b: Buffer.alloc(1_000_000) }, 1), false);
    assert.equal(nestedDeeperThan(new Map([['k', nested(64)]]), 64), true);
    assert.equal(nestedDeeperThan(new Set([nested(64)]), 64), true);
  });

  it('the deep properties of a message: every property but req and res (Node-RED does not copy those)', () => {
    const deep = nested(100);
    assert.deepEqual(deepProperties({ payload: deep, topic: 't', body: deep, req: deep, res: deep }, 64), [
      'payload',
      'body',
    ]);
    assert.deepEqual(deepProperties({ payload: nested(64) }, 64), []);
  });
});
