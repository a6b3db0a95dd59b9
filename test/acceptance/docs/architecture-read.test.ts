/**
 * The read side's files as docs/architecture.md names them, and their shape: every file of
 * src/client/ and src/nodes/device-read/ is named in the architecture page (a file added or split
 * is described where a reader looks for it); none of them, nor the request budget's or the read
 * benchmark's, is over 400 lines after the formatter; ems-device-read's index.ts is wiring only.
 */
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';

const ROOT = path.resolve(__dirname, '..', '..', '..');
const doc = fs.readFileSync(path.join(ROOT, 'docs', 'architecture.md'), 'utf8');
const tsFiles = (dir: string) =>
  fs
    .readdirSync(path.join(ROOT, dir))
    .filter((f) => f.endsWith('.ts') && f !== 'index.ts')
    .map((f) => path.join(dir, f));
const lines = (file: string) => fs.readFileSync(path.join(ROOT, file), 'utf8').trimEnd().split('\n').length;

describe('docs: the read side in docs/architecture.md, and its file sizes', () => {
  it('names every file of src/client/ and src/nodes/device-read/', () => {
    for (const file of [...tsFiles('src/client'), ...tsFiles('src/nodes/device-read')])
      assert.ok(doc.includes(path.basename(file)), `${file} is not named in docs/architecture.md`);
  });

  it('keeps the client, the request budget, the device-read node and the read benchmark under 400 lines each', () => {
    const files = [
      ...tsFiles('src/client'),
      ...tsFiles('src/nodes/device-read'),
      ...fs
        .readdirSync(path.join(ROOT, 'src/runtime'))
        .filter((f) => f.startsWith('budget'))
        .map((f) => path.join('src/runtime', f)),
      'bench/read-overhead.js',
    ];
    for (const file of files) assert.ok(lines(file) <= 400, `${file}: ${lines(file)} lines`);
  });

  it("ems-device-read's index.ts is thin wiring: the node's work is its controller's", () => {
    const index = fs.readFileSync(path.join(ROOT, 'src/nodes/device-read/index.ts'), 'utf8');
    assert.ok(lines('src/nodes/device-read/index.ts') <= 90, 'index.ts over 90 lines');
    assert.match(index, /new DeviceReadController\(/);
  });
});
