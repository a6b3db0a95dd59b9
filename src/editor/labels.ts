/**
 * What every node panel's definition needs for its texts: its catalogue, its palette label and the
 * style of a node's label.
 */

/** The texts of node type `type`: `key` in its catalogue (the type's namespace). */
export function translator(type: string): (key: string, opts?: object) => string {
  return function (key, opts) {
    return (RED.nodes.getType(type) as Required<RedNodeType>)._(type + '.' + key, opts);
  };
}

/** The palette label of `type`: its catalogue's, or `fallback` while the catalogue is not loaded. */
export function paletteLabelOf(type: string, fallback: string): (this: RedEditorNode) => string {
  return function () {
    const text = this._ ? this._(type + '.paletteLabel') : '';
    return text && text.indexOf('paletteLabel') < 0 ? text : fallback;
  };
}

/** A node with a name of its own shows it in italics. */
export function labelStyle(this: RedEditorNode): string {
  return this.name ? 'node_label_italic' : '';
}
