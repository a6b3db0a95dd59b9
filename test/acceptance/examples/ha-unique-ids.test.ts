/**
 * The examples that steer a site from Home Assistant (04, 10) announce entities whose unique
 * ids include the site: two sites (two imports of an example, edited for another site) must
 * give two sets of entities, never one entity that both overwrite. The discovery function
 * nodes run here on their own, as a Function node runs them, as shipped and with the site
 * changed; the expected site is the one the example's site steer node steers.
 */
import assert from 'node:assert/strict';
import { exampleFile, readExample } from '../../helpers/examples';

interface Config {
  topic: string;
  retain: boolean;
  payload: { unique_id: string; default_entity_id: string; device: { identifiers: string[] } };
}

/** The example's discovery function node, its code with the site changed to `site`, run: its discovery messages. */
function announce(nn: string, name: string, site?: string): { configs: Config[]; steered: string } {
  const nodes = readExample(exampleFile(nn));
  const steers = nodes.filter((n) => n.type === 'ems-site-steer');
  assert.equal(steers.length, 1, `example ${nn} steers one site`);
  const steered: string = steers[0].site;
  const fn = nodes.filter((n) => n.type === 'function' && n.name === name);
  assert.equal(fn.length, 1, `example ${nn}: one function node ${name}`);
  const code: string = fn[0].func;
  assert.equal(code.split(`'${steered}'`).length, 2, `example ${nn}: the code names the steered site once`);
  const run = new Function('msg', 'node', site ? code.replace(`'${steered}'`, JSON.stringify(site)) : code);
  const out = run({}, { error: (e: unknown) => assert.fail(String(e)) });
  const msgs = (Array.isArray(out) ? [out[0]].flat() : [out]) as Config[];
  return { configs: msgs.filter((m) => m.topic.startsWith('homeassistant/')), steered };
}

const OTHER = 'ste_0therSite00';

for (const [nn, name, count] of [
  ['04', 'Home Assistant number entity', 1],
  ['10', 'Home Assistant discovery', 6],
] as const) {
  describe(`example ${nn}: Home Assistant unique ids include the site`, () => {
    it(`every unique id is ems_<site>_<entity>, the site the example steers, and names its discovery topic`, () => {
      const { configs, steered } = announce(nn, name);
      assert.equal(configs.length, count);
      for (const c of configs) {
        const id = c.payload.unique_id;
        assert.match(id, new RegExp(`^ems_${steered}_[a-z_]+$`), c.topic);
        assert.match(c.topic, new RegExp(`^homeassistant/[a-z]+/${id}/config$`));
        assert.equal(c.payload.default_entity_id, `${c.topic.split('/')[1]}.${id.toLowerCase()}`);
        assert.deepEqual(c.payload.device.identifiers, [`ems_${steered}`]);
      }
      assert.equal(new Set(configs.map((c) => c.payload.unique_id)).size, count, 'unique within the site');
    });

    it('another site gives other ids and topics: none shared with the first', () => {
      const one = announce(nn, name).configs;
      const two = announce(nn, name, OTHER).configs;
      assert.equal(two.length, count);
      for (const c of two) assert.ok(c.payload.unique_id.startsWith(`ems_${OTHER}_`), c.payload.unique_id);
      const ids = new Set(one.flatMap((c) => [c.payload.unique_id, c.topic]));
      assert.deepEqual(
        two.filter((c) => ids.has(c.payload.unique_id) || ids.has(c.topic)).map((c) => c.topic),
        [],
      );
      // The same entities otherwise: the id less the site is the same.
      assert.deepEqual(
        two.map((c) => c.payload.unique_id.replace(OTHER, '<site>')),
        one.map((c) => c.payload.unique_id.replace(one[0].payload.device.identifiers[0].slice(4), '<site>')),
      );
    });
  });
}
